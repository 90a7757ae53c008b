//! The session-enabled entity: the core entity plus session locks, waiting acceptors and
//! session state — enqueue, receive and settlement here; accepting, timers, state and listing
//! in the child modules.

mod accept;
mod inspect;
mod state;

pub use state::{LISTING_SENTINEL, ListedSessions, SessionListing};

use crate::error::SessionError;
use crate::id::{ReceiverId, SessionId, check_session_message};
use crate::record::{StateRecord, StoredState};
use busbar_core::{
    CoreError, Delivery, EnqueueOutcome, Entity, HeldCopies, LockToken, NewMessage, Outcome,
    ReceiveMode, SequenceNumber, Timestamp,
};
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};

/// Limits of a session-enabled entity beyond the core's [`EntityConfig`](busbar_core::EntityConfig).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionLimits {
    /// Largest session state accepted, in bytes: the entity's message size limit.
    pub max_state_size: usize,
}

impl Default for SessionLimits {
    /// 256 KiB, the Standard tier's (and the emulator's) message size limit.
    fn default() -> Self {
        SessionLimits {
            max_state_size: 256 * 1024,
        }
    }
}

/// A session lock handed to a receiver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionLock {
    /// The locked session (echoed in the attach's `com.microsoft:session-filter`).
    pub session: SessionId,
    /// The receiver holding it.
    pub owner: ReceiverId,
    /// When the lock ends unless renewed (`com.microsoft:locked-until-utc`, and the
    /// `x-opt-locked-until` of every message delivered under it).
    pub locked_until: Timestamp,
}

/// What [`SessionEntity::accept_next`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AcceptNext {
    /// A session was free: the receiver holds it now.
    Accepted(SessionLock),
    /// None was free: the receiver waits until a session frees up
    /// ([`SessionEvent::Accepted`]) or its deadline passes ([`SessionEvent::AcceptTimedOut`]).
    Waiting,
}

/// Something the driver must tell a receiver, drained with [`SessionEntity::poll_event`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEvent {
    /// A waiting receiver got a session: complete its attach (§6.2).
    Accepted(SessionLock),
    /// A waiting receiver's deadline passed: refuse its attach with `com.microsoft:timeout`.
    AcceptTimedOut {
        /// The receiver that waited.
        owner: ReceiverId,
    },
    /// A session lock expired: detach the receiver's link with `com.microsoft:session-lock-lost`.
    /// Its in-flight messages are available again with one more delivery counted.
    LockLost {
        /// The receiver that held the lock.
        owner: ReceiverId,
        /// The session it held.
        session: SessionId,
    },
}

/// A session lock as held: its owner, deadline and the message locks taken under it.
#[derive(Clone, Debug)]
struct HeldSession {
    owner: ReceiverId,
    locked_until: Timestamp,
    in_flight: HashSet<LockToken>,
}

/// A session-enabled queue or subscription (sans-IO: every operation takes `now`).
///
/// The core [`Entity`] keeps the messages; this layer adds who may receive them. A receiver
/// (a [`ReceiverId`]) holds at most one session and a session at most one receiver; messages of
/// a session are handed out in sequence order, and only to its holder. Effects leave as with
/// the core: results are returned, [`SessionEvent`]s wait in [`poll_event`](Self::poll_event),
/// the next deadline is [`poll_timeout`](Self::poll_timeout), and records to persist are
/// [`drain_records`](Self::drain_records) (messages, from the core) and
/// [`drain_state_records`](Self::drain_state_records) (session state). Every operation first
/// runs the timers due at `now` (as [`handle_timeout`](Self::handle_timeout) would, so a late
/// driver timer never lets an expired lock act); beyond that, an operation that returns an
/// error changes nothing.
#[derive(Clone, Debug)]
pub struct SessionEntity {
    core: Entity,
    limits: SessionLimits,
    held: HashMap<SessionId, HeldSession>,
    owners: HashMap<ReceiverId, SessionId>,
    /// `(locked_until, session)` of every held session, for expiry in deadline order.
    lock_deadlines: BTreeSet<(Timestamp, SessionId)>,
    /// Unlocked sessions that had available messages when queued, oldest first; entries are
    /// checked when taken (a session may have been locked or emptied meanwhile).
    ready: VecDeque<SessionId>,
    queued: HashSet<SessionId>,
    /// Waiting receivers, oldest first, with the ticket that makes an entry current.
    waiters: VecDeque<(u64, ReceiverId)>,
    waiting: HashMap<ReceiverId, (u64, Timestamp)>,
    wait_deadlines: BTreeSet<(Timestamp, u64, ReceiverId)>,
    next_ticket: u64,
    states: HashMap<SessionId, StoredState>,
    events: VecDeque<SessionEvent>,
    state_records: Vec<StateRecord>,
}

