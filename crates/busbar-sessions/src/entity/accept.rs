//! Session locks: accepting a named session or the next available one (waiting receivers served
//! oldest first, sessions handed out round-robin), renewal, release on close, and expiry.

use super::{AcceptNext, HeldSession, SessionEntity, SessionEvent, SessionLock};
use crate::error::SessionError;
use crate::id::{ReceiverId, SessionId};
use busbar_core::{Outcome, Timestamp};
use std::collections::HashSet;

impl SessionEntity {
    /// Locks the named session for `owner` (a session with no messages can be locked too). Fails
    /// with [`SessionError::CannotBeLocked`] if another receiver holds it, and with
    /// [`SessionError::ReceiverBusy`] if `owner` already holds or waits for a session.
    pub fn accept_named(
        &mut self,
        owner: ReceiverId,
        session: SessionId,
        now: Timestamp,
    ) -> Result<SessionLock, SessionError> {
        self.handle_timeout(now);
        self.check_idle(owner)?;
        if self.held.contains_key(&session) {
            return Err(SessionError::CannotBeLocked(session));
        }
        Ok(self.lock(owner, session, now))
    }

    /// Locks the next available session (one with available messages and no holder) for
    /// `owner`; if there is none, `owner` waits until one frees up or `wait_until` passes (the
    /// attach's `com.microsoft:timeout`, 65 s when absent), see [`AcceptNext::Waiting`].
    /// Sessions are handed out in the order they became available, and a released session
    /// goes to the back, so none starves; waiting receivers are served oldest first. A
    /// `wait_until` at or before `now` with no session free ends the wait at once (the
    /// [`SessionEvent::AcceptTimedOut`] is queued). Fails with [`SessionError::ReceiverBusy`]
    /// if `owner` already holds or waits for a session.
    pub fn accept_next(
        &mut self,
        owner: ReceiverId,
        wait_until: Timestamp,
        now: Timestamp,
    ) -> Result<AcceptNext, SessionError> {
        self.handle_timeout(now);
        self.check_idle(owner)?;
        if let Some(session) = self.next_ready() {
            return Ok(AcceptNext::Accepted(self.lock(owner, session, now)));
        }
        if wait_until <= now {
            // Nothing to wait for: time out at once, through the same event a wait ends with.
            self.events
                .push_back(SessionEvent::AcceptTimedOut { owner });
            return Ok(AcceptNext::Waiting);
        }
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        self.waiters.push_back((ticket, owner));
        self.waiting.insert(owner, (ticket, wait_until));
        self.wait_deadlines.insert((wait_until, ticket, owner));
        Ok(AcceptNext::Waiting)
    }

    /// Extends the session lock by the entity's lock duration (`renew-session-lock`), together
    /// with the locks of its in-flight messages; returns the new locked-until. Fails with
    /// [`SessionError::LockLost`] if `owner` no longer holds `session`.
    pub fn renew(
        &mut self,
        owner: ReceiverId,
        session: &SessionId,
        now: Timestamp,
    ) -> Result<Timestamp, SessionError> {
        self.handle_timeout(now);
        let old = self.held_by(owner, session)?.locked_until;
        let renewed = now.saturating_add(self.core.config().lock_duration);
        let Some(held) = self.held.get_mut(session) else {
            return Err(SessionError::LockLost(session.clone()));
        };
        held.locked_until = renewed;
        // Message locks end with the session lock; a token whose lock already ended is stale.
        held.in_flight
            .retain(|&token| self.core.set_lock_expiry(token, renewed, now).is_ok());
        self.lock_deadlines.remove(&(old, session.clone()));
        self.lock_deadlines.insert((renewed, session.clone()));
        Ok(renewed)
    }

    /// The receiver's link closed or detached: release its session lock (its in-flight messages
    /// become available again without counting a delivery) or stop its wait. Unknown receivers
    /// are ignored, so calling this for every detaching session link is always safe.
    pub fn close_receiver(&mut self, owner: ReceiverId, now: Timestamp) {
        self.handle_timeout(now);
        if let Some((ticket, wait_until)) = self.waiting.remove(&owner) {
            self.wait_deadlines.remove(&(wait_until, ticket, owner));
            self.compact_waiters();
        }
        if let Some(session) = self.owners.remove(&owner)
            && let Some(held) = self.held.remove(&session)
        {
            self.lock_deadlines
                .remove(&(held.locked_until, session.clone()));
            for token in held.in_flight {
                // Tokens settled or expired meanwhile are stale; that is fine.
                let _ = self.core.settle(token, Outcome::Release, now);
            }
            self.make_ready(session);
        }
        self.hand_out_sessions(now);
    }

