//! The entity size quota (`MaxSizeInMegabytes`): which messages count, when an enqueue is
//! refused, and that a restored entity counts the same.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use busbar_core::{
    CoreError, DeadLetterInfo, EntityConfig, NewMessage, Outcome, Properties, ReceiveMode,
    SequenceNumber, SubQueue,
};
use common::*;

fn quota(max_size_bytes: u64) -> EntityConfig {
    EntityConfig {
        max_size_bytes,
        ..EntityConfig::default()
    }
}

#[test]
fn enqueue_is_refused_once_the_stored_bytes_reach_the_quota_and_changes_nothing() {
    let mut queue = entity(quota(10));
    send(&mut queue, message("1234"), at(0));
    // 4 of 10 bytes: a batch going past the quota is still taken, as Service Bus does.
    queue
        .enqueue(vec![message("12345"), message("123")], at(0))
        .unwrap();
    queue.mark_durable(SequenceNumber(queue.high_water()));
    assert_eq!(queue.size_bytes(), 12);
    drop(queue.drain_records());
    let before = queue.snapshot();
    assert_eq!(
        queue.enqueue(vec![message("x")], at(1)),
        Err(CoreError::QuotaExceeded { size: 12, max: 10 })
    );
    assert_eq!(queue.snapshot(), before);
    assert!(!queue.has_records());
    assert_eq!(queue.high_water(), 3);
}

#[test]
fn removing_messages_frees_the_quota_again() {
    let mut queue = entity(quota(8));
    send(&mut queue, message("1234"), at(0));
    send(&mut queue, message("5678"), at(0));
    assert!(matches!(
        queue.enqueue(vec![message("x")], at(0)),
        Err(CoreError::QuotaExceeded { .. })
    ));
    let delivery = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap();
    // A locked message still counts.
    assert_eq!(queue.size_bytes(), 8);
    queue
        .settle(delivery.lock.unwrap().token, Outcome::Complete, at(2))
        .unwrap();
    assert_eq!(queue.size_bytes(), 4);
    send(&mut queue, message("x"), at(3));
    assert_eq!(queue.size_bytes(), 5);
    queue
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(4))
        .unwrap();
    assert_eq!(queue.size_bytes(), 1);
}

#[test]
fn scheduled_deferred_dead_lettered_and_pending_messages_count() {
    let mut queue = entity(EntityConfig::default());
    let scheduled = NewMessage {
        scheduled_enqueue_time: Some(at(60_000)),
        ..message("sched")
    };
    let scheduled_sequence = send(&mut queue, scheduled, at(0));
    send(&mut queue, message("defer"), at(0));
    send(&mut queue, message("dead"), at(0));
    queue.enqueue(vec![message("pend")], at(0)).unwrap();
    assert_eq!(queue.size_bytes(), 5 + 5 + 4 + 4);

    let to_defer = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap();
    let properties = Properties::new();
    queue
        .settle(
            to_defer.lock.unwrap().token,
            Outcome::Defer {
                properties: properties.clone(),
            },
            at(1),
        )
        .unwrap();
    let to_dead_letter = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap();
    queue
        .settle(
            to_dead_letter.lock.unwrap().token,
            Outcome::DeadLetter {
                info: DeadLetterInfo::default(),
                properties,
            },
            at(1),
        )
        .unwrap();
    assert_eq!(queue.len(SubQueue::DeadLetter), 1);
    assert_eq!(queue.size_bytes(), 18);

    queue.cancel_scheduled(&[scheduled_sequence]).unwrap();
    assert_eq!(queue.size_bytes(), 13);
    let dead = queue
        .receive(SubQueue::DeadLetter, ReceiveMode::ReceiveAndDelete, at(2))
        .unwrap();
    assert_eq!(payload(&dead), b"dead");
    assert_eq!(queue.size_bytes(), 9);
}

#[test]
fn expired_messages_stop_counting() {
    let mut queue = entity(EntityConfig {
        default_message_ttl: Some(secs(10)),
        ..quota(4)
    });
    send(&mut queue, message("1234"), at(0));
    assert!(queue.enqueue(vec![message("x")], at(1)).is_err());
    queue.handle_timeout(at(10_000));
    assert_eq!(queue.size_bytes(), 0);
    send(&mut queue, message("x"), at(10_001));
}

#[test]
fn a_restored_entity_counts_what_it_stores() {
    let mut queue = entity(quota(6));
    let mut store = SimulatedStore::default();
    send(&mut queue, message("123"), at(0));
    send(&mut queue, message("456"), at(0));
    let delivery = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap();
    queue
        .settle(
            delivery.lock.unwrap().token,
            Outcome::DeadLetter {
                info: DeadLetterInfo::default(),
                properties: Properties::new(),
            },
            at(1),
        )
        .unwrap();
    store.apply(queue.drain_records());
    let mut restored = store.restore(quota(6), at(2));
    assert_eq!(restored.size_bytes(), 6);
    assert_eq!(
        restored.enqueue(vec![message("x")], at(2)),
        Err(CoreError::QuotaExceeded { size: 6, max: 6 })
    );
}

#[test]
fn a_zero_quota_is_an_invalid_configuration() {
    assert!(matches!(
        busbar_core::Entity::new(quota(0), SEED),
        Err(CoreError::InvalidConfig(_))
    ));
}

#[test]
fn held_copies_count_and_are_refused_like_enqueues() {
    let mut queue = entity(quota(4));
    let held = queue.hold(vec![message("1234")], at(0)).unwrap();
    assert_eq!(queue.size_bytes(), 4);
    assert!(matches!(
        queue.hold(vec![message("x")], at(0)),
        Err(CoreError::QuotaExceeded { size: 4, max: 4 })
    ));
    queue.discard_held(&held.sequences());
    assert_eq!(queue.size_bytes(), 0);
    send(&mut queue, message("x"), at(1));
}
