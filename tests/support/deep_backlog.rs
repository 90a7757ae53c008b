//! The 1 GiB backlog both durable stores must hold under a 32 MiB budget (`memory_budget.rs` on
//! file, `postgres_e2e/backlog.rs` on PostgreSQL): a deferred message under it, a session's
//! message in its middle, `VmRSS` bounded while it is full and after a SIGKILL restart, then
//! the deferred message by sequence number, the session, and the rest in order.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use fe2o3_amqp::link::SendError;
use fe2o3_amqp::link::delivery::{DeliveryFut, Sendable};
use fe2o3_amqp::link::receiver::CreditMode;
use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::definitions::ReceiverSettleMode;
use fe2o3_amqp::types::messaging::{
    Message, Modified, Outcome, Properties, SerializableBody, Source,
};
use fe2o3_amqp::types::primitives::{Array, OrderedMap, Symbol, Value};
use fe2o3_amqp::{Receiver, Sender};

use super::client::{connect, peek_lock_receiver, receive_and_delete, step};
use super::management::Management;
use super::{Broker, write_config_with};

/// A backlog thirty-two times the budget: 1 GiB of 64 KiB messages under a 32 MiB budget.
pub const MESSAGES: usize = 16_384;
pub const BODY: usize = 64 * 1024;
pub const BUDGET: &str = "32MiB";
/// What the broker may hold beyond its start while the backlog sits on disk: the budget, the
/// messages in flight and the allocator's slack, far below the backlog's 1,048,576 KiB.
pub const FULL_RSS_BOUND_KIB: u64 = 128 * 1024;
/// Just after a restart, one journal segment's read buffer (64 MiB) more: recovery reads the
/// journal a segment at a time, and the allocator returns the pages within seconds.
pub const RESTART_RSS_BOUND_KIB: u64 = FULL_RSS_BOUND_KIB + 64 * 1024;
/// Unsettled sends kept in flight while filling.
const IN_FLIGHT: usize = 32;

const QUEUE: &str = "q";
const SESSION_QUEUE: &str = "s";
const SESSION: &str = "deep";
const DEFERRED_BODY: &str = "deferred under the backlog";
const SESSION_BODY: &str = "a session in the middle of the backlog";

/// `Config.json` with the backlog's queue (a quota above 1 GiB) and a session queue.
pub fn config(dir: &Path) -> PathBuf {
    write_config_with(
        dir,
        &[
            (QUEUE, r#"{ "MaxSizeInMegabytes": 2048 }"#),
            (SESSION_QUEUE, r#"{ "RequiresSession": true }"#),
        ],
    )
}

/// A numbered 64 KiB body, so the drain can check order and content.
pub fn numbered(index: usize) -> String {
    format!("{index:08}{}", "x".repeat(BODY - 8))
}

/// Sends `count` messages, `IN_FLIGHT` unsettled at a time, and checks each was accepted.
pub async fn send_all<T: SerializableBody, M: Into<Sendable<T>>>(
    sender: &mut Sender,
    count: usize,
    message: impl Fn(usize) -> M,
) {
    let mut outcomes: VecDeque<DeliveryFut<Result<Outcome, SendError>>> =
        VecDeque::with_capacity(IN_FLIGHT);
    for index in 0..count {
        if outcomes.len() == IN_FLIGHT {
            let outcome = step(outcomes.pop_front().unwrap()).await.unwrap();
            assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
        }
        outcomes.push_back(step(sender.send_batchable(message(index))).await.unwrap());
    }
    for outcome in outcomes {
        let outcome = step(outcome).await.unwrap();
        assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
    }
}

/// What the fill left to check after the restart.
pub struct Filled {
    /// The deferred message's sequence number.
    deferred: i64,
    pub start_kib: u64,
    pub full_kib: u64,
}

/// Defers one message, then fills the queue with [`MESSAGES`] numbered ones (a session's
/// message sent halfway), asserting the broker's `VmRSS` stays under [`FULL_RSS_BOUND_KIB`].
pub async fn fill(broker: &Broker) -> Filled {
    let (connection, mut session) = connect(broker, "backlog").await;
    let mut sender = step(Sender::attach(&mut session, "sender", QUEUE))
        .await
        .unwrap();
    let mut session_sender = step(Sender::attach(
        &mut session,
        "session-sender",
        SESSION_QUEUE,
    ))
    .await
    .unwrap();
    step(sender.send(DEFERRED_BODY.to_owned())).await.unwrap();
    let deferred = defer_one(&mut session).await;
    let start_kib = broker.rss_kib();
    let half = MESSAGES / 2;
    send_all(&mut sender, half, numbered).await;
    let in_session = Message::builder()
        .properties(Properties {
            group_id: Some(SESSION.to_owned()),
            ..Properties::default()
        })
        .value(SESSION_BODY.to_owned())
        .build();
    let outcome = step(session_sender.send(in_session)).await.unwrap();
    assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
    send_all(&mut sender, MESSAGES - half, |index| numbered(half + index)).await;
    let full_kib = broker.rss_kib();
    eprintln!("VmRSS {start_kib} KiB at start, {full_kib} KiB holding a 1048576 KiB backlog");
    assert!(
        full_kib < start_kib + FULL_RSS_BOUND_KIB,
        "VmRSS {full_kib} KiB holding the backlog (start {start_kib} KiB)"
    );
    drop((sender, session_sender, session, connection));
    Filled {
        deferred,
        start_kib,
        full_kib,
    }
}

/// Receives the queue's first message in peek-lock and defers it; returns its sequence number.
async fn defer_one(session: &mut SessionHandle<()>) -> i64 {
    let mut receiver = peek_lock_receiver(session, "deferring", QUEUE, 1).await;
    let delivery = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), DEFERRED_BODY);
    let annotations = delivery.message().message_annotations.as_ref().unwrap();
    let sequence = annotations
        .iter()
        .find(|(key, _)| format!("{key:?}").contains("x-opt-sequence-number"))
        .map(|(_, value)| value.clone());
    let Some(Value::Long(sequence)) = sequence else {
        panic!("no sequence number: {annotations:?}")
    };
    let defer = Modified {
        delivery_failed: None,
        undeliverable_here: Some(true),
        message_annotations: None,
    };
    step(receiver.modify(&delivery, defer)).await.unwrap();
    step(receiver.close()).await.unwrap();
    sequence
}

