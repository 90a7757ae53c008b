//! Premium's large messages end to end against the real binary with fe2o3-amqp: a queue whose
//! `MaxMessageSizeInKilobytes` is 102,400 takes a backlog of twenty 50 MB messages (1 GB) on
//! disk under a 16 MiB `--memory-budget` with the broker's `VmRSS` bounded far below the
//! backlog (each message's bytes are evicted to the store once durable), then hands every one
//! back intact, read from the store, its `VmRSS` still bounded while it streams them out. A
//! batch is held to Premium's 1 MiB batch limit whatever the entity's message limit.

#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use fe2o3_amqp::Sender;
use fe2o3_amqp::link::delivery::Sendable;
use fe2o3_amqp::types::messaging::{Data, Message, Outcome};
use fe2o3_amqp::types::primitives::Binary;
use support::client::{connect, receive_and_delete, step_within};
use support::{Broker, scratch_dir, write_config_with};

/// Each message's body: 50 MB.
const BODY: usize = 50_000_000;
/// The backlog: twenty of them, 1 GB.
const MESSAGES: usize = 20;
const BUDGET: &str = "16MiB";
/// What the broker may hold beyond its start while filling: the budget, the message being
/// reassembled and stored (two copies of one 50 MB message: received, and encoded for the
/// store, which the journal writes from those bytes) and the pages the allocator has not given
/// back yet; measured near 170 MiB (near 220 MiB when the journal copied it too), against a
/// backlog of 976,562 KiB.
const RSS_BOUND_KIB: u64 = 400 * 1024;
/// Likewise while draining, one message at a time: the message read back from the store, whose
/// sections go out framed straight from those bytes, a slice at a time (no copy encoded for the
/// receiver, none whole in the connection's output); measured near 220 MiB (near 320 MiB when
/// both copies were made).
const DRAIN_BOUND_KIB: u64 = 280 * 1024;
/// Bound on one message's send or receive (a guard: one takes about a second).
const STEP: Duration = Duration::from_secs(60);

async fn step<T>(future: impl Future<Output = T>) -> T {
    step_within(STEP, future).await
}

/// The body of message `index`: its number, then a byte that differs from one message to the
/// next, so that a mixed-up or truncated body shows.
fn body(index: usize) -> Vec<u8> {
    let mut body = vec![u8::try_from(index % 251).unwrap(); BODY];
    body[..8].copy_from_slice(&u64::try_from(index).unwrap().to_be_bytes());
    body
}

/// The broker's peak `VmRSS` while `future` runs, sampled every 50 ms.
async fn peak_rss<T>(broker: &Broker, future: impl Future<Output = T>) -> (T, u64) {
    let mut peak = broker.rss_kib();
    tokio::pin!(future);
    let mut ticks = tokio::time::interval(Duration::from_millis(50));
    loop {
        tokio::select! {
            done = &mut future => return (done, peak.max(broker.rss_kib())),
            _ = ticks.tick() => peak = peak.max(broker.rss_kib()),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1_gb_backlog_of_50_mb_messages_stays_on_disk_and_drains_intact() {
    let dir = scratch_dir("large-messages");
    let config = write_config_with(&dir, &[("q", r#"{ "MaxMessageSizeInKilobytes": 102400 }"#)]);
    let flags = ["--memory-budget", BUDGET];
    let broker = Broker::spawn_with(Some(config), Some(dir.join("data")), &flags);
    let (_connection, mut session) = connect(&broker, "large").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    // One send first, so that the baseline holds what any send allocates.
    step(sender.send("warm-up".to_owned())).await.unwrap();
    let start_kib = broker.rss_kib();

    let fill = async {
        for index in 0..MESSAGES {
            let message = Message::builder().data(Binary::from(body(index))).build();
            let outcome = step(sender.send(message)).await.unwrap();
            assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
        }
    };
    let ((), filling_kib) = peak_rss(&broker, fill).await;

    let mut receiver = receive_and_delete(&mut session, "q").await;
    step(receiver.set_credit(1)).await.unwrap();
    let warm_up = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(warm_up.body(), "warm-up");
    let drain = async {
        for index in 0..MESSAGES {
            step(receiver.set_credit(1)).await.unwrap();
            let delivery = step(receiver.recv::<Data>()).await.unwrap();
            let Data(received) = delivery.body();
            assert!(
                received.as_slice() == body(index),
                "message {index} differs"
            );
        }
    };
    let ((), draining_kib) = peak_rss(&broker, drain).await;
    eprintln!(
        "VmRSS {start_kib} KiB at start, peak {filling_kib} KiB filling and {draining_kib} KiB \
         draining a {} KiB backlog",
        MESSAGES * BODY / 1024
    );
    let phases = [
        ("filling", filling_kib, RSS_BOUND_KIB),
        ("draining", draining_kib, DRAIN_BOUND_KIB),
    ];
    for (phase, peak, bound) in phases {
        assert!(
            peak < start_kib + bound,
            "VmRSS peaked at {peak} KiB {phase} (start {start_kib} KiB)"
        );
    }
}

/// Service Bus's batch message format.
const BATCH_FORMAT: u32 = 0x8001_3700;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_past_one_mib_is_rejected_where_a_larger_single_message_is_taken() {
    let dir = scratch_dir("batch-limit");
    let config = write_config_with(&dir, &[("q", r#"{ "MaxMessageSizeInKilobytes": 4096 }"#)]);
    let broker = Broker::spawn_with(Some(config), Some(dir.join("data")), &[]);
    let (_connection, mut session) = connect(&broker, "batch-limit").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    let two_mb = || {
        Message::builder()
            .data(Binary::from(vec![7u8; 2_000_000]))
            .build()
    };
    let single = step(sender.send(two_mb())).await.unwrap();
    assert!(matches!(single, Outcome::Accepted(_)), "{single:?}");
    let batch = Sendable::builder()
        .message(two_mb())
        .message_format(BATCH_FORMAT)
        .build();
    let refused = step(sender.send(batch)).await.unwrap();
    let text = format!("{refused:?}");
    assert!(matches!(refused, Outcome::Rejected(_)), "{text}");
    assert!(text.contains("MessageSizeExceeded"), "{text}");
    // The link goes on.
    let after = step(sender.send("after".to_owned())).await.unwrap();
    assert!(matches!(after, Outcome::Accepted(_)), "{after:?}");
}
