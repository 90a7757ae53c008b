//! Rules of the sending side: sequence numbers, TTL, scheduling and cancelling, duplicate
//! detection, receive-and-delete, peek.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use busbar_core::{
    CoreError, DeadLetterInfo, EnqueueOutcome, EntityConfig, MessageState, NewMessage, Outcome,
    ReceiveMode, Record, SequenceNumber, SubQueue,
};
use common::*;

#[test]
fn sequence_numbers_start_at_one_and_strictly_increase() {
    let mut queue = entity(EntityConfig::default());
    let outcomes = queue
        .enqueue(vec![message("a"), message("b"), message("c")], at(0))
        .unwrap();
    assert_eq!(
        outcomes,
        [1, 2, 3].map(|n| EnqueueOutcome::Enqueued(SequenceNumber(n)))
    );
    queue.mark_durable(SequenceNumber(3));
    assert_eq!(send(&mut queue, message("d"), at(5)), SequenceNumber(4));
    assert_eq!(queue.high_water(), 4);
    let delivery = queue
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(10))
        .unwrap();
    assert_eq!(delivery.sequence, SequenceNumber(1));
    assert_eq!(delivery.enqueued_time, at(0));
    assert_eq!(delivery.state, MessageState::Active);
}

#[test]
fn effective_ttl_is_the_smaller_of_message_and_entity_default() {
    let mut queue = entity(EntityConfig {
        default_message_ttl: Some(secs(100)),
        ..EntityConfig::default()
    });
    let short = NewMessage {
        time_to_live: Some(secs(10)),
        ..message("short")
    };
    let long = NewMessage {
        time_to_live: Some(secs(1_000)),
        ..message("long")
    };
    send(&mut queue, short, at(0));
    send(&mut queue, long, at(0));
    send(&mut queue, message("default"), at(0));
    let peeked = queue.peek(SubQueue::Main, SequenceNumber(1), 10, at(0));
    let ttls: Vec<_> = peeked.iter().map(|d| d.time_to_live).collect();
    assert_eq!(ttls, [Some(secs(10)), Some(secs(100)), Some(secs(100))]);
    assert_eq!(peeked[0].expires_at, Some(at(10_000)));
    let unbounded = entity(EntityConfig::default());
    assert_eq!(unbounded.poll_timeout(), None);
}

#[test]
fn scheduled_messages_wait_until_their_time_and_take_it_as_enqueued_time() {
    let mut queue = entity(EntityConfig::default());
    let scheduled = NewMessage {
        scheduled_enqueue_time: Some(at(60_000)),
        ..message("later")
    };
    let sequence = send(&mut queue, scheduled, at(0));
    send(&mut queue, message("now"), at(0));
    assert_eq!(queue.poll_timeout(), Some(at(60_000)));
    let peeked = queue.peek(SubQueue::Main, sequence, 1, at(0));
    assert_eq!(peeked[0].state, MessageState::Scheduled);
    assert_eq!(peeked[0].state.annotation_value(), 2);
    let first = queue
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(59_999))
        .unwrap();
    assert_eq!(payload(&first), b"now");
    assert!(
        queue
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(59_999))
            .is_none()
    );
    let due = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(60_000))
        .unwrap();
    assert_eq!(due.sequence, sequence);
    assert_eq!(due.state, MessageState::Active);
    assert_eq!(due.enqueued_time, at(60_000));
    assert_eq!(due.scheduled_enqueue_time, Some(at(60_000)));
}

#[test]
fn a_schedule_in_the_past_enqueues_at_once() {
    let mut queue = entity(EntityConfig::default());
    let past = NewMessage {
        scheduled_enqueue_time: Some(at(-5_000)),
        ..message("past")
    };
    send(&mut queue, past, at(0));
    let delivery = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(0))
        .unwrap();
    assert_eq!(delivery.enqueued_time, at(0));
}

