//! The broker's core paths driven by fe2o3-amqp, an independent AMQP 1.0 client, against the
//! real binary: SASL PLAIN with the emulator key, send and peek-lock receive, abandon, reject to
//! the dead-letter queue, receive-and-delete, pre-settled sends, unknown entity, oversize message,
//! a topic send copied to the subscription whose correlation rule matches, and many sends in
//! flight settled by ranged dispositions.

#![allow(clippy::unwrap_used)]

mod support;

use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::link::receiver::CreditMode;
use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::definitions::SenderSettleMode;
use fe2o3_amqp::types::messaging::{Message, Modified, Outcome, Properties};
use fe2o3_amqp::types::primitives::Value;
use fe2o3_amqp::{Connection, Receiver, Sender};

use support::Broker;
use support::client::{connect, peek_lock_receiver, step};

async fn send(sender: &mut Sender, body: &str) {
    let outcome = step(sender.send(body.to_owned())).await.unwrap();
    assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
}

/// A broker with queue `q`, and one connection with a sender and a peek-lock receiver on it.
/// Fields drop in order: the client goes before the broker process.
struct OnQueue {
    connection: ConnectionHandle<()>,
    session: SessionHandle<()>,
    sender: Sender,
    receiver: Receiver,
    _broker: Broker,
}

