//! Messages the broker hands out (receive-link deliveries, peek and receive-by-sequence-number
//! results): the stored message with a new header (delivery-count, TTL) and the broker-owned
//! message annotations in the exact AMQP types of servicebus-amqp.md §4.4; dead-letter reasons
//! and modified properties go into the application-properties.

use busbar_amqp::DecodeError;
use busbar_amqp::message::{ApplicationProperties, Header, Message};
use busbar_amqp::performatives::Milliseconds;
use busbar_amqp::types::{Annotations, Timestamp as AmqpTimestamp, Uuid, Value};
use busbar_core::{DeadLetterInfo, Delivery, LockToken, Properties, Timestamp};
use bytes::{Bytes, BytesMut};

use super::inbound::SCHEDULED_ENQUEUE_TIME;
use super::sections::Sections;

const SEQUENCE_NUMBER: &str = "x-opt-sequence-number";
const ENQUEUED_TIME: &str = "x-opt-enqueued-time";
const LOCKED_UNTIL: &str = "x-opt-locked-until";
const MESSAGE_STATE: &str = "x-opt-message-state";
const LOCK_TOKEN: &str = "x-opt-lock-token";
/// Annotations only the broker may set; whatever a client sent under these names is dropped.
const BROKER_OWNED: [&str; 8] = [
    SEQUENCE_NUMBER,
    ENQUEUED_TIME,
    LOCKED_UNTIL,
    MESSAGE_STATE,
    LOCK_TOKEN,
    // The client's own copy (it scheduled the message by sending it) is the broker's to give.
    SCHEDULED_ENQUEUE_TIME,
    "x-opt-enqueue-sequence-number",
    "x-opt-deadletter-source",
];
const DEAD_LETTER_REASON: &str = "DeadLetterReason";
const DEAD_LETTER_DESCRIPTION: &str = "DeadLetterErrorDescription";

/// The delivery tag of a peek-locked message: its lock token in .NET `Guid.ToByteArray()` order
/// (first three fields little-endian), which is how every SDK reads it back.
pub(crate) fn lock_tag(token: &LockToken) -> Bytes {
    Bytes::copy_from_slice(&dotnet_guid_bytes(token.as_bytes()))
}

/// Swaps between RFC 4122 and .NET byte order (the swap is its own inverse).
fn dotnet_guid_bytes(bytes: &[u8; 16]) -> [u8; 16] {
    let mut out = *bytes;
    out[0..4].reverse();
    out[4..6].reverse();
    out[6..8].reverse();
    out
}

/// The message as the client receives it.
pub(crate) fn delivered_message(delivery: &Delivery) -> Result<Message, DecodeError> {
    delivered_with(delivery, |message, header, added| {
        message.for_delivery(header, &BROKER_OWNED, added.iter().flatten())
    })
}

/// [`delivered_message`] in two parts to send one after the other: the new header and
/// annotations, then the stored sections after them, unchanged and not copied (a large body
/// goes out of the bytes read from the store).
pub(crate) fn delivered_parts(delivery: &Delivery) -> Result<(Bytes, Bytes), DecodeError> {
    delivered_with(delivery, |message, header, added| {
        message.for_delivery_parts(header, &BROKER_OWNED, added.iter().flatten())
    })
}

/// What a delivery changes of the stored message (application-properties for dead-lettering
/// and modified properties, the header, the broker's annotations), spliced by `splice`.
fn delivered_with<T>(
    delivery: &Delivery,
    splice: impl FnOnce(&Message, &Header, &[Option<(&str, Value)>]) -> Result<T, DecodeError>,
) -> Result<T, DecodeError> {
    let stored = Message::from_bytes(delivery.payload.clone());
    let message = if delivery.dead_letter.is_some() || !delivery.properties.is_empty() {
        with_application_properties(&stored, &delivery.properties, delivery.dead_letter.as_ref())?
    } else {
        stored
    };
    let mut header = message.header()?.unwrap_or_default();
    header.delivery_count = delivery.delivery_count;
    header.ttl = delivery
        .time_to_live
        .and_then(|ttl| u32::try_from(ttl.as_millis()).ok())
        .map(Milliseconds);
    let lock = delivery.lock.as_ref();
    // Whatever a client sent under a broker-owned key is dropped, so each is simply appended.
    let added = [
        Some((SEQUENCE_NUMBER, Value::Long(delivery.sequence.value()))),
        Some((ENQUEUED_TIME, timestamp(delivery.enqueued_time))),
        Some((MESSAGE_STATE, Value::Int(delivery.state.annotation_value()))),
        delivery
            .scheduled_enqueue_time
            .map(|at| (SCHEDULED_ENQUEUE_TIME, timestamp(at))),
        lock.map(|lock| (LOCKED_UNTIL, timestamp(lock.locked_until))),
        lock.map(|lock| (LOCK_TOKEN, Value::Uuid(Uuid(*lock.token.as_bytes())))),
    ];
    splice(&message, &header, &added)
}

