//! Session state as persisted: the record the broker hands to the store's entity-scoped
//! key/value map, and the byte encoding of its key and value (owned here, opaque to the store).
//!
//! Key: `b"session-state/"` followed by the session id in UTF-8. Value: `u8 version (1)`,
//! `i64 little-endian last-updated milliseconds`, then the state bytes.

use crate::error::SessionError;
use crate::id::SessionId;
use busbar_core::Timestamp;
use bytes::{BufMut, Bytes, BytesMut};

/// Prefix of every session-state key, so session state can share the entity's key space.
pub const STATE_KEY_PREFIX: &[u8] = b"session-state/";
const VERSION: u8 = 1;
const HEADER_LEN: usize = 1 + 8;

/// A session's stored state and when it was last set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredState {
    /// The opaque state blob (`session-state`).
    pub state: Bytes,
    /// When it was last set (the `last-updated-time` filter of `get-message-sessions`).
    pub updated: Timestamp,
}

/// A change of one session's state, for the store's `Meta { entity, key, value }` record (the
/// broker adds the entity id). `value: None` deletes the key (state cleared).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateRecord {
    /// The store key.
    pub key: Bytes,
    /// The encoded [`StoredState`], or `None` to delete.
    pub value: Option<Bytes>,
}

impl StateRecord {
    /// The record that stores (`Some`) or clears (`None`) a session's state.
    pub fn new(session: &SessionId, state: Option<&StoredState>) -> StateRecord {
        let mut key = BytesMut::with_capacity(STATE_KEY_PREFIX.len() + session.as_str().len());
        key.put_slice(STATE_KEY_PREFIX);
        key.put_slice(session.as_str().as_bytes());
        let value = state.map(|stored| {
            let mut value = BytesMut::with_capacity(HEADER_LEN + stored.state.len());
            value.put_u8(VERSION);
            value.put_i64_le(stored.updated.0);
            value.put_slice(&stored.state);
            value.freeze()
        });
        StateRecord {
            key: key.freeze(),
            value,
        }
    }

    /// Decodes one recovered entry of the entity's key/value map: `Ok(None)` for keys that are
    /// not session state (other metadata shares the map), an error for malformed session state.
    pub fn decode(
        key: &[u8],
        value: &Bytes,
    ) -> Result<Option<(SessionId, StoredState)>, SessionError> {
        let Some(id) = key.strip_prefix(STATE_KEY_PREFIX) else {
            return Ok(None);
        };
        let id =
            std::str::from_utf8(id).map_err(|_| SessionError::Decode("session id is not UTF-8"))?;
        let session = SessionId::new(id).map_err(|_| SessionError::Decode("invalid session id"))?;
        let Some((&version, rest)) = value.split_first() else {
            return Err(SessionError::Decode("empty session-state value"));
        };
        if version != VERSION {
            return Err(SessionError::Decode("unknown session-state version"));
        }
        let Some((millis, _)) = rest.split_first_chunk::<8>() else {
            return Err(SessionError::Decode("truncated session-state value"));
        };
        let stored = StoredState {
            state: value.slice(HEADER_LEN..),
            updated: Timestamp(i64::from_le_bytes(*millis)),
        };
        Ok(Some((session, stored)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_record_round_trips() {
        let session = SessionId::new("orders-17").unwrap();
        let stored = StoredState {
            state: Bytes::from_static(b"\x00cursor=42"),
            updated: Timestamp(1_700_000_000_123),
        };
        let record = StateRecord::new(&session, Some(&stored));
        let value = record.value.unwrap();
        assert_eq!(
            StateRecord::decode(&record.key, &value).unwrap(),
            Some((session.clone(), stored))
        );
        assert_eq!(StateRecord::new(&session, None).value, None);
    }

    #[test]
    fn foreign_keys_are_skipped_and_malformed_state_is_an_error() {
        let value = Bytes::from_static(b"anything");
        assert_eq!(StateRecord::decode(b"other/key", &value).unwrap(), None);
        let key = b"session-state/s";
        assert!(StateRecord::decode(key, &Bytes::new()).is_err());
        assert!(
            StateRecord::decode(key, &Bytes::from_static(&[2, 0, 0, 0, 0, 0, 0, 0, 0])).is_err()
        );
        assert!(StateRecord::decode(key, &Bytes::from_static(&[1, 0, 0])).is_err());
        assert!(StateRecord::decode(b"session-state/", &Bytes::from_static(&[1; 9])).is_err());
        assert!(StateRecord::decode(b"session-state/\xff", &Bytes::from_static(&[1; 9])).is_err());
    }

    #[test]
    fn every_truncation_of_a_value_is_an_error_not_a_panic() {
        let session = SessionId::new("s").unwrap();
        let stored = StoredState {
            state: Bytes::from_static(b"xyz"),
            updated: Timestamp(7),
        };
        let record = StateRecord::new(&session, Some(&stored));
        let value = record.value.unwrap();
        for cut in 0..HEADER_LEN {
            assert!(StateRecord::decode(&record.key, &value.slice(..cut)).is_err());
        }
        for cut in HEADER_LEN..=value.len() {
            assert!(StateRecord::decode(&record.key, &value.slice(..cut)).is_ok());
        }
    }
}
