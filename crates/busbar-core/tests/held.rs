//! Held copies (one entity's part of a send to several entities): invisible until released,
//! dropped without a trace when discarded.

mod common;

use busbar_core::{EnqueueOutcome, EntityConfig, ReceiveMode, Record, SequenceNumber, SubQueue};
use common::*;
use std::time::Duration;

fn with_duplicate_detection() -> EntityConfig {
    EntityConfig {
        duplicate_detection_window: Some(Duration::from_secs(60)),
        ..EntityConfig::default()
    }
}

#[test]
fn held_copies_are_invisible_until_released() {
    let mut entity = entity(EntityConfig::default());
    let held = entity
        .hold(vec![message("a"), message("b")], at(0))
        .unwrap();
    let sequences = held.sequences();
    assert_eq!(sequences, vec![SequenceNumber(1), SequenceNumber(2)]);
    assert!(
        held.records
            .iter()
            .all(|record| matches!(record, Record::Insert { .. }))
    );
    assert!(!entity.has_records(), "held inserts go to the caller only");
    // A later plain message made durable must not reveal the held ones below it.
    let later = send(&mut entity, message("c"), at(1));
    assert!(
        entity
            .peek(SubQueue::Main, SequenceNumber(0), 10, at(1))
            .iter()
            .all(|d| d.sequence == later)
    );
    assert!(
        entity
            .snapshot()
            .messages
            .iter()
            .all(|(_, d)| d.sequence == later)
    );
    let first = entity
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap();
    assert_eq!(first.sequence, later);
    assert!(
        entity
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
            .is_none()
    );

    entity.release_held(&sequences);
    let received: Vec<_> =
        std::iter::from_fn(|| entity.receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(2)))
            .map(|d| payload(&d).to_vec())
            .collect();
    assert_eq!(received, vec![b"a".to_vec(), b"b".to_vec()]);
    entity.check_invariants().unwrap();
}

#[test]
fn a_released_scheduled_copy_waits_for_its_time() {
    let mut entity = entity(EntityConfig::default());
    let scheduled = busbar_core::NewMessage {
        scheduled_enqueue_time: Some(at(10_000)),
        ..message("later")
    };
    let sequences = entity.hold(vec![scheduled], at(0)).unwrap().sequences();
    assert!(
        entity
            .peek(SubQueue::Main, SequenceNumber(0), 10, at(0))
            .is_empty()
    );
    entity.release_held(&sequences);
    let peeked = entity.peek(SubQueue::Main, SequenceNumber(0), 10, at(0));
    assert_eq!(peeked.len(), 1);
    assert_eq!(peeked[0].state, busbar_core::MessageState::Scheduled);
    assert!(
        entity
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(0))
            .is_none()
    );
    assert!(
        entity
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(10_000))
            .is_some()
    );
}

#[test]
fn discarded_copies_leave_no_trace_and_their_ids_may_be_sent_again() {
    let mut entity = entity(with_duplicate_detection());
    let held = entity.hold(vec![with_id("a", "id-1")], at(0)).unwrap();
    entity.discard_held(&held.sequences());
    assert!(!entity.has_records());
    assert!(entity.snapshot().messages.is_empty());
    assert!(entity.is_empty(SubQueue::Main));
    entity.mark_durable(SequenceNumber(i64::MAX));
    assert!(
        entity
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
            .is_none()
    );
    // The failed send's retry is a new message, not a duplicate of one never stored.
    let retry = entity.enqueue(vec![with_id("a", "id-1")], at(2)).unwrap();
    assert!(matches!(retry[..], [EnqueueOutcome::Enqueued(_)]));
    entity.check_invariants().unwrap();
}

#[test]
fn a_held_duplicate_holds_nothing() {
    let mut entity = entity(with_duplicate_detection());
    send(&mut entity, with_id("a", "id-1"), at(0));
    let held = entity.hold(vec![with_id("a", "id-1")], at(1)).unwrap();
    assert_eq!(held.outcomes, vec![EnqueueOutcome::Duplicate]);
    assert!(held.records.is_empty() && held.sequences().is_empty());
}

