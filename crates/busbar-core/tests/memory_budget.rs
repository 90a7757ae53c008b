//! The broker-wide memory budget: every way a message enters memory charges it, every way it
//! leaves gives its bytes back, and enqueues to any entity sharing the budget are refused once
//! it is used up (the model test checks the count after every random step).
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use busbar_core::{
    CoreError, DeadLetterInfo, Entity, EntityConfig, MemoryBudget, NewMessage, Outcome, Properties,
    ReceiveMode, SequenceNumber, SubQueue,
};
use common::*;

fn charged(budget: &MemoryBudget) -> Entity {
    entity(EntityConfig::default()).with_memory_budget(budget.clone())
}

/// The bytes `message` charges once sent (its encoded immutable part).
fn cost_of(message: NewMessage) -> u64 {
    let budget = MemoryBudget::unlimited();
    let mut probe = charged(&budget);
    send(&mut probe, message, at(0));
    budget.used()
}

#[test]
fn sends_to_any_entity_are_refused_once_the_shared_budget_is_used_up() {
    let one = cost_of(message("0123456789"));
    let budget = MemoryBudget::new(2 * one);
    let (mut first, mut second) = (charged(&budget), charged(&budget));
    send(&mut first, message("0123456789"), at(0));
    send(&mut second, message("0123456789"), at(0));
    assert_eq!(budget.used(), 2 * one);
    drop((first.drain_records(), second.drain_records()));
    let before = first.snapshot();
    for entity in [&mut first, &mut second] {
        assert_eq!(
            entity.enqueue(vec![message("x")], at(1)),
            Err(CoreError::MemoryBudgetExceeded {
                used: 2 * one,
                limit: 2 * one
            })
        );
        assert!(!entity.has_records());
    }
    assert_eq!(first.snapshot(), before);
    // A receive in one entity makes room for a send to the other.
    second
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(2))
        .unwrap();
    assert_eq!(budget.used(), one);
    send(&mut first, message("0123456789"), at(3));
    assert_eq!(budget.used(), 2 * one);
}

#[test]
fn settling_receiving_cancelling_and_purging_give_the_bytes_back() {
    let one = cost_of(message("abc"));
    let budget = MemoryBudget::unlimited();
    let mut queue = charged(&budget);
    for _ in 0..3 {
        send(&mut queue, message("abc"), at(0));
    }
    let scheduled = NewMessage {
        scheduled_enqueue_time: Some(at(60_000)),
        ..message("abc")
    };
    let later = cost_of(scheduled.clone());
    let scheduled = send(&mut queue, scheduled, at(0));
    assert_eq!(budget.used(), 3 * one + later);

    let locked = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap();
    // A locked message is still held.
    assert_eq!(budget.used(), 3 * one + later);
    queue
        .settle(locked.lock.unwrap().token, Outcome::Complete, at(2))
        .unwrap();
    assert_eq!(budget.used(), 2 * one + later);
    queue
        .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(3))
        .unwrap();
    assert_eq!(budget.used(), one + later);
    queue.cancel_scheduled(&[scheduled]).unwrap();
    assert_eq!(budget.used(), one);
    queue.purge(SubQueue::Main, at(4));
    assert_eq!(budget.used(), 0);
}

#[test]
fn dead_lettering_keeps_the_bytes_and_purging_the_dead_letters_frees_them() {
    let one = cost_of(message("abc"));
    let budget = MemoryBudget::unlimited();
    let mut queue = charged(&budget);
    send(&mut queue, message("abc"), at(0));
    let locked = queue
        .receive(SubQueue::Main, ReceiveMode::PeekLock, at(1))
        .unwrap();
    let dead_letter = Outcome::DeadLetter {
        info: DeadLetterInfo::default(),
        properties: Properties::new(),
    };
    queue
        .settle(locked.lock.unwrap().token, dead_letter, at(2))
        .unwrap();
    assert_eq!(queue.len(SubQueue::DeadLetter), 1);
    assert_eq!(budget.used(), one);
    queue.purge(SubQueue::DeadLetter, at(3));
    assert_eq!(budget.used(), 0);
}