impl SessionEntity {
    /// Wraps a core entity (new, or rebuilt by [`Entity::restore`]); `states` are the session
    /// states recovered from the store (see [`StateRecord::decode`]). Every session with available
    /// messages starts free and ready to accept.
    pub fn new(
        core: Entity,
        limits: SessionLimits,
        states: impl IntoIterator<Item = (SessionId, StoredState)>,
    ) -> SessionEntity {
        let mut entity = SessionEntity {
            core,
            limits,
            held: HashMap::new(),
            owners: HashMap::new(),
            lock_deadlines: BTreeSet::new(),
            ready: VecDeque::new(),
            queued: HashSet::new(),
            waiters: VecDeque::new(),
            waiting: HashMap::new(),
            wait_deadlines: BTreeSet::new(),
            next_ticket: 0,
            states: states.into_iter().collect(),
            events: VecDeque::new(),
            state_records: Vec::new(),
        };
        entity.collect_newly_available();
        entity
    }

    /// The core entity, for what sessions do not change: peek, the dead-letter sub-queue (whose
    /// receivers are plain, not session receivers), scheduling and cancelling, counts.
    pub fn core(&self) -> &Entity {
        &self.core
    }

    /// The core entity, mutably: for the dead-letter sub-queue, `cancel_scheduled` and config
    /// updates only. Main-queue receives and settlements must go through this layer, or the
    /// session rules do not hold.
    pub fn core_mut(&mut self) -> &mut Entity {
        &mut self.core
    }

    /// Enqueues a batch, all or nothing: every message needs a valid session id
    /// ([`SessionError::SessionIdRequired`] otherwise, nothing stored). Waiting receivers get
    /// the sessions that become available.
    pub fn enqueue(
        &mut self,
        messages: Vec<NewMessage>,
        now: Timestamp,
    ) -> Result<Vec<EnqueueOutcome>, SessionError> {
        for message in &messages {
            check_session_message(message)?;
        }
        self.handle_timeout(now);
        let outcomes = self.core.enqueue(messages, now)?;
        self.hand_out_sessions(now);
        Ok(outcomes)
    }

    /// Reports the inserts up to `through` durable ([`Entity::mark_durable`]): their messages
    /// become receivable, and waiting receivers get the sessions that become available.
    pub fn mark_durable(&mut self, through: SequenceNumber, now: Timestamp) {
        self.core.mark_durable(through);
        self.hand_out_sessions(now);
    }

    /// Holds this entity's part of a send to several entities ([`Entity::hold`]), all or
    /// nothing: every message needs a valid session id. Held copies open no session until
    /// [`release_held`](Self::release_held).
    pub fn hold(
        &mut self,
        messages: Vec<NewMessage>,
        now: Timestamp,
    ) -> Result<HeldCopies, SessionError> {
        for message in &messages {
            check_session_message(message)?;
        }
        self.handle_timeout(now);
        Ok(self.core.hold(messages, now)?)
    }

    /// Releases held copies once durable ([`Entity::release_held`]); waiting receivers get the
    /// sessions that become available. (Discarding needs no session rule:
    /// [`Entity::discard_held`] through [`core_mut`](Self::core_mut).)
    pub fn release_held(&mut self, sequences: &[SequenceNumber], now: Timestamp) {
        self.core.release_held(sequences);
        self.hand_out_sessions(now);
    }

    /// The next message of the receiver's session, in sequence order (`None` = nothing
    /// available now). A peek-lock lasts as long as the session lock. Fails with
    /// [`SessionError::LockLost`] if the receiver no longer holds `session`.
    pub fn receive(
        &mut self,
        owner: ReceiverId,
        session: &SessionId,
        mode: ReceiveMode,
        now: Timestamp,
    ) -> Result<Option<Delivery>, SessionError> {
        self.handle_timeout(now);
        let locked_until = self.held_by(owner, session)?.locked_until;
        let delivery = self
            .core
            .receive_from_session(session.as_str(), mode, locked_until, now);
        let token = delivery
            .as_ref()
            .and_then(|delivery| delivery.lock)
            .map(|lock| lock.token);
        if let (Some(token), Some(held)) = (token, self.held.get_mut(session)) {
            held.in_flight.insert(token);
        }
        Ok(delivery)
    }

    /// Browses up to `max` messages of the receiver's session from sequence number `from` on
    /// (`peek-message` with `session-id`): no lock, no delivery counted. Fails with
    /// [`SessionError::LockLost`] if the receiver no longer holds `session`.
    pub fn peek(
        &mut self,
        owner: ReceiverId,
        session: &SessionId,
        from: SequenceNumber,
        max: usize,
        now: Timestamp,
    ) -> Result<Vec<Delivery>, SessionError> {
        self.handle_timeout(now);
        self.held_by(owner, session)?;
        Ok(self.core.peek_session(session.as_str(), from, max, now))
    }

