//! The database failing: unreachable at start, a connection lost before a sync (poisoned,
//! nothing acknowledged, nothing half-written), and a schema newer than this build.

use std::net::TcpListener;

use busbar_store::{Storage, StoreError};
use busbar_store_postgres::{DatabaseUrl, PostgresStorage};

use crate::lease::terminate_sessions_of;
use crate::pg_server::PgServer;
use crate::records::{insert, key};

#[test]
fn an_unreachable_database_is_a_clear_error() {
    // A port nobody listens on: bound, then released.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = DatabaseUrl::parse(&format!("postgres://busbar@127.0.0.1:{port}/busbar")).unwrap();
    let Err(error) = PostgresStorage::open(&url, None) else {
        panic!("opened a database that is not there");
    };
    assert!(
        matches!(
            error,
            StoreError::Database {
                operation: "connect",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_lost_connection_poisons_the_store_and_acknowledges_nothing() {
    let url = DatabaseUrl::parse(
        &(PgServer::shared().create_database("lost") + "?application_name=doomed"),
    )
    .unwrap();
    let mut store = PostgresStorage::open(&url, None).unwrap();
    store.append(&[insert(1, "kept", "s")]).unwrap();
    let durable = store.sync().unwrap();
    store.append(&[insert(2, "lost", "s")]).unwrap();
    terminate_sessions_of(&url, "doomed");
    let error = store.sync().unwrap_err();
    assert!(matches!(error, StoreError::Database { .. }), "{error}");
    assert!(matches!(
        store.append(&[insert(3, "late", "s")]),
        Err(StoreError::Poisoned { .. })
    ));

    let mut reopened = PostgresStorage::open(&url, None).unwrap();
    let recovered = reopened.recover().unwrap();
    assert_eq!(recovered.messages.keys().collect::<Vec<_>>(), [key(1)]);
    assert_eq!(recovered.durable, durable);
}

#[test]
fn a_schema_newer_than_this_build_is_refused() {
    let text = PgServer::shared().create_database("newer");
    let url = DatabaseUrl::parse(&text).unwrap();
    drop(PostgresStorage::open(&url, None).unwrap());
    postgres::Client::connect(&text, postgres::NoTls)
        .unwrap()
        .batch_execute("INSERT INTO busbar_schema (version) VALUES (99)")
        .unwrap();
    let Err(error) = PostgresStorage::open(&url, None) else {
        panic!("opened a schema from the future");
    };
    assert!(error.to_string().contains("version 99"), "{error}");
}