/// A message handed out by `$management` (peek, receive-by-sequence-number): as delivered, and a
/// locked one also carries its lock token in the delivery annotations, where the Go and Python
/// SDKs read it for messages that arrive without a delivery tag.
pub(crate) fn management_message(delivery: &Delivery) -> Result<Message, DecodeError> {
    let message = delivered_message(delivery)?;
    let Some(lock) = &delivery.lock else {
        return Ok(message);
    };
    let mut sections = Sections::decode(&message)?;
    sections
        .delivery_annotations
        .get_or_insert_with(Annotations::default)
        .set(LOCK_TOKEN, Value::Uuid(Uuid(*lock.token.as_bytes())));
    Ok(sections.encode())
}

/// Properties to modify (from `modified` annotations, `rejected` info or `$management`), as the
/// core keeps them: AMQP-encoded values by key.
pub(crate) fn properties_to_modify<'a>(
    entries: impl IntoIterator<Item = (&'a str, &'a Value)>,
) -> Properties {
    entries
        .into_iter()
        .map(|(key, value)| {
            let mut encoded = BytesMut::new();
            value.encode(&mut encoded);
            (key.to_owned(), encoded.freeze())
        })
        .collect::<std::collections::BTreeMap<_, _>>()
        .into()
}

fn timestamp(at: Timestamp) -> Value {
    Value::Timestamp(AmqpTimestamp(at.as_millis()))
}

/// `message` with the properties a receiver modified and its dead-letter reason written into
/// its application properties (as delivered, and as forwarded out of a dead-letter sub-queue).
pub(crate) fn with_application_properties(
    message: &Message,
    modified: &Properties,
    dead_letter: Option<&DeadLetterInfo>,
) -> Result<Message, DecodeError> {
    let mut sections = Sections::decode(message)?;
    let mut properties = sections.application_properties.take().unwrap_or_default();
    for (key, encoded) in modified.as_map() {
        set(&mut properties, key, Value::decode(&mut encoded.clone())?);
    }
    if let Some(info) = dead_letter {
        for (key, text) in [
            (DEAD_LETTER_REASON, &info.reason),
            (DEAD_LETTER_DESCRIPTION, &info.description),
        ] {
            if let Some(text) = text {
                set(&mut properties, key, Value::String(text.clone()));
            }
        }
    }
    sections.application_properties = Some(properties);
    Ok(sections.encode())
}

