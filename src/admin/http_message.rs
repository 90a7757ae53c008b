//! Messages between the HTTP data plane's form and AMQP's, so a message sent over either is
//! read over the other with the same properties: `BrokerProperties` map onto the properties
//! section (`Label` is the subject, `SessionId` the group-id), the header's TTL and the
//! Service Bus annotations; custom properties are the application properties; the body is one
//! data section. A received message's broker-set fields come from the header and the
//! annotations the broker wrote for its delivery.

use std::time::Duration;

use busbar_admin::atom::Timestamp;
use busbar_admin::data_plane::{BrokerProperties, HttpMessage, PropertyValue};
use busbar_amqp::DecodeError;
use busbar_amqp::message::{
    ApplicationProperties, Body, Header, Message, MessageBuilder, MessageId, Properties,
};
use busbar_amqp::performatives::Milliseconds;
use busbar_amqp::types::{Annotations, Symbol, Timestamp as AmqpTimestamp, Uuid, Value};
use bytes::{Bytes, BytesMut};

const SCHEDULED_ENQUEUE_TIME: &str = "x-opt-scheduled-enqueue-time";
const PARTITION_KEY: &str = "x-opt-partition-key";
const SEQUENCE_NUMBER: &str = "x-opt-sequence-number";
const ENQUEUED_TIME: &str = "x-opt-enqueued-time";
const LOCKED_UNTIL: &str = "x-opt-locked-until";
const LOCK_TOKEN: &str = "x-opt-lock-token";
const MESSAGE_STATE: &str = "x-opt-message-state";
const DEAD_LETTER_SOURCE: &str = "x-opt-deadletter-source";

/// The AMQP message for a message sent over HTTP.
pub(crate) fn to_amqp(message: HttpMessage) -> Message {
    let sent = message.properties;
    let text_id = |id: Option<String>| id.map(MessageId::String);
    let properties = Properties {
        message_id: text_id(sent.message_id),
        correlation_id: text_id(sent.correlation_id),
        to: sent.to,
        subject: sent.label,
        reply_to: sent.reply_to,
        content_type: message.content_type.map(Symbol::new),
        group_id: sent.session_id,
        reply_to_group_id: sent.reply_to_session_id,
        ..Properties::default()
    };
    let header = Header {
        durable: true,
        ttl: sent
            .time_to_live
            .map(|ttl| Milliseconds(u32::try_from(ttl.as_millis()).unwrap_or(u32::MAX))),
        ..Header::default()
    };
    let mut annotations = Annotations::default();
    if let Some(at) = sent.scheduled_enqueue_time {
        annotations.set(
            SCHEDULED_ENQUEUE_TIME,
            Value::Timestamp(AmqpTimestamp(at.unix_millis())),
        );
    }
    if let Some(key) = sent.partition_key {
        annotations.set(PARTITION_KEY, Value::String(key));
    }
    let mut application = ApplicationProperties::default();
    for (name, value) in message.custom_properties {
        application.push(name, amqp_value(value));
    }
    let mut builder = MessageBuilder::new().header(header).properties(properties);
    if !annotations.0.is_empty() {
        builder = builder.message_annotations(annotations);
    }
    if !application.0.is_empty() {
        builder = builder.application_properties(application);
    }
    builder.data(message.body).build()
}

/// The HTTP form of a message as the broker delivered it (header and annotations included).
pub(crate) fn from_amqp(message: &Message) -> Result<HttpMessage, DecodeError> {
    let header = message.header()?.unwrap_or_default();
    let properties = message.properties()?.unwrap_or_default();
    let annotations = message.message_annotations()?.unwrap_or_default();
    let annotation = |key: &str| annotations.get(key);
    let timestamp = |key: &str| match annotation(key) {
        Some(Value::Timestamp(at)) => Some(Timestamp::from_unix_millis(at.0)),
        _ => None,
    };
    let text = |key: &str| annotation(key).and_then(Value::as_str).map(str::to_owned);
    let broker_properties = BrokerProperties {
        message_id: properties.message_id.as_ref().map(id_text),
        correlation_id: properties.correlation_id.as_ref().map(id_text),
        session_id: properties.group_id,
        label: properties.subject,
        to: properties.to,
        reply_to: properties.reply_to,
        reply_to_session_id: properties.reply_to_group_id,
        partition_key: text(PARTITION_KEY),
        time_to_live: header
            .ttl
            .map(|ttl| Duration::from_millis(u64::from(ttl.0))),
        scheduled_enqueue_time: timestamp(SCHEDULED_ENQUEUE_TIME),
        // AMQP counts earlier deliveries; the HTTP API counts this one too.
        delivery_count: Some(header.delivery_count.saturating_add(1)),
        sequence_number: match annotation(SEQUENCE_NUMBER) {
            Some(Value::Long(sequence)) => Some(*sequence),
            _ => None,
        },
        enqueued_time: timestamp(ENQUEUED_TIME),
        lock_token: match annotation(LOCK_TOKEN) {
            Some(Value::Uuid(Uuid(bytes))) => Some(uuid::Uuid::from_bytes(*bytes)),
            _ => None,
        },
        locked_until: timestamp(LOCKED_UNTIL),
        state: Some(match annotation(MESSAGE_STATE) {
            Some(Value::Int(1)) => "Deferred",
            Some(Value::Int(2)) => "Scheduled",
            _ => "Active",
        }),
        dead_letter_source: text(DEAD_LETTER_SOURCE),
    };
    let custom_properties = message
        .application_properties()?
        .map(|application| {
            application
                .0
                .into_iter()
                .filter_map(|(name, value)| Some((name, property_value(value)?)))
                .collect()
        })
        .unwrap_or_default();
    Ok(HttpMessage {
        body: body_bytes(message.body()?),
        content_type: properties
            .content_type
            .map(|symbol| symbol.as_str().to_owned()),
        properties: broker_properties,
        custom_properties,
    })
}

