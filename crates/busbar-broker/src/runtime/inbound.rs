//! Messages a client sends, as the core takes them: batch unpacking (format `0x80013700`) and
//! the batch size limit, the fields the core needs (message-id, session id, TTL, scheduled
//! time), and a message-id assigned when the client sent none (the JS SDK cannot settle a
//! message without one).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use busbar_amqp::DecodeError;
use busbar_amqp::message::{Message, MessageId};
use busbar_amqp::performatives::MessageFormat;
use busbar_amqp::types::Value;
use busbar_core::{NewMessage, Timestamp};
use bytes::{BufMut, Bytes, BytesMut};

/// `x-opt-scheduled-enqueue-time`: the message stays invisible until then.
pub(crate) const SCHEDULED_ENQUEUE_TIME: &str = "x-opt-scheduled-enqueue-time";

/// The largest batch (a transfer of format 0x80013700) an entity takes: its message limit, at
/// most 1 MiB, Premium's batch limit whatever its entities' message limit. Advertised on sender
/// links as `com.microsoft:max-message-batch-size`, which the SDKs prefer for their batches.
pub(crate) fn batch_limit(max_message_size: u64) -> u64 {
    max_message_size.min(1024 * 1024)
}

/// The messages of one transfer: the inner messages of a batch, or the message itself.
pub(crate) fn messages_of_transfer(
    bytes: Bytes,
    format: MessageFormat,
) -> Result<Vec<NewMessage>, DecodeError> {
    let envelope = Message::parse(bytes)?;
    if format == MessageFormat::BATCH {
        envelope
            .batch()?
            .map(|inner| new_message(Message::parse(inner.into_bytes())?))
            .collect()
    } else {
        Ok(vec![new_message(envelope)?])
    }
}

/// What the core needs of one message; the message is stored as sent except that a missing
/// message-id is filled in by splicing a new properties section between the untouched bytes of
/// the other sections.
pub(crate) fn new_message(message: Message) -> Result<NewMessage, DecodeError> {
    let time_to_live = message
        .header()?
        .and_then(|header| header.ttl)
        .map(|ttl| Duration::from_millis(u64::from(ttl.0)));
    let scheduled_enqueue_time = message
        .message_annotations()?
        .and_then(|annotations| timestamp_value(annotations.get(SCHEDULED_ENQUEUE_TIME)?));
    let mut properties = message.properties()?.unwrap_or_default();
    let (payload, duplicate) = match &properties.message_id {
        Some(id) => (message.into_bytes(), duplicate_key(id)),
        None => {
            let id = assigned_message_id();
            let duplicate = duplicate_key(&id);
            properties.message_id = Some(id);
            (
                message.with_properties(&properties)?.into_bytes(),
                duplicate,
            )
        }
    };
    Ok(NewMessage {
        payload,
        message_id: Some(duplicate),
        session_id: properties.group_id,
        time_to_live,
        scheduled_enqueue_time,
        dead_letter: None,
    })
}

/// A message-id for a message sent without one, UUID-shaped (32 hex digits): a random 64-bit
/// prefix drawn once per process (so ids differ across restarts) followed by a per-process
/// counter. That is one `getrandom` per process instead of one per message.
fn assigned_message_id() -> MessageId {
    static PREFIX: OnceLock<u64> = OnceLock::new();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let prefix = *PREFIX.get_or_init(|| uuid::Uuid::new_v4().as_u64_pair().0);
    let count = NEXT.fetch_add(1, Ordering::Relaxed);
    MessageId::String(
        uuid::Uuid::from_u64_pair(prefix, count)
            .simple()
            .to_string(),
    )
}

/// A time given as `timestamp` (or `long` milliseconds, as Python re-encodes some).
fn timestamp_value(value: &Value) -> Option<Timestamp> {
    match value {
        Value::Timestamp(at) => Some(Timestamp(at.0)),
        Value::Long(millis) => Some(Timestamp(*millis)),
        _ => None,
    }
}

/// The duplicate-detection key of a message-id: its AMQP type and value, so `"1"` and `1`
/// differ as they do on the wire.
fn duplicate_key(id: &MessageId) -> Bytes {
    let mut key = BytesMut::new();
    match id {
        MessageId::Ulong(value) => {
            key.put_u8(b'u');
            key.put_u64(*value);
        }
        MessageId::Uuid(value) => {
            key.put_u8(b'g');
            key.put_slice(&value.0);
        }
        MessageId::Binary(value) => {
            key.put_u8(b'b');
            key.put_slice(value);
        }
        MessageId::String(value) => {
            key.put_u8(b's');
            key.put_slice(value.as_bytes());
        }
    }
    key.freeze()
}

#[cfg(test)]
mod tests {
    use super::*;
    use busbar_amqp::message::{Header, MessageBuilder, Properties};
    use busbar_amqp::performatives::Milliseconds;
    use busbar_amqp::types::{Annotations, Timestamp as AmqpTimestamp};

