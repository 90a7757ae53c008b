//! Dead-letter reports for a caller that moves dead-lettered messages elsewhere
//! (`ForwardDeadLetteredMessagesTo`): which messages entered the dead-letter sub-queue, and their
//! removal once the caller stored them at the destination.

use super::{Entity, SubQueue};
use crate::codec::Record;
use crate::error::CoreError;
use crate::message::Stage;
use crate::time::SequenceNumber;

impl Entity {
    /// From now on, every message moved to the dead-letter sub-queue (explicit dead-letter,
    /// MaxDeliveryCount, expiry) is reported by
    /// [`take_dead_lettered`](Entity::take_dead_lettered); the messages already there (e.g.
    /// restored after a restart) are reported first. Messages dead-lettered on arrival
    /// ([`NewMessage::dead_letter`](crate::NewMessage::dead_letter)) are not reported: the
    /// caller routed them here itself.
    pub fn report_dead_letters(&mut self) {
        let present = self
            .dead_letter
            .messages()
            .filter(|(_, message)| {
                !matches!(message.stage, Stage::Pending { .. } | Stage::Held { .. })
            })
            .map(|(sequence, _)| sequence)
            .collect();
        self.dead_letter_reports = Some(present);
    }

    /// The messages dead-lettered since the last call, oldest first (empty unless
    /// [`report_dead_letters`](Entity::report_dead_letters) was called).
    pub fn take_dead_lettered(&mut self) -> Vec<SequenceNumber> {
        self.dead_letter_reports
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Removes a dead-lettered message the caller has stored elsewhere. Only an unlocked one
    /// goes: a message a receiver locked meanwhile, or one already gone, fails with
    /// [`CoreError::MessageNotFound`] and nothing changes.
    pub fn remove_dead_lettered(&mut self, sequence: SequenceNumber) -> Result<(), CoreError> {
        let unlocked = self
            .dead_letter
            .get(sequence)
            .is_some_and(|message| matches!(message.stage, Stage::Available | Stage::Deferred));
        if !unlocked {
            return Err(CoreError::MessageNotFound(sequence));
        }
        self.queue_mut(SubQueue::DeadLetter).remove(sequence);
        self.records.push(Record::Remove { sequence });
        Ok(())
    }
}