#[test]
fn release_and_discard_ignore_numbers_that_are_not_held() {
    let mut entity = entity(EntityConfig::default());
    let stored = send(&mut entity, message("kept"), at(0));
    let pending = entity.enqueue(vec![message("pending")], at(0)).unwrap();
    let [EnqueueOutcome::Enqueued(pending)] = pending[..] else {
        panic!("expected one enqueued message");
    };
    entity.discard_held(&[stored, pending, SequenceNumber(99)]);
    entity.release_held(&[pending]);
    assert_eq!(entity.len(SubQueue::Main), 2);
    // Still pending: only mark_durable reveals it.
    let first = entity
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(1))
        .unwrap();
    assert_eq!(first.sequence, stored);
    assert!(
        entity
            .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(1))
            .is_none()
    );
    entity.check_invariants().unwrap();
}

#[test]
fn released_copies_replay_from_their_records() {
    let mut entity = entity(EntityConfig::default());
    let held = entity.hold(vec![message("a")], at(0)).unwrap();
    let sequences = held.sequences();
    let mut store = SimulatedStore::default();
    store.apply(held.records);
    entity.release_held(&sequences);
    let restored = store.restore(EntityConfig::default(), at(1));
    assert_eq!(restored.snapshot(), entity.snapshot());
}

#[test]
fn a_copy_dead_lettered_on_arrival_is_held_in_the_dead_letter_queue_too() {
    let dead_lettered = || busbar_core::NewMessage {
        dead_letter: Some(busbar_core::DeadLetterInfo {
            reason: Some("FilterException".to_owned()),
            description: None,
        }),
        ..message("x")
    };
    let mut entity = entity(EntityConfig::default());
    let kept = entity.hold(vec![dead_lettered()], at(0)).unwrap();
    let dropped = entity.hold(vec![dead_lettered()], at(0)).unwrap();
    entity.mark_durable(SequenceNumber(2));
    assert!(
        entity
            .peek(SubQueue::DeadLetter, SequenceNumber(0), 10, at(1))
            .is_empty()
    );
    assert!(entity.snapshot().messages.is_empty());
    entity.discard_held(&dropped.sequences());
    entity.release_held(&kept.sequences());
    entity.check_invariants().unwrap();
    assert_eq!(entity.len(SubQueue::DeadLetter), 1);
    let delivery = entity
        .receive(SubQueue::DeadLetter, ReceiveMode::PeekLock, at(2))
        .unwrap();
    assert_eq!(delivery.sequence, kept.sequences()[0]);
    assert!(delivery.dead_letter.is_some());
}

#[test]
fn pending_messages_whose_write_failed_are_dropped_without_a_trace() {
    let mut entity = entity(with_duplicate_detection());
    let kept = send(&mut entity, message("kept"), at(0));
    entity
        .enqueue(vec![with_id("a", "id-1"), message("b")], at(1))
        .unwrap();
    let later = entity.enqueue(vec![message("c")], at(2)).unwrap();
    let held = entity.hold(vec![message("held")], at(2)).unwrap();
    entity.drain_records().for_each(drop);
    // The batch of "a" and "b" failed; "c" (a later batch) and the held copy are untouched.
    entity.discard_pending(SequenceNumber(3));
    assert!(!entity.has_records());
    assert_eq!(entity.len(SubQueue::Main), 3);
    let [EnqueueOutcome::Enqueued(later)] = later[..] else {
        panic!("expected one enqueued message");
    };
    entity.mark_durable(later);
    entity.release_held(&held.sequences());
    let received: Vec<_> =
        std::iter::from_fn(|| entity.receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(3)))
            .map(|d| d.sequence)
            .collect();
    assert_eq!(received, [kept, later, held.sequences()[0]]);
    // The failed send's retry is stored, not taken for a duplicate.
    let retry = entity.enqueue(vec![with_id("a", "id-1")], at(4)).unwrap();
    assert!(matches!(retry[..], [EnqueueOutcome::Enqueued(_)]));
    entity.check_invariants().unwrap();
}
