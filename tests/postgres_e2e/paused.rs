//! A paused active node (SIGSTOP: its sockets stay open, so PostgreSQL cannot tell it died) is
//! replaced: its lease session, idle past the lease's timeout, is ended by PostgreSQL and the
//! standby takes over. Resumed, the old node writes nothing more (a send its client made before
//! the pause is not acknowledged, and is not stored) and goes back to standing by.

use std::collections::BTreeSet;
use std::process::Command;
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
/// Failure guards, not waits: the lease's session is ended after 10 s idle.
const START: Duration = Duration::from_secs(30);
const TAKEOVER_LIMIT: Duration = Duration::from_secs(40);
const UNANSWERED: Duration = Duration::from_secs(10);

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .args([name, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_active_node_is_replaced_and_writes_nothing_when_it_resumes() {
    let database_url = PgServer::shared().create_database("paused");
    let dir = scratch_dir("busbar-paused");
    let config = write_config(&dir, &[QUEUE]);
    let mut old = PostgresNode::start(&config, &database_url, &dir.join("a"), 0);
    let old_port = old.wait_serving(START);
    let mut new = PostgresNode::start(&config, &database_url, &dir.join("b"), 0);
    new.expect_standby(START);

    let (_connection, mut session) = connect_url(&url_of_port(old_port), "before").await;
    let mut stale_sender = step(Sender::attach(&mut session, "sender", QUEUE))
        .await
        .unwrap();
    send_accepted(&mut stale_sender, "before").await;

    signal(old.pid(), "-STOP");
    let paused = std::time::Instant::now();
    let new_port = new.wait_serving(TAKEOVER_LIMIT);
    eprintln!(
        "takeover of a paused node: {} ms",
        paused.elapsed().as_millis()
    );
    let (_connection, mut session) = connect_url(&url_of_port(new_port), "after").await;
    let mut sender = step(Sender::attach(&mut session, "sender", QUEUE))
        .await
        .unwrap();
    send_accepted(&mut sender, "after").await;

    signal(old.pid(), "-CONT");
    let stale = tokio::time::timeout(UNANSWERED, stale_sender.send("stale".to_owned())).await;
    assert!(!matches!(stale, Ok(Ok(Outcome::Accepted(_)))), "{stale:?}");
    old.expect_standby(START);

    send_accepted(&mut sender, "end").await;
    let mut receiver = peek_lock_receiver(&mut session, "receiver", QUEUE, 10).await;
    let found = drain_until(&mut receiver, "end").await;
    let expected: BTreeSet<String> = ["before", "after"].map(str::to_owned).into();
    assert_eq!(found, expected);
}
