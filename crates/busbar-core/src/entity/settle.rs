//! Settlement and lock life: complete, abandon, defer, dead-letter, release, renew, and what
//! happens when a lock ends (delivery counting, MaxDeliveryCount, expiry on unlock).

use super::{Entity, SubQueue, is_expired};
use crate::codec::Record;
use crate::error::CoreError;
use crate::lock::{LockHolder, LockToken};
use crate::message::{DeadLetterInfo, Properties, Stage};
use crate::time::{SequenceNumber, Timestamp};

/// How a receiver settles a peek-locked message (AMQP outcome or `$management` disposition).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `accepted` / `completed`: remove the message.
    Complete,
    /// `modified` / `abandoned`: unlock and count a failed delivery.
    Abandon {
        /// Merged into the message's properties.
        properties: Properties,
    },
    /// `modified{undeliverable-here}` / `defered`: keep it aside, retrievable by sequence number.
    Defer {
        /// Merged into the message's properties.
        properties: Properties,
    },
    /// `rejected` / `suspended`: move it to the dead-letter sub-queue.
    DeadLetter {
        /// `DeadLetterReason` and `DeadLetterErrorDescription`.
        info: DeadLetterInfo,
        /// Merged into the message's properties.
        properties: Properties,
    },
    /// `released`: unlock without counting a delivery (prefetched, never looked at).
    Release,
}

/// Why a lock ends.
pub(super) enum LockEnd {
    Settled(Outcome),
    Expired,
    /// The entity was updated ("lock lost on entity update").
    Invalidated,
}

impl Entity {
    /// Settles the message locked under `token`. An unknown, stale or expired token fails with
    /// [`CoreError::LockLost`]; dead-lettering a message of the dead-letter sub-queue fails with
    /// [`CoreError::NotAllowed`]. Either way nothing changes.
    pub fn settle(
        &mut self,
        token: LockToken,
        outcome: Outcome,
        now: Timestamp,
    ) -> Result<(), CoreError> {
        let slot = self.settleable(token, &outcome, now)?;
        self.end_lock(slot, LockEnd::Settled(outcome), now);
        Ok(())
    }

    /// Whether [`settle`](Entity::settle) would succeed now, changing nothing: a transaction
    /// checks every settlement it holds before it applies any.
    pub fn check_settle(
        &self,
        token: LockToken,
        outcome: &Outcome,
        now: Timestamp,
    ) -> Result<(), CoreError> {
        self.settleable(token, outcome, now).map(|_| ())
    }

    /// The lock slot a settlement would end, or why it cannot.
    fn settleable(
        &self,
        token: LockToken,
        outcome: &Outcome,
        now: Timestamp,
    ) -> Result<u32, CoreError> {
        let (slot, holder) = self.valid_lock(token, now)?;
        if holder.queue == SubQueue::DeadLetter && matches!(outcome, Outcome::DeadLetter { .. }) {
            return Err(CoreError::NotAllowed(
                "a dead-lettered message cannot be dead-lettered again",
            ));
        }
        Ok(slot)
    }

    /// Extends a valid lock to `now` + lock duration and returns the new locked-until; an
    /// unknown, stale or expired token fails with [`CoreError::LockLost`].
    pub fn renew_lock(&mut self, token: LockToken, now: Timestamp) -> Result<Timestamp, CoreError> {
        let renewed = now.saturating_add(self.config.lock_duration);
        self.set_lock_expiry(token, renewed, now)?;
        Ok(renewed)
    }

    /// Moves a valid lock's expiry to `locked_until` (earlier or later), e.g. to keep the
    /// message locks of a session in step with the session lock; an unknown, stale or expired
    /// token fails with [`CoreError::LockLost`]. An expiry at or before `now` takes effect at
    /// the next [`handle_timeout`](Entity::handle_timeout).
    pub fn set_lock_expiry(
        &mut self,
        token: LockToken,
        locked_until: Timestamp,
        now: Timestamp,
    ) -> Result<(), CoreError> {
        let (slot, LockHolder { queue, sequence }) = self.valid_lock(token, now)?;
        let Some(Stage::Locked {
            until, deferred, ..
        }) = self.queue(queue).get(sequence).map(|message| message.stage)
        else {
            return Err(CoreError::LockLost);
        };
        self.lock_deadlines.remove(&(until, slot));
        self.lock_deadlines.insert((locked_until, slot));
        let stage = Stage::Locked {
            slot,
            until: locked_until,
            deferred,
        };
        self.queue_mut(queue).set_stage(sequence, stage);
        Ok(())
    }