#[test]
fn ttl_of_a_scheduled_message_counts_from_its_activation() {
    let mut queue = entity(EntityConfig::default());
    let scheduled = NewMessage {
        scheduled_enqueue_time: Some(at(10_000)),
        time_to_live: Some(secs(5)),
        ..message("s")
    };
    send(&mut queue, scheduled, at(0));
    let delivery = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(14_999))
        .unwrap();
    assert_eq!(delivery.expires_at, Some(at(15_000)));
}

#[test]
fn cancelling_removes_only_scheduled_messages_all_or_nothing() {
    let mut queue = entity(EntityConfig::default());
    let later = |p| NewMessage {
        scheduled_enqueue_time: Some(at(60_000)),
        ..message(p)
    };
    let first = send(&mut queue, later("a"), at(0));
    let second = send(&mut queue, later("b"), at(0));
    let active = send(&mut queue, message("c"), at(0));
    queue.drain_records().for_each(drop);
    let before = queue.snapshot();
    assert_eq!(
        queue.cancel_scheduled(&[first, active]),
        Err(CoreError::MessageNotFound(active))
    );
    assert_eq!(
        queue.cancel_scheduled(&[SequenceNumber(99)]),
        Err(CoreError::MessageNotFound(SequenceNumber(99)))
    );
    assert_eq!(queue.snapshot(), before);
    assert!(!queue.has_records());
    queue.cancel_scheduled(&[first, second]).unwrap();
    assert_eq!(queue.len(SubQueue::Main), 1);
    assert_eq!(queue.drain_records().count(), 2);
    assert_eq!(queue.poll_timeout(), None);
    assert_eq!(
        queue.cancel_scheduled(&[first]),
        Err(CoreError::MessageNotFound(first))
    );
}

#[test]
fn duplicates_within_the_window_are_acknowledged_but_not_stored() {
    let mut queue = entity(EntityConfig {
        duplicate_detection_window: Some(secs(60)),
        ..EntityConfig::default()
    });
    let outcomes = queue
        .enqueue(
            vec![with_id("1", "a"), with_id("2", "a"), with_id("3", "b")],
            at(0),
        )
        .unwrap();
    assert_eq!(
        outcomes,
        [
            EnqueueOutcome::Enqueued(SequenceNumber(1)),
            EnqueueOutcome::Duplicate,
            EnqueueOutcome::Enqueued(SequenceNumber(2)),
        ]
    );
    let again = queue.enqueue(vec![with_id("4", "a")], at(59_999)).unwrap();
    assert_eq!(again, [EnqueueOutcome::Duplicate]);
    assert_eq!(queue.len(SubQueue::Main), 2);
    // The window runs from the first enqueue, not from the duplicate.
    assert_eq!(
        send(&mut queue, with_id("5", "a"), at(60_000)),
        SequenceNumber(3)
    );
}

#[test]
fn without_duplicate_detection_equal_ids_are_all_stored() {
    let mut queue = entity(EntityConfig::default());
    let outcomes = queue
        .enqueue(vec![with_id("1", "a"), with_id("2", "a")], at(0))
        .unwrap();
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, EnqueueOutcome::Enqueued(_)))
    );
}

#[test]
fn receive_and_delete_hands_out_in_order_and_removes() {
    let mut queue = entity(EntityConfig::default());
    queue
        .enqueue(vec![message("a"), message("b")], at(0))
        .unwrap();
    queue.mark_durable(SequenceNumber(queue.high_water()));
    let first = queue
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(1))
        .unwrap();
    assert_eq!(payload(&first), b"a");
    assert!(first.lock.is_none());
    assert_eq!(first.delivery_count, 0);
    assert_eq!(queue.len(SubQueue::Main), 1);
    let second = queue
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(1))
        .unwrap();
    assert_eq!(payload(&second), b"b");
    assert!(
        queue
            .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(1))
            .is_none()
    );
    assert!(queue.is_empty(SubQueue::Main));
}

