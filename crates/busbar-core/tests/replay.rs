//! Records and replay: what the entity emits for the store, and rebuilding an entity from it.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use busbar_core::{
    CoreError, EnqueueOutcome, Entity, EntityConfig, MessageState, NewMessage, Outcome, Properties,
    ReceiveMode, Record, SequenceNumber, SubQueue,
};
use bytes::Bytes;
use common::*;

fn lock_token(queue: &mut Entity, now_ms: i64) -> busbar_core::LockToken {
    let delivery = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(now_ms))
        .unwrap();
    delivery.lock.unwrap().token
}

#[test]
fn each_change_emits_one_record_of_the_right_kind() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, message("a"), at(0));
    let records: Vec<_> = queue.drain_records().collect();
    assert!(matches!(
        &records[..],
        [Record::Insert {
            sequence: SequenceNumber(1),
            ..
        }]
    ));
    let token = lock_token(&mut queue, 0);
    assert!(!queue.has_records(), "locks are never persisted");
    queue
        .settle(
            token,
            Outcome::Abandon {
                properties: Properties::new(),
            },
            at(1),
        )
        .unwrap();
    let records: Vec<_> = queue.drain_records().collect();
    assert!(matches!(
        &records[..],
        [Record::Update {
            sequence: SequenceNumber(1),
            ..
        }]
    ));
    let token = lock_token(&mut queue, 2);
    queue.settle(token, Outcome::Complete, at(3)).unwrap();
    let records: Vec<_> = queue.drain_records().collect();
    assert_eq!(
        records,
        [Record::Remove {
            sequence: SequenceNumber(1)
        }]
    );
}

#[test]
fn the_payload_is_stored_once_and_shared_by_record_and_delivery() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, message("payload bytes"), at(0));
    let Some(Record::Insert { message, .. }) = queue.drain_records().next() else {
        panic!("expected an insert record");
    };
    let delivery = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(0))
        .unwrap();
    let range = message.as_ptr_range();
    assert!(
        range.contains(&delivery.payload.as_ptr()),
        "delivery payload is a slice of the record"
    );
    assert_eq!(&delivery.payload[..], b"payload bytes");
}

#[test]
fn replay_restores_messages_states_counts_but_not_locks() {
    let config = EntityConfig::default();
    let mut queue = entity(config.clone());
    let mut store = SimulatedStore::default();
    for p in ["a", "b", "c", "d"] {
        send(&mut queue, message(p), at(0));
    }
    let scheduled = NewMessage {
        scheduled_enqueue_time: Some(at(500_000)),
        ..message("e")
    };
    send(&mut queue, scheduled, at(0));
    let a = lock_token(&mut queue, 1);
    queue
        .settle(
            a,
            Outcome::Abandon {
                properties: Properties::new(),
            },
            at(1),
        )
        .unwrap();
    let a = lock_token(&mut queue, 2);
    let b = lock_token(&mut queue, 2);
    let c = lock_token(&mut queue, 2);
    queue
        .settle(
            b,
            Outcome::Defer {
                properties: Properties::new(),
            },
            at(3),
        )
        .unwrap();
    queue
        .settle(
            c,
            Outcome::DeadLetter {
                info: Default::default(),
                properties: Properties::new(),
            },
            at(3),
        )
        .unwrap();
    store.apply(queue.drain_records());
    let restored = store.restore(config.clone(), at(4));
    restored.check_invariants().unwrap();
    assert_eq!(restored.snapshot(), queue.snapshot().without_locks());
    assert_eq!(restored.locks_held(), 0);
    // The message locked before the restart is available again, its count kept.
    let mut restored = restored;
    let again = restored
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(5))
        .unwrap();
    assert_eq!(again.sequence, SequenceNumber(1));
    assert_eq!(again.delivery_count, 1);
    assert_ne!(again.lock.unwrap().token, a, "a new seed gives new tokens");
    assert_eq!(restored.poll_timeout(), Some(at(60_005)));
    restored.handle_timeout(at(500_000));
    let peeked = restored.peek(SubQueue::Main, SequenceNumber(5), 1, at(500_000));
    assert_eq!(peeked[0].state, MessageState::Active);
}

#[test]
fn the_high_water_mark_survives_even_when_every_message_is_gone() {
    let config = EntityConfig::default();
    let mut queue = entity(config.clone());
    let mut store = SimulatedStore::default();
    send(&mut queue, message("a"), at(0));
    send(&mut queue, message("b"), at(0));
    while queue
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(1))
        .is_some()
    {}
    store.apply(queue.drain_records());
    assert!(store.messages.is_empty());
    let mut restored = store.restore(config, at(2));
    assert_eq!(send(&mut restored, message("c"), at(2)), SequenceNumber(3));
}

#[test]
fn duplicate_detection_remembers_ids_of_stored_messages_across_a_restart() {
    let config = EntityConfig {
        duplicate_detection_window: Some(secs(60)),
        ..EntityConfig::default()
    };
    let mut queue = entity(config.clone());
    let mut store = SimulatedStore::default();
    send(&mut queue, with_id("a", "id-1"), at(0));
    store.apply(queue.drain_records());
    let mut restored = store.restore(config, at(10_000));
    let outcome = restored
        .enqueue(vec![with_id("a", "id-1")], at(10_000))
        .unwrap();
    assert_eq!(outcome, [EnqueueOutcome::Duplicate]);
    let outcome = restored
        .enqueue(vec![with_id("a", "id-1")], at(60_000))
        .unwrap();
    assert_eq!(outcome, [EnqueueOutcome::Enqueued(SequenceNumber(2))]);
}

#[test]
fn malformed_store_input_is_an_error_not_a_panic() {
    let config = EntityConfig::default();
    let mut queue = entity(config.clone());
    send(&mut queue, message("a"), at(0));
    let Some(Record::Insert { message, state, .. }) = queue.drain_records().next() else {
        panic!("expected an insert record");
    };
    let restore = |items: Vec<(i64, Bytes, Bytes)>| {
        Entity::restore(config.clone(), SEED, 0, items, at(0)).map(|_| ())
    };
    assert_eq!(restore(vec![(1, message.clone(), state.clone())]), Ok(()));
    assert!(matches!(
        restore(vec![
            (1, message.clone(), state.clone()),
            (1, message.clone(), state.clone())
        ]),
        Err(CoreError::Decode(_))
    ));
    // Out of order is fine; a number met again after a lower one is still a duplicate.
    let item = |sequence| (sequence, message.clone(), state.clone());
    assert_eq!(restore(vec![item(2), item(1)]), Ok(()));
    assert!(matches!(
        restore(vec![item(2), item(1), item(2)]),
        Err(CoreError::Decode(_))
    ));
    assert!(matches!(
        restore(vec![(0, message.clone(), state.clone())]),
        Err(CoreError::Decode(_))
    ));
    assert!(matches!(
        restore(vec![(1, message.slice(..3), state.clone())]),
        Err(CoreError::Decode(_))
    ));
    assert!(matches!(
        restore(vec![(1, message.clone(), Bytes::from_static(b"\x01\x07"))]),
        Err(CoreError::Decode(_))
    ));
    assert!(matches!(
        Entity::restore(config.clone(), SEED, i64::MAX, Vec::new(), at(0)),
        Err(CoreError::Decode(_))
    ));
    let bad_config = EntityConfig {
        max_delivery_count: 0,
        ..config
    };
    assert!(matches!(
        Entity::restore(bad_config, SEED, 0, Vec::new(), at(0)),
        Err(CoreError::InvalidConfig(_))
    ));
}
