//! Secondary index of the main queue by session id (AMQP `group-id`): per session, which
//! messages are stored and which are available, so "next message of session X" and "peek
//! session X" are O(log n).

use crate::message::SessionName;
use crate::time::SequenceNumber;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// Sessions of one sub-queue. Only messages that carry a session id appear here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SessionIndex {
    sessions: HashMap<String, SessionEntry>,
    /// Sessions whose available set went from empty to non-empty since the last
    /// [`take_woken`](SessionIndex::take_woken); a session leaves again when its set empties,
    /// so this never outgrows the stored messages even if nobody drains it.
    woken: HashSet<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct SessionEntry {
    /// The session id, shared by its messages.
    name: SessionName,
    stored: BTreeSet<SequenceNumber>,
    available: BTreeSet<SequenceNumber>,
}

impl SessionIndex {
    /// A message of `session` is now stored (`available` says whether it is receivable).
    /// Returns the session's name for the message to share.
    pub(crate) fn add(
        &mut self,
        session: &SessionName,
        sequence: SequenceNumber,
        available: bool,
    ) -> SessionName {
        let key = session.0.as_str();
        let name = match self.sessions.get_mut(key) {
            Some(entry) => {
                entry.stored.insert(sequence);
                entry.name.clone()
            }
            None => {
                let entry = SessionEntry {
                    name: SessionName(Arc::clone(&session.0)),
                    stored: BTreeSet::from([sequence]),
                    available: BTreeSet::new(),
                };
                self.sessions.insert(key.to_owned(), entry);
                session.clone()
            }
        };
        if available {
            self.set_available(key, sequence, true);
        }
        name
    }

    /// A message of `session` is no longer stored.
    pub(crate) fn remove(&mut self, session: &str, sequence: SequenceNumber, available: bool) {
        if available {
            self.set_available(session, sequence, false);
        }
        if let Some(entry) = self.sessions.get_mut(session) {
            entry.stored.remove(&sequence);
            if entry.stored.is_empty() {
                self.sessions.remove(session);
            }
        }
    }

    /// A stored message of `session` became receivable (`true`) or stopped being so.
    pub(crate) fn set_available(&mut self, session: &str, sequence: SequenceNumber, on: bool) {
        let Some(entry) = self.sessions.get_mut(session) else {
            return;
        };
        let was_empty = entry.available.is_empty();
        if on {
            entry.available.insert(sequence);
            if was_empty && !self.woken.contains(session) {
                self.woken.insert(session.to_owned());
            }
        } else {
            entry.available.remove(&sequence);
            if !was_empty && entry.available.is_empty() {
                self.woken.remove(session);
            }
        }
    }

    pub(crate) fn first_available(&self, session: &str) -> Option<SequenceNumber> {
        self.sessions.get(session)?.available.first().copied()
    }

    /// Stored messages of `session` from `from` on, in sequence order.
    pub(crate) fn stored_from(
        &self,
        session: &str,
        from: SequenceNumber,
    ) -> impl Iterator<Item = SequenceNumber> + '_ {
        self.sessions
            .get(session)
            .into_iter()
            .flat_map(move |entry| entry.stored.range(from..).copied())
    }

    pub(crate) fn sessions(&self) -> impl Iterator<Item = &str> {
        self.sessions.keys().map(String::as_str)
    }

    pub(crate) fn contains(&self, session: &str) -> bool {
        self.sessions.contains_key(session)
    }

    /// Takes the sessions that got a first available message since the last call.
    pub(crate) fn take_woken(&mut self) -> Vec<String> {
        self.woken.drain().collect()
    }

    /// Equality of the per-session entries, ignoring the wake-up log (used by invariant checks).
    pub(crate) fn same_entries(&self, other: &SessionIndex) -> bool {
        self.sessions == other.sessions
    }
}
