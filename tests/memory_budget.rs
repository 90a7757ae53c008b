//! Memory under a backlog, end to end against the real binary with fe2o3-amqp: with `--memory`
//! (nowhere to evict to) the broker-wide `--memory-budget` refuses sends with
//! `amqp:resource-limit-exceeded` once the messages held reach it and takes them again once
//! receivers drain; on disk, a 1 GiB backlog thirty-two times the budget is accepted with the
//! broker's `VmRSS` bounded, survives a SIGKILL, gives back a deferred message under it and a
//! session's message in its middle, and drains in order (`support::deep_backlog`, which
//! PostgreSQL runs too); and a backlog of a few hundred MB within the budget, once drained, gives its
//! memory back to the system (`VmRSS` falls back near where it started).

#![allow(clippy::unwrap_used)]

mod support;

use std::time::{Duration, Instant};

use fe2o3_amqp::types::definitions::{AmqpError, ErrorCondition};
use fe2o3_amqp::types::messaging::{Body, Data, Message, Outcome};
use fe2o3_amqp::types::primitives::{Binary, Value};
use fe2o3_amqp::{Receiver, Sender};
use support::client::{connect, receive_and_delete, step};
use support::deep_backlog::{self, BODY, send_all};
use support::{Broker, scratch_dir, write_config};

fn body_message() -> Message<Data> {
    Message::builder()
        .data(Binary::from(vec![0x5a; BODY]))
        .build()
}

/// Receives and deletes exactly `count` messages.
async fn drain(receiver: &mut Receiver, count: usize) {
    const CREDIT: usize = 64;
    let mut taken = 0;
    while taken < count {
        let batch = CREDIT.min(count - taken);
        step(receiver.set_credit(u32::try_from(batch).unwrap()))
            .await
            .unwrap();
        for _ in 0..batch {
            step(receiver.recv::<Body<Value>>()).await.unwrap();
        }
        taken += batch;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sends_past_the_memory_budget_are_refused_until_receivers_drain() {
    let dir = scratch_dir("memory-budget");
    let broker = Broker::spawn_with(
        Some(write_config(&dir, &["q"])),
        None,
        &["--memory-budget", "1MiB"],
    );
    let (_connection, mut session) = connect(&broker, "budget").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    // 1 MiB holds 16 bodies of 64 KiB and their headers; the send that finds it used up is
    // refused, whatever the entity's own quota (1 GB) says.
    let mut accepted = 0;
    let refusal = loop {
        match step(sender.send(body_message())).await.unwrap() {
            Outcome::Accepted(_) => accepted += 1,
            Outcome::Rejected(rejected) => break rejected.error.unwrap(),
            other => panic!("unexpected outcome {other:?}"),
        }
        assert!(accepted <= 17, "sends past the 1 MiB budget were accepted");
    };
    assert!(accepted >= 15, "only {accepted} sends fit in 1 MiB");
    assert_eq!(
        refusal.condition,
        ErrorCondition::AmqpError(AmqpError::ResourceLimitExceeded)
    );
    let description = refusal.description.unwrap();
    assert!(
        description.starts_with("The broker's memory budget for messages is used up: "),
        "{description}"
    );
    assert!(description.contains("1048576 allowed"), "{description}");

    let mut receiver = receive_and_delete(&mut session, "q").await;
    drain(&mut receiver, accepted).await;
    for _ in 0..accepted {
        let outcome = step(sender.send(body_message())).await.unwrap();
        assert!(matches!(outcome, Outcome::Accepted(_)), "{outcome:?}");
    }
}

/// The backlog: 200 MB of 64 KiB messages.
const BACKLOG_MESSAGES: usize = 200_000_000 / BODY;
/// How long the broker may take to give the memory back once drained (the allocator returns
/// freed pages in the background within seconds; a loaded machine gets more).
const GIVE_BACK_WITHIN: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drained_backlog_gives_its_memory_back() {
    let dir = scratch_dir("backlog-rss");
    let broker = Broker::on_disk(write_config(&dir, &["q"]), dir.join("data"));
    let (_connection, mut session) = connect(&broker, "backlog").await;
    let mut sender = step(Sender::attach(&mut session, "sender", "q"))
        .await
        .unwrap();
    let mut receiver = receive_and_delete(&mut session, "q").await;
    // One round trip first, so that the baseline holds what any send and receive allocate.
    step(sender.send(body_message())).await.unwrap();
    drain(&mut receiver, 1).await;
    let start_kib = broker.rss_kib();

    send_all(&mut sender, BACKLOG_MESSAGES, |_| body_message()).await;
    let full_kib = broker.rss_kib();
    let backlog_kib = u64::try_from(BACKLOG_MESSAGES * BODY / 1024).unwrap();
    // The broker does hold the backlog, so the bound below measures something.
    assert!(
        full_kib > start_kib + backlog_kib / 2,
        "VmRSS {start_kib} KiB at start, {full_kib} KiB holding a {backlog_kib} KiB backlog"
    );

    drain(&mut receiver, BACKLOG_MESSAGES).await;
    let bound_kib = start_kib + backlog_kib / 4;
    let deadline = Instant::now() + GIVE_BACK_WITHIN;
    let mut now_kib = broker.rss_kib();
    while now_kib > bound_kib && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        now_kib = broker.rss_kib();
    }
    eprintln!("VmRSS {start_kib} KiB at start, {full_kib} KiB full, {now_kib} KiB after the drain");
    assert!(
        now_kib <= bound_kib,
        "VmRSS still {now_kib} KiB {GIVE_BACK_WITHIN:?} after the drain (start {start_kib} KiB, \
         full {full_kib} KiB, bound {bound_kib} KiB)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backlog_past_the_budget_is_held_on_disk_and_drains_in_order_after_a_kill() {
    let dir = scratch_dir("backlog-on-disk");
    let (config, data) = (deep_backlog::config(&dir), dir.join("data"));
    let flags = ["--memory-budget", deep_backlog::BUDGET];
    let broker = Broker::spawn_with(Some(config.clone()), Some(data.clone()), &flags);
    let filled = deep_backlog::fill(&broker).await;
    broker.kill();
    let broker = Broker::spawn_with(Some(config), Some(data), &flags);
    deep_backlog::drain_after_restart(&broker, &filled).await;
}