    /// The slot and holder of a lock that `token` names and that is still running at `now`.
    fn valid_lock(&self, token: LockToken, now: Timestamp) -> Result<(u32, LockHolder), CoreError> {
        let (slot, holder) = self.locks.resolve(token).ok_or(CoreError::LockLost)?;
        let stage = self
            .queue(holder.queue)
            .get(holder.sequence)
            .map(|message| message.stage);
        match stage {
            Some(Stage::Locked {
                slot: held, until, ..
            }) if held == slot && until > now => Ok((slot, holder)),
            _ => Err(CoreError::LockLost),
        }
    }

    /// Ends the lock in `slot` and moves its message on as `how` says.
    pub(super) fn end_lock(&mut self, slot: u32, how: LockEnd, now: Timestamp) {
        let Some(LockHolder { queue, sequence }) = self.locks.release(slot) else {
            return;
        };
        let Some(Stage::Locked {
            until, deferred, ..
        }) = self.queue(queue).get(sequence).map(|message| message.stage)
        else {
            return;
        };
        self.lock_deadlines.remove(&(until, slot));
        let unlocked = if deferred {
            Stage::Deferred
        } else {
            Stage::Available
        };
        match how {
            LockEnd::Settled(Outcome::Complete) => {
                self.queue_mut(queue).remove(sequence);
                self.records.push(Record::Remove { sequence });
            }
            LockEnd::Settled(Outcome::Release) | LockEnd::Invalidated => {
                // The persisted state is unchanged: no record unless the message expires now.
                self.queue_mut(queue).set_stage(sequence, unlocked);
                self.expire_if_due(queue, sequence, now);
            }
            LockEnd::Settled(Outcome::Abandon { properties }) => {
                self.count_failed_delivery(queue, sequence, unlocked, &properties, now);
            }
            LockEnd::Expired => {
                self.count_failed_delivery(queue, sequence, unlocked, &Properties::new(), now);
            }
            LockEnd::Settled(Outcome::Defer { properties }) => {
                self.merge_properties(queue, sequence, &properties);
                self.queue_mut(queue).set_stage(sequence, Stage::Deferred);
                if !self.expire_if_due(queue, sequence, now) {
                    self.persist(queue, sequence);
                }
            }
            LockEnd::Settled(Outcome::DeadLetter { info, properties }) => {
                self.merge_properties(queue, sequence, &properties);
                self.move_to_dead_letter(sequence, info);
            }
        }
    }

    /// Abandon or lock expiry: one more failed delivery, then MaxDeliveryCount or TTL may apply.
    fn count_failed_delivery(
        &mut self,
        queue: SubQueue,
        sequence: SequenceNumber,
        unlocked: Stage,
        properties: &Properties,
        now: Timestamp,
    ) {
        let max = self.config.max_delivery_count;
        let Some(message) = self.queue_mut(queue).message_mut(sequence) else {
            return;
        };
        message.delivery_count = message.delivery_count.saturating_add(1);
        message.properties.merge(properties);
        let count = message.delivery_count;
        self.queue_mut(queue).set_stage(sequence, unlocked);
        // The dead-letter sub-queue has no delivery limit of its own.
        if queue == SubQueue::Main && count >= max {
            self.move_to_dead_letter(sequence, DeadLetterInfo::max_delivery_count_exceeded(max));
        } else if !self.expire_if_due(queue, sequence, now) {
            self.persist(queue, sequence);
        }
    }

    fn merge_properties(
        &mut self,
        queue: SubQueue,
        sequence: SequenceNumber,
        properties: &Properties,
    ) {
        if let Some(message) = self.queue_mut(queue).message_mut(sequence) {
            message.properties.merge(properties);
        }
    }

    /// Moves an unlocked main-queue message to the dead-letter sub-queue, where it is active.
    pub(super) fn move_to_dead_letter(&mut self, sequence: SequenceNumber, info: DeadLetterInfo) {
        let Some(mut message) = self.main.remove(sequence) else {
            return;
        };
        message.dead_letter = Some(Box::new(info));
        message.stage = Stage::Available;
        self.dead_letter.insert(sequence, message);
        self.persist(SubQueue::DeadLetter, sequence);
        if let Some(reports) = &mut self.dead_letter_reports {
            reports.push(sequence);
        }
    }

    /// Expires an unlocked message whose time to live has run out; true if it did.
    fn expire_if_due(&mut self, queue: SubQueue, sequence: SequenceNumber, now: Timestamp) -> bool {
        let due = self
            .queue(queue)
            .get(sequence)
            .is_some_and(|message| is_expired(queue, message, now));
        if due {
            self.expire(sequence);
        }
        due
    }

    /// Drops an expired main-queue message, or dead-letters it when the entity says so.
    pub(super) fn expire(&mut self, sequence: SequenceNumber) {
        if self.config.dead_lettering_on_message_expiration {
            self.move_to_dead_letter(sequence, DeadLetterInfo::ttl_expired());
        } else if self.main.remove(sequence).is_some() {
            self.records.push(Record::Remove { sequence });
        }
    }
}
