//! Message sections (§3.2): header, properties, application-properties, the body kinds, and the
//! descriptor codes that identify every section.

use bytes::{BufMut, Bytes};

use crate::error::DecodeError;
use crate::performatives::{Milliseconds, SequenceNo};
use crate::types::{
    Field, Symbol, Timestamp, Uuid, Value, composite, encode_map_field, encode_ulong,
    map_field_size, ulong_size,
};

/// Descriptor codes of the message sections (§3.2), in the order a message carries them.
pub(crate) mod code {
    pub(crate) const HEADER: u64 = 0x70;
    pub(crate) const DELIVERY_ANNOTATIONS: u64 = 0x71;
    pub(crate) const MESSAGE_ANNOTATIONS: u64 = 0x72;
    pub(crate) const PROPERTIES: u64 = 0x73;
    pub(crate) const APPLICATION_PROPERTIES: u64 = 0x74;
    pub(crate) const DATA: u64 = 0x75;
    pub(crate) const AMQP_SEQUENCE: u64 = 0x76;
    pub(crate) const AMQP_VALUE: u64 = 0x77;
    pub(crate) const FOOTER: u64 = 0x78;

    /// Symbolic names, indexed by `code - HEADER`.
    pub(crate) const NAMES: [&str; 9] = [
        "amqp:header:list",
        "amqp:delivery-annotations:map",
        "amqp:message-annotations:map",
        "amqp:properties:list",
        "amqp:application-properties:map",
        "amqp:data:binary",
        "amqp:amqp-sequence:list",
        "amqp:amqp-value:*",
        "amqp:footer:map",
    ];
}

/// Encoded size of a non-list section: constructor, descriptor code and value.
pub(crate) fn section_size<F: Field>(code: u64, value: &F) -> usize {
    1 + ulong_size(code) + value.field_size()
}

/// Writes a non-list section (annotations, application-properties, body, footer).
pub(crate) fn encode_section<F: Field, B: BufMut>(code: u64, value: &F, buf: &mut B) {
    buf.put_u8(0x00);
    encode_ulong(code, buf);
    value.encode_field(buf);
}

composite! {
    /// Transport headers for a message (§3.2.1).
    Header = 0x70, "amqp:header:list" {
        /// Specify durability requirements.
        durable: bool = default(false),
        /// Relative message priority.
        priority: u8 = default(4),
        /// Time to live in ms.
        ttl: Option<Milliseconds> = optional,
        /// If true, the message has not been acquired by any other link.
        first_acquirer: bool = default(false),
        /// The number of prior unsuccessful delivery attempts.
        delivery_count: u32 = default(0),
    }
}

impl Default for Header {
    fn default() -> Self {
        Self {
            durable: false,
            priority: 4,
            ttl: None,
            first_acquirer: false,
            delivery_count: 0,
        }
    }
}

composite! {
    /// Immutable properties of the message (§3.2.4).
    #[derive(Default)]
    Properties = 0x73, "amqp:properties:list" {
        /// Application message identifier.
        message_id: Option<MessageId> = optional,
        /// Creating user id.
        user_id: Option<Bytes> = optional,
        /// The address of the node the message is destined for.
        to: Option<String> = optional,
        /// The subject of the message.
        subject: Option<String> = optional,
        /// The node to send replies to.
        reply_to: Option<String> = optional,
        /// Application correlation identifier.
        correlation_id: Option<MessageId> = optional,
        /// MIME content type.
        content_type: Option<Symbol> = optional,
        /// MIME content encoding.
        content_encoding: Option<Symbol> = optional,
        /// The time when this message is considered expired.
        absolute_expiry_time: Option<Timestamp> = optional,
        /// The time when this message was created.
        creation_time: Option<Timestamp> = optional,
        /// The group this message belongs to (the Service Bus session id).
        group_id: Option<String> = optional,
        /// The relative position of this message within its group.
        group_sequence: Option<SequenceNo> = optional,
        /// The group the reply message belongs to.
        reply_to_group_id: Option<String> = optional,
    }
}

/// A message-id or correlation-id (§3.2.11–3.2.15): any of four types, kept as sent so a reply
/// can echo it with the same AMQP type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MessageId {
    /// `message-id-ulong`.
    Ulong(u64),
    /// `message-id-uuid`.
    Uuid(Uuid),
    /// `message-id-binary`.
    Binary(Bytes),
    /// `message-id-string`.
    String(String),
}

impl Field for MessageId {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::Ulong(v) => Ok(Self::Ulong(v)),
            Value::Uuid(v) => Ok(Self::Uuid(v)),
            Value::Binary(v) => Ok(Self::Binary(v)),
            Value::String(v) => Ok(Self::String(v)),
            other => Err(DecodeError::UnexpectedType {
                expected: "message-id",
                found: other.type_name(),
            }),
        }
    }
    fn field_size(&self) -> usize {
        match self {
            Self::Ulong(v) => v.field_size(),
            Self::Uuid(v) => v.field_size(),
            Self::Binary(v) => v.field_size(),
            Self::String(v) => v.field_size(),
        }
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        match self {
            Self::Ulong(v) => v.encode_field(buf),
            Self::Uuid(v) => v.encode_field(buf),
            Self::Binary(v) => v.encode_field(buf),
            Self::String(v) => v.encode_field(buf),
        }
    }
}

/// Application properties (§3.2.5): string keys, simple values, wire order kept.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ApplicationProperties(pub Vec<(String, Value)>);

impl ApplicationProperties {
    /// The value of the first entry with this key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Appends an entry.
    pub fn push(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        self.0.push((key.into(), value.into()));
    }
}

impl Field for ApplicationProperties {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        Vec::<(Value, Value)>::from_value(value)?
            .into_iter()
            .map(|(key, value)| Ok((String::from_value(key)?, value)))
            .collect::<Result<_, _>>()
            .map(Self)
    }
    fn field_size(&self) -> usize {
        map_field_size(&self.0)
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        encode_map_field(&self.0, buf);
    }
}

/// Which kind of body a message has (§3.2.6–3.2.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BodyKind {
    /// One or more `data` sections.
    Data,
    /// One or more `amqp-sequence` sections.
    Sequence,
    /// One `amqp-value` section.
    Value,
    /// No body section.
    Empty,
}

/// A decoded message body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// `data` sections: opaque binary, shared with the message buffer.
    Data(Vec<Bytes>),
    /// `amqp-sequence` sections.
    Sequence(Vec<Vec<Value>>),
    /// An `amqp-value` section.
    Value(Value),
    /// No body.
    Empty,
}
