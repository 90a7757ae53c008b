//! Messages as the explorer shows them: a peeked [`Delivery`] decoded into plain text fields
//! (system properties, application properties with the receivers' modifications, the body's
//! bytes), and a message the explorer sends built into an AMQP message like a client's.

use busbar_amqp::DecodeError;
use busbar_amqp::message::{Body, Message, MessageBuilder, MessageId, Properties};
use busbar_amqp::types::{Annotations, Symbol, Timestamp as AmqpTimestamp, Value};
use busbar_core::{Delivery, MessageState, NewMessage};
use bytes::Bytes;

use crate::runtime::inbound::{SCHEDULED_ENQUEUE_TIME, new_message};
use crate::runtime::outbound::with_application_properties;

/// A message of an entity, decoded for display.
#[derive(Debug, Clone, PartialEq)]
pub struct PeekedMessage {
    /// Its sequence number.
    pub sequence: i64,
    /// `active`, `deferred` or `scheduled`.
    pub state: &'static str,
    /// When it was enqueued (for a scheduled message, when it becomes active), Unix ms.
    pub enqueued_at: i64,
    /// Failed delivery attempts so far.
    pub delivery_count: u32,
    /// When it expires, Unix ms.
    pub expires_at: Option<i64>,
    /// When it was scheduled to become active, Unix ms.
    pub scheduled_enqueue_time: Option<i64>,
    /// `message-id`, `correlation-id`, `session-id` (group-id), `subject`, `content-type`,
    /// `to`, `reply-to`: the system properties a client set, as text.
    pub system_properties: Vec<(&'static str, String)>,
    /// The application properties (with what abandon, defer or dead-letter modified).
    pub application_properties: Vec<(String, String)>,
    /// The body: the `data` sections' bytes, or an `amqp-value` string's UTF-8 (other values
    /// in their debug form).
    pub body: Bytes,
    /// `DeadLetterReason`, for a dead-lettered message.
    pub dead_letter_reason: Option<String>,
    /// `DeadLetterErrorDescription`, for a dead-lettered message.
    pub dead_letter_description: Option<String>,
}

/// A message the explorer sends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutgoingMessage {
    /// The body, sent as one `data` section.
    pub body: Bytes,
    /// `content-type`.
    pub content_type: Option<String>,
    /// `message-id` (the broker assigns one when absent).
    pub message_id: Option<String>,
    /// The session id (`group-id`).
    pub session_id: Option<String>,
    /// `subject` (the SDKs' label).
    pub subject: Option<String>,
    /// `correlation-id`.
    pub correlation_id: Option<String>,
    /// Application properties, as strings.
    pub application_properties: Vec<(String, String)>,
    /// When it becomes active (Unix ms); `None` sends it now.
    pub scheduled_enqueue_time: Option<i64>,
}

/// Decodes a peeked delivery for display.
pub(super) fn peeked(delivery: &Delivery) -> Result<PeekedMessage, DecodeError> {
    let message = Message::parse(delivery.payload.clone())?;
    let modified = with_application_properties(&message, &delivery.properties, None)?;
    let properties = modified.properties()?.unwrap_or_default();
    let application_properties = modified
        .application_properties()?
        .unwrap_or_default()
        .0
        .into_iter()
        .map(|(key, value)| (key, text(&value)))
        .collect();
    let body = match modified.body()? {
        Body::Data(sections) => sections.concat().into(),
        Body::Value(Value::String(text)) => Bytes::from(text),
        Body::Value(Value::Binary(bytes)) => bytes,
        Body::Value(value) => Bytes::from(format!("{value:?}")),
        Body::Sequence(items) => Bytes::from(format!("{items:?}")),
        Body::Empty => Bytes::new(),
    };
    let dead_letter = delivery.dead_letter.as_ref();
    Ok(PeekedMessage {
        sequence: delivery.sequence.value(),
        state: match delivery.state {
            MessageState::Active => "active",
            MessageState::Deferred => "deferred",
            MessageState::Scheduled => "scheduled",
        },
        enqueued_at: delivery.enqueued_time.as_millis(),
        delivery_count: delivery.delivery_count,
        expires_at: delivery.expires_at.map(|at| at.as_millis()),
        scheduled_enqueue_time: delivery.scheduled_enqueue_time.map(|at| at.as_millis()),
        system_properties: system_properties(properties),
        application_properties,
        body,
        dead_letter_reason: dead_letter.and_then(|info| info.reason.clone()),
        dead_letter_description: dead_letter.and_then(|info| info.description.clone()),
    })
}

fn system_properties(properties: Properties) -> Vec<(&'static str, String)> {
    let id = |id: MessageId| match id {
        MessageId::String(text) => text,
        MessageId::Ulong(number) => number.to_string(),
        MessageId::Uuid(uuid) => text(&Value::Uuid(uuid)),
        MessageId::Binary(bytes) => hex(&bytes),
    };
    [
        ("message-id", properties.message_id.map(id)),
        ("correlation-id", properties.correlation_id.map(id)),
        ("session-id", properties.group_id),
        ("subject", properties.subject),
        (
            "content-type",
            properties.content_type.map(|s| s.to_string()),
        ),
        ("to", properties.to),
        ("reply-to", properties.reply_to),
    ]
    .into_iter()
    .filter_map(|(name, value)| Some((name, value?)))
    .collect()
}

/// An application property's value as text.
fn text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Symbol(symbol) => symbol.to_string(),
        Value::Bool(v) => v.to_string(),
        Value::Ubyte(v) => v.to_string(),
        Value::Ushort(v) => v.to_string(),
        Value::Uint(v) => v.to_string(),
        Value::Ulong(v) => v.to_string(),
        Value::Byte(v) => v.to_string(),
        Value::Short(v) => v.to_string(),
        Value::Int(v) => v.to_string(),
        Value::Long(v) => v.to_string(),
        Value::Float(v) => v.to_string(),
        Value::Double(v) => v.to_string(),
        Value::Char(v) => v.to_string(),
        Value::Timestamp(at) => at.0.to_string(),
        Value::Uuid(uuid) => {
            let hex = hex(&uuid.0);
            format!(
                "{}-{}-{}-{}-{}",
                &hex[..8],
                &hex[8..12],
                &hex[12..16],
                &hex[16..20],
                &hex[20..]
            )
        }
        Value::Binary(bytes) => hex(bytes),
        other => format!("{other:?}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// The explorer's message as a client would have sent it.
pub(super) fn outgoing(message: OutgoingMessage) -> Result<NewMessage, DecodeError> {
    let properties = Properties {
        message_id: message.message_id.map(MessageId::String),
        correlation_id: message.correlation_id.map(MessageId::String),
        group_id: message.session_id,
        subject: message.subject,
        content_type: message.content_type.map(Symbol::from),
        ..Properties::default()
    };
    let application = message
        .application_properties
        .into_iter()
        .map(|(key, value)| (key, Value::String(value)))
        .collect();
    let mut builder = MessageBuilder::new()
        .properties(properties)
        .application_properties(busbar_amqp::message::ApplicationProperties(application));
    if let Some(at) = message.scheduled_enqueue_time {
        let mut annotations = Annotations::default();
        annotations.set(SCHEDULED_ENQUEUE_TIME, Value::Timestamp(AmqpTimestamp(at)));
        builder = builder.message_annotations(annotations);
    }
    new_message(builder.data(message.body).build())
}
