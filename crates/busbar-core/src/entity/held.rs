//! Messages whose inserts may never be stored. Held copies: one entity's part of a send that must
//! reach several entities all together, enqueued invisibly with their insert records going back
//! to the caller, who stores every entity's part in one unit and then releases them all, or
//! discards them all if storing failed. And pending messages whose write or sync failed, dropped
//! so that nothing (counts, session listings, the size quota) sees them.

use super::{Entity, SubQueue};
use crate::codec::Record;
use crate::error::CoreError;
use crate::message::{EnqueueOutcome, NewMessage, Stage};
use crate::time::{SequenceNumber, Timestamp};

/// What [`Entity::hold`] did: one outcome per message, and the insert records of the held
/// copies, which the caller must store itself (they are not queued for
/// [`drain_records`](Entity::drain_records)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeldCopies {
    /// One per message, in order (duplicates are acknowledged and hold nothing).
    pub outcomes: Vec<EnqueueOutcome>,
    /// The insert record of every held copy.
    pub records: Vec<Record>,
}

impl HeldCopies {
    /// The sequence numbers of the held copies, to release or discard.
    pub fn sequences(&self) -> Vec<SequenceNumber> {
        self.outcomes
            .iter()
            .filter_map(|outcome| match outcome {
                EnqueueOutcome::Enqueued(sequence) => Some(*sequence),
                EnqueueOutcome::Duplicate => None,
            })
            .collect()
    }
}

impl Entity {
    /// Enqueues a batch like [`enqueue`](Entity::enqueue) (all or nothing, duplicates
    /// acknowledged), but *held*: no receive, peek, session hand-out or
    /// [`mark_durable`](Entity::mark_durable) sees the copies, and their insert records are
    /// returned instead of queued. The caller stores them (with the other entities' parts of
    /// the same send) and then calls [`release_held`](Entity::release_held) once they are
    /// durable or [`discard_held`](Entity::discard_held) if storing failed.
    pub fn hold(
        &mut self,
        messages: Vec<NewMessage>,
        now: Timestamp,
    ) -> Result<HeldCopies, CoreError> {
        let queued_before = self.records.len();
        let outcomes = self.enqueue(messages, now)?;
        // `enqueue` queued exactly one insert per copy, after what was queued before.
        let records = self.records.split_off(queued_before);
        let held = HeldCopies { outcomes, records };
        for sequence in held.sequences() {
            // A copy dead-lettered on arrival is held in the dead-letter sub-queue.
            for queue in [SubQueue::Main, SubQueue::DeadLetter] {
                let Some(stage) = self.queue(queue).get(sequence).map(|message| message.stage)
                else {
                    continue;
                };
                let scheduled = stage == Stage::Pending { scheduled: true };
                self.queue_mut(queue)
                    .set_stage(sequence, Stage::Held { scheduled });
            }
        }
        Ok(held)
    }

    /// The held copies' inserts are durable: they become available (or scheduled) to receive
    /// and peek. Numbers that are not held copies are ignored. O(log n) per copy.
    pub fn release_held(&mut self, sequences: &[SequenceNumber]) {
        for &sequence in sequences {
            if let Some(queue) = self.held_in(sequence) {
                self.reveal(queue, sequence);
            }
        }
    }

    /// The held copies' inserts were not stored: the copies are dropped as if never enqueued
    /// (no record, their message-ids forgotten by duplicate detection, so a retried send is
    /// stored). Numbers that are not held copies are ignored. O(log n) per copy.
    pub fn discard_held(&mut self, sequences: &[SequenceNumber]) {
        for &sequence in sequences {
            if let Some(queue) = self.held_in(sequence) {
                self.drop_unstored(queue, sequence);
            }
        }
    }

    /// The insert records up to sequence number `through` were not stored (their write or sync
    /// failed): the pending messages up to there are dropped as if never enqueued (no record,
    /// message-ids forgotten by duplicate detection), so no count, session listing or size
    /// quota sees them. Call it before [`mark_durable`](Entity::mark_durable) reports a later
    /// batch durable. Durable messages and held copies are untouched. O(log n) per message
    /// dropped.
    pub fn discard_pending(&mut self, through: SequenceNumber) {
        for queue in [SubQueue::Main, SubQueue::DeadLetter] {
            while let Some(sequence) = self.queue_mut(queue).pop_pending_through(through) {
                self.drop_unstored(queue, sequence);
            }
        }
    }

    /// Removes a message whose insert was never stored, and forgets its message-id.
    fn drop_unstored(&mut self, queue: SubQueue, sequence: SequenceNumber) {
        if let Some(message) = self.queue_mut(queue).remove(sequence)
            && let Some(id) = message.body.message_id()
        {
            self.duplicates.forget(id, message.body.accepted_time());
        }
    }

    /// The sub-queue holding `sequence` as a held copy, if it is one.
    fn held_in(&self, sequence: SequenceNumber) -> Option<SubQueue> {
        [SubQueue::Main, SubQueue::DeadLetter]
            .into_iter()
            .find(|&queue| {
                self.queue(queue)
                    .get(sequence)
                    .is_some_and(|message| matches!(message.stage, Stage::Held { .. }))
            })
    }
}