    /// Receives deferred messages of the receiver's session by sequence number, all or nothing:
    /// a number that is not a deferred message of this session fails with
    /// [`CoreError::MessageNotFound`]. Locks last as long as the session lock.
    pub fn receive_deferred(
        &mut self,
        owner: ReceiverId,
        session: &SessionId,
        sequences: &[SequenceNumber],
        mode: ReceiveMode,
        now: Timestamp,
    ) -> Result<Vec<Delivery>, SessionError> {
        self.handle_timeout(now);
        let locked_until = self.held_by(owner, session)?.locked_until;
        for &sequence in sequences {
            if self.core.session_of(sequence) != Some(session.as_str()) {
                return Err(CoreError::MessageNotFound(sequence).into());
            }
        }
        let deliveries =
            self.core
                .receive_deferred(busbar_core::SubQueue::Main, sequences, mode, now)?;
        let tokens: Vec<_> = deliveries
            .iter()
            .filter_map(|delivery| delivery.lock.map(|lock| lock.token))
            .collect();
        for &token in &tokens {
            // The lock was just taken, so it is valid; aligning it cannot fail.
            let _ = self.core.set_lock_expiry(token, locked_until, now);
        }
        if let Some(held) = self.held.get_mut(session) {
            held.in_flight.extend(tokens);
        }
        Ok(deliveries
            .into_iter()
            .map(|mut delivery| {
                if let Some(lock) = &mut delivery.lock {
                    lock.locked_until = locked_until;
                }
                delivery
            })
            .collect())
    }

    /// Settles a message of the receiver's session. Fails with [`SessionError::LockLost`] if
    /// the receiver no longer holds `session`, and with [`SessionError::MessageLockLost`] if the
    /// token is not a live lock taken under this session lock.
    pub fn settle(
        &mut self,
        owner: ReceiverId,
        session: &SessionId,
        token: LockToken,
        outcome: Outcome,
        now: Timestamp,
    ) -> Result<(), SessionError> {
        self.handle_timeout(now);
        if !self.held_by(owner, session)?.in_flight.contains(&token) {
            return Err(SessionError::MessageLockLost);
        }
        match self.core.settle(token, outcome, now) {
            Ok(()) => {}
            Err(CoreError::LockLost) => return Err(SessionError::MessageLockLost),
            Err(other) => return Err(other.into()),
        }
        if let Some(held) = self.held.get_mut(session) {
            held.in_flight.remove(&token);
        }
        Ok(())
    }

    /// Whether [`settle`](Self::settle) would succeed now, changing nothing (a transaction
    /// checks every settlement before it applies any).
    pub fn check_settle(
        &self,
        owner: ReceiverId,
        session: &SessionId,
        token: LockToken,
        outcome: &Outcome,
        now: Timestamp,
    ) -> Result<(), SessionError> {
        if !self.held_by(owner, session)?.in_flight.contains(&token) {
            return Err(SessionError::MessageLockLost);
        }
        match self.core.check_settle(token, outcome, now) {
            Ok(()) => Ok(()),
            Err(CoreError::LockLost) => Err(SessionError::MessageLockLost),
            Err(other) => Err(other.into()),
        }
    }

    /// The next [`SessionEvent`] for the driver, oldest first.
    pub fn poll_event(&mut self) -> Option<SessionEvent> {
        self.events.pop_front()
    }

    /// The earliest instant at which [`handle_timeout`](Self::handle_timeout) has work: a
    /// session lock or a wait to end, or one of the core's deadlines. `None` = no timer.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        [
            self.core.poll_timeout(),
            self.lock_deadlines.first().map(|(at, _)| *at),
            self.wait_deadlines.first().map(|(at, _, _)| *at),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Message records for the store, oldest first (the core's [`busbar_core::Record`]s).
    pub fn drain_records(&mut self) -> std::vec::Drain<'_, busbar_core::Record> {
        self.core.drain_records()
    }

    /// Session-state records for the store's entity-scoped key/value map, oldest first.
    pub fn drain_state_records(&mut self) -> std::vec::Drain<'_, StateRecord> {
        self.state_records.drain(..)
    }

    /// The session `owner` holds, if it holds one.
    pub fn session_of(&self, owner: ReceiverId) -> Option<&SessionId> {
        self.owners.get(&owner)
    }

    /// The lock on `session`, if one is held.
    pub fn lock_of(&self, session: &SessionId) -> Option<SessionLock> {
        self.held.get(session).map(|held| SessionLock {
            session: session.clone(),
            owner: held.owner,
            locked_until: held.locked_until,
        })
    }

    /// Session locks currently held.
    pub fn locks_held(&self) -> usize {
        self.held.len()
    }

    /// Receivers waiting for a session.
    pub fn waiting_len(&self) -> usize {
        self.waiting.len()
    }

    /// The lock `owner` holds on `session`, or the error a request naming them gets.
    fn held_by(
        &self,
        owner: ReceiverId,
        session: &SessionId,
    ) -> Result<&HeldSession, SessionError> {
        self.held
            .get(session)
            .filter(|held| held.owner == owner)
            .ok_or_else(|| SessionError::LockLost(session.clone()))
    }
}
