//! Inspection for tests and diagnostics: a comparable snapshot of the whole entity and the
//! invariant check ("every message is in exactly one state").

use super::{Entity, SubQueue};
use crate::lock::LockHolder;
use crate::message::{Delivery, DeliveryLock, Stage};
use crate::time::SequenceNumber;
use std::collections::HashSet;

/// Every stored message as a [`Delivery`] (lock included when held), in sequence order per
/// sub-queue, plus the high-water mark; held copies (see [`Entity::hold`]) are left out. Two
/// entities with equal snapshots behave alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntitySnapshot {
    /// The highest sequence number ever assigned.
    pub high_water: i64,
    /// `(sub-queue, message)` pairs: the main queue first, then the dead-letter sub-queue.
    pub messages: Vec<(SubQueue, Delivery)>,
}

impl EntitySnapshot {
    /// The snapshot with locks removed (locks are volatile: a restored entity holds none).
    pub fn without_locks(mut self) -> EntitySnapshot {
        for (_, delivery) in &mut self.messages {
            delivery.lock = None;
        }
        self
    }
}

impl Entity {
    /// The whole entity state, for comparison in tests. O(n).
    pub fn snapshot(&self) -> EntitySnapshot {
        let mut messages = Vec::with_capacity(self.main.len() + self.dead_letter.len());
        for queue in [SubQueue::Main, SubQueue::DeadLetter] {
            // Held copies are not part of the entity yet: their inserts are not even stored.
            let kept = self
                .queue(queue)
                .messages()
                .filter(|(_, message)| !matches!(message.stage, Stage::Held { .. }));
            for (sequence, message) in kept {
                let lock = match message.stage {
                    Stage::Locked { slot, until, .. } => {
                        self.locks.token(slot).map(|token| DeliveryLock {
                            token,
                            locked_until: until,
                        })
                    }
                    _ => None,
                };
                messages.push((queue, message.delivery(sequence, lock)));
            }
        }
        EntitySnapshot {
            high_water: self.high_water(),
            messages,
        }
    }

    /// Checks the structural invariants: each message sits in exactly the index its stage names,
    /// in one sub-queue only; every lock slot, lock deadline and locked message agree; sequence
    /// numbers lie within the high-water mark. O(n); meant for tests after every step.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.main.check_indices()?;
        self.dead_letter.check_indices()?;
        let mut sequences = HashSet::new();
        let mut locked = 0usize;
        for queue in [SubQueue::Main, SubQueue::DeadLetter] {
            for (sequence, message) in self.queue(queue).messages() {
                if !sequences.insert(sequence) {
                    return Err(format!("message {sequence} is in both sub-queues"));
                }
                if sequence < SequenceNumber::FIRST || sequence.0 >= self.next_sequence {
                    return Err(format!("message {sequence} is beyond the high-water mark"));
                }
                if message.dead_letter.is_some() != (queue == SubQueue::DeadLetter) {
                    return Err(format!(
                        "message {sequence} has dead-letter info out of place"
                    ));
                }
                if queue == SubQueue::DeadLetter && message.stage == Stage::Scheduled {
                    return Err(format!("dead-lettered message {sequence} is scheduled"));
                }
                if let Stage::Locked { slot, until, .. } = message.stage {
                    locked += 1;
                    if self.locks.holder(slot) != Some(LockHolder { queue, sequence }) {
                        return Err(format!(
                            "message {sequence} is locked by a slot it does not hold"
                        ));
                    }
                    if !self.lock_deadlines.contains(&(until, slot)) {
                        return Err(format!("lock of message {sequence} has no deadline"));
                    }
                }
            }
        }
        if locked != self.locks.held() || locked != self.lock_deadlines.len() {
            return Err(format!(
                "{locked} locked messages, {} held slots, {} lock deadlines",
                self.locks.held(),
                self.lock_deadlines.len()
            ));
        }
        Ok(())
    }
}
