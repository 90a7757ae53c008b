//! Engine errors: `EngineError` for application calls that cannot be carried out, and the
//! scope-carrying protocol faults that end a link, a session or the connection.

use crate::performatives::AmqpError;

/// Why an application call on a [`Connection`](super::Connection) was refused. A refused call
/// changes nothing.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The link id is stale or was never issued.
    #[error("no such link")]
    UnknownLink,
    /// The session id is stale or was never issued.
    #[error("no such session")]
    UnknownSession,
    /// The call does not fit the link's or session's current state.
    #[error("not allowed in this state: {0}")]
    InvalidState(&'static str),
    /// The link's role does not allow the call (e.g. sending on a receiving link).
    #[error("wrong link role for {0}")]
    WrongRole(&'static str),
    /// The peer has granted no credit on the link.
    #[error("no link credit")]
    NoCredit,
    /// The message is larger than the peer accepts on the link.
    #[error("message of {size} bytes exceeds the peer's limit of {max}")]
    MessageTooLarge {
        /// Size of the message.
        size: u64,
        /// The peer's max-message-size.
        max: u64,
    },
    /// Outgoing transfers held back by the session window already fill the buffer.
    #[error("outgoing buffer full")]
    Backpressure,
    /// The connection is closing or closed.
    #[error("connection closed")]
    ConnectionClosed,
}

/// A protocol violation found while handling input, with the scope it ends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fault {
    /// End the session the frame arrived on.
    Session(AmqpError),
    /// Close the connection.
    Connection(AmqpError),
}

impl Fault {
    pub(crate) fn session(condition: &str, description: impl Into<String>) -> Self {
        Self::Session(AmqpError::new(condition, description))
    }

    pub(crate) fn connection(condition: &str, description: impl Into<String>) -> Self {
        Self::Connection(AmqpError::new(condition, description))
    }
}
