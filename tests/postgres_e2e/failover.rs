//! Active/passive failover under load: two busbar processes on one database, the active one
//! SIGKILLed while an independent fe2o3-amqp client sends and completes. The standby, silent
//! until then, takes over on the same port; every acknowledged send that was not completed is
//! there, no confirmed completion comes back. The takeover time is printed.
//!
//! Completions go through `$management` update-disposition, whose answer comes once the
//! completion is durable: fe2o3's `accept` returns as soon as its disposition is queued, so it
//! confirms nothing.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fe2o3_amqp::link::receiver::CreditMode;
use fe2o3_amqp::types::definitions::ReceiverSettleMode;
use fe2o3_amqp::types::messaging::Outcome;
use fe2o3_amqp::types::primitives::{Uuid, Value};
use fe2o3_amqp::{Receiver, Sender};
use tokio::sync::watch;

use crate::pg_server::PgServer;
use crate::support::client::{connect, drain_until, peek_lock_receiver, step};
use crate::support::management::Management;
use crate::support::postgres_node::PostgresNode;
use crate::support::{scratch_dir, write_config};

const QUEUE: &str = "q";
/// Acknowledged sends and confirmed completions before the kill.
const ACKED_BEFORE_KILL: usize = 300;
const COMPLETED_BEFORE_KILL: usize = 100;
/// Deliveries the completing receiver keeps outstanding.
const CREDIT: u32 = 20;
/// Failure guards, not waits.
const START: Duration = Duration::from_secs(30);
const TAKEOVER_LIMIT: Duration = Duration::from_secs(30);

async fn send_acked(sender: &mut Sender, body: String) -> bool {
    matches!(sender.send(body).await, Ok(Outcome::Accepted(_)))
}

/// Progress of the load: acknowledged sends and confirmed completions.
/// The lock token of a delivery: its tag is the token's GUID in .NET byte order.
fn lock_token(tag: &[u8]) -> Value {
    let mut bytes: [u8; 16] = tag.try_into().unwrap();
    bytes[0..4].reverse();
    bytes[4..6].reverse();
    bytes[6..8].reverse();
    Value::Uuid(Uuid::from(bytes))
}

#[derive(Default)]
struct Seen {
    acked: Vec<String>,
    completed: BTreeSet<String>,
    /// The message whose completion was asked for and not answered yet: the kill may come
    /// after its commit and before its answer, so it may be gone without being confirmed.
    completing: Option<String>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standby_takes_over_a_sigkilled_active_node_losing_nothing() {
    let url = PgServer::shared().create_database("failover");
    let dir = scratch_dir("busbar-failover");
    let config = write_config(&dir, &[QUEUE]);
    let active = PostgresNode::start(&config, &url, &dir.join("a"), 0).serving(START);
    // The standby waits for the lease without listening, so it can be given the same port.
    let mut standby = PostgresNode::start(&config, &url, &dir.join("b"), active.port);
    standby.expect_standby(START);

    let seen = Arc::new(Mutex::new(Seen::default()));
    let (progress, mut watcher) = watch::channel((0usize, 0usize));
    let report = {
        let seen = Arc::clone(&seen);
        move || {
            let seen = seen.lock().unwrap();
            progress.send_replace((seen.acked.len(), seen.completed.len()));
        }
    };
    let (_sending_connection, mut sending) = connect(&active, "failover-sender").await;
    let mut sender = step(Sender::attach(&mut sending, "sender", QUEUE))
        .await
        .unwrap();
    let (_receiving_connection, mut receiving) = connect(&active, "failover-receiver").await;
    // Manual credit: fe2o3 gives auto credit back only for settlements made on the link.
    let mut receiver = step(
        Receiver::builder()
            .name("receiver")
            .source(QUEUE)
            .receiver_settle_mode(ReceiverSettleMode::Second)
            .credit_mode(CreditMode::Manual)
            .attach(&mut receiving),
    )
    .await
    .unwrap();
    let mut management = Management::attach(&mut receiving, QUEUE).await;
    let sends = {
        let (seen, report) = (Arc::clone(&seen), report.clone());
        tokio::spawn(async move {
            for index in 0.. {
                let body = format!("m-{index}");
                if !send_acked(&mut sender, body.clone()).await {
                    break;
                }
                seen.lock().unwrap().acked.push(body);
                report();
            }
        })
    };
    let completions = {
        let seen = Arc::clone(&seen);
        tokio::spawn(async move {
            while receiver.set_credit(CREDIT).await.is_ok() {
                let Ok(delivery) = receiver.recv::<String>().await else {
                    break;
                };
                let completion = vec![
                    ("disposition-status", Value::String("completed".to_owned())),
                    (
                        "lock-tokens",
                        Value::List(vec![lock_token(delivery.delivery_tag())]),
                    ),
                ];
                seen.lock().unwrap().completing = Some(delivery.body().clone());
                let answer = management
                    .call("com.microsoft:update-disposition", completion)
                    .await;
                if answer.status != 200 {
                    break;
                }
                let mut record = seen.lock().unwrap();
                record.completing = None;
                record.completed.insert(delivery.body().clone());
                drop(record);
                report();
            }
        })
    };
    step(watcher.wait_for(|(acked, completed)| {
        *acked >= ACKED_BEFORE_KILL && *completed >= COMPLETED_BEFORE_KILL
    }))
    .await
    .unwrap();

    let killed = Instant::now();
    active.kill();
    // What the clients saw confirmed is recorded; their pending calls may never return.
    sends.abort();
    completions.abort();
    let _ = sends.await;
    let _ = completions.await;
    let seen = std::mem::take(&mut *seen.lock().unwrap());

    let standby = standby.serving(TAKEOVER_LIMIT);
    let listening_after = killed.elapsed();
    // A client reconnecting (as an SDK's retry does) is served on the same port.
    let (_connection, mut session) = connect(&standby, "failover-after").await;
    let mut sender = step(Sender::attach(&mut session, "sender", QUEUE))
        .await
        .unwrap();
    assert!(step(send_acked(&mut sender, "end".to_owned())).await);
    let takeover = killed.elapsed();
    println!(
        "takeover: listening {} ms and the first send accepted {} ms after the SIGKILL \
         ({} sends acknowledged, {} completions confirmed before it)",
        listening_after.as_millis(),
        takeover.as_millis(),
        seen.acked.len(),
        seen.completed.len()
    );

    let mut receiver = peek_lock_receiver(&mut session, "after", QUEUE, 50).await;
    let received = drain_until(&mut receiver, "end").await;
    for body in &seen.acked {
        assert!(
            received.contains(body)
                || seen.completed.contains(body)
                || seen.completing.as_ref() == Some(body),
            "acknowledged {body} was lost"
        );
    }
    for body in &seen.completed {
        assert!(!received.contains(body), "completed {body} came back");
    }
    assert_eq!(standby.terminate().code(), Some(0));
}
