//! The explorer's session view inside the entity task: one page of sessions, each with its
//! stored state and the receive link holding its lock, and state edits made on the namespace
//! owner's behalf whether or not a receiver holds the session (answered once durable).

use busbar_core::Timestamp;
use busbar_sessions::{SessionId, SessionListing};
use bytes::Bytes;
use tokio::sync::oneshot;

use super::owned::session_error;
use super::{EntityTask, Pending};
use crate::errors::BrokerError;

/// What the explorer asks of an entity's sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionsRequest {
    /// A page of sessions (with messages or stored state), in id order.
    List {
        /// Sessions to skip.
        skip: usize,
        /// At most this many.
        top: usize,
    },
    /// Sets (`Some`) or clears (`None`) a session's state.
    SetState {
        /// The session.
        session: String,
        /// The new state.
        state: Option<Bytes>,
    },
}

/// One session as the explorer shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionView {
    /// The session id.
    pub id: String,
    /// Its stored state, if any.
    pub state: Option<Bytes>,
    /// Who holds its lock now: the receive link's connection number and link, and until when
    /// (Unix milliseconds).
    pub lock: Option<SessionHolder>,
}

/// The receiver holding a session lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHolder {
    /// The connection's number (as in the broker's log).
    pub connection: u64,
    /// The receiver's number within the entity.
    pub receiver: u64,
    /// When the lock ends unless renewed (Unix milliseconds).
    pub locked_until: i64,
}

/// The answer to a [`SessionsRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SessionsAnswer {
    /// The page asked for.
    Listed(Vec<SessionView>),
    /// The state is stored.
    Stored,
}

impl EntityTask {
    pub(super) fn explore_sessions(
        &mut self,
        request: SessionsRequest,
        now: Timestamp,
        pending: &mut Vec<Pending>,
        reply: oneshot::Sender<Result<SessionsAnswer, BrokerError>>,
    ) {
        let links = &self.session_links;
        let Some(sessions) = self.entity.sessions_mut() else {
            let refused = BrokerError::NotAllowed("the entity does not use sessions".into());
            let _ = reply.send(Err(refused));
            return;
        };
        match request {
            SessionsRequest::List { skip, top } => {
                let listing = SessionListing {
                    updated_after: None,
                    skip,
                    top,
                };
                let views = sessions
                    .list_sessions(listing)
                    .sessions
                    .into_iter()
                    .map(|id| SessionView {
                        state: sessions.stored_state(&id),
                        lock: sessions.lock_of(&id).map(|lock| SessionHolder {
                            connection: links.connection_of(lock.owner).unwrap_or_default(),
                            receiver: lock.owner.0,
                            locked_until: lock.locked_until.as_millis(),
                        }),
                        id: id.as_str().to_owned(),
                    })
                    .collect();
                let _ = reply.send(Ok(SessionsAnswer::Listed(views)));
            }
            SessionsRequest::SetState { session, state } => {
                let stored = SessionId::new(session)
                    .and_then(|session| sessions.replace_state(&session, state, now))
                    .map_err(session_error);
                pending.push(Box::new(move |durable| {
                    let _ = reply.send(durable.and(stored).map(|()| SessionsAnswer::Stored));
                }));
            }
        }
    }
}
