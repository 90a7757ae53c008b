//! Connection hygiene through the real binary: a receive link holds at most 5,000 peek-locked
//! deliveries unsettled, however much credit its client gives (a client that never settles
//! cannot make the broker remember ever more deliveries), and settling makes room for more.

#![allow(clippy::unwrap_used)]

mod support;

use fe2o3_amqp::Sender;
use fe2o3_amqp::types::messaging::Outcome;

use support::Broker;
use support::client::{connect, peek_lock_receiver, step};

/// The broker's cap on a receive link's unsettled deliveries.
const MAX_UNSETTLED: usize = 5_000;

async fn send_all(sender: &mut Sender, names: impl Iterator<Item = String>) {
    let mut outcomes = Vec::new();
    for name in names {
        outcomes.push(step(sender.send_batchable(name)).await.unwrap());
    }
    for outcome in outcomes {
        assert!(matches!(step(outcome).await.unwrap(), Outcome::Accepted(_)));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receive_link_holds_at_most_5000_unsettled_deliveries() {
    let broker = Broker::in_memory(&["q"]);
    let (_connection, mut session) = connect(&broker, "greedy").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    send_all(
        &mut sender,
        (0..MAX_UNSETTLED + 100).map(|n| format!("m{n}")),
    )
    .await;

    // Credit for all and more, never settling: the link gets the cap's worth.
    let mut greedy = peek_lock_receiver(&mut session, "greedy", "q", 8_000).await;
    let mut held = Vec::new();
    for _ in 0..MAX_UNSETTLED {
        held.push(step(greedy.recv::<String>()).await.unwrap());
    }
    // The rest stays available to others.
    let (_other_connection, mut other_session) = connect(&broker, "other").await;
    let mut other = peek_lock_receiver(&mut other_session, "other", "q", 200).await;
    for _ in 0..100 {
        let delivery = step(other.recv::<String>()).await.unwrap();
        step(other.accept(&delivery)).await.unwrap();
    }
    step(other.close()).await.unwrap();

    // Settling ten makes room for ten more.
    for delivery in held.drain(..10) {
        step(greedy.accept(&delivery)).await.unwrap();
    }
    send_all(&mut sender, (0..10).map(|n| format!("late{n}"))).await;
    for n in 0..10 {
        let delivery = step(greedy.recv::<String>()).await.unwrap();
        assert_eq!(delivery.body(), &format!("late{n}"));
    }
}
