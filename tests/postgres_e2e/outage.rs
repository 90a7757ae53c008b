//! The database failing under the active node: it stops taking connections and drops the
//! node's. Nothing is acknowledged while the node cannot commit; it stops serving, reconnects
//! with backoff, takes the lease again once the database is back, recovers and serves: every
//! acknowledged send is there.

use std::collections::BTreeSet;
use std::net::TcpListener;
use std::time::Duration;

use fe2o3_amqp::Sender;
use fe2o3_amqp::types::messaging::Outcome;

use crate::pg_server::PgServer;
use crate::support::client::{
    connect_url, drain_until, peek_lock_receiver, send_accepted, step, url_of_port,
};
use crate::support::postgres_node::PostgresNode;
use crate::support::{scratch_dir, write_config};

const QUEUE: &str = "q";
const ACKED: usize = 20;
/// Failure guards, not waits.
const START: Duration = Duration::from_secs(30);
const RECONNECT_LIMIT: Duration = Duration::from_secs(60);
const UNANSWERED: Duration = Duration::from_secs(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_active_node_reconnects_after_a_database_outage_losing_nothing() {
    let server = PgServer::shared();
    let database_url = server.create_database("outage");
    let database = database_url.rsplit('/').next().unwrap().to_owned();
    let dir = scratch_dir("busbar-outage");
    let config = write_config(&dir, &[QUEUE]);
    // A fixed port, so that the node serves on it again after the outage.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut node = PostgresNode::start(&config, &database_url, &dir.join("a"), port);
    assert_eq!(node.wait_serving(START), port);

    let (_connection, mut session) = connect_url(&url_of_port(port), "before").await;
    let mut sender = step(Sender::attach(&mut session, "sender", QUEUE))
        .await
        .unwrap();
    let mut acked = BTreeSet::new();
    for index in 0..ACKED {
        let body = format!("m-{index}");
        send_accepted(&mut sender, &body).await;
        acked.insert(body);
    }

    // The outage.
    server.psql(&format!(
        "ALTER DATABASE {database} ALLOW_CONNECTIONS false"
    ));
    server.psql(&format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}'"
    ));
    // Refused (the commit failed), or the node stopped serving first and closed the connection
    // (fe2o3 then sometimes never settles the send: no answer within the bound is no
    // acknowledgement either).
    let during = tokio::time::timeout(UNANSWERED, sender.send("during".to_owned())).await;
    match during {
        Ok(Ok(Outcome::Accepted(_))) => panic!("a send was acknowledged during the outage"),
        Ok(Ok(Outcome::Rejected(rejected))) => {
            let description = rejected.error.unwrap().description.unwrap_or_default();
            assert!(
                description.contains("storage is unavailable"),
                "{description}"
            );
        }
        _ => {}
    }

    server.psql(&format!("ALTER DATABASE {database} ALLOW_CONNECTIONS true"));
    assert_eq!(node.wait_serving(RECONNECT_LIMIT), port);
    let (_connection, mut session) = connect_url(&url_of_port(port), "after").await;
    let mut sender = step(Sender::attach(&mut session, "sender", QUEUE))
        .await
        .unwrap();
    send_accepted(&mut sender, "end").await;
    let mut receiver = peek_lock_receiver(&mut session, "receiver", QUEUE, 10).await;
    let found = drain_until(&mut receiver, "end").await;
    assert!(
        found.is_superset(&acked),
        "lost {:?}",
        acked.difference(&found)
    );
    // The refused send's commit may have gone through before the connection died.
    let extra: Vec<&String> = found.difference(&acked).collect();
    assert!(extra.is_empty() || extra == ["during"], "{extra:?}");
}