    /// Processes every deadline at or before `now`: the core's (a message lock that ends with
    /// its session lock counts a delivery), then expired session locks
    /// ([`SessionEvent::LockLost`]), then hands freed sessions to waiting receivers, then ends
    /// waits that ran out ([`SessionEvent::AcceptTimedOut`]).
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.core.handle_timeout(now);
        while self
            .lock_deadlines
            .first()
            .is_some_and(|(until, _)| *until <= now)
        {
            let Some((_, session)) = self.lock_deadlines.pop_first() else {
                break;
            };
            if let Some(held) = self.held.remove(&session) {
                self.owners.remove(&held.owner);
                self.events.push_back(SessionEvent::LockLost {
                    owner: held.owner,
                    session: session.clone(),
                });
                self.make_ready(session);
            }
        }
        self.hand_out_sessions(now);
        while let Some(&(until, ticket, owner)) = self.wait_deadlines.first() {
            if until > now {
                break;
            }
            self.wait_deadlines.pop_first();
            if self.waiting.get(&owner).is_some_and(|(t, _)| *t == ticket) {
                self.waiting.remove(&owner);
                self.events
                    .push_back(SessionEvent::AcceptTimedOut { owner });
            }
        }
        self.compact_waiters();
    }

    /// Drops queue entries of receivers that stopped waiting once they outnumber the waiting
    /// ones, so cancelled waits cannot pile up (amortised O(1) per wait).
    fn compact_waiters(&mut self) {
        if self.waiters.len() > 2 * self.waiting.len() + 16 {
            let waiting = &self.waiting;
            self.waiters.retain(|(ticket, owner)| {
                waiting
                    .get(owner)
                    .is_some_and(|(current, _)| current == ticket)
            });
        }
    }

    /// Gives available sessions to waiting receivers, oldest waiter first.
    pub(super) fn hand_out_sessions(&mut self, now: Timestamp) {
        self.collect_newly_available();
        while !self.waiting.is_empty() {
            let Some(session) = self.next_ready() else {
                return;
            };
            let Some(owner) = self.next_waiter() else {
                // Unreachable while `waiting` is non-empty; keep the session's turn regardless.
                self.ready.push_front(session.clone());
                self.queued.insert(session);
                return;
            };
            let lock = self.lock(owner, session, now);
            self.events.push_back(SessionEvent::Accepted(lock));
        }
    }

    /// Queues the sessions the core reports as newly available (they may be held: checked when
    /// taken). Sorted, so the hand-out order does not depend on hashing.
    pub(super) fn collect_newly_available(&mut self) {
        let mut woken = self.core.take_newly_available_sessions();
        woken.sort_unstable();
        for session in woken {
            // The core only reports ids of stored messages, which passed `SessionId::new`.
            if let Ok(session) = SessionId::new(session) {
                self.make_ready(session);
            }
        }
    }

    /// Puts a session at the back of the ready queue if it is not queued already.
    fn make_ready(&mut self, session: SessionId) {
        if !self.queued.contains(&session) {
            self.queued.insert(session.clone());
            self.ready.push_back(session);
        }
    }

    /// Takes the oldest queued session that is still free and has available messages.
    fn next_ready(&mut self) -> Option<SessionId> {
        while let Some(session) = self.ready.pop_front() {
            self.queued.remove(&session);
            if !self.held.contains_key(&session)
                && self.core.session_has_available(session.as_str())
            {
                return Some(session);
            }
        }
        None
    }

    /// Takes the oldest receiver still waiting and ends its wait.
    fn next_waiter(&mut self) -> Option<ReceiverId> {
        while let Some((ticket, owner)) = self.waiters.pop_front() {
            if let Some(&(current, until)) = self.waiting.get(&owner)
                && current == ticket
            {
                self.waiting.remove(&owner);
                self.wait_deadlines.remove(&(until, ticket, owner));
                return Some(owner);
            }
        }
        None
    }

    /// Refuses a receiver that already holds or waits for a session.
    fn check_idle(&self, owner: ReceiverId) -> Result<(), SessionError> {
        if self.owners.contains_key(&owner) || self.waiting.contains_key(&owner) {
            return Err(SessionError::ReceiverBusy(owner.0));
        }
        Ok(())
    }

    /// Locks a free session for an idle receiver.
    fn lock(&mut self, owner: ReceiverId, session: SessionId, now: Timestamp) -> SessionLock {
        let locked_until = now.saturating_add(self.core.config().lock_duration);
        self.lock_deadlines.insert((locked_until, session.clone()));
        self.owners.insert(owner, session.clone());
        self.held.insert(
            session.clone(),
            HeldSession {
                owner,
                locked_until,
                in_flight: HashSet::new(),
            },
        );
        SessionLock {
            session,
            owner,
            locked_until,
        }
    }
}
