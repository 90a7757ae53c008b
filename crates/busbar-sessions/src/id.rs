//! Names: session ids (AMQP `group-id`), the receivers that lock sessions, and the predicates the
//! broker applies to messages and attaches on a `RequiresSession` entity.

use crate::error::SessionError;
use busbar_core::NewMessage;
use std::fmt;

/// Longest session id Service Bus accepts, in characters.
pub const MAX_SESSION_ID_LEN: usize = 128;

/// A session id: 1 to [`MAX_SESSION_ID_LEN`] characters, compared exactly (case-sensitive).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(String);

impl SessionId {
    /// Checks the Service Bus limits.
    pub fn new(id: impl Into<String>) -> Result<SessionId, SessionError> {
        let id = id.into();
        SessionId::validate(&id)?;
        Ok(SessionId(id))
    }

    /// Checks the Service Bus limits without taking the id.
    pub fn validate(id: &str) -> Result<(), SessionError> {
        if id.is_empty() {
            return Err(SessionError::InvalidSessionId(
                "a session id cannot be empty",
            ));
        }
        if id.chars().count() > MAX_SESSION_ID_LEN {
            return Err(SessionError::InvalidSessionId(
                "a session id has at most 128 characters",
            ));
        }
        Ok(())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A receiver that can hold one session lock at a time: the broker assigns one per session
/// receive link (unique for the broker's lifetime; never reused for another link).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ReceiverId(pub u64);

impl fmt::Display for ReceiverId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The send-side check of a `RequiresSession` entity: every message needs a valid session id,
/// except one going straight to the dead-letter sub-queue (which has no sessions).
/// The broker rejects the transfer with the error's condition when this fails.
pub fn check_session_message(message: &NewMessage) -> Result<(), SessionError> {
    match &message.session_id {
        _ if message.dead_letter.is_some() => Ok(()),
        Some(id) => SessionId::validate(id),
        None => Err(SessionError::SessionIdRequired),
    }
}

/// The attach-side check (§6.3): a session receiver needs a session entity and a plain receiver
/// a non-session one; otherwise the broker refuses the attach with `amqp:not-allowed`.
pub fn check_receiver_kind(
    requires_session: bool,
    session_receiver: bool,
) -> Result<(), SessionError> {
    if requires_session == session_receiver {
        Ok(())
    } else if requires_session {
        Err(SessionError::SessionIdRequired)
    } else {
        Err(SessionError::InvalidSessionId(
            "the entity does not use sessions: attach without a session filter",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn session_ids_follow_the_service_bus_limits() {
        assert!(SessionId::new("").is_err());
        assert!(SessionId::new("a".repeat(128)).is_ok());
        assert!(SessionId::new("é".repeat(128)).is_ok());
        assert!(SessionId::new("a".repeat(129)).is_err());
        assert_ne!(SessionId::new("A").unwrap(), SessionId::new("a").unwrap());
    }

    #[test]
    fn a_message_without_session_id_is_refused() {
        let plain = NewMessage {
            payload: Bytes::from_static(b"x"),
            ..NewMessage::default()
        };
        assert_eq!(
            check_session_message(&plain),
            Err(SessionError::SessionIdRequired)
        );
        let session = NewMessage {
            session_id: Some("s1".to_owned()),
            ..plain
        };
        assert_eq!(check_session_message(&session), Ok(()));
        let empty = NewMessage {
            session_id: Some(String::new()),
            ..NewMessage::default()
        };
        assert!(check_session_message(&empty).is_err());
        let dead_lettered = NewMessage {
            dead_letter: Some(busbar_core::DeadLetterInfo::default()),
            ..NewMessage::default()
        };
        assert_eq!(check_session_message(&dead_lettered), Ok(()));
    }

    #[test]
    fn receivers_must_match_the_entity_kind() {
        assert!(check_receiver_kind(true, true).is_ok());
        assert!(check_receiver_kind(false, false).is_ok());
        assert!(check_receiver_kind(true, false).is_err());
        assert!(check_receiver_kind(false, true).is_err());
    }
}
