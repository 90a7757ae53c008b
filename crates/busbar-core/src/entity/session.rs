//! Session support: the main queue's messages grouped by session id (AMQP `group-id`), for a
//! session layer on top (`busbar-sessions`) that hands whole sessions to receivers.

use super::{Entity, ReceiveMode, SubQueue, is_visible_to_peek};
use crate::message::Delivery;
use crate::time::{SequenceNumber, Timestamp};

impl Entity {
    /// Hands out the available main-queue message of `session` with the lowest sequence number,
    /// if any; a peek-lock lasts until `locked_until` (the session lock's expiry) rather than
    /// the entity's lock duration. Runs due timers first, like [`receive`](Entity::receive).
    /// O(log n).
    pub fn receive_from_session(
        &mut self,
        session: &str,
        mode: ReceiveMode,
        locked_until: Timestamp,
        now: Timestamp,
    ) -> Option<Delivery> {
        self.handle_timeout(now);
        let sequence = self.main.sessions()?.first_available(session)?;
        self.deliver(SubQueue::Main, sequence, mode, locked_until)
    }

    /// Browses up to `max` main-queue messages of `session` from sequence number `from` on, in
    /// order, like [`peek`](Entity::peek) (no lock, no count; messages already expired are left
    /// out). O(log n) plus the size of the result.
    pub fn peek_session(
        &self,
        session: &str,
        from: SequenceNumber,
        max: usize,
        now: Timestamp,
    ) -> Vec<Delivery> {
        let Some(index) = self.main.sessions() else {
            return Vec::new();
        };
        index
            .stored_from(session, from)
            .filter_map(|sequence| Some((sequence, self.main.get(sequence)?)))
            .filter(|(_, message)| is_visible_to_peek(SubQueue::Main, message, now))
            .take(max)
            .map(|(sequence, message)| message.delivery(sequence, None))
            .collect()
    }

    /// Whether `session` has a main-queue message a receive could hand out now (before running
    /// due timers).
    pub fn session_has_available(&self, session: &str) -> bool {
        self.main
            .sessions()
            .and_then(|index| index.first_available(session))
            .is_some()
    }

    /// Whether any main-queue message (in any state) carries `session`.
    pub fn session_has_messages(&self, session: &str) -> bool {
        self.main
            .sessions()
            .is_some_and(|index| index.contains(session))
    }

    /// The session ids carried by main-queue messages (in any state), in no particular order.
    pub fn sessions(&self) -> impl Iterator<Item = &str> {
        self.main
            .sessions()
            .into_iter()
            .flat_map(|index| index.sessions())
    }

    /// The session id of a main-queue message, if it is stored and has one.
    pub fn session_of(&self, sequence: SequenceNumber) -> Option<&str> {
        self.main.get(sequence)?.body.session_id()
    }

    /// Takes the sessions whose first available message appeared (enqueue, scheduled
    /// activation, a lock ending) since the last call, so a session layer can wake receivers
    /// waiting for "the next available session". A session whose available messages are all
    /// gone again before the call is left out; the log never outgrows the stored messages.
    pub fn take_newly_available_sessions(&mut self) -> Vec<String> {
        self.main
            .sessions_mut()
            .map(|index| index.take_woken())
            .unwrap_or_default()
    }
}
