//! Rules of the peek-lock side: locks and competing receivers, settlement, renewal, lock expiry,
//! TTL, deferral, the dead-letter sub-queue and entity updates.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use busbar_core::{
    CoreError, DeadLetterInfo, Delivery, Entity, EntityConfig, LockToken, MessageState, NewMessage,
    Outcome, Properties, ReceiveMode, SequenceNumber, SubQueue,
};
use bytes::Bytes;
use common::*;
use std::collections::BTreeMap;

fn lock(queue: &mut Entity, now_ms: i64) -> Delivery {
    queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(now_ms))
        .unwrap()
}

fn token(delivery: &Delivery) -> LockToken {
    delivery.lock.unwrap().token
}

fn props(key: &str, value: &'static [u8]) -> Properties {
    let mut map = BTreeMap::new();
    map.insert(key.to_owned(), Bytes::from_static(value));
    Properties::from(map)
}

fn abandon() -> Outcome {
    Outcome::Abandon {
        properties: Properties::new(),
    }
}

/// Asserts that `operation` fails with `expected` and leaves the entity exactly as it was.
fn assert_refused(
    queue: &mut Entity,
    expected: CoreError,
    operation: impl FnOnce(&mut Entity) -> Result<(), CoreError>,
) {
    let before = queue.snapshot();
    let records_before = queue.has_records();
    assert_eq!(operation(queue), Err(expected));
    assert_eq!(queue.snapshot(), before);
    assert_eq!(queue.has_records(), records_before);
    queue.check_invariants().unwrap();
}

#[test]
fn peek_lock_locks_for_the_lock_duration_and_hides_from_competitors() {
    let mut queue = entity(EntityConfig {
        lock_duration: secs(30),
        ..EntityConfig::default()
    });
    queue
        .enqueue(vec![message("a"), message("b")], at(0))
        .unwrap();
    queue.mark_durable(SequenceNumber(queue.high_water()));
    let first = lock(&mut queue, 100);
    let lock_info = first.lock.unwrap();
    assert_eq!(lock_info.locked_until, at(30_100));
    assert_eq!(lock_info.token.as_bytes()[6] >> 4, 4);
    let second = lock(&mut queue, 100);
    assert_eq!(payload(&second), b"b");
    assert_ne!(token(&second), lock_info.token);
    assert!(
        queue
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(100))
            .is_none()
    );
    assert_eq!(queue.locks_held(), 2);
    assert_eq!(queue.poll_timeout(), Some(at(30_100)));
}

#[test]
fn complete_removes_the_message() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, message("a"), at(0));
    let delivery = lock(&mut queue, 0);
    queue
        .settle(token(&delivery), Outcome::Complete, at(1))
        .unwrap();
    assert!(queue.is_empty(SubQueue::Main));
    assert_eq!(queue.locks_held(), 0);
    assert_refused(&mut queue, CoreError::LockLost, |q| {
        q.settle(token(&delivery), Outcome::Complete, at(2))
    });
}

#[test]
fn abandon_unlocks_counts_a_delivery_merges_properties_and_keeps_order() {
    let mut queue = entity(EntityConfig::default());
    queue
        .enqueue(vec![message("a"), message("b")], at(0))
        .unwrap();
    queue.mark_durable(SequenceNumber(queue.high_water()));
    let first = lock(&mut queue, 0);
    let outcome = Outcome::Abandon {
        properties: props("reason", b"x"),
    };
    queue.settle(token(&first), outcome, at(1)).unwrap();
    let again = lock(&mut queue, 2);
    assert_eq!(again.sequence, first.sequence, "served in sequence order");
    assert_eq!(again.delivery_count, 1);
    assert_eq!(again.properties, props("reason", b"x"));
}

#[test]
fn release_unlocks_without_counting() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, message("a"), at(0));
    let first = lock(&mut queue, 0);
    queue.drain_records().for_each(drop);
    queue
        .settle(token(&first), Outcome::Release, at(1))
        .unwrap();
    assert!(!queue.has_records(), "a release changes no persisted state");
    let again = lock(&mut queue, 2);
    assert_eq!(again.delivery_count, 0);
}