#[test]
fn peek_browses_every_state_in_order_without_locking_or_counting() {
    let mut queue = entity(EntityConfig::default());
    for p in ["1", "2", "3", "4", "5"] {
        send(&mut queue, message(p), at(0));
    }
    let scheduled = NewMessage {
        scheduled_enqueue_time: Some(at(99_000)),
        ..message("6")
    };
    send(&mut queue, scheduled, at(0));
    // 1 locked, 2 deferred, 3 dead-lettered, 4 and 5 active, 6 scheduled.
    let lock = |q: &mut busbar_core::Entity| {
        q.receive(SubQueue::Main, ReceiveMode::PeekLock, at(0))
            .unwrap()
            .lock
            .unwrap()
            .token
    };
    let locked = lock(&mut queue);
    let deferred = lock(&mut queue);
    let dead = lock(&mut queue);
    queue
        .settle(
            deferred,
            busbar_core::Outcome::Defer {
                properties: Default::default(),
            },
            at(0),
        )
        .unwrap();
    let info = busbar_core::DeadLetterInfo::default();
    queue
        .settle(
            dead,
            busbar_core::Outcome::DeadLetter {
                info,
                properties: Default::default(),
            },
            at(0),
        )
        .unwrap();
    let peeked = queue.peek(SubQueue::Main, SequenceNumber(1), 10, at(1));
    let seen: Vec<_> = peeked.iter().map(|d| (d.sequence.0, d.state)).collect();
    assert_eq!(
        seen,
        [
            (1, MessageState::Active),
            (2, MessageState::Deferred),
            (4, MessageState::Active),
            (5, MessageState::Active),
            (6, MessageState::Scheduled),
        ]
    );
    assert!(
        peeked
            .iter()
            .all(|d| d.lock.is_none() && d.delivery_count == 0)
    );
    let page = queue.peek(SubQueue::Main, SequenceNumber(2), 2, at(1));
    assert_eq!(
        page.iter().map(|d| d.sequence.0).collect::<Vec<_>>(),
        [2, 4]
    );
    let dlq = queue.peek(SubQueue::DeadLetter, SequenceNumber(1), 10, at(1));
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].sequence, SequenceNumber(3));
    assert!(dlq[0].dead_letter.is_some());
    // Peeking changed nothing: the lock still settles.
    queue
        .settle(locked, busbar_core::Outcome::Complete, at(1))
        .unwrap();
}

#[test]
fn peek_skips_messages_already_expired() {
    let mut queue = entity(EntityConfig::default());
    let short = NewMessage {
        time_to_live: Some(secs(1)),
        ..message("short")
    };
    send(&mut queue, short, at(0));
    send(&mut queue, message("long"), at(0));
    let peeked = queue.peek(SubQueue::Main, SequenceNumber(1), 10, at(1_000));
    assert_eq!(peeked.len(), 1);
    assert_eq!(payload(&peeked[0]), b"long");
}

#[test]
fn a_batch_is_all_or_nothing_when_sequence_numbers_run_out() {
    let config = EntityConfig::default();
    let mut queue =
        busbar_core::Entity::restore(config, SEED, i64::MAX - 3, Vec::new(), at(0)).unwrap();
    let before = queue.snapshot();
    let refused = queue.enqueue(vec![message("a"), message("b"), message("c")], at(0));
    assert!(matches!(refused, Err(CoreError::NotAllowed(_))));
    assert_eq!(queue.snapshot(), before);
    assert!(!queue.has_records());
    let outcomes = queue
        .enqueue(vec![message("a"), message("b")], at(0))
        .unwrap();
    assert_eq!(
        outcomes,
        [
            EnqueueOutcome::Enqueued(SequenceNumber(i64::MAX - 2)),
            EnqueueOutcome::Enqueued(SequenceNumber(i64::MAX - 1)),
        ]
    );
}

