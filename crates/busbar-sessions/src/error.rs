//! The session layer's error type: one variant per way a session operation can be refused.

use crate::id::SessionId;
use busbar_core::CoreError;

/// Why a session operation was refused. An operation that returns an error changed nothing.
///
/// The broker maps these to AMQP conditions through its error table:
/// [`CannotBeLocked`](SessionError::CannotBeLocked) → `com.microsoft:session-cannot-be-locked`,
/// [`LockLost`](SessionError::LockLost) → `com.microsoft:session-lock-lost`,
/// [`MessageLockLost`](SessionError::MessageLockLost) → `com.microsoft:message-lock-lost`,
/// [`SessionIdRequired`](SessionError::SessionIdRequired),
/// [`InvalidSessionId`](SessionError::InvalidSessionId) and
/// [`ReceiverBusy`](SessionError::ReceiverBusy) → `amqp:not-allowed`,
/// [`StateTooLarge`](SessionError::StateTooLarge) → `com.microsoft:message-size-exceeded`
/// (status 400 on `$management`), [`Core`](SessionError::Core) as the core's own table says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// A message sent to a `RequiresSession` entity carries no session id (`group-id`).
    #[error("the entity requires sessions: the message must have a SessionId")]
    SessionIdRequired,
    /// A session id breaks the Service Bus limits (empty or longer than 128 characters).
    #[error("invalid session id: {0}")]
    InvalidSessionId(&'static str),
    /// The named session is locked by another receiver.
    #[error("the requested session '{0}' cannot be accepted: it is locked by another receiver")]
    CannotBeLocked(SessionId),
    /// This receiver does not (or no longer) hold the session's lock: it expired, was released
    /// or belongs to another receiver.
    #[error("the session lock of '{0}' is lost: accept the session again")]
    LockLost(SessionId),
    /// The message lock token is unknown, stale, expired or not one of this session's messages.
    #[error("the message lock is lost: the lock token is unknown, stale or expired")]
    MessageLockLost,
    /// The receiver already holds a session or is already waiting for one.
    #[error("receiver {0} already holds or waits for a session")]
    ReceiverBusy(u64),
    /// Session state larger than the entity's message size limit.
    #[error("session state of {size} bytes exceeds the limit of {max} bytes")]
    StateTooLarge {
        /// The size offered.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// Stored session-state bytes given to restore are malformed.
    #[error("cannot decode stored session state: {0}")]
    Decode(&'static str),
    /// The core refused the operation.
    #[error(transparent)]
    Core(#[from] CoreError),
}
