//! Session receive links of a `RequiresSession` entity: which session-layer receiver each link
//! is, which link holds each message lock, and the session layer's answers and events turned
//! into connection commands.

use std::collections::HashMap;

use busbar_core::{Delivery, LockToken, Outcome, ReceiveMode, Timestamp};
use busbar_sessions::{
    AcceptNext, ReceiverId, SessionEvent, SessionId, SessionListing, SessionLock,
};

use super::owned::{OwnedEntity, session_error};
use crate::errors::BrokerError;
use crate::runtime::mailbox::{ConnectionCommand, Mailbox, ReceiverKey};
use crate::runtime::management::{OperationResult, SessionOperation, SessionResult};

/// The session receive links an entity task serves.
#[derive(Default)]
pub(super) struct SessionLinks {
    ids: HashMap<ReceiverKey, ReceiverId>,
    links: HashMap<ReceiverId, (ReceiverKey, Mailbox)>,
    /// Which receiver each peek-locked session message went to, to settle it through its
    /// session.
    tokens: HashMap<LockToken, ReceiverId>,
    next_id: u64,
}

impl SessionLinks {
    /// The connection of the session receive link `owner`.
    pub(super) fn connection_of(&self, owner: ReceiverId) -> Option<u64> {
        self.links.get(&owner).map(|(key, _)| key.connection)
    }

    /// Whether `key` is a session receive link.
    pub(super) fn contains(&self, key: ReceiverKey) -> bool {
        self.ids.contains_key(&key)
    }

    /// Accepts a session for a new link and answers the connection when the outcome is known
    /// now; a waiting link is answered by [`forward_events`](Self::forward_events).
    pub(super) fn accept(
        &mut self,
        entity: &mut OwnedEntity,
        key: ReceiverKey,
        session: Option<String>,
        wait_until: Timestamp,
        mailbox: Mailbox,
        now: Timestamp,
    ) {
        let Some(sessions) = entity.sessions_mut() else {
            mailbox.post(ConnectionCommand::SessionRefused {
                link: key.link,
                error: BrokerError::NotAllowed("the entity does not use sessions".into()),
            });
            return;
        };
        let owner = ReceiverId(self.next_id);
        self.next_id += 1;
        let accepted = match session {
            Some(name) => SessionId::new(name)
                .and_then(|session| sessions.accept_named(owner, session, now))
                .map(Some),
            None => sessions
                .accept_next(owner, wait_until, now)
                .map(|outcome| match outcome {
                    AcceptNext::Accepted(lock) => Some(lock),
                    AcceptNext::Waiting => None,
                }),
        };
        match accepted {
            Err(error) => mailbox.post(ConnectionCommand::SessionRefused {
                link: key.link,
                error: session_error(error),
            }),
            Ok(lock) => {
                if let Some(lock) = lock {
                    mailbox.post(accepted_command(key, &lock));
                }
                self.ids.insert(key, owner);
                self.links.insert(owner, (key, mailbox));
            }
        }
    }

    /// Tells the connections what the session layer decided since the last call: waits that
    /// ended, locks that expired. Returns how many session locks expired.
    pub(super) fn forward_events(&mut self, entity: &mut OwnedEntity) -> u64 {
        let Some(sessions) = entity.sessions_mut() else {
            return 0;
        };
        let mut lost = 0;
        while let Some(event) = sessions.poll_event() {
            match event {
                SessionEvent::Accepted(lock) => {
                    if let Some((key, mailbox)) = self.links.get(&lock.owner) {
                        mailbox.post(accepted_command(*key, &lock));
                    }
                }
                SessionEvent::AcceptTimedOut { owner } => {
                    if let Some((key, mailbox)) = self.forget(owner) {
                        mailbox.post(ConnectionCommand::SessionRefused {
                            link: key.link,
                            error: BrokerError::Timeout {
                                operation: "no session became available for the receiver".into(),
                            },
                        });
                    }
                }
                SessionEvent::LockLost { owner, .. } => {
                    lost += 1;
                    if let Some((key, mailbox)) = self.forget(owner) {
                        mailbox.post(ConnectionCommand::SessionLockLost(key.link));
                    }
                }
            }
        }
        lost
    }

