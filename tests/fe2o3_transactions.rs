//! Transactions driven by fe2o3-amqp's controller, an independent AMQP 1.0 client: a send
//! inside a committed transaction arrives, one rolled back never does; a settlement rolled
//! back leaves the message locked by its receiver; a receive-complete-send across two queues
//! commits both or neither; and settlements on two entities in one transaction are refused.
//!
//! "Never arrives" is checked without waiting: a marker sent after the rollback must be the
//! first message the queue hands out.

#![allow(clippy::unwrap_used)]

mod support;

use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::session::SessionHandle;
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

/// A broker with `queues` and one connection to it with a session and a transaction controller.
/// Fields drop in order: the client goes before the broker process.
struct OnBroker {
    connection: ConnectionHandle<()>,
    session: SessionHandle<()>,
    controller: Controller,
    _broker: Broker,
}

impl OnBroker {
    async fn start(queues: &[&str]) -> OnBroker {
        let broker = Broker::in_memory(queues);
        let (connection, mut session) = connect(&broker, "fe2o3-txn").await;
        let controller = step(Controller::attach(&mut session, "controller"))
            .await
            .unwrap();
        OnBroker {
            connection,
            session,
            controller,
            _broker: broker,
        }
    }

    async fn sender(&mut self, queue: &str) -> Sender {
        let name = format!("to-{queue}");
        step(Sender::attach(&mut self.session, name, queue))
            .await
            .unwrap()
    }

    async fn receiver(&mut self, queue: &str) -> Receiver {
        peek_lock_receiver(&mut self.session, &format!("from-{queue}"), queue, 10).await
    }

    async fn declare(&self) -> Transaction<'_> {
        step(Transaction::declare(&self.controller, None))
            .await
            .unwrap()
    }

    async fn close(mut self) {
        step(self.controller.close()).await.unwrap();
        step(self.session.end()).await.unwrap();
        step(self.connection.close()).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committed_send_arrives_and_a_rolled_back_one_never_does() {
    let mut client = OnBroker::start(&["q"]).await;
    let mut sender = client.sender("q").await;
    let mut receiver = client.receiver("q").await;

    let rolled_back = client.declare().await;
    let outcome = step(rolled_back.post(&mut sender, "rolled back".to_owned()))
        .await
        .unwrap();
    assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
    step(rolled_back.rollback()).await.unwrap();

    let committed = client.declare().await;
    step(committed.post(&mut sender, "committed".to_owned()))
        .await
        .unwrap();
    step(committed.commit()).await.unwrap();
    send(&mut sender, "marker").await;

    assert_eq!(take(&mut receiver).await, "committed");
    assert_eq!(take(&mut receiver).await, "marker");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rolled_back_settlement_leaves_the_message_locked_by_its_receiver() {
    let mut client = OnBroker::start(&["q"]).await;
    let mut sender = client.sender("q").await;
    let mut receiver = client.receiver("q").await;
    send(&mut sender, "work").await;
    let delivery = step(receiver.recv::<String>()).await.unwrap();

    let txn = client.declare().await;
    step(txn.accept(&mut receiver, &delivery)).await.unwrap();
    step(txn.rollback()).await.unwrap();

    // Still locked by this receiver: completing it outside the transaction works.
    step(receiver.accept(&delivery)).await.unwrap();
    send(&mut sender, "marker").await;
    assert_eq!(take(&mut receiver).await, "marker");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_complete_and_send_to_another_queue_commit_together() {
    let mut client = OnBroker::start(&["in", "out"]).await;
    let mut into = client.sender("in").await;
    let mut onward = client.sender("out").await;
    let mut inbound = client.receiver("in").await;
    let mut outbound = client.receiver("out").await;
    send(&mut into, "order").await;
    let delivery = step(inbound.recv::<String>()).await.unwrap();

    let txn = client.declare().await;
    step(txn.accept(&mut inbound, &delivery)).await.unwrap();
    step(txn.post(&mut onward, "shipped".to_owned()))
        .await
        .unwrap();
    step(txn.commit()).await.unwrap();

    assert_eq!(take(&mut outbound).await, "shipped");
    // The completion was committed with the send: the lock is spent.
    send(&mut into, "marker").await;
    assert_eq!(take(&mut inbound).await, "marker");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settlements_on_two_entities_in_one_transaction_are_refused() {
    let mut client = OnBroker::start(&["a", "b"]).await;
    let mut to_a = client.sender("a").await;
    let mut to_b = client.sender("b").await;
    let mut from_a = client.receiver("a").await;
    let mut from_b = client.receiver("b").await;
    send(&mut to_a, "one").await;
    send(&mut to_b, "two").await;
    let one = step(from_a.recv::<String>()).await.unwrap();
    let two = step(from_b.recv::<String>()).await.unwrap();

    let txn = client.declare().await;
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
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_coordinator_link_serves_transactions_past_its_first_credit() {
    let mut client = OnBroker::start(&["q"]).await;
    let mut sender = client.sender("q").await;
    let mut receiver = client.receiver("q").await;
    // Each transaction takes two transfers (declare, discharge) of the link's credit.
    for index in 0..150 {
        let txn = client.declare().await;
        step(txn.post(&mut sender, format!("m-{index}")))
            .await
            .unwrap();
        step(txn.commit()).await.unwrap();
    }
    for index in 0..150 {
        assert_eq!(take(&mut receiver).await, format!("m-{index}"));
    }
    client.close().await;
}
