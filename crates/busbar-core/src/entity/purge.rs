//! Purging: every stored message of a sub-queue removed at once (a test suite resetting its
//! entities between tests). Locks on them end; messages not yet stored (pending or held for a
//! send to several entities) are left to their send.

use super::settle::LockEnd;
use super::{Entity, Outcome, SubQueue};
use crate::codec::Record;
use crate::message::Stage;
use crate::time::Timestamp;

impl Entity {
    /// Removes every stored message of `queue`, emitting a remove record for each; returns how
    /// many went. Their locks end (a later settlement is lock-lost).
    pub fn purge(&mut self, queue: SubQueue, now: Timestamp) -> usize {
        let stored: Vec<_> = self
            .queue(queue)
            .messages()
            .map(|(sequence, message)| (sequence, message.stage))
            .collect();
        let mut purged = 0;
        for (sequence, stage) in stored {
            match stage {
                Stage::Pending { .. } | Stage::Held { .. } => continue,
                Stage::Locked { slot, .. } => {
                    self.end_lock(slot, LockEnd::Settled(Outcome::Complete), now);
                }
                Stage::Available | Stage::Deferred | Stage::Scheduled => {
                    self.queue_mut(queue).remove(sequence);
                    self.records.push(Record::Remove { sequence });
                }
            }
            purged += 1;
        }
        purged
    }
}
