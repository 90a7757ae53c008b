//! `PostgresStorage` behind the shared suite's `Backend` trait: each store gets a schema of its
//! own in one database of the process's server (a schema is far cheaper to make than a
//! database), and a restart is a new connection.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use busbar_store_postgres::{DatabaseUrl, PostgresStorage};

use crate::pg_server::PgServer;
use crate::records::Backend;

pub(crate) struct Postgres {
    store: Option<PostgresStorage>,
    url: DatabaseUrl,
}

/// The database holding every suite store's schema.
fn suite_database() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| PgServer::shared().create_database("suite"))
}

/// A URL whose connections work in a fresh schema of the suite's database.
pub(crate) fn fresh_schema_url() -> DatabaseUrl {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let schema = format!("store_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    let database = suite_database();
    let mut client = postgres::Client::connect(database, postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    DatabaseUrl::parse(&format!("{database}?options=-c%20search_path%3D{schema}")).unwrap()
}

impl Backend for Postgres {
    type Store = PostgresStorage;

    /// `small` asks file stores for tiny segments; PostgreSQL has nothing like them.
    fn create(_small: bool) -> Self {
        let url = fresh_schema_url();
        let store = PostgresStorage::open(&url, None).unwrap();
        Postgres {
            store: Some(store),
            url,
        }
    }

    fn store(&mut self) -> &mut PostgresStorage {
        self.store.as_mut().unwrap()
    }

    fn restart(&mut self) {
        drop(self.store.take());
        self.store = Some(PostgresStorage::open(&self.url, None).unwrap());
    }
}
