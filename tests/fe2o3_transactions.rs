//! Transactions driven by fe2o3-amqp's controller, an independent AMQP 1.0 client: a send
//! inside a committed transaction arrives, one rolled back never does; a settlement rolled
//! back leaves the message locked by its receiver; a receive-complete-send across two queues
//! commits both or neither; and settlements on two entities in one transaction are refused.
//!
//! "Never arrives" is checked without waiting: a marker sent after the rollback must be the
//! first message the queue hands out.

#![allow(clippy::unwrap_used)]

mod support;

use fe2o3_amqp::transaction::{
    Controller, Transaction, TransactionDischarge, TransactionPosting, TransactionRetirement,
};
use fe2o3_amqp::types::messaging::Outcome;
use fe2o3_amqp::{Receiver, Sender};

use support::Broker;
use support::client::{connect, peek_lock_receiver, step};

async fn send(sender: &mut Sender, body: &str) {
    let outcome = step(sender.send(body.to_owned())).await.unwrap();
    assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
}

/// Receives the next message, accepts it, and returns its body.
async fn take(receiver: &mut Receiver) -> String {
    let delivery = step(receiver.recv::<String>()).await.unwrap();
    let body = delivery.body().clone();
    step(receiver.accept(&delivery)).await.unwrap();
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_send_arrives_and_a_rolled_back_one_never_does() {
    let broker = Broker::in_memory(&["q"]);
    let (mut connection, mut session) = connect(&broker, "fe2o3-txn").await;
    let controller = step(Controller::attach(&mut session, "controller"))
        .await
        .unwrap();
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    let mut receiver = peek_lock_receiver(&mut session, "receiver", "q", 10).await;

    let rolled_back = step(Transaction::declare(&controller, None)).await.unwrap();
    let outcome = step(rolled_back.post(&mut sender, "rolled back".to_owned()))
        .await
        .unwrap();
    assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
    step(rolled_back.rollback()).await.unwrap();

    let committed = step(Transaction::declare(&controller, None)).await.unwrap();
    step(committed.post(&mut sender, "committed".to_owned()))
        .await
        .unwrap();
    step(committed.commit()).await.unwrap();
    send(&mut sender, "marker").await;

    assert_eq!(take(&mut receiver).await, "committed");
    assert_eq!(take(&mut receiver).await, "marker");
    step(controller.close()).await.unwrap();
    step(session.end()).await.unwrap();
    step(connection.close()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_back_settlement_leaves_the_message_locked_by_its_receiver() {
    let broker = Broker::in_memory(&["q"]);
    let (mut connection, mut session) = connect(&broker, "fe2o3-txn").await;
    let controller = step(Controller::attach(&mut session, "controller"))
        .await
        .unwrap();
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    let mut receiver = peek_lock_receiver(&mut session, "receiver", "q", 10).await;
    send(&mut sender, "work").await;
    let delivery = step(receiver.recv::<String>()).await.unwrap();

    let txn = step(Transaction::declare(&controller, None)).await.unwrap();
    step(txn.accept(&mut receiver, &delivery)).await.unwrap();
    step(txn.rollback()).await.unwrap();

    // Still locked by this receiver: completing it outside the transaction works.
    step(receiver.accept(&delivery)).await.unwrap();
    send(&mut sender, "marker").await;
    assert_eq!(take(&mut receiver).await, "marker");
    step(controller.close()).await.unwrap();
    step(session.end()).await.unwrap();
    step(connection.close()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_complete_and_send_to_another_queue_commit_together() {
    let broker = Broker::in_memory(&["in", "out"]);
    let (mut connection, mut session) = connect(&broker, "fe2o3-txn").await;
    let controller = step(Controller::attach(&mut session, "controller"))
        .await
        .unwrap();
    let mut into = step(Sender::attach(&mut session, "into", "in"))
        .await
        .unwrap();
    let mut onward = step(Sender::attach(&mut session, "onward", "out"))
        .await
        .unwrap();
    let mut inbound = peek_lock_receiver(&mut session, "inbound", "in", 10).await;
    let mut outbound = peek_lock_receiver(&mut session, "outbound", "out", 10).await;
    send(&mut into, "order").await;
    let delivery = step(inbound.recv::<String>()).await.unwrap();

    let txn = step(Transaction::declare(&controller, None)).await.unwrap();
    step(txn.accept(&mut inbound, &delivery)).await.unwrap();
    step(txn.post(&mut onward, "shipped".to_owned()))
        .await
        .unwrap();
    step(txn.commit()).await.unwrap();

    assert_eq!(take(&mut outbound).await, "shipped");
    // The completion was committed with the send: the lock is spent.
    send(&mut into, "marker").await;
    assert_eq!(take(&mut inbound).await, "marker");
    step(controller.close()).await.unwrap();
    step(session.end()).await.unwrap();
    step(connection.close()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settlements_on_two_entities_in_one_transaction_are_refused() {
    let broker = Broker::in_memory(&["a", "b"]);
    let (mut connection, mut session) = connect(&broker, "fe2o3-txn").await;
    let controller = step(Controller::attach(&mut session, "controller"))
        .await
        .unwrap();
    let mut to_a = step(Sender::attach(&mut session, "to-a", "a"))
        .await
        .unwrap();
    let mut to_b = step(Sender::attach(&mut session, "to-b", "b"))
        .await
        .unwrap();
    let mut from_a = peek_lock_receiver(&mut session, "from-a", "a", 10).await;
    let mut from_b = peek_lock_receiver(&mut session, "from-b", "b", 10).await;
    send(&mut to_a, "one").await;
    send(&mut to_b, "two").await;
    let one = step(from_a.recv::<String>()).await.unwrap();
    let two = step(from_b.recv::<String>()).await.unwrap();

    let txn = step(Transaction::declare(&controller, None)).await.unwrap();
    step(txn.accept(&mut from_a, &one)).await.unwrap();
    // Service Bus: local transactions cannot span multiple top-level entities. The broker
    // refuses this settlement (fe2o3 does not report a refused transactional disposition).
    let _ = step(txn.accept(&mut from_b, &two)).await;
    step(txn.commit()).await.unwrap();

    // The first settlement committed; the refused one left its message locked by `from_b`,
    // which can still complete it (a committed settlement would have spent the lock).
    step(from_b.accept(&two)).await.unwrap();
    send(&mut to_a, "marker").await;
    assert_eq!(take(&mut from_a).await, "marker");
    step(controller.close()).await.unwrap();
    step(session.end()).await.unwrap();
    step(connection.close()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_coordinator_link_serves_transactions_past_its_first_credit() {
    let broker = Broker::in_memory(&["q"]);
    let (mut connection, mut session) = connect(&broker, "fe2o3-txn").await;
    let controller = step(Controller::attach(&mut session, "controller"))
        .await
        .unwrap();
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    let mut receiver = peek_lock_receiver(&mut session, "receiver", "q", 10).await;
    // Each transaction takes two transfers (declare, discharge) of the link's credit.
    for index in 0..150 {
        let txn = step(Transaction::declare(&controller, None)).await.unwrap();
        step(txn.post(&mut sender, format!("m-{index}")))
            .await
            .unwrap();
        step(txn.commit()).await.unwrap();
    }
    for index in 0..150 {
        assert_eq!(take(&mut receiver).await, format!("m-{index}"));
    }
    step(controller.close()).await.unwrap();
    step(session.end()).await.unwrap();
    step(connection.close()).await.unwrap();
}