#[test]
fn dead_letter_moves_to_the_sub_queue_with_reason_and_description() {
    let mut queue = entity(EntityConfig::default());
    let sequence = send(&mut queue, message("a"), at(0));
    let delivery = lock(&mut queue, 0);
    let info = DeadLetterInfo {
        reason: Some("bad".to_owned()),
        description: Some("really bad".to_owned()),
    };
    let outcome = Outcome::DeadLetter {
        info: info.clone(),
        properties: props("k", b"v"),
    };
    queue.settle(token(&delivery), outcome, at(1)).unwrap();
    assert!(queue.is_empty(SubQueue::Main));
    let dead = queue
        .receive(SubQueue::DeadLetter, ReceiveMode::PeekLock, at(2))
        .unwrap();
    assert_eq!(
        dead.sequence, sequence,
        "dead-lettered messages keep their number"
    );
    assert_eq!(dead.dead_letter, Some(info));
    assert_eq!(dead.properties, props("k", b"v"));
    assert_eq!(dead.delivery_count, 0);
}

#[test]
fn defer_sets_aside_for_retrieval_by_sequence_number_only() {
    let mut queue = entity(EntityConfig::default());
    let sequence = send(&mut queue, message("a"), at(0));
    let delivery = lock(&mut queue, 0);
    let outcome = Outcome::Defer {
        properties: props("p", b"1"),
    };
    queue.settle(token(&delivery), outcome, at(1)).unwrap();
    assert!(
        queue
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(2))
            .is_none()
    );
    let peeked = queue.peek(SubQueue::Main, sequence, 1, at(2));
    assert_eq!(peeked[0].state, MessageState::Deferred);
    // Counted as active (as Service Bus counts it) and as deferred.
    assert_eq!((queue.counts().active, queue.counts().deferred), (1, 1));
    let got = queue
        .receive_deferred(SubQueue::Main, &[sequence], ReceiveMode::PeekLock, at(3))
        .unwrap();
    assert_eq!(
        queue.counts().deferred,
        0,
        "locked now, not waiting deferred"
    );
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].state, MessageState::Deferred);
    assert_eq!(got[0].delivery_count, 0);
    assert_eq!(got[0].lock.unwrap().locked_until, at(60_003));
    // Abandoning a deferred message returns it to Deferred, one delivery counted.
    queue.settle(token(&got[0]), abandon(), at(4)).unwrap();
    let peeked = queue.peek(SubQueue::Main, sequence, 1, at(5));
    assert_eq!(peeked[0].state, MessageState::Deferred);
    assert_eq!(peeked[0].delivery_count, 1);
    // Its lock expiring does the same.
    let got = queue
        .receive_deferred(SubQueue::Main, &[sequence], ReceiveMode::PeekLock, at(5))
        .unwrap();
    queue.handle_timeout(got[0].lock.unwrap().locked_until);
    let peeked = queue.peek(SubQueue::Main, sequence, 1, at(60_005));
    assert_eq!(peeked[0].state, MessageState::Deferred);
    assert_eq!(peeked[0].delivery_count, 2);
    let removed = queue
        .receive_deferred(
            SubQueue::Main,
            &[sequence, sequence],
            ReceiveMode::ReceiveAndDelete,
            at(60_006),
        )
        .unwrap();
    assert_eq!(removed.len(), 1);
    assert!(queue.is_empty(SubQueue::Main));
}

#[test]
fn receive_deferred_refuses_non_deferred_numbers_and_changes_nothing() {
    let mut queue = entity(EntityConfig::default());
    let deferred = send(&mut queue, message("a"), at(0));
    let active = send(&mut queue, message("b"), at(0));
    let delivery = lock(&mut queue, 0);
    queue
        .settle(
            token(&delivery),
            Outcome::Defer {
                properties: Properties::new(),
            },
            at(0),
        )
        .unwrap();
    for bad in [active, SequenceNumber(77)] {
        assert_refused(&mut queue, CoreError::MessageNotFound(bad), |q| {
            q.receive_deferred(
                SubQueue::Main,
                &[deferred, bad],
                ReceiveMode::PeekLock,
                at(1),
            )
            .map(drop)
        });
    }
    // A deferred message under lock does not qualify either.
    let got = queue
        .receive_deferred(SubQueue::Main, &[deferred], ReceiveMode::PeekLock, at(1))
        .unwrap();
    assert_refused(&mut queue, CoreError::MessageNotFound(deferred), |q| {
        q.receive_deferred(SubQueue::Main, &[deferred], ReceiveMode::PeekLock, at(2))
            .map(drop)
    });
    queue
        .settle(token(&got[0]), Outcome::Complete, at(2))
        .unwrap();
}

