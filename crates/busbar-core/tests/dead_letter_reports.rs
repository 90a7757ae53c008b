//! Dead-letter reports (for `ForwardDeadLetteredMessagesTo`): every way into the dead-letter
//! sub-queue is reported once, and a forwarded message is removed only while unlocked.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use busbar_core::{
    CoreError, DeadLetterInfo, EntityConfig, NewMessage, Outcome, Properties, ReceiveMode, Record,
    SequenceNumber, SubQueue,
};
use common::*;

fn lock_and(queue: &mut busbar_core::Entity, outcome: Outcome, now: busbar_core::Timestamp) {
    let delivery = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, now)
        .unwrap();
    queue
        .settle(delivery.lock.unwrap().token, outcome, now)
        .unwrap();
}

fn dead_letter() -> Outcome {
    Outcome::DeadLetter {
        info: DeadLetterInfo::default(),
        properties: Properties::new(),
    }
}

#[test]
fn explicit_dead_letters_max_delivery_count_and_expiry_are_reported_once() {
    let mut queue = entity(EntityConfig {
        max_delivery_count: 1,
        dead_lettering_on_message_expiration: true,
        ..EntityConfig::default()
    });
    // Nothing is reported before the caller asks.
    let before = send(&mut queue, message("before"), at(0));
    lock_and(&mut queue, dead_letter(), at(0));
    assert!(queue.take_dead_lettered().is_empty());
    // Asking reports what the dead-letter sub-queue already holds, then every new arrival.
    queue.report_dead_letters();
    let abandoned = send(&mut queue, message("abandoned"), at(0));
    lock_and(
        &mut queue,
        Outcome::Abandon {
            properties: Properties::new(),
        },
        at(0),
    );
    let short = NewMessage {
        time_to_live: Some(secs(1)),
        ..message("short")
    };
    let expired = send(&mut queue, short, at(0));
    queue.handle_timeout(at(1_000));
    // A copy dead-lettered on arrival was routed by the caller: not reported.
    let arrived = NewMessage {
        dead_letter: Some(DeadLetterInfo::default()),
        ..message("arrived")
    };
    send(&mut queue, arrived, at(1_000));
    assert_eq!(queue.take_dead_lettered(), [before, abandoned, expired]);
    assert!(queue.take_dead_lettered().is_empty());
    queue.check_invariants().unwrap();
}

#[test]
fn a_forwarded_message_is_removed_only_while_unlocked() {
    let mut queue = entity(EntityConfig::default());
    queue.report_dead_letters();
    for payload in ["a", "b"] {
        send(&mut queue, message(payload), at(0));
        lock_and(&mut queue, dead_letter(), at(0));
    }
    let [first, second] = queue.take_dead_lettered()[..] else {
        panic!("two reports expected");
    };
    queue.drain_records().for_each(drop);
    queue.remove_dead_lettered(first).unwrap();
    assert!(matches!(
        queue.drain_records().collect::<Vec<_>>()[..],
        [Record::Remove { sequence }] if sequence == first
    ));
    // A receiver locked the second meanwhile: it stays, and so does the first's absence.
    let locked = queue
        .receive(SubQueue::DeadLetter, ReceiveMode::PeekLock, at(1))
        .unwrap();
    assert_eq!(locked.sequence, second);
    let before = queue.snapshot();
    assert_eq!(
        queue.remove_dead_lettered(second),
        Err(CoreError::MessageNotFound(second))
    );
    assert_eq!(
        queue.remove_dead_lettered(first),
        Err(CoreError::MessageNotFound(first))
    );
    assert_eq!(
        queue.remove_dead_lettered(SequenceNumber(99)),
        Err(CoreError::MessageNotFound(SequenceNumber(99)))
    );
    assert_eq!(queue.snapshot(), before);
    assert!(!queue.has_records());
    queue.check_invariants().unwrap();
}
