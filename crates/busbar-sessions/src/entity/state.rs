//! Session state (get / set / clear, persisted as [`StateRecord`]s) and session enumeration with
//! the paging and last-updated filter of `get-message-sessions` (§5.10).

use super::SessionEntity;
use crate::error::SessionError;
use crate::id::{ReceiverId, SessionId};
use crate::record::{StateRecord, StoredState};
use busbar_core::Timestamp;
use bytes::Bytes;
use std::collections::BTreeSet;

/// `DateTime.MaxValue` in Unix milliseconds: the Python SDK's "default listing" sentinel.
pub const LISTING_SENTINEL: Timestamp = Timestamp(253_402_300_800_000);

/// A `get-message-sessions` request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionListing {
    /// `None`: every session with messages or stored state; `Some(t)`: sessions whose state was
    /// set after `t`.
    pub updated_after: Option<Timestamp>,
    /// Sessions to skip (`skip`).
    pub skip: usize,
    /// At most this many (`top`).
    pub top: usize,
}

impl SessionListing {
    /// From the request fields: a `last-updated-time` at or beyond [`LISTING_SENTINEL`] means
    /// the default listing; negative `skip`/`top` count as 0.
    pub fn from_request(last_updated: Timestamp, skip: i64, top: i64) -> SessionListing {
        SessionListing {
            updated_after: (last_updated < LISTING_SENTINEL).then_some(last_updated),
            skip: usize::try_from(skip).unwrap_or(0),
            top: usize::try_from(top).unwrap_or(0),
        }
    }
}

/// One page of session ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedSessions {
    /// The ids, in ascending order (`sessions-ids`; empty ⇒ answer 204).
    pub sessions: Vec<SessionId>,
    /// The `skip` to send back: where the next page starts.
    pub next_skip: usize,
}

impl SessionEntity {
    /// The state of a session the receiver holds (`get-session-state`); `None` = no state.
    pub fn session_state(
        &mut self,
        owner: ReceiverId,
        session: &SessionId,
        now: Timestamp,
    ) -> Result<Option<Bytes>, SessionError> {
        self.handle_timeout(now);
        self.held_by(owner, session)?;
        Ok(self.states.get(session).map(|stored| stored.state.clone()))
    }

    /// Sets (`Some`) or clears (`None`) the state of a session the receiver holds
    /// (`set-session-state`) and queues the record that persists it. State survives the
    /// session's messages until cleared.
    pub fn set_session_state(
        &mut self,
        owner: ReceiverId,
        session: &SessionId,
        state: Option<Bytes>,
        now: Timestamp,
    ) -> Result<(), SessionError> {
        self.handle_timeout(now);
        self.held_by(owner, session)?;
        self.replace_state(session, state, now)
    }

    /// Whether the receiver `owner` holds `session`'s lock now.
    pub fn holds(&self, owner: ReceiverId, session: &SessionId) -> bool {
        self.held_by(owner, session).is_ok()
    }

    /// The stored state of `session`, whoever holds its lock (the explorer's view).
    pub fn stored_state(&self, session: &SessionId) -> Option<Bytes> {
        self.states.get(session).map(|stored| stored.state.clone())
    }

    /// Sets (`Some`) or clears (`None`) the state of `session` on the namespace owner's behalf
    /// (the explorer), whether or not a receiver holds its lock, and queues the record that
    /// persists it.
    pub fn replace_state(
        &mut self,
        session: &SessionId,
        state: Option<Bytes>,
        now: Timestamp,
    ) -> Result<(), SessionError> {
        if let Some(state) = &state
            && state.len() > self.limits.max_state_size
        {
            return Err(SessionError::StateTooLarge {
                size: state.len(),
                max: self.limits.max_state_size,
            });
        }
        match state {
            Some(state) => {
                let stored = StoredState {
                    state,
                    updated: now,
                };
                self.state_records
                    .push(StateRecord::new(session, Some(&stored)));
                self.states.insert(session.clone(), stored);
            }
            None => {
                if self.states.remove(session).is_some() {
                    self.state_records.push(StateRecord::new(session, None));
                }
            }
        }
        Ok(())
    }

    /// Clears every session's state (the entity is purged or deleted); the removals leave
    /// through [`drain_state_records`](SessionEntity::drain_state_records).
    pub fn clear_states(&mut self) {
        let cleared = self
            .states
            .drain()
            .map(|(session, _)| StateRecord::new(&session, None));
        self.state_records.extend(cleared);
    }

    /// Lists sessions (`get-message-sessions`), in ascending id order. O(s log s) in the number
    /// of sessions: a management query, not a per-message path.
    pub fn list_sessions(&self, listing: SessionListing) -> ListedSessions {
        let ids: BTreeSet<&str> = match listing.updated_after {
            None => self
                .core
                .sessions()
                .chain(self.states.keys().map(SessionId::as_str))
                .collect(),
            Some(after) => self
                .states
                .iter()
                .filter(|(_, stored)| stored.updated > after)
                .map(|(session, _)| session.as_str())
                .collect(),
        };
        let sessions: Vec<SessionId> = ids
            .into_iter()
            .skip(listing.skip)
            .take(listing.top)
            .filter_map(|id| SessionId::new(id).ok())
            .collect();
        ListedSessions {
            next_skip: listing.skip.saturating_add(sessions.len()),
            sessions,
        }
    }
}