#[test]
fn expiry_frees_the_bytes_unless_the_message_is_dead_lettered() {
    let budget = MemoryBudget::unlimited();
    let expiring = NewMessage {
        time_to_live: Some(secs(1)),
        ..message("abc")
    };
    let mut dropping = charged(&budget);
    send(&mut dropping, expiring.clone(), at(0));
    assert_eq!(budget.used(), cost_of(expiring.clone()));
    dropping.handle_timeout(at(2_000));
    assert!(dropping.is_empty(SubQueue::Main));
    assert_eq!(budget.used(), 0);

    let config = EntityConfig {
        dead_lettering_on_message_expiration: true,
        ..EntityConfig::default()
    };
    let mut keeping = entity(config).with_memory_budget(budget.clone());
    send(&mut keeping, expiring, at(0));
    keeping.handle_timeout(at(2_000));
    assert_eq!(keeping.len(SubQueue::DeadLetter), 1);
    assert_eq!(budget.used(), keeping.memory_bytes());
    assert!(budget.used() > 0);
}

#[test]
fn unstored_sends_and_discarded_held_copies_give_the_bytes_back() {
    let budget = MemoryBudget::unlimited();
    let mut queue = charged(&budget);
    queue.enqueue(vec![message("abc")], at(0)).unwrap();
    queue.discard_pending(SequenceNumber(queue.high_water()));
    let held = queue.hold(vec![message("abc")], at(0)).unwrap();
    assert_eq!(budget.used(), cost_of(message("abc")));
    queue.discard_held(&held.sequences());
    assert_eq!(budget.used(), 0);
}

#[test]
fn a_dropped_entity_gives_back_what_it_held_and_a_restored_one_charges_again() {
    let budget = MemoryBudget::unlimited();
    let mut queue = charged(&budget);
    send(&mut queue, message("abc"), at(0));
    send(&mut queue, message("defg"), at(0));
    let held = budget.used();
    let mut store = SimulatedStore::default();
    store.apply(queue.drain_records());
    drop(queue);
    assert_eq!(budget.used(), 0);
    let restored = store
        .restore(EntityConfig::default(), at(1))
        .with_memory_budget(budget.clone());
    assert_eq!((budget.used(), restored.memory_bytes()), (held, held));
}

#[test]
fn with_bodies_in_the_store_the_budget_evicts_instead_of_refusing() {
    let large = || NewMessage {
        payload: bytes::Bytes::from(vec![b'x'; 1000]),
        ..NewMessage::default()
    };
    let one = cost_of(large());
    let budget = MemoryBudget::new(2 * one);
    let mut queue = charged(&budget);
    queue.keep_bodies_in_store();
    let mut stored = std::collections::BTreeMap::new();
    for _ in 0..5 {
        queue.enqueue(vec![large()], at(0)).unwrap();
    }
    // Not yet durable: nothing may go, the store may not have them.
    assert_eq!(queue.evict_bodies(u64::MAX), (0, 0));
    for record in queue.drain_records() {
        if let busbar_core::Record::Insert {
            sequence, message, ..
        } = record
        {
            stored.insert(sequence, message);
        }
    }
    queue.mark_durable(SequenceNumber(5));
    assert!(budget.is_exhausted());
    // The last to be received go first, until the budget holds what is left.
    let over = budget.used() - budget.limit();
    let (freed, evicted) = queue.evict_bodies(over);
    assert!(freed >= over && evicted >= 1);
    assert!(budget.used() <= budget.limit());
    let at_head = queue.evicted_at_head(SubQueue::Main, 10, u64::MAX);
    assert_eq!(u64::try_from(at_head.len()).unwrap(), evicted);
    let peeked = queue.peek(SubQueue::Main, SequenceNumber(1), 10, at(1));
    let shown_evicted = peeked.iter().filter(|d| d.payload_in_store).count();
    assert_eq!(u64::try_from(shown_evicted).unwrap(), evicted);
    assert!(
        peeked.last().unwrap().payload_in_store,
        "the tail is evicted first"
    );
    // Read back: of the next two, the second was evicted (the first stayed).
    let head = queue.evicted_at_head(SubQueue::Main, 2, u64::MAX);
    assert_eq!(head, [SequenceNumber(2)]);
    let bodies = head.iter().map(|s| (*s, stored[s].clone()));
    assert_eq!(queue.restore_bodies(bodies).unwrap(), 1);
    for _ in 0..2 {
        let delivery = queue
            .receive(SubQueue::Main, ReceiveMode::ReceiveAndDelete, at(2))
            .unwrap();
        assert!(!delivery.payload_in_store);
        assert_eq!(delivery.payload, large().payload);
    }
    // Bytes that are not the message's are refused.
    let wrong = vec![(
        SequenceNumber(5),
        stored[&SequenceNumber(4)].clone().slice(1..),
    )];
    assert!(queue.restore_bodies(wrong).is_err());
    queue.check_invariants().unwrap();
}