#[test]
fn stale_unknown_and_expired_tokens_lose_the_lock_and_change_nothing() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, message("a"), at(0));
    let first = lock(&mut queue, 0);
    queue
        .settle(token(&first), Outcome::Release, at(1))
        .unwrap();
    let second = lock(&mut queue, 2);
    // The first token named the same lock slot; its generation is gone.
    assert_refused(&mut queue, CoreError::LockLost, |q| {
        q.settle(token(&first), Outcome::Complete, at(3))
    });
    assert_refused(&mut queue, CoreError::LockLost, |q| {
        q.settle(LockToken::from_bytes([7; 16]), abandon(), at(3))
    });
    let until = second.lock.unwrap().locked_until;
    assert_refused(&mut queue, CoreError::LockLost, |q| {
        q.settle(token(&second), Outcome::Complete, until)
    });
    assert_refused(&mut queue, CoreError::LockLost, |q| {
        q.renew_lock(token(&second), until).map(drop)
    });
}

#[test]
fn renew_extends_a_valid_lock_from_now() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, message("a"), at(0));
    let delivery = lock(&mut queue, 0);
    assert_eq!(
        queue.renew_lock(token(&delivery), at(50_000)),
        Ok(at(110_000))
    );
    assert_eq!(queue.poll_timeout(), Some(at(110_000)));
    queue.handle_timeout(at(100_000));
    queue
        .settle(token(&delivery), Outcome::Complete, at(109_999))
        .unwrap();
}

#[test]
fn lock_expiry_makes_the_message_available_again_at_the_front_with_one_more_delivery() {
    let mut queue = entity(EntityConfig::default());
    queue
        .enqueue(vec![message("a"), message("b")], at(0))
        .unwrap();
    queue.mark_durable(SequenceNumber(queue.high_water()));
    let first = lock(&mut queue, 0);
    send(&mut queue, message("c"), at(1));
    queue.handle_timeout(at(60_000));
    assert_eq!(queue.locks_held(), 0);
    let again = lock(&mut queue, 60_000);
    assert_eq!(again.sequence, first.sequence);
    assert_eq!(again.delivery_count, 1);
    assert_refused(&mut queue, CoreError::LockLost, |q| {
        q.settle(token(&first), Outcome::Complete, at(60_001))
    });
}

#[test]
fn receive_runs_due_lock_expiries_itself() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, message("a"), at(0));
    lock(&mut queue, 0);
    let again = lock(&mut queue, 60_000);
    assert_eq!(again.delivery_count, 1);
}

#[test]
fn expired_messages_are_dropped_never_delivered() {
    let mut queue = entity(EntityConfig::default());
    let short = NewMessage {
        time_to_live: Some(secs(10)),
        ..message("short")
    };
    send(&mut queue, short, at(0));
    send(&mut queue, message("long"), at(0));
    assert_eq!(queue.poll_timeout(), Some(at(10_000)));
    let delivery = lock(&mut queue, 10_000);
    assert_eq!(payload(&delivery), b"long");
    assert_eq!(queue.len(SubQueue::Main), 1);
    assert!(queue.is_empty(SubQueue::DeadLetter));
}

#[test]
fn expired_messages_are_dead_lettered_when_the_entity_says_so() {
    let mut queue = entity(EntityConfig {
        dead_lettering_on_message_expiration: true,
        default_message_ttl: Some(secs(10)),
        ..EntityConfig::default()
    });
    let sequence = send(&mut queue, message("a"), at(0));
    queue.handle_timeout(at(10_000));
    assert!(queue.is_empty(SubQueue::Main));
    let dead = queue
        .receive(
            SubQueue::DeadLetter,
            ReceiveMode::ReceiveAndDelete,
            at(999_999_999),
        )
        .unwrap();
    assert_eq!(dead.sequence, sequence);
    assert_eq!(dead.dead_letter, Some(DeadLetterInfo::ttl_expired()));
    assert_eq!(
        dead.dead_letter.unwrap().description.as_deref(),
        Some("The message expired and was dead lettered.")
    );
}

#[test]
fn a_locked_message_past_its_ttl_stays_settleable_until_the_lock_ends() {
    let mut queue = entity(EntityConfig {
        default_message_ttl: Some(secs(10)),
        ..EntityConfig::default()
    });
    queue
        .enqueue(vec![message("a"), message("b")], at(0))
        .unwrap();
    queue.mark_durable(SequenceNumber(queue.high_water()));
    let a = lock(&mut queue, 0);
    let b = lock(&mut queue, 0);
    queue.handle_timeout(at(20_000));
    assert_eq!(queue.len(SubQueue::Main), 2);
    queue
        .settle(token(&a), Outcome::Complete, at(20_000))
        .unwrap();
    // Abandoning an expired message expires it instead of making it available.
    queue.settle(token(&b), abandon(), at(20_000)).unwrap();
    assert!(queue.is_empty(SubQueue::Main));
}

