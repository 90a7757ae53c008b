//! `$management` operations (servicebus-amqp.md §5.2–§5.7): requests parsed from the string-keyed
//! map body, and response bodies in the exact types the SDKs read (arrays vs lists).

use busbar_amqp::message::Message;
use busbar_amqp::types::{Array, ElementType, Timestamp as AmqpTimestamp, Uuid, Value};
use busbar_core::{
    DeadLetterInfo, Delivery, LockToken, NewMessage, Outcome, Properties, ReceiveMode,
    SequenceNumber, Timestamp,
};
use bytes::Bytes;

use super::inbound::new_message;
use super::outbound::{management_message, properties_to_modify};
use super::request::Request;
use crate::errors::BrokerError;
pub(crate) use sessions::{SessionOperation, SessionResult, parse as parse_session_operation};

mod sessions;

/// Peeks return at most this many messages per request, whatever was asked.
const MAX_PEEK: usize = 1_000;

/// A `$management` operation the broker performs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operation {
    /// `com.microsoft:renew-lock`.
    RenewLock(Vec<LockToken>),
    /// `com.microsoft:peek-message`.
    Peek {
        /// First sequence number to look at.
        from: SequenceNumber,
        /// How many messages at most.
        count: usize,
    },
    /// `com.microsoft:receive-by-sequence-number`.
    ReceiveDeferred {
        /// The deferred messages wanted.
        sequences: Vec<SequenceNumber>,
        /// Lock them or remove them.
        mode: ReceiveMode,
    },
    /// `com.microsoft:update-disposition`.
    Settle {
        /// The locks to settle.
        tokens: Vec<LockToken>,
        /// How.
        outcome: Outcome,
    },
    /// A send, or `com.microsoft:schedule-message` (the schedule is in each message).
    Enqueue(Vec<NewMessage>),
    /// `com.microsoft:cancel-scheduled-message`.
    CancelScheduled(Vec<SequenceNumber>),
}

/// What an operation produced, before it is encoded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OperationResult {
    /// renew-lock: the new locked-until of each token.
    Expirations(Vec<Timestamp>),
    /// peek / receive-by-sequence-number: the messages (with lock tokens when locked).
    Messages(Vec<Delivery>),
    /// A send or schedule-message: one sequence number per stored message (duplicates none).
    SequenceNumbers(Vec<SequenceNumber>),
    /// enumerate-rules: each rule's `{rule-description: …}` map (none is 204).
    Rules(Vec<Value>),
    /// A session operation's outcome.
    Session(SessionResult),
    /// Success with nothing to return.
    Done,
}

/// Parses a `$management` request; an operation this broker does not know is `NotImplemented`.
pub(crate) fn parse(request: &Request) -> Result<Operation, BrokerError> {
    let operation = request
        .text_property("operation")
        .ok_or_else(|| argument("the request has no operation"))?;
    let body = request.body.as_map().unwrap_or(&[]);
    let field = |key: &str| body.iter().find(|(k, _)| k.is_key(key)).map(|(_, v)| v);
    let required = |key: &str| field(key).ok_or_else(|| argument(&format!("'{key}' is missing")));
    match operation {
        "com.microsoft:renew-lock" => Ok(Operation::RenewLock(tokens(required("lock-tokens")?)?)),
        "com.microsoft:peek-message" => Ok(Operation::Peek {
            from: SequenceNumber(integer(required("from-sequence-number")?)?.max(1)),
            count: usize::try_from(integer(required("message-count")?)?)
                .unwrap_or(0)
                .min(MAX_PEEK),
        }),
        "com.microsoft:receive-by-sequence-number" => Ok(Operation::ReceiveDeferred {
            sequences: sequences(required("sequence-numbers")?)?,
            mode: match field("receiver-settle-mode").map(integer).transpose()? {
                Some(0) => ReceiveMode::ReceiveAndDelete,
                _ => ReceiveMode::PeekLock,
            },
        }),
        "com.microsoft:update-disposition" => {
            let status = required("disposition-status")?
                .as_str()
                .ok_or_else(|| argument("'disposition-status' must be a string"))?;
            let properties = field("properties-to-modify")
                .and_then(Value::as_map)
                .map(|entries| {
                    properties_to_modify(entries.iter().filter_map(|(k, v)| Some((k.as_str()?, v))))
                })
                .unwrap_or_default();
            let outcome = disposition(status, properties, &field)?;
            Ok(Operation::Settle {
                tokens: tokens(required("lock-tokens")?)?,
                outcome,
            })
        }
        "com.microsoft:schedule-message" => {
            let Value::List(entries) = required("messages")? else {
                return Err(argument("'messages' must be a list"));
            };
            entries
                .iter()
                .map(|entry| {
                    let bytes = entry
                        .as_map()
                        .and_then(|map| map.iter().find(|(k, _)| k.is_key("message")))
                        .and_then(|(_, v)| match v {
                            Value::Binary(bytes) => Some(bytes.clone()),
                            _ => None,
                        })
                        .ok_or_else(|| argument("each scheduled message needs 'message'"))?;
                    scheduled_message(bytes)
                })
                .collect::<Result<_, _>>()
                .map(Operation::Enqueue)
        }
        "com.microsoft:cancel-scheduled-message" => Ok(Operation::CancelScheduled(sequences(
            required("sequence-numbers")?,
        )?)),
        other => Err(BrokerError::NotImplemented {
            operation: other.to_owned(),
        }),
    }
}