#[test]
fn a_message_is_handed_out_only_once_its_insert_is_durable() {
    let mut queue = entity(EntityConfig::default());
    let first = send(&mut queue, in_session("a", "s"), at(0));
    let outcomes = queue
        .enqueue(vec![in_session("b", "s"), message("c")], at(0))
        .unwrap();
    assert_eq!(outcomes.len(), 2);
    // Records drained, store not yet synced: only the durable message is seen.
    assert_eq!(queue.drain_records().count(), 3);
    let peeked = queue.peek(SubQueue::Main, SequenceNumber(1), 10, at(1));
    assert_eq!(
        peeked.iter().map(|d| d.sequence).collect::<Vec<_>>(),
        [first]
    );
    let locked = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap();
    assert_eq!(locked.sequence, first);
    assert!(
        queue
            .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(1))
            .is_none()
    );
    assert_eq!(queue.available_len(SubQueue::Main), 0);
    assert!(!queue.session_has_available("s"));
    assert!(queue.take_newly_available_sessions().is_empty());
    queue
        .settle(locked.lock.unwrap().token, Outcome::Complete, at(1))
        .unwrap();
    // A sync that never succeeds (the store is poisoned) never makes them visible.
    queue.mark_durable(first);
    assert!(
        queue
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(2))
            .is_none()
    );
    queue.check_invariants().unwrap();
    // Once durable they are handed out in order, and their session wakes up.
    queue.mark_durable(SequenceNumber(3));
    assert_eq!(queue.take_newly_available_sessions(), ["s".to_owned()]);
    let next = queue
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(3))
        .unwrap();
    assert_eq!(next.sequence, SequenceNumber(2));
    assert_eq!(queue.available_len(SubQueue::Main), 1);
    queue.check_invariants().unwrap();
}

#[test]
fn a_message_dead_lettered_on_arrival_waits_for_durability_in_the_dead_letter_queue() {
    let mut queue = entity(EntityConfig {
        default_message_ttl: Some(secs(10)),
        duplicate_detection_window: Some(secs(60)),
        ..EntityConfig::default()
    });
    let info = DeadLetterInfo {
        reason: Some("FilterException".to_owned()),
        description: Some("rule 'r': boom".to_owned()),
    };
    let failed = NewMessage {
        dead_letter: Some(info.clone()),
        scheduled_enqueue_time: Some(at(60_000)),
        ..with_id("x", "id-1")
    };
    let outcomes = queue.enqueue(vec![failed.clone()], at(0)).unwrap();
    assert_eq!(outcomes, [EnqueueOutcome::Enqueued(SequenceNumber(1))]);
    assert_eq!(queue.len(SubQueue::DeadLetter), 1);
    assert!(queue.is_empty(SubQueue::Main));
    // Its insert goes to the store like any other; nothing sees it before it is durable.
    let records: Vec<_> = queue.drain_records().collect();
    assert!(matches!(records[..], [Record::Insert { .. }]));
    assert!(
        queue
            .peek(SubQueue::DeadLetter, SequenceNumber(1), 10, at(0))
            .is_empty()
    );
    assert!(
        queue
            .receive(SubQueue::DeadLetter, ReceiveMode::PeekLock, at(0))
            .is_none()
    );
    queue.mark_durable(SequenceNumber(1));
    // Active at once (never scheduled there), never expiring, with its reason.
    let delivery = queue
        .receive(SubQueue::DeadLetter, ReceiveMode::PeekLock, at(30_000))
        .unwrap();
    assert_eq!(delivery.dead_letter, Some(info));
    assert_eq!(delivery.state, MessageState::Active);
    assert_eq!(delivery.enqueued_time, at(0));
    queue.check_invariants().unwrap();
    // Duplicate detection counts it as seen.
    assert_eq!(
        queue.enqueue(vec![with_id("y", "id-1")], at(1)).unwrap(),
        [EnqueueOutcome::Duplicate]
    );
    // And it survives a restart in the dead-letter sub-queue.
    let mut store = SimulatedStore::default();
    store.apply(records);
    let restored = store.restore(queue.config().clone(), at(40_000));
    restored.check_invariants().unwrap();
    assert_eq!(restored.len(SubQueue::DeadLetter), 1);
    assert_eq!(restored.available_len(SubQueue::DeadLetter), 1);
}