fn set(properties: &mut ApplicationProperties, key: &str, value: Value) {
    match properties.0.iter_mut().find(|(k, _)| k == key) {
        Some(entry) => entry.1 = value,
        None => properties.push(key, value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use busbar_amqp::message::{MessageBuilder, Properties as AmqpProperties};
    use busbar_core::{DeadLetterInfo, DeliveryLock, MessageState, SequenceNumber};
    use std::time::Duration;

    fn annotations_of(message: &Message) -> Annotations {
        message.message_annotations().unwrap().unwrap()
    }

    fn delivery(payload: Bytes) -> Delivery {
        Delivery {
            sequence: SequenceNumber(7),
            payload,
            payload_in_store: false,
            message_id: None,
            session_id: None,
            delivery_count: 2,
            enqueued_time: Timestamp(1_000),
            time_to_live: Some(Duration::from_secs(60)),
            expires_at: Some(Timestamp(61_000)),
            state: MessageState::Active,
            scheduled_enqueue_time: None,
            lock: Some(DeliveryLock {
                token: LockToken::from_bytes([
                    0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc,
                    0xdd, 0xee, 0xff,
                ]),
                locked_until: Timestamp(31_000),
            }),
            dead_letter: None,
            properties: Properties::new(),
        }
    }

    fn sent() -> Message {
        let mut annotations = Annotations::default();
        annotations.set("user", Value::from("kept"));
        // Python re-sends a received message with this one as a long: it must be replaced.
        annotations.set(ENQUEUED_TIME, Value::Long(5));
        annotations.set(LOCKED_UNTIL, Value::Long(5));
        MessageBuilder::new()
            .message_annotations(annotations)
            .properties(AmqpProperties {
                subject: Some("s".into()),
                ..AmqpProperties::default()
            })
            .data(Bytes::from_static(b"body"))
            .build()
    }

    #[test]
    fn lock_tag_is_in_dotnet_byte_order() {
        let token = delivery(Bytes::new()).lock.unwrap().token;
        assert_eq!(
            &lock_tag(&token)[..],
            &[
                0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd,
                0xee, 0xff
            ]
        );
    }

    #[test]
    fn broker_annotations_have_the_service_bus_types() {
        let out = delivered_message(&delivery(sent().into_bytes())).unwrap();
        let annotations = annotations_of(&out);
        assert_eq!(annotations.get(SEQUENCE_NUMBER), Some(&Value::Long(7)));
        assert_eq!(
            annotations.get(ENQUEUED_TIME),
            Some(&Value::Timestamp(AmqpTimestamp(1_000)))
        );
        assert_eq!(
            annotations.get(LOCKED_UNTIL),
            Some(&Value::Timestamp(AmqpTimestamp(31_000)))
        );
        assert_eq!(annotations.get(MESSAGE_STATE), Some(&Value::Int(0)));
        assert!(matches!(annotations.get(LOCK_TOKEN), Some(Value::Uuid(_))));
        assert_eq!(annotations.get("user"), Some(&Value::from("kept")));
        let header = out.header().unwrap().unwrap();
        assert_eq!(header.delivery_count, 2);
        assert_eq!(header.ttl, Some(Milliseconds(60_000)));
        assert_eq!(
            out.properties().unwrap().unwrap().subject.as_deref(),
            Some("s")
        );
        assert_eq!(
            out.data_sections().unwrap(),
            vec![Bytes::from_static(b"body")]
        );
    }

    #[test]
    fn a_message_scheduled_by_its_sender_carries_its_enqueue_time_once() {
        let mut annotations = Annotations::default();
        annotations.set(
            SCHEDULED_ENQUEUE_TIME,
            Value::Timestamp(AmqpTimestamp(9_000)),
        );
        let scheduled = MessageBuilder::new()
            .message_annotations(annotations)
            .data(Bytes::from_static(b"later"))
            .build();
        let mut delivery = delivery(scheduled.into_bytes());
        delivery.scheduled_enqueue_time = Some(Timestamp(9_000));
        let annotations = annotations_of(&delivered_message(&delivery).unwrap());
        let times: Vec<&Value> = annotations
            .0
            .iter()
            .filter(|(key, _)| key.is_key(SCHEDULED_ENQUEUE_TIME))
            .map(|(_, value)| value)
            .collect();
        assert_eq!(times, [&Value::Timestamp(AmqpTimestamp(9_000))]);
    }

    #[test]
    fn management_messages_carry_their_lock_token_in_the_delivery_annotations() {
        let locked = delivery(sent().into_bytes());
        let out = management_message(&locked).unwrap();
        let token = Value::Uuid(Uuid(*locked.lock.as_ref().unwrap().token.as_bytes()));
        let delivery_annotations = out.delivery_annotations().unwrap().unwrap();
        assert_eq!(delivery_annotations.get(LOCK_TOKEN), Some(&token));
        assert_eq!(annotations_of(&out).get(LOCK_TOKEN), Some(&token));

        let mut peeked = locked;
        peeked.lock = None;
        let out = management_message(&peeked).unwrap();
        assert!(out.delivery_annotations().unwrap().is_none());
    }

    #[test]
    fn peeked_messages_carry_no_lock() {
        let mut peeked = delivery(sent().into_bytes());
        peeked.lock = None;
        let annotations = annotations_of(&delivered_message(&peeked).unwrap());
        assert_eq!(annotations.get(LOCKED_UNTIL), None);
        assert_eq!(annotations.get(LOCK_TOKEN), None);
    }

    #[test]
    fn dead_letter_reason_and_modified_properties_become_application_properties() {
        let mut dead = delivery(sent().into_bytes());
        dead.dead_letter = Some(DeadLetterInfo {
            reason: Some("bad".into()),
            description: None,
        });
        dead.properties = properties_to_modify([("n", &Value::Int(3))]);
        let out = delivered_message(&dead).unwrap();
        let properties = out.application_properties().unwrap().unwrap();
        assert_eq!(
            properties.get(DEAD_LETTER_REASON),
            Some(&Value::from("bad"))
        );
        assert_eq!(properties.get(DEAD_LETTER_DESCRIPTION), None);
        assert_eq!(properties.get("n"), Some(&Value::Int(3)));
        assert_eq!(
            out.data_sections().unwrap(),
            vec![Bytes::from_static(b"body")]
        );
    }
}