#[test]
fn dead_letter_queue_messages_never_expire_and_cannot_be_dead_lettered_again() {
    let mut queue = entity(EntityConfig {
        dead_lettering_on_message_expiration: true,
        default_message_ttl: Some(secs(1)),
        ..EntityConfig::default()
    });
    send(&mut queue, message("a"), at(0));
    queue.handle_timeout(at(1_000));
    assert_eq!(queue.poll_timeout(), None);
    let dead = queue
        .receive(SubQueue::DeadLetter, ReceiveMode::PeekLock, at(10_000_000))
        .unwrap();
    let outcome = Outcome::DeadLetter {
        info: DeadLetterInfo::default(),
        properties: Properties::new(),
    };
    assert_refused(
        &mut queue,
        CoreError::NotAllowed("a dead-lettered message cannot be dead-lettered again"),
        |q| q.settle(token(&dead), outcome, at(10_000_001)),
    );
    queue
        .settle(token(&dead), Outcome::Release, at(10_000_001))
        .unwrap();
    // Abandon in the dead-letter queue counts but has no delivery limit.
    for round in 0..12 {
        let dead = queue
            .receive(
                SubQueue::DeadLetter,
                ReceiveMode::PeekLock,
                at(10_000_002 + round * 61_000),
            )
            .unwrap();
        queue
            .settle(token(&dead), abandon(), at(10_000_003 + round * 61_000))
            .unwrap();
    }
    let dead = queue
        .receive(SubQueue::DeadLetter, ReceiveMode::PeekLock, at(20_000_000))
        .unwrap();
    assert_eq!(dead.delivery_count, 12);
    queue
        .settle(token(&dead), Outcome::Complete, at(20_000_001))
        .unwrap();
    assert!(queue.is_empty(SubQueue::DeadLetter));
}

#[test]
fn updating_the_entity_loses_every_lock() {
    let mut queue = entity(EntityConfig::default());
    queue
        .enqueue(vec![message("a"), message("b")], at(0))
        .unwrap();
    queue.mark_durable(SequenceNumber(queue.high_water()));
    let a = lock(&mut queue, 0);
    let b = lock(&mut queue, 0);
    queue
        .settle(
            token(&b),
            Outcome::Defer {
                properties: Properties::new(),
            },
            at(0),
        )
        .unwrap();
    let b = queue
        .receive_deferred(SubQueue::Main, &[b.sequence], ReceiveMode::PeekLock, at(0))
        .unwrap();
    let longer = EntityConfig {
        lock_duration: secs(120),
        ..EntityConfig::default()
    };
    queue.update_config(longer.clone(), at(1)).unwrap();
    assert_eq!(queue.config(), &longer);
    assert_eq!(queue.locks_held(), 0);
    assert_refused(&mut queue, CoreError::LockLost, |q| {
        q.settle(token(&a), Outcome::Complete, at(2))
    });
    assert_refused(&mut queue, CoreError::LockLost, |q| {
        q.settle(token(&b[0]), Outcome::Complete, at(2))
    });
    let again = lock(&mut queue, 2);
    assert_eq!(again.sequence, a.sequence);
    assert_eq!(again.delivery_count, 0);
    assert_eq!(again.lock.unwrap().locked_until, at(120_002));
    let peeked = queue.peek(SubQueue::Main, b[0].sequence, 1, at(2));
    assert_eq!(peeked[0].state, MessageState::Deferred);
}

#[test]
fn an_invalid_update_is_refused_and_keeps_the_locks() {
    let mut queue = entity(EntityConfig::default());
    send(&mut queue, message("a"), at(0));
    lock(&mut queue, 0);
    let bad = EntityConfig {
        max_delivery_count: 0,
        ..EntityConfig::default()
    };
    assert_refused(
        &mut queue,
        CoreError::InvalidConfig("max delivery count must be at least 1"),
        |q| q.update_config(bad, at(1)),
    );
    assert_eq!(queue.locks_held(), 1);
    assert!(
        Entity::new(
            EntityConfig {
                lock_duration: secs(1),
                ..EntityConfig::default()
            },
            SEED
        )
        .is_err()
    );
}