fn in_session(payload: &'static str, session: &str) -> NewMessage {
    NewMessage {
        session_id: Some(session.to_owned()),
        ..message(payload)
    }
}

#[test]
fn counts_follow_each_message_as_service_bus_reports_them() {
    let mut queue = entity(EntityConfig::default());
    queue.enqueue(vec![message("pending")], at(0)).unwrap();
    assert_eq!(
        queue.counts().active,
        0,
        "a message not yet durable is not counted"
    );
    queue.mark_durable(SequenceNumber(1));
    send(&mut queue, message("deferred"), at(0));
    send(&mut queue, message("dead"), at(0));
    let later = NewMessage {
        scheduled_enqueue_time: Some(at(60_000)),
        ..message("later")
    };
    send(&mut queue, later, at(0));
    let locked = |queue: &mut busbar_core::Entity| {
        queue
            .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
            .unwrap()
            .lock
            .unwrap()
            .token
    };
    // The first stays locked (active); the second is deferred (active); the third dead-lettered.
    locked(&mut queue);
    let deferred = locked(&mut queue);
    queue
        .settle(
            deferred,
            Outcome::Defer {
                properties: Default::default(),
            },
            at(1),
        )
        .unwrap();
    let dead = locked(&mut queue);
    let reason = DeadLetterInfo {
        reason: Some("r".into()),
        description: None,
    };
    queue
        .settle(
            dead,
            Outcome::DeadLetter {
                info: reason,
                properties: Default::default(),
            },
            at(1),
        )
        .unwrap();
    let counts = queue.counts();
    assert_eq!(
        (counts.active, counts.scheduled, counts.dead_lettered),
        (2, 1, 1)
    );
    assert_eq!(counts.size_bytes, queue.size_bytes());
}

#[test]
fn purge_removes_every_stored_message_of_a_sub_queue_and_ends_their_locks() {
    let mut queue = entity(EntityConfig::default());
    for body in ["a", "b", "c"] {
        send(&mut queue, message(body), at(0));
    }
    let later = NewMessage {
        scheduled_enqueue_time: Some(at(60_000)),
        ..message("later")
    };
    send(&mut queue, later, at(0));
    let locked = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap()
        .lock
        .unwrap()
        .token;
    let dead = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap()
        .lock
        .unwrap()
        .token;
    let reason = DeadLetterInfo {
        reason: Some("r".into()),
        description: None,
    };
    queue
        .settle(
            dead,
            Outcome::DeadLetter {
                info: reason,
                properties: Default::default(),
            },
            at(1),
        )
        .unwrap();
    queue.drain_records().for_each(drop);
    // Not yet durable: left to its send.
    queue.enqueue(vec![message("pending")], at(2)).unwrap();

    assert_eq!(queue.purge(SubQueue::DeadLetter, at(2)), 1);
    assert_eq!(queue.counts().dead_lettered, 0);
    assert_eq!(queue.purge(SubQueue::Main, at(2)), 3);
    let removed: Vec<_> = queue
        .drain_records()
        .filter(|record| matches!(record, Record::Remove { .. }))
        .collect();
    assert_eq!(removed.len(), 4);
    assert_eq!(
        queue.settle(locked, Outcome::Complete, at(3)),
        Err(CoreError::LockLost)
    );
    queue.check_invariants().unwrap();
    queue.mark_durable(SequenceNumber(5));
    assert_eq!(queue.counts().active, 1, "the pending message arrives");
}