    /// The next message of the link's session, if it holds one and a message is available.
    pub(super) fn receive(
        &mut self,
        entity: &mut OwnedEntity,
        key: ReceiverKey,
        mode: ReceiveMode,
        now: Timestamp,
    ) -> Option<Delivery> {
        let owner = *self.ids.get(&key)?;
        let sessions = entity.sessions_mut()?;
        let session = sessions.session_of(owner)?.clone();
        let delivery = sessions.receive(owner, &session, mode, now).ok()??;
        if let Some(lock) = delivery.lock {
            self.tokens.insert(lock.token, owner);
        }
        Some(delivery)
    }

    /// Whether a message lock was taken by a session link (and must be settled through it).
    pub(super) fn holds(&self, token: &LockToken) -> bool {
        self.tokens.contains_key(token)
    }

    /// The session link that received the message locked under `token`.
    fn owner_of(&self, token: LockToken) -> Result<ReceiverId, BrokerError> {
        self.tokens
            .get(&token)
            .copied()
            .ok_or(BrokerError::MessageLockLost)
    }

    /// Settles a message received on a session link through its session.
    pub(super) fn settle(
        &mut self,
        entity: &mut OwnedEntity,
        token: LockToken,
        outcome: Outcome,
        now: Timestamp,
    ) -> Result<(), BrokerError> {
        let owner = self.owner_of(token)?;
        let sessions = entity.sessions_mut().ok_or(BrokerError::MessageLockLost)?;
        let Some(session) = sessions.session_of(owner).cloned() else {
            self.tokens.remove(&token);
            return Err(BrokerError::SessionLockLost);
        };
        // Settled or not, the token is spent: a message that comes back gets a new one.
        self.tokens.remove(&token);
        sessions
            .settle(owner, &session, token, outcome, now)
            .map_err(session_error)
    }

    /// Whether [`settle`](Self::settle) would succeed now, changing nothing (not even spending
    /// the token).
    pub(super) fn check_settle(
        &self,
        entity: &OwnedEntity,
        token: LockToken,
        outcome: &Outcome,
        now: Timestamp,
    ) -> Result<(), BrokerError> {
        let owner = self.owner_of(token)?;
        let sessions = entity.sessions().ok_or(BrokerError::MessageLockLost)?;
        let session = sessions
            .session_of(owner)
            .ok_or(BrokerError::SessionLockLost)?;
        sessions
            .check_settle(owner, session, token, outcome, now)
            .map_err(session_error)
    }

    /// Whether the link `key` holds `session`'s lock now (a transaction's check before it sets
    /// the session's state).
    pub(super) fn check_holds(
        &self,
        entity: &OwnedEntity,
        key: Option<ReceiverKey>,
        session: &str,
    ) -> Result<(), BrokerError> {
        let owner = key
            .and_then(|key| self.ids.get(&key).copied())
            .ok_or(BrokerError::SessionLockLost)?;
        let session = SessionId::new(session.to_owned()).map_err(session_error)?;
        let sessions = entity
            .sessions()
            .ok_or_else(|| BrokerError::NotAllowed("the entity does not use sessions".into()))?;
        if sessions.holds(owner, &session) {
            Ok(())
        } else {
            Err(BrokerError::SessionLockLost)
        }
    }

