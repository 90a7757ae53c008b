//! Durability end to end: messages acknowledged to fe2o3-amqp survive a SIGKILL of the broker
//! in the middle of a send stream, completed-and-confirmed messages never come back, and the
//! dead-letter queue is kept.

#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use fe2o3_amqp::Sender;
use fe2o3_amqp::types::messaging::Outcome;
use tokio::sync::watch;

use support::client::{connect, drain_until, peek_lock_receiver, step};
use support::{Broker, scratch_dir, write_config};

/// Messages completed (and confirmed) before the crash, and left locked-but-unsettled.
const COMPLETED: usize = 10;
const UNSETTLED: usize = 10;
/// Acknowledged sends of the stream before the broker is killed.
const ACKED_BEFORE_KILL: usize = 50;

async fn send_acked(sender: &mut Sender, body: String) -> bool {
    matches!(sender.send(body).await, Ok(Outcome::Accepted(_)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_messages_survive_sigkill_and_completed_ones_never_return() {
    let dir = scratch_dir("busbar-durability");
    let config = write_config(&dir, &["q"]);
    let data = dir.join("data");
    let broker = Broker::on_disk(config.clone(), data.clone());

    // Before the crash: some messages completed with confirmation, some left locked.
    let (_connection, mut session) = connect(&broker, "fe2o3-durability").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    for index in 0..COMPLETED + UNSETTLED {
        assert!(step(send_acked(&mut sender, format!("c-{index}"))).await);
    }
    let mut receiver = peek_lock_receiver(&mut session, "before", "q", 20).await;
    let mut completed = BTreeSet::new();
    for _ in 0..COMPLETED + UNSETTLED {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        if completed.len() < COMPLETED {
            step(receiver.accept(&delivery)).await.unwrap();
            completed.insert(delivery.body().clone());
        }
    }

    // And one dead-lettered (confirmed).
    assert!(step(send_acked(&mut sender, "dead".to_owned())).await);
    let delivery = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), "dead");
    step(receiver.reject(&delivery, None)).await.unwrap();

    // A send stream, killed in the middle.
    let acked = Arc::new(Mutex::new(Vec::new()));
    let (progress, mut watcher) = watch::channel(0usize);
    let stream = {
        let acked = Arc::clone(&acked);
        tokio::spawn(async move {
            for index in 0.. {
                let body = format!("d-{index}");
                if !send_acked(&mut sender, body.clone()).await {
                    break;
                }
                let count = {
                    let mut acked = acked.lock().unwrap();
                    acked.push(body);
                    acked.len()
                };
                progress.send_replace(count);
            }
        })
    };
    step(watcher.wait_for(|count| *count >= ACKED_BEFORE_KILL))
        .await
        .unwrap();
    broker.kill();
    // The client may not notice the dead socket while it waits for an outcome; what it saw
    // acknowledged so far is already recorded.
    stream.abort();
    let _ = stream.await;
    let acked: Vec<String> = acked.lock().unwrap().clone();
    assert!(acked.len() >= ACKED_BEFORE_KILL);

    // After a restart on the same directory: everything acknowledged and not completed is
    // there, nothing completed is. A sentinel sent last marks the end of the queue.
    let broker = Broker::on_disk(config, data);
    let (_connection, mut session) = connect(&broker, "fe2o3-durability").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    assert!(step(send_acked(&mut sender, "end".to_owned())).await);
    let mut receiver = peek_lock_receiver(&mut session, "after", "q", 20).await;
    let received = drain_until(&mut receiver, "end").await;
    for body in &acked {
        assert!(received.contains(body), "acknowledged {body} was lost");
    }
    for index in 0..COMPLETED + UNSETTLED {
        let body = format!("c-{index}");
        assert_eq!(
            received.contains(&body),
            !completed.contains(&body),
            "{body}: completed messages must not return, unsettled ones must"
        );
    }
    assert!(!received.contains("dead"));
    let mut dead = peek_lock_receiver(&mut session, "dead", "q/$DeadLetterQueue", 20).await;
    let delivery = step(dead.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), "dead");
    step(dead.accept(&delivery)).await.unwrap();
    assert_eq!(broker.terminate().code(), Some(0));
}
