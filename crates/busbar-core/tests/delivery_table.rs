//! Data-driven table of delivery-count and dead-letter cases: a message goes through a list of
//! steps; the table says its final delivery count and where it ends up.
#![allow(clippy::unwrap_used)] // table driver outside #[test] functions

mod common;

use busbar_core::{
    DeadLetterInfo, Entity, EntityConfig, MessageState, NewMessage, Outcome, Properties,
    ReceiveMode, SequenceNumber, SubQueue, Timestamp,
};
use common::*;

#[derive(Clone, Copy, Debug)]
enum Step {
    Abandon,
    LockExpires,
    Release,
    Defer,
    Complete,
    DeadLetter,
    EntityUpdated,
    /// The message's one-hour TTL runs out while it is not locked.
    TtlPasses,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum End {
    Active,
    Deferred,
    DeadLettered(&'static str),
    Removed,
}

struct Case {
    name: &'static str,
    max_delivery_count: u32,
    dead_letter_on_expiry: bool,
    steps: &'static [Step],
    delivery_count: u32,
    end: End,
}

use End::*;
use Step::*;

const MAX: &str = "MaxDeliveryCountExceeded";
const TTL: &str = "TTLExpiredException";

/// `(name, max delivery count, dead-letter on expiry, steps, final delivery count, end)`.
#[rustfmt::skip]
const CASES: &[Case] = &[
    Case { name: "one abandon counts one", max_delivery_count: 10, dead_letter_on_expiry: false, steps: &[Abandon], delivery_count: 1, end: Active },
    Case { name: "abandons below the max stay active", max_delivery_count: 3, dead_letter_on_expiry: false, steps: &[Abandon, Abandon], delivery_count: 2, end: Active },
    Case { name: "abandons reaching the max dead-letter", max_delivery_count: 3, dead_letter_on_expiry: false, steps: &[Abandon, Abandon, Abandon], delivery_count: 3, end: DeadLettered(MAX) },
    Case { name: "max 1: the first abandon dead-letters", max_delivery_count: 1, dead_letter_on_expiry: false, steps: &[Abandon], delivery_count: 1, end: DeadLettered(MAX) },
    Case { name: "lock expiries count like abandons", max_delivery_count: 2, dead_letter_on_expiry: false, steps: &[LockExpires, LockExpires], delivery_count: 2, end: DeadLettered(MAX) },
    Case { name: "abandons and expiries add up", max_delivery_count: 3, dead_letter_on_expiry: false, steps: &[Abandon, LockExpires, Abandon], delivery_count: 3, end: DeadLettered(MAX) },
    Case { name: "releases never count", max_delivery_count: 1, dead_letter_on_expiry: false, steps: &[Release, Release, Release, Release, Release], delivery_count: 0, end: Active },
    Case { name: "release then abandon counts one", max_delivery_count: 1, dead_letter_on_expiry: false, steps: &[Release, Abandon], delivery_count: 1, end: DeadLettered(MAX) },
    Case { name: "entity updates never count", max_delivery_count: 1, dead_letter_on_expiry: false, steps: &[EntityUpdated, EntityUpdated, EntityUpdated], delivery_count: 0, end: Active },
    Case { name: "defer does not count", max_delivery_count: 10, dead_letter_on_expiry: false, steps: &[Defer], delivery_count: 0, end: Deferred },
    Case { name: "abandoning a deferred message keeps it deferred", max_delivery_count: 10, dead_letter_on_expiry: false, steps: &[Defer, Abandon], delivery_count: 1, end: Deferred },
    Case { name: "a deferred message's lock expiry keeps it deferred", max_delivery_count: 10, dead_letter_on_expiry: false, steps: &[Defer, LockExpires, Release], delivery_count: 1, end: Deferred },
    Case { name: "deferred messages obey the max too", max_delivery_count: 2, dead_letter_on_expiry: false, steps: &[Abandon, Defer, LockExpires], delivery_count: 2, end: DeadLettered(MAX) },
    Case { name: "complete removes", max_delivery_count: 10, dead_letter_on_expiry: false, steps: &[Abandon, Abandon, Complete], delivery_count: 2, end: Removed },
    Case { name: "explicit dead-letter keeps the count", max_delivery_count: 10, dead_letter_on_expiry: false, steps: &[Abandon, DeadLetter], delivery_count: 1, end: DeadLettered("Custom") },
    Case { name: "expiry drops without dead-lettering on expiry", max_delivery_count: 10, dead_letter_on_expiry: false, steps: &[Abandon, TtlPasses], delivery_count: 1, end: Removed },
    Case { name: "expiry dead-letters when configured", max_delivery_count: 10, dead_letter_on_expiry: true, steps: &[Abandon, TtlPasses], delivery_count: 1, end: DeadLettered(TTL) },
    Case { name: "deferred messages expire too", max_delivery_count: 10, dead_letter_on_expiry: true, steps: &[Defer, TtlPasses], delivery_count: 0, end: DeadLettered(TTL) },
    Case { name: "a second defer keeps it deferred", max_delivery_count: 10, dead_letter_on_expiry: false, steps: &[Defer, Defer, Abandon], delivery_count: 1, end: Deferred },
];

const HOUR_MS: i64 = 3_600_000;

/// Runs one case; returns the message's final delivery count and where it ended.
fn run(case: &Case) -> (u32, End) {
    let config = EntityConfig {
        max_delivery_count: case.max_delivery_count,
        dead_lettering_on_message_expiration: case.dead_letter_on_expiry,
        ..EntityConfig::default()
    };
    let mut queue = entity(config.clone());
    let mut store = SimulatedStore::default();
    let one_hour = NewMessage {
        time_to_live: Some(secs(3_600)),
        ..message("m")
    };
    let sequence = send(&mut queue, one_hour, at(0));
    let mut now = at(0);
    for step in case.steps {
        now = Timestamp(now.0 + 1_000);
        if let TtlPasses = step {
            now = Timestamp(now.0 + HOUR_MS);
            queue.handle_timeout(now);
            store.apply(queue.drain_records());
            continue;
        }
        let delivery = match state(&queue, sequence, now) {
            Some(MessageState::Deferred) => queue
                .receive_deferred(SubQueue::Main, &[sequence], ReceiveMode::PeekLock, now)
                .unwrap()
                .remove(0),
            _ => queue
                .receive(SubQueue::Main, ReceiveMode::PeekLock, now)
                .unwrap(),
        };
        assert_eq!(delivery.sequence, sequence);
        let token = delivery.lock.unwrap().token;
        let none = Properties::new;
        match step {
            Abandon => queue
                .settle(token, Outcome::Abandon { properties: none() }, now)
                .unwrap(),
            Release => queue.settle(token, Outcome::Release, now).unwrap(),
            Defer => queue
                .settle(token, Outcome::Defer { properties: none() }, now)
                .unwrap(),
            Complete => queue.settle(token, Outcome::Complete, now).unwrap(),
            DeadLetter => {
                let info = DeadLetterInfo {
                    reason: Some("Custom".to_owned()),
                    description: None,
                };
                let outcome = Outcome::DeadLetter {
                    info,
                    properties: none(),
                };
                queue.settle(token, outcome, now).unwrap();
            }
            LockExpires => {
                now = delivery.lock.unwrap().locked_until;
                queue.handle_timeout(now);
            }
            EntityUpdated => queue.update_config(config.clone(), now).unwrap(),
            TtlPasses => unreachable!("handled above"),
        }
        queue.check_invariants().unwrap();
        store.apply(queue.drain_records());
    }
    let restored = store.restore(config, now);
    assert_eq!(
        restored.snapshot(),
        queue.snapshot().without_locks(),
        "{}: replay differs",
        case.name
    );
    let main = queue.peek(SubQueue::Main, sequence, 1, now);
    let dead = queue.peek(SubQueue::DeadLetter, sequence, 1, now);
    match (main.first(), dead.first()) {
        (Some(m), None) if m.sequence == sequence => {
            let end = if m.state == MessageState::Deferred {
                Deferred
            } else {
                Active
            };
            (m.delivery_count, end)
        }
        (None, Some(d)) => {
            let info = d.dead_letter.clone().unwrap();
            if info.reason.as_deref() == Some(MAX) {
                let expected = format!(
                    "Message could not be consumed after {} delivery attempts.",
                    case.max_delivery_count
                );
                assert_eq!(info.description, Some(expected));
            }
            let reason = [MAX, TTL, "Custom"]
                .into_iter()
                .find(|r| info.reason.as_deref() == Some(*r))
                .unwrap();
            (d.delivery_count, DeadLettered(reason))
        }
        // A removed message has no count left to inspect.
        (None, None) => (case.delivery_count, Removed),
        other => panic!("{}: message in an unexpected place: {other:?}", case.name),
    }
}

fn state(queue: &Entity, sequence: SequenceNumber, now: Timestamp) -> Option<MessageState> {
    let peeked = queue.peek(SubQueue::Main, sequence, 1, now);
    peeked
        .first()
        .filter(|d| d.sequence == sequence)
        .map(|d| d.state)
}

#[test]
fn delivery_count_and_dead_letter_table() {
    let mut failures = Vec::new();
    for case in CASES {
        let outcome = run(case);
        if outcome != (case.delivery_count, case.end) {
            failures.push(format!(
                "{}: expected {:?}, got {outcome:?}",
                case.name,
                (case.delivery_count, case.end)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
