//! The session operations of `$management` (servicebus-amqp.md §5.8–§5.10): renew-session-lock,
//! get-session-state, set-session-state and get-message-sessions, parsed from the request and
//! encoded in the types the SDKs read.

use busbar_amqp::types::{ElementType, Timestamp as AmqpTimestamp, Value};
use busbar_core::{LockToken, Outcome, ReceiveMode, SequenceNumber, Timestamp};
use bytes::Bytes;

use super::{Operation, argument, array, integer};
use crate::errors::BrokerError;
use crate::runtime::request::Request;

/// A session operation, run by the entity task for the link named by `associated-link-name`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SessionOperation {
    /// `com.microsoft:renew-session-lock`.
    RenewLock {
        /// The session the link holds.
        session: String,
    },
    /// `com.microsoft:get-session-state`.
    State {
        /// The session the link holds.
        session: String,
    },
    /// `com.microsoft:set-session-state` (`None` clears).
    SetState {
        /// The session the link holds.
        session: String,
        /// The new state.
        state: Option<Bytes>,
    },
    /// `com.microsoft:peek-message` with `session-id`: that session's messages only.
    Peek {
        /// The session the link holds.
        session: String,
        /// First sequence number to look at.
        from: SequenceNumber,
        /// How many messages at most.
        count: usize,
    },
    /// `com.microsoft:receive-by-sequence-number` with `session-id`: deferred messages of that
    /// session, locked under the session lock.
    ReceiveDeferred {
        /// The session the link holds.
        session: String,
        /// The deferred messages wanted.
        sequences: Vec<SequenceNumber>,
        /// Lock them or remove them.
        mode: ReceiveMode,
    },
    /// `com.microsoft:update-disposition` with `session-id`: settles messages received under the
    /// session lock, which the requesting link must still hold.
    Settle {
        /// The session the link holds.
        session: String,
        /// The messages' lock tokens.
        tokens: Vec<LockToken>,
        /// What to do with them.
        outcome: Outcome,
    },
    /// `com.microsoft:get-message-sessions`.
    List {
        /// `last-updated-time` (the SDK's sentinel asks for the default listing).
        last_updated: Timestamp,
        /// Sessions to skip.
        skip: i64,
        /// At most this many.
        top: i64,
    },
}

impl SessionOperation {
    /// Whether the outcome must wait for durability (it changes stored state).
    pub(crate) fn changes_state(&self) -> bool {
        matches!(
            self,
            SessionOperation::SetState { .. }
                | SessionOperation::ReceiveDeferred { .. }
                | SessionOperation::Settle { .. }
        )
    }
}

/// What a session operation produced.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SessionResult {
    /// renew-session-lock: the new locked-until.
    Expiration(Timestamp),
    /// get-session-state: the state, if any.
    State(Option<Bytes>),
    /// get-message-sessions: one page of ids and the `skip` of the next one.
    Sessions {
        /// The ids (empty ⇒ 204).
        ids: Vec<String>,
        /// Where the next page starts.
        next_skip: usize,
    },
}

/// The session operation a request asks for, or `None` when it is another operation.
pub(crate) fn parse(request: &Request) -> Option<Result<SessionOperation, BrokerError>> {
    let operation = request.text_property("operation")?;
    let body = request.body.as_map().unwrap_or(&[]);
    let field = |key: &str| body.iter().find(|(k, _)| k.is_key(key)).map(|(_, v)| v);
    let session = || {
        field("session-id")
            .and_then(|value| value.as_str())
            .map(str::to_owned)
            .ok_or_else(|| argument("'session-id' must be a string"))
    };
    let parsed = match operation {
        "com.microsoft:renew-session-lock" => {
            session().map(|session| SessionOperation::RenewLock { session })
        }
        "com.microsoft:get-session-state" => {
            session().map(|session| SessionOperation::State { session })
        }
        "com.microsoft:set-session-state" => session().and_then(|session| {
            let state = match field("session-state") {
                None | Some(Value::Null) => None,
                Some(Value::Binary(bytes)) => Some(bytes.clone()),
                Some(_) => return Err(argument("'session-state' must be binary or null")),
            };
            Ok(SessionOperation::SetState { session, state })
        }),
        "com.microsoft:get-message-sessions" => list(&field),
        "com.microsoft:peek-message"
        | "com.microsoft:receive-by-sequence-number"
        | "com.microsoft:update-disposition" => {
            // Without a session id these are the entity-wide operations.
            let session = field("session-id")?.as_str()?.to_owned();
            super::parse(request).and_then(|operation| match operation {
                Operation::Peek { from, count } => Ok(SessionOperation::Peek {
                    session,
                    from,
                    count,
                }),
                Operation::ReceiveDeferred { sequences, mode } => {
                    Ok(SessionOperation::ReceiveDeferred {
                        session,
                        sequences,
                        mode,
                    })
                }
                Operation::Settle { tokens, outcome } => Ok(SessionOperation::Settle {
                    session,
                    tokens,
                    outcome,
                }),
                _ => Err(argument("unexpected session operation")),
            })
        }
        _ => return None,
    };
    Some(parsed)
}