    fn with_id(id: &str) -> MessageBuilder {
        MessageBuilder::new()
            .properties(Properties {
                message_id: Some(MessageId::String(id.into())),
                group_id: Some("s1".into()),
                ..Properties::default()
            })
            .data(Bytes::from_static(b"body"))
    }

    #[test]
    fn reads_ttl_schedule_session_and_keeps_the_bytes() {
        let mut annotations = Annotations::default();
        annotations.set(
            SCHEDULED_ENQUEUE_TIME,
            Value::Timestamp(AmqpTimestamp(5_000)),
        );
        let message = with_id("m1")
            .header(Header {
                ttl: Some(Milliseconds(1_500)),
                ..Header::default()
            })
            .message_annotations(annotations)
            .build();
        let bytes = message.as_bytes().clone();
        let parsed = new_message(message).unwrap();
        assert_eq!(parsed.payload, bytes);
        assert_eq!(parsed.time_to_live, Some(Duration::from_millis(1_500)));
        assert_eq!(parsed.scheduled_enqueue_time, Some(Timestamp(5_000)));
        assert_eq!(parsed.session_id.as_deref(), Some("s1"));
        assert_eq!(parsed.message_id.as_deref(), Some(&b"sm1"[..]));
    }

    #[test]
    fn assigns_a_message_id_when_missing_and_keeps_the_body() {
        let message = MessageBuilder::new()
            .data(Bytes::from_static(b"payload"))
            .build();
        let parsed = new_message(message).unwrap();
        let stored = Message::parse(parsed.payload).unwrap();
        let id = stored.properties().unwrap().unwrap().message_id.unwrap();
        assert!(matches!(id, MessageId::String(ref text) if text.len() == 32));
        assert_eq!(
            stored.data_sections().unwrap(),
            vec![Bytes::from_static(b"payload")]
        );
    }

    #[test]
    fn fills_in_a_missing_message_id_keeping_the_other_properties_and_sections() {
        let message = MessageBuilder::new()
            .header(Header {
                ttl: Some(Milliseconds(9_000)),
                ..Header::default()
            })
            .properties(Properties {
                group_id: Some("s2".into()),
                subject: Some("label".into()),
                ..Properties::default()
            })
            .data(Bytes::from_static(b"payload"))
            .build();
        let parsed = new_message(message.clone()).unwrap();
        let stored = Message::parse(parsed.payload).unwrap();
        let properties = stored.properties().unwrap().unwrap();
        let Some(MessageId::String(id)) = &properties.message_id else {
            panic!("no string message-id: {properties:?}");
        };
        assert_eq!(
            parsed.message_id.as_deref(),
            Some(format!("s{id}").as_bytes())
        );
        assert_eq!(properties.subject.as_deref(), Some("label"));
        assert_eq!(parsed.session_id.as_deref(), Some("s2"));
        assert_eq!(parsed.time_to_live, Some(Duration::from_millis(9_000)));
        assert_eq!(stored.header().unwrap(), message.header().unwrap());
        assert_eq!(stored.body().unwrap(), message.body().unwrap());
    }

    #[test]
    fn assigned_message_ids_are_distinct_and_share_the_process_prefix() {
        let ids: Vec<String> = (0..3)
            .map(|_| match assigned_message_id() {
                MessageId::String(id) => id,
                other => panic!("not a string: {other:?}"),
            })
            .collect();
        assert!(
            ids.iter()
                .all(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        );
        assert!(
            ids.windows(2)
                .all(|pair| pair[0] != pair[1] && pair[0][..16] == pair[1][..16])
        );
    }

    #[test]
    fn unpacks_a_batch_into_its_inner_messages() {
        let inner: Vec<Bytes> = ["a", "b", "c"]
            .iter()
            .map(|id| with_id(id).build().into_bytes())
            .collect();
        let envelope = MessageBuilder::new().body(busbar_amqp::message::Body::Data(inner));
        let messages =
            messages_of_transfer(envelope.build().into_bytes(), MessageFormat::BATCH).unwrap();
        let ids: Vec<_> = messages
            .iter()
            .map(|m| m.message_id.clone().unwrap())
            .collect();
        assert_eq!(ids, [&b"sa"[..], b"sb", b"sc"]);
    }

    #[test]
    fn message_id_types_give_distinct_duplicate_keys() {
        let keys = [
            duplicate_key(&MessageId::String("1".into())),
            duplicate_key(&MessageId::Ulong(1)),
            duplicate_key(&MessageId::Binary(Bytes::from_static(b"1"))),
        ];
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[0], keys[2]);
        assert_ne!(keys[1], keys[2]);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(
            messages_of_transfer(Bytes::from_static(b"\x00\x53"), MessageFormat::AMQP).is_err()
        );
        assert!(
            messages_of_transfer(
                Bytes::from_static(b"\x00\x53\x75\xa0\x05ab"),
                MessageFormat::BATCH
            )
            .is_err()
        );
    }
}
