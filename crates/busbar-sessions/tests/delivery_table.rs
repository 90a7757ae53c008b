//! The delivery-count rules of sessions as a data-driven table: what each way of ending a
//! message's delivery does to its count (issue 6; §4.5, §6.4). MaxDeliveryCount is 3 here.
#![allow(clippy::unwrap_used)] // the table runner lives outside #[test] functions

mod common;

use busbar_core::{Delivery, Outcome, ReceiveMode, SubQueue};
use busbar_sessions::{ReceiverId, SessionEntity, SessionLock};
use common::*;

/// One way a delivery of the message ends.
#[derive(Clone, Copy, Debug)]
enum Step {
    Complete,
    Abandon,
    Defer,
    DeadLetter,
    /// The `released` outcome on the link.
    ReleaseOutcome,
    /// The session lock expires with the message in flight.
    LockExpires,
    /// The receiver closes its link with the message uncompleted.
    CloseReceiver,
    /// The session lock is renewed past its first deadline, then the receiver closes.
    RenewThenClose,
}

/// Where the message is after the steps, with its delivery count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Gone,
    Available(u32),
    Deferred(u32),
    DeadLettered(u32),
}

const TABLE: &[(&str, &[Step], End)] = &[
    ("complete removes the message", &[Step::Complete], End::Gone),
    ("abandon counts", &[Step::Abandon], End::Available(1)),
    (
        "session lock expiry counts",
        &[Step::LockExpires],
        End::Available(1),
    ),
    (
        "closing the session does not count",
        &[Step::CloseReceiver],
        End::Available(0),
    ),
    (
        "renewal then close does not count",
        &[Step::RenewThenClose],
        End::Available(0),
    ),
    (
        "released does not count",
        &[Step::ReleaseOutcome],
        End::Available(0),
    ),
    ("defer does not count", &[Step::Defer], End::Deferred(0)),
    (
        "dead-letter keeps the count",
        &[Step::Abandon, Step::DeadLetter],
        End::DeadLettered(1),
    ),
    (
        "counts accumulate across receivers",
        &[Step::Abandon, Step::CloseReceiver, Step::LockExpires],
        End::Available(2),
    ),
    (
        "MaxDeliveryCount dead-letters on abandon",
        &[Step::Abandon, Step::Abandon, Step::Abandon],
        End::DeadLettered(3),
    ),
    (
        "MaxDeliveryCount dead-letters on lock expiry",
        &[Step::LockExpires, Step::Abandon, Step::LockExpires],
        End::DeadLettered(3),
    ),
    (
        "closes never reach MaxDeliveryCount",
        &[
            Step::CloseReceiver,
            Step::CloseReceiver,
            Step::CloseReceiver,
            Step::CloseReceiver,
        ],
        End::Available(0),
    ),
    (
        "complete after an abandon removes it",
        &[Step::Abandon, Step::Complete],
        End::Gone,
    ),
];

struct Run {
    entity: SessionEntity,
    now: i64,
    next_owner: u64,
}

impl Run {
    /// Accepts the session and receives the message under a fresh receiver.
    fn deliver(&mut self) -> (SessionLock, Delivery) {
        self.next_owner += 1;
        let lock = accept_next(&mut self.entity, self.next_owner, at(self.now));
        let delivery = receive(&mut self.entity, &lock, at(self.now)).unwrap();
        (lock, delivery)
    }

    fn step(&mut self, step: Step) {
        let (lock, delivery) = self.deliver();
        let token = delivery.lock.unwrap().token;
        let owner = lock.owner;
        let outcome = match step {
            Step::Complete => Some(Outcome::Complete),
            Step::Abandon => Some(abandon()),
            Step::Defer => Some(Outcome::Defer {
                properties: busbar_core::Properties::new(),
            }),
            Step::DeadLetter => Some(Outcome::DeadLetter {
                info: busbar_core::DeadLetterInfo::default(),
                properties: busbar_core::Properties::new(),
            }),
            Step::ReleaseOutcome => Some(Outcome::Release),
            Step::LockExpires | Step::CloseReceiver | Step::RenewThenClose => None,
        };
        if let Some(outcome) = outcome {
            self.entity
                .settle(owner, &lock.session, token, outcome, at(self.now))
                .unwrap();
        }
        match step {
            Step::LockExpires => {
                self.now = lock.locked_until.0 - T0.0;
                self.entity.handle_timeout(at(self.now));
            }
            Step::RenewThenClose => {
                self.now += LOCK_MS - 1;
                self.entity
                    .renew(owner, &lock.session, at(self.now))
                    .unwrap();
                self.now += 2;
                self.entity.handle_timeout(at(self.now));
                self.entity.close_receiver(owner, at(self.now));
            }
            _ => self.entity.close_receiver(owner, at(self.now)),
        }
        self.now += 1;
        self.entity.check_invariants().unwrap();
    }

    fn end(&mut self) -> End {
        let snapshot = self.entity.core().snapshot();
        let Some((queue, delivery)) = snapshot.messages.first() else {
            return End::Gone;
        };
        match (queue, delivery.state) {
            (SubQueue::DeadLetter, _) => End::DeadLettered(delivery.delivery_count),
            (SubQueue::Main, busbar_core::MessageState::Deferred) => {
                End::Deferred(delivery.delivery_count)
            }
            (SubQueue::Main, _) => {
                // It must really be receivable again, by a new receiver of the session.
                let (_, again) = self.deliver();
                End::Available(again.delivery_count)
            }
        }
    }
}

#[test]
fn delivery_counts_follow_the_session_table() {
    for &(name, steps, expected) in TABLE {
        let mut run = Run {
            entity: entity(),
            now: 0,
            next_owner: 0,
        };
        send(&mut run.entity, "m", "s", at(0));
        for &step in steps {
            run.step(step);
        }
        assert_eq!(run.end(), expected, "{name}: {steps:?}");
    }
}

#[test]
fn receive_and_delete_removes_the_message_without_a_count() {
    let mut entity = entity();
    send(&mut entity, "m", "s", at(0));
    let lock = accept_next(&mut entity, 1, at(0));
    let delivery = entity
        .receive(
            ReceiverId(1),
            &lock.session,
            ReceiveMode::ReceiveAndDelete,
            at(0),
        )
        .unwrap()
        .unwrap();
    assert_eq!((delivery.delivery_count, delivery.lock), (0, None));
    entity.handle_timeout(at(LOCK_MS));
    assert!(entity.core().is_empty(SubQueue::Main));
}