fn list<'a>(field: &impl Fn(&str) -> Option<&'a Value>) -> Result<SessionOperation, BrokerError> {
    let last_updated = match field("last-updated-time") {
        Some(Value::Timestamp(at)) => Timestamp(at.0),
        Some(other) => Timestamp(integer(other)?),
        None => busbar_sessions::LISTING_SENTINEL,
    };
    let number = |key: &str, default: i64| field(key).map_or(Ok(default), integer);
    Ok(SessionOperation::List {
        last_updated,
        skip: number("skip", 0)?,
        top: number("top", i64::from(i32::MAX))?,
    })
}

/// The response body; `None` means 204 (no sessions).
pub(crate) fn response_body(result: &SessionResult) -> Result<Option<Value>, BrokerError> {
    let map = |entries: Vec<(&str, Value)>| {
        Value::Map(
            entries
                .into_iter()
                .map(|(key, value)| (Value::from(key), value))
                .collect(),
        )
    };
    Ok(match result {
        SessionResult::Expiration(at) => Some(map(vec![(
            "expiration",
            Value::Timestamp(AmqpTimestamp(at.as_millis())),
        )])),
        SessionResult::State(state) => Some(map(vec![(
            "session-state",
            state.clone().map_or(Value::Null, Value::Binary),
        )])),
        SessionResult::Sessions { ids, .. } if ids.is_empty() => None,
        SessionResult::Sessions { ids, next_skip } => Some(map(vec![
            (
                "skip",
                Value::Int(i32::try_from(*next_skip).unwrap_or(i32::MAX)),
            ),
            (
                "sessions-ids",
                array(
                    ElementType::String,
                    ids.iter().map(|id| Value::String(id.clone())).collect(),
                )?,
            ),
        ])),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::request;
    use super::*;

    #[test]
    fn set_session_state_takes_binary_or_null() {
        let set = |state| {
            parse(&request(
                "com.microsoft:set-session-state",
                vec![("session-id", Value::from("s")), ("session-state", state)],
            ))
            .unwrap()
        };
        assert_eq!(
            set(Value::Binary(Bytes::from_static(b"x"))).unwrap(),
            SessionOperation::SetState {
                session: "s".into(),
                state: Some(Bytes::from_static(b"x")),
            }
        );
        assert_eq!(
            set(Value::Null).unwrap(),
            SessionOperation::SetState {
                session: "s".into(),
                state: None,
            }
        );
        assert!(set(Value::Int(1)).is_err());
        assert!(parse(&request("com.microsoft:peek-message", vec![])).is_none());
    }

    #[test]
    fn listing_reads_the_sdk_fields_and_answers_an_array_of_strings() {
        let parsed = parse(&request(
            "com.microsoft:get-message-sessions",
            vec![
                (
                    "last-updated-time",
                    Value::Timestamp(AmqpTimestamp(busbar_sessions::LISTING_SENTINEL.0)),
                ),
                ("skip", Value::Int(0)),
                ("top", Value::Int(100)),
            ],
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            parsed,
            SessionOperation::List {
                last_updated: busbar_sessions::LISTING_SENTINEL,
                skip: 0,
                top: 100,
            }
        );
        let page = SessionResult::Sessions {
            ids: vec!["a".into(), "b".into()],
            next_skip: 2,
        };
        let Some(Value::Map(body)) = response_body(&page).unwrap() else {
            panic!("a page of sessions has a map body");
        };
        assert_eq!(body[0], (Value::from("skip"), Value::Int(2)));
        let Value::Array(ids) = &body[1].1 else {
            panic!("sessions-ids must be an array");
        };
        assert_eq!(ids.element_type(), ElementType::String);
        assert_eq!(ids.items().len(), 2);
        let empty = SessionResult::Sessions {
            ids: Vec::new(),
            next_skip: 0,
        };
        assert_eq!(response_body(&empty).unwrap(), None);
    }
}