    /// Runs a `$management` session operation for the link `key` (the lock holder).
    pub(super) fn execute(
        &mut self,
        entity: &mut OwnedEntity,
        key: Option<ReceiverKey>,
        operation: SessionOperation,
        now: Timestamp,
    ) -> Result<OperationResult, BrokerError> {
        let owner = key.and_then(|key| self.ids.get(&key).copied());
        let sessions = entity
            .sessions_mut()
            .ok_or_else(|| BrokerError::NotAllowed("the entity does not use sessions".into()))?;
        let held = |session: String| -> Result<(ReceiverId, SessionId), BrokerError> {
            let session = SessionId::new(session).map_err(session_error)?;
            owner
                .map(|owner| (owner, session))
                .ok_or(BrokerError::SessionLockLost)
        };
        match operation {
            SessionOperation::Settle {
                session,
                tokens,
                outcome,
            } => return self.settle_for_session(entity, owner, &session, tokens, &outcome, now),
            SessionOperation::RenewLock { session } => {
                let (owner, session) = held(session)?;
                sessions
                    .renew(owner, &session, now)
                    .map(|at| OperationResult::Session(SessionResult::Expiration(at)))
            }
            SessionOperation::State { session } => {
                let (owner, session) = held(session)?;
                sessions
                    .session_state(owner, &session, now)
                    .map(|state| OperationResult::Session(SessionResult::State(state)))
            }
            SessionOperation::SetState { session, state } => {
                let (owner, session) = held(session)?;
                sessions
                    .set_session_state(owner, &session, state, now)
                    .map(|()| OperationResult::Done)
            }
            SessionOperation::Peek {
                session,
                from,
                count,
            } => {
                let (owner, session) = held(session)?;
                sessions
                    .peek(owner, &session, from, count, now)
                    .map(OperationResult::Messages)
            }
            SessionOperation::ReceiveDeferred {
                session,
                sequences,
                mode,
            } => {
                let (owner, session) = held(session)?;
                let received = sessions.receive_deferred(owner, &session, &sequences, mode, now);
                if let Ok(deliveries) = &received {
                    for lock in deliveries.iter().filter_map(|delivery| delivery.lock) {
                        self.tokens.insert(lock.token, owner);
                    }
                }
                received.map(OperationResult::Messages)
            }
            SessionOperation::List {
                last_updated,
                skip,
                top,
            } => {
                let listed =
                    sessions.list_sessions(SessionListing::from_request(last_updated, skip, top));
                Ok(OperationResult::Session(SessionResult::Sessions {
                    ids: listed
                        .sessions
                        .iter()
                        .map(|id| id.as_str().to_owned())
                        .collect(),
                    next_skip: listed.next_skip,
                }))
            }
        }
        .map_err(session_error)
    }

    /// `update-disposition` for `session` by the link `owner`: each token settles on its own and
    /// the first failure is reported. Once the session lock is gone (the SDKs retry a settlement
    /// here after their link was detached) the answer is session-lock-lost, as in Service Bus.
    fn settle_for_session(
        &mut self,
        entity: &mut OwnedEntity,
        owner: Option<ReceiverId>,
        session: &str,
        tokens: Vec<LockToken>,
        outcome: &Outcome,
        now: Timestamp,
    ) -> Result<OperationResult, BrokerError> {
        let held = owner
            .zip(entity.sessions_mut())
            .is_some_and(|(owner, sessions)| {
                sessions
                    .session_of(owner)
                    .is_some_and(|held| held.as_str() == session)
            });
        if !held {
            return Err(BrokerError::SessionLockLost);
        }
        let mut result = Ok(OperationResult::Done);
        for token in tokens {
            if let Err(error) = self.settle(entity, token, outcome.clone(), now) {
                result = result.and(Err(error));
            }
        }
        result
    }

    /// A session link ended: its session is released (in-flight messages come back uncounted).
    pub(super) fn close(&mut self, entity: &mut OwnedEntity, key: ReceiverKey, now: Timestamp) {
        let Some(owner) = self.ids.get(&key).copied() else {
            return;
        };
        self.forget(owner);
        if let Some(sessions) = entity.sessions_mut() {
            sessions.close_receiver(owner, now);
        }
    }

    /// Closes every session link, waiting or holding a session (each gives its session back);
    /// returns them.
    pub(super) fn close_all(
        &mut self,
        entity: &mut OwnedEntity,
        now: Timestamp,
    ) -> Vec<(ReceiverKey, Mailbox)> {
        let owners: Vec<ReceiverId> = self.links.keys().copied().collect();
        owners
            .into_iter()
            .filter_map(|owner| {
                let link = self.forget(owner)?;
                if let Some(sessions) = entity.sessions_mut() {
                    sessions.close_receiver(owner, now);
                }
                Some(link)
            })
            .collect()
    }

    fn forget(&mut self, owner: ReceiverId) -> Option<(ReceiverKey, Mailbox)> {
        let (key, mailbox) = self.links.remove(&owner)?;
        self.ids.remove(&key);
        self.tokens.retain(|_, holder| *holder != owner);
        Some((key, mailbox))
    }
}

fn accepted_command(key: ReceiverKey, lock: &SessionLock) -> ConnectionCommand {
    ConnectionCommand::SessionAccepted {
        link: key.link,
        session: lock.session.as_str().to_owned(),
        locked_until: lock.locked_until,
    }
}
