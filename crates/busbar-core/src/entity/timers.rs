//! Deadlines: scheduled activation, lock expiry and TTL expiry, reported by `poll_timeout` and
//! processed by `handle_timeout`.

use super::settle::LockEnd;
use super::{Entity, SubQueue};
use crate::message::Stage;
use crate::time::Timestamp;

impl Entity {
    /// The earliest instant at which [`handle_timeout`](Entity::handle_timeout) has work: a
    /// scheduled message to activate, a lock to expire or a message to expire. `None` = no timer.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        [
            self.main.next_activation().map(|(at, _)| at),
            self.lock_deadlines.first().map(|(at, _)| *at),
            self.main.next_expiry().map(|(at, _)| at),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Processes every deadline at or before `now`, in this order: scheduled messages become
    /// active, expired locks return their messages (one more delivery counted), expired messages
    /// are dropped or dead-lettered. Each step is O(log n).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        while let Some(sequence) = self.main.pop_due_activation(now) {
            self.main.set_stage(sequence, Stage::Available);
            self.persist(SubQueue::Main, sequence);
        }
        while let Some(&(until, slot)) = self.lock_deadlines.first() {
            if until > now {
                break;
            }
            // Removed here (not only in `end_lock`) so the loop always makes progress.
            self.lock_deadlines.remove(&(until, slot));
            self.end_lock(slot, LockEnd::Expired, now);
        }
        while let Some(sequence) = self.main.pop_due_expiry(now) {
            self.expire(sequence);
        }
        self.duplicates.forget_expired(now);
    }
}