/// The response body of a successful operation; `None` means 204 (nothing found).
pub(crate) fn response_body(result: &OperationResult) -> Result<Option<Value>, BrokerError> {
    let map = |key: &str, value: Value| Value::Map(vec![(Value::from(key), value)]);
    Ok(match result {
        OperationResult::Expirations(times) => Some(map(
            "expirations",
            array(
                ElementType::Timestamp,
                times
                    .iter()
                    .map(|at| Value::Timestamp(AmqpTimestamp(at.as_millis())))
                    .collect(),
            )?,
        )),
        OperationResult::Messages(deliveries) if deliveries.is_empty() => None,
        OperationResult::Messages(deliveries) => {
            let messages = deliveries
                .iter()
                .map(|delivery| {
                    let message = management_message(delivery)
                        .map_err(|error| BrokerError::Internal(error.to_string()))?;
                    let mut entry =
                        vec![(Value::from("message"), Value::Binary(message.into_bytes()))];
                    if let Some(lock) = &delivery.lock {
                        entry.push((
                            Value::from("lock-token"),
                            Value::Uuid(Uuid(*lock.token.as_bytes())),
                        ));
                    }
                    Ok(Value::Map(entry))
                })
                .collect::<Result<Vec<_>, BrokerError>>()?;
            Some(map("messages", Value::List(messages)))
        }
        OperationResult::SequenceNumbers(sequences) => Some(map(
            "sequence-numbers",
            array(
                ElementType::Long,
                sequences.iter().map(|s| Value::Long(s.value())).collect(),
            )?,
        )),
        OperationResult::Rules(rules) if rules.is_empty() => None,
        OperationResult::Rules(rules) => Some(map("rules", Value::List(rules.clone()))),
        OperationResult::Session(result) => sessions::response_body(result)?,
        OperationResult::Done => Some(Value::Map(Vec::new())),
    })
}

fn scheduled_message(bytes: Bytes) -> Result<NewMessage, BrokerError> {
    Message::parse(bytes)
        .and_then(new_message)
        .map_err(|error| argument(&format!("a scheduled message is malformed: {error}")))
}

fn disposition<'a>(
    status: &str,
    properties: Properties,
    field: &impl Fn(&str) -> Option<&'a Value>,
) -> Result<Outcome, BrokerError> {
    // Python sends "" for a reason it was not given.
    let text = |key: &str| match field(key) {
        Some(Value::String(text)) if !text.is_empty() => Some(text.clone()),
        _ => None,
    };
    Ok(match status {
        "completed" => Outcome::Complete,
        "abandoned" => Outcome::Abandon { properties },
        "defered" | "deferred" => Outcome::Defer { properties },
        "suspended" => Outcome::DeadLetter {
            info: DeadLetterInfo {
                reason: text("deadletter-reason"),
                description: text("deadletter-description"),
            },
            properties,
        },
        other => return Err(argument(&format!("unknown disposition-status '{other}'"))),
    })
}

fn argument(text: &str) -> BrokerError {
    BrokerError::Argument(text.to_owned())
}

fn array(element: ElementType, items: Vec<Value>) -> Result<Value, BrokerError> {
    Array::new(element, items)
        .map(Value::Array)
        .map_err(|error| BrokerError::Internal(error.to_string()))
}

/// The items of an array or list.
fn items(value: &Value) -> Option<&[Value]> {
    match value {
        Value::Array(array) => Some(array.items()),
        Value::List(items) => Some(items),
        _ => None,
    }
}

fn tokens(value: &Value) -> Result<Vec<LockToken>, BrokerError> {
    items(value)
        .ok_or_else(|| argument("'lock-tokens' must be an array of uuid"))?
        .iter()
        .map(|item| match item {
            Value::Uuid(uuid) => Ok(LockToken::from_bytes(uuid.0)),
            _ => Err(argument("'lock-tokens' must be an array of uuid")),
        })
        .collect()
}

fn sequences(value: &Value) -> Result<Vec<SequenceNumber>, BrokerError> {
    items(value)
        .ok_or_else(|| argument("'sequence-numbers' must be an array of long"))?
        .iter()
        .map(|item| integer(item).map(SequenceNumber))
        .collect()
}

/// Any integer encoding (Python sends small ints, JS `uint`, .NET as typed).
fn integer(value: &Value) -> Result<i64, BrokerError> {
    Ok(match value {
        Value::Byte(v) => i64::from(*v),
        Value::Short(v) => i64::from(*v),
        Value::Int(v) => i64::from(*v),
        Value::Long(v) => *v,
        Value::Ubyte(v) => i64::from(*v),
        Value::Ushort(v) => i64::from(*v),
        Value::Uint(v) => i64::from(*v),
        Value::Ulong(v) => i64::try_from(*v).map_err(|_| argument("number out of range"))?,
        _ => return Err(argument("a number was expected")),
    })
}

#[cfg(test)]
mod tests;