async fn on_queue() -> OnQueue {
    let broker = Broker::in_memory(&["q"]);
    let (connection, mut session) = connect(&broker, "fe2o3-e2e").await;
    let sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    let receiver = peek_lock_receiver(&mut session, "receiver", "q", 10).await;
    OnQueue {
        connection,
        session,
        sender,
        receiver,
        _broker: broker,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peek_lock_send_receive_accept() {
    let OnQueue {
        _broker,
        mut connection,
        mut session,
        mut sender,
        mut receiver,
    } = on_queue().await;
    send(&mut sender, "first").await;

    let delivery = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), "first");
    // The delivery tag is the 16-byte lock token.
    assert_eq!(delivery.delivery_tag().as_ref().len(), 16);
    let annotations = delivery.message().message_annotations.as_ref().unwrap();
    let sequence = annotations
        .iter()
        .find(|(key, _)| format!("{key:?}").contains("x-opt-sequence-number"))
        .map(|(_, value)| value.clone());
    assert_eq!(sequence, Some(Value::Long(1)));
    assert_eq!(
        delivery.message().header.as_ref().unwrap().delivery_count,
        0
    );
    step(receiver.accept(&delivery)).await.unwrap();

    // The completed message never comes back: the next one received is the next one sent.
    send(&mut sender, "second").await;
    let delivery = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), "second");
    step(receiver.accept(&delivery)).await.unwrap();

    step(receiver.close()).await.unwrap();
    step(sender.close()).await.unwrap();
    step(session.end()).await.unwrap();
    step(connection.close()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abandon_redelivers_with_delivery_count_one() {
    let OnQueue {
        _broker,
        connection: _connection,
        session: _session,
        mut sender,
        mut receiver,
    } = on_queue().await;
    send(&mut sender, "again").await;

    let delivery = step(receiver.recv::<String>()).await.unwrap();
    let abandon = Modified {
        delivery_failed: Some(true),
        undeliverable_here: None,
        message_annotations: None,
    };
    step(receiver.modify(&delivery, abandon)).await.unwrap();
    let delivery = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), "again");
    assert_eq!(
        delivery.message().header.as_ref().unwrap().delivery_count,
        1
    );
    step(receiver.accept(&delivery)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_message_is_readable_from_the_dead_letter_queue() {
    let OnQueue {
        _broker,
        connection: _connection,
        mut session,
        mut sender,
        mut receiver,
    } = on_queue().await;
    send(&mut sender, "poison").await;

    let delivery = step(receiver.recv::<String>()).await.unwrap();
    step(receiver.reject(&delivery, None)).await.unwrap();

    let mut dead = peek_lock_receiver(&mut session, "dead", "q/$DeadLetterQueue", 10).await;
    let delivery = step(dead.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), "poison");
    step(dead.accept(&delivery)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receive_and_delete_removes_on_delivery() {
    let broker = Broker::in_memory(&["q"]);
    let (_connection, mut session) = connect(&broker, "fe2o3-e2e").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    let mut receiver = step(
        Receiver::builder()
            .name("rad")
            .source("q")
            .sender_settle_mode(SenderSettleMode::Settled)
            .credit_mode(CreditMode::Manual)
            .attach(&mut session),
    )
    .await
    .unwrap();
    send(&mut sender, "one").await;
    send(&mut sender, "two").await;
    // One credit: receive-and-delete removes what it hands out, so prefetch would take both.
    step(receiver.set_credit(1)).await.unwrap();
    let first = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(first.body(), "one");
    step(receiver.close()).await.unwrap();

    // A new receiver starts after the deleted message without any settlement.
    let mut receiver = peek_lock_receiver(&mut session, "after", "q", 10).await;
    let next = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(next.body(), "two");
    step(receiver.accept(&next)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_key_is_refused() {
    let broker = Broker::in_memory(&["q"]);
    let refused = step(Connection::open(
        "fe2o3-e2e",
        broker.url_with_key("WRONG").as_str(),
    ))
    .await;
    assert!(refused.is_err(), "a wrong SAS key must not authenticate");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_entity_is_refused_with_not_found() {
    let broker = Broker::in_memory(&["q"]);
    let (_connection, mut session) = connect(&broker, "fe2o3-e2e").await;
    let refused = step(Sender::attach(&mut session, "sender", "no-such-queue")).await;
    let Err(error) = refused else {
        panic!("attach to an unknown queue succeeded");
    };
    let error = format!("{error:?}");
    assert!(
        error.contains("amqp:not-found") || error.contains("NotFound"),
        "{error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversize_message_is_rejected_and_the_link_stays_usable() {
    let broker = Broker::in_memory(&["q"]);
    let (_connection, mut session) = connect(&broker, "fe2o3-e2e").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    // fe2o3 checks the limit we advertise before sending; a client that sends anyway gets a
    // `rejected{amqp:link:message-size-exceeded}` (the Python suite covers that path).
    match step(sender.send("x".repeat(300 * 1024))).await {
        Err(error) => {
            let text = format!("{error:?}");
            assert!(text.contains("max_size: 262144"), "{text}");
        }
        Ok(Outcome::Rejected(rejected)) => {
            let error = rejected.error.unwrap();
            let condition = format!("{:?}", error.condition);
            assert!(condition.contains("MessageSizeExceeded"), "{condition}");
            assert!(error.description.unwrap().contains("TrackingId:"));
        }
        Ok(other) => panic!("oversize message not refused: {other:?}"),
    }
    send(&mut sender, "small").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_sends_reach_the_subscriptions_whose_rules_match() {
    // The default configuration: subscription.1 selects content type application/json.
    let broker = Broker::default_in_memory();
    let (_connection, mut session) = connect(&broker, "fe2o3-e2e").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "topic.1"))
        .await
        .unwrap();
    for (body, content_type) in [
        ("json", "application/json"),
        ("text", "text/plain"),
        ("end", "application/json"),
    ] {
        let message = Message::builder()
            .properties(Properties::builder().content_type(content_type).build())
            .value(body.to_owned())
            .build();
        let outcome = step(sender.send(message)).await.unwrap();
        assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
    }
    let mut receiver = peek_lock_receiver(
        &mut session,
        "receiver",
        "topic.1/Subscriptions/subscription.1",
        10,
    )
    .await;
    let mut received = Vec::new();
    loop {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        step(receiver.accept(&delivery)).await.unwrap();
        received.push(delivery.body().clone());
        if delivery.body() == "end" {
            break;
        }
    }
    assert_eq!(received, ["json", "end"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_settled_sends_are_stored() {
    let broker = Broker::in_memory(&["q"]);
    let (_connection, mut session) = connect(&broker, "fe2o3-e2e").await;
    let mut sender = step(
        Sender::builder()
            .name("presettled")
            .target("q")
            .sender_settle_mode(SenderSettleMode::Settled)
            .attach(&mut session),
    )
    .await
    .unwrap();
    for body in ["p1", "p2"] {
        step(sender.send(body.to_owned())).await.unwrap();
    }
    let mut receiver = peek_lock_receiver(&mut session, "receiver", "q", 10).await;
    for expected in ["p1", "p2"] {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        assert_eq!(delivery.body(), expected);
        step(receiver.accept(&delivery)).await.unwrap();
    }
}

/// Many unsettled sends in flight: the broker settles runs of contiguous deliveries with one
/// ranged disposition (`first..last`), and fe2o3 must resolve every send in the range.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_sends_in_flight_are_each_accepted() {
    let broker = Broker::in_memory(&["q"]);
    let (_connection, mut session) = connect(&broker, "fe2o3-e2e").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    let mut outcomes = Vec::new();
    for n in 0..200 {
        outcomes.push(step(sender.send_batchable(format!("m{n}"))).await.unwrap());
    }
    for outcome in outcomes {
        let outcome = step(outcome).await.unwrap();
        assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
    }
    let mut receiver = peek_lock_receiver(&mut session, "receiver", "q", 50).await;
    for n in 0..200 {
        let delivery = step(receiver.recv::<String>()).await.unwrap();
        assert_eq!(delivery.body(), &format!("m{n}"));
        step(receiver.accept(&delivery)).await.unwrap();
    }
}