/// After the restart: `VmRSS` under [`RESTART_RSS_BOUND_KIB`] over the fill's start, the
/// deferred message by its sequence number, the session's message, then every numbered one in
/// order.
pub async fn drain_after_restart(broker: &Broker, filled: &Filled) {
    let restarted_kib = broker.rss_kib();
    assert!(
        restarted_kib < filled.start_kib + RESTART_RSS_BOUND_KIB,
        "VmRSS {restarted_kib} KiB after the restart (start {} KiB)",
        filled.start_kib
    );
    let (_connection, mut session) = connect(broker, "drain").await;

    let mut management = Management::attach(&mut session, QUEUE).await;
    let sequence_numbers = Array::from(vec![Value::Long(filled.deferred)]);
    let response = management
        .call(
            "com.microsoft:receive-by-sequence-number",
            vec![
                ("sequence-numbers", Value::Array(sequence_numbers)),
                ("receiver-settle-mode", Value::Uint(0)),
            ],
        )
        .await;
    assert_eq!(response.status, 200, "{:?}", response.condition);
    let message = deferred_message_bytes(&response.body);
    assert!(
        message
            .windows(DEFERRED_BODY.len())
            .any(|window| window == DEFERRED_BODY.as_bytes()),
        "the deferred message's body is not in what receive-by-sequence-number returned"
    );
    management.close().await;

    let mut in_session = session_receiver(&mut session).await;
    let delivery = step(in_session.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), SESSION_BODY);
    step(in_session.accept(&delivery)).await.unwrap();

    let mut receiver = receive_and_delete(&mut session, QUEUE).await;
    let mut taken = 0;
    while taken < MESSAGES {
        let batch = 64.min(MESSAGES - taken);
        step(receiver.set_credit(u32::try_from(batch).unwrap()))
            .await
            .unwrap();
        for index in taken..taken + batch {
            let delivery = step(receiver.recv::<String>()).await.unwrap();
            assert!(
                *delivery.body() == numbered(index),
                "message {index} out of order"
            );
        }
        taken += batch;
    }
    eprintln!(
        "VmRSS {restarted_kib} KiB after the restart, {} KiB drained",
        broker.rss_kib()
    );
}

/// The encoded message in a `receive-by-sequence-number` answer holding exactly one.
fn deferred_message_bytes(body: &Value) -> Vec<u8> {
    let Value::Map(body) = body else {
        panic!("{body:?}")
    };
    let Some(Value::List(messages)) = body.get(&Value::String("messages".to_owned())) else {
        panic!("no messages list: {body:?}")
    };
    assert_eq!(messages.len(), 1, "{messages:?}");
    let Value::Map(entry) = &messages[0] else {
        panic!("{messages:?}")
    };
    match entry.get(&Value::String("message".to_owned())) {
        Some(Value::Binary(bytes)) => bytes.to_vec(),
        other => panic!("no message binary: {other:?}"),
    }
}

/// A peek-lock receiver on the session queue, locked to the backlog's session.
async fn session_receiver(session: &mut SessionHandle<()>) -> Receiver {
    let mut filter = OrderedMap::new();
    filter.insert(
        Symbol::from("com.microsoft:session-filter"),
        Value::String(SESSION.to_owned()),
    );
    let source = Source::builder()
        .address(SESSION_QUEUE)
        .filter(filter)
        .build();
    step(
        Receiver::builder()
            .name("session-receiver")
            .source(source)
            .receiver_settle_mode(ReceiverSettleMode::Second)
            .credit_mode(CreditMode::Auto(1))
            .attach(session),
    )
    .await
    .unwrap()
}