/// The body's bytes: the data sections joined, or a text or binary value; a body of other
/// AMQP types (lists, maps, numbers) has no HTTP form and reads as empty.
fn body_bytes(body: Body) -> Bytes {
    match body {
        Body::Data(sections) if sections.len() == 1 => {
            sections.into_iter().next().unwrap_or_default()
        }
        Body::Data(sections) => {
            let mut joined = BytesMut::new();
            for section in sections {
                joined.extend_from_slice(&section);
            }
            joined.freeze()
        }
        Body::Value(Value::String(text)) => Bytes::from(text),
        Body::Value(Value::Binary(bytes)) => bytes,
        Body::Value(_) | Body::Sequence(_) | Body::Empty => Bytes::new(),
    }
}

/// A message-id or correlation-id as text, as the service writes non-string ids.
fn id_text(id: &MessageId) -> String {
    match id {
        MessageId::String(text) => text.clone(),
        MessageId::Ulong(number) => number.to_string(),
        MessageId::Uuid(Uuid(bytes)) => uuid::Uuid::from_bytes(*bytes).to_string(),
        MessageId::Binary(bytes) => bytes.iter().map(|byte| format!("{byte:02x}")).collect(),
    }
}

fn amqp_value(value: PropertyValue) -> Value {
    match value {
        PropertyValue::String(text) => Value::String(text),
        PropertyValue::Long(number) => Value::Long(number),
        PropertyValue::Double(number) => Value::Double(number),
        PropertyValue::Bool(flag) => Value::Bool(flag),
    }
}

/// An application property as a custom property; types with no header form (binary, lists,
/// maps) are left out.
fn property_value(value: Value) -> Option<PropertyValue> {
    Some(match value {
        Value::String(text) => PropertyValue::String(text),
        Value::Bool(flag) => PropertyValue::Bool(flag),
        Value::Byte(n) => PropertyValue::Long(n.into()),
        Value::Short(n) => PropertyValue::Long(n.into()),
        Value::Int(n) => PropertyValue::Long(n.into()),
        Value::Long(n) => PropertyValue::Long(n),
        Value::Ubyte(n) => PropertyValue::Long(n.into()),
        Value::Ushort(n) => PropertyValue::Long(n.into()),
        Value::Uint(n) => PropertyValue::Long(n.into()),
        Value::Ulong(n) => PropertyValue::Long(i64::try_from(n).ok()?),
        Value::Float(n) => PropertyValue::Double(n.into()),
        Value::Double(n) => PropertyValue::Double(n),
        Value::Char(c) => PropertyValue::String(c.to_string()),
        Value::Uuid(Uuid(bytes)) => {
            PropertyValue::String(uuid::Uuid::from_bytes(bytes).to_string())
        }
        Value::Timestamp(at) => {
            PropertyValue::String(busbar_admin::data_plane::broker_properties::format_date(
                Timestamp::from_unix_millis(at.0),
            ))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_message_survives_the_round_trip_through_amqp() {
        let sent = HttpMessage {
            body: Bytes::from_static(b"hello"),
            content_type: Some("text/plain".into()),
            properties: BrokerProperties {
                message_id: Some("m1".into()),
                correlation_id: Some("c1".into()),
                session_id: Some("s1".into()),
                label: Some("l1".into()),
                to: Some("t1".into()),
                reply_to: Some("r1".into()),
                reply_to_session_id: Some("rs1".into()),
                partition_key: Some("p1".into()),
                time_to_live: Some(Duration::from_secs(90)),
                scheduled_enqueue_time: Some(Timestamp::from_unix_millis(1_000)),
                ..BrokerProperties::default()
            },
            custom_properties: vec![
                ("color".into(), PropertyValue::String("red".into())),
                ("count".into(), PropertyValue::Long(3)),
                ("ratio".into(), PropertyValue::Double(0.5)),
                ("ok".into(), PropertyValue::Bool(true)),
            ],
        };
        let read = from_amqp(&to_amqp(sent.clone())).unwrap();
        assert_eq!(read.body, sent.body);
        assert_eq!(read.content_type, sent.content_type);
        assert_eq!(read.custom_properties, sent.custom_properties);
        let expected = BrokerProperties {
            delivery_count: Some(1),
            state: Some("Active"),
            ..sent.properties
        };
        assert_eq!(read.properties, expected);
    }

    #[test]
    fn reads_other_body_and_id_types() {
        let message = MessageBuilder::new()
            .properties(Properties {
                message_id: Some(MessageId::Ulong(7)),
                ..Properties::default()
            })
            .value(Value::String("text".into()))
            .build();
        let read = from_amqp(&message).unwrap();
        assert_eq!(read.body, Bytes::from_static(b"text"));
        assert_eq!(read.properties.message_id.as_deref(), Some("7"));
    }
}
