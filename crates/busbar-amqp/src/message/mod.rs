//! Messages (§3.2): a received message kept as its bare `Bytes` with sections located lazily,
//! accessors that decode one section when asked, header/annotations and properties rewrites that
//! copy the other sections untouched (the delivery rewrite lives in `delivery`), batch unpacking,
//! and a builder.

mod builder;
mod delivery;
mod index;
mod sections;

use std::sync::OnceLock;

use bytes::{BufMut, Bytes, BytesMut};

pub use builder::MessageBuilder;
pub use sections::{ApplicationProperties, Body, BodyKind, Header, MessageId, Properties};

use self::index::{SectionIndex, Span};
use self::sections::{code, encode_section, section_size};
use crate::error::DecodeError;
use crate::types::{Annotations, Composite, Field, Value};

/// A bare message (the bytes of all its sections). Section boundaries are found on the first
/// access, in one pass; a section's values are decoded only when asked for.
#[derive(Debug, Clone)]
pub struct Message {
    bytes: Bytes,
    index: OnceLock<Result<SectionIndex, DecodeError>>,
}

impl PartialEq for Message {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl Message {
    /// Wraps received message bytes (a whole delivery, reassembled from its transfer frames).
    pub fn from_bytes(bytes: Bytes) -> Self {
        Self {
            bytes,
            index: OnceLock::new(),
        }
    }

    /// Wraps message bytes and locates the sections now, failing if they are malformed.
    pub fn parse(bytes: Bytes) -> Result<Self, DecodeError> {
        let message = Self::from_bytes(bytes);
        message.index()?;
        Ok(message)
    }

    /// The encoded message.
    pub fn as_bytes(&self) -> &Bytes {
        &self.bytes
    }

    /// The encoded message, by value.
    pub fn into_bytes(self) -> Bytes {
        self.bytes
    }

    fn index(&self) -> Result<&SectionIndex, DecodeError> {
        self.index
            .get_or_init(|| SectionIndex::build(&self.bytes))
            .as_ref()
            .map_err(Clone::clone)
    }

    fn section_value(&self, span: &Span) -> Result<Value, DecodeError> {
        Value::decode(&mut self.bytes.slice(span.value.clone()))
    }

    fn decode_field<T: Field>(&self, span: Option<&Span>) -> Result<Option<T>, DecodeError> {
        span.map(|span| T::from_value(self.section_value(span)?))
            .transpose()
    }

    /// The header section, if present.
    pub fn header(&self) -> Result<Option<Header>, DecodeError> {
        self.index()?
            .header
            .as_ref()
            .map(|span| Header::decode(&mut self.bytes.slice(span.section.clone())))
            .transpose()
    }

    /// The delivery-annotations section, if present.
    pub fn delivery_annotations(&self) -> Result<Option<Annotations>, DecodeError> {
        self.decode_field(self.index()?.delivery_annotations.as_ref())
    }

    /// The message-annotations section, if present.
    pub fn message_annotations(&self) -> Result<Option<Annotations>, DecodeError> {
        self.decode_field(self.index()?.message_annotations.as_ref())
    }

    /// The properties section, if present.
    pub fn properties(&self) -> Result<Option<Properties>, DecodeError> {
        self.index()?
            .properties
            .as_ref()
            .map(|span| Properties::decode(&mut self.bytes.slice(span.section.clone())))
            .transpose()
    }

    /// The application-properties section, if present.
    pub fn application_properties(&self) -> Result<Option<ApplicationProperties>, DecodeError> {
        self.decode_field(self.index()?.application_properties.as_ref())
    }

    /// The footer section, if present.
    pub fn footer(&self) -> Result<Option<Annotations>, DecodeError> {
        self.decode_field(self.index()?.footer.as_ref())
    }

    /// Which kind of body the message has, without decoding it.
    pub fn body_kind(&self) -> Result<BodyKind, DecodeError> {
        Ok(self.index()?.body_kind.unwrap_or(BodyKind::Empty))
    }

    /// The decoded body.
    pub fn body(&self) -> Result<Body, DecodeError> {
        let index = self.index()?;
        let values = index.body.iter().map(|span| self.section_value(span));
        Ok(match index.body_kind {
            None => Body::Empty,
            Some(BodyKind::Data) => Body::Data(
                values
                    .map(|v| Bytes::from_value(v?))
                    .collect::<Result<_, _>>()?,
            ),
            Some(BodyKind::Sequence) => Body::Sequence(
                values
                    .map(|v| Vec::<Value>::from_value(v?))
                    .collect::<Result<_, _>>()?,
            ),
            Some(BodyKind::Value | BodyKind::Empty) => {
                Body::Value(values.last().transpose()?.unwrap_or(Value::Null))
            }
        })
    }

    /// The `data` sections' payloads, shared with the message buffer (empty for other bodies).
    pub fn data_sections(&self) -> Result<Vec<Bytes>, DecodeError> {
        match self.body()? {
            Body::Data(sections) => Ok(sections),
            _ => Ok(Vec::new()),
        }
    }

    /// The messages of a Service Bus batch (transfer message-format `0x80013700`): each `data`
    /// section of the body is one encoded message.
    pub fn batch(&self) -> Result<impl Iterator<Item = Message> + use<>, DecodeError> {
        Ok(self.data_sections()?.into_iter().map(Message::from_bytes))
    }

    /// A copy of this message with a new header and new message-annotations (`None` drops the
    /// section). Delivery-annotations, properties, application-properties, body and footer are
    /// copied as bytes, never re-encoded.
    pub fn rewrite(
        &self,
        header: Option<&Header>,
        message_annotations: Option<&Annotations>,
    ) -> Result<Message, DecodeError> {
        let index = self.index()?;
        let delivery_annotations = index
            .delivery_annotations
            .as_ref()
            .map_or(&[][..], |span| &self.bytes[span.section.clone()]);
        let rest = &self.bytes[index.end_of_annotations()..];
        let size = header.map_or(0, Header::encoded_size)
            + delivery_annotations.len()
            + message_annotations.map_or(0, |a| section_size(code::MESSAGE_ANNOTATIONS, a))
            + rest.len();
        let mut out = BytesMut::with_capacity(size);
        if let Some(header) = header {
            header.encode(&mut out);
        }
        out.put_slice(delivery_annotations);
        if let Some(annotations) = message_annotations {
            encode_section(code::MESSAGE_ANNOTATIONS, annotations, &mut out);
        }
        out.put_slice(rest);
        Ok(Message::from_bytes(out.freeze()))
    }

    /// A copy of this message with `properties` as its properties section (replacing the one
    /// it has, or inserted where §3.2 puts it). Every other section is copied as bytes, never
    /// re-encoded.
    pub fn with_properties(&self, properties: &Properties) -> Result<Message, DecodeError> {
        let index = self.index()?;
        let (before, after) = match &index.properties {
            Some(span) => (span.section.start, span.section.end),
            None => {
                let at = index.end_of_annotations();
                (at, at)
            }
        };
        let (head, tail) = (&self.bytes[..before], &self.bytes[after..]);
        let mut out = BytesMut::with_capacity(head.len() + properties.encoded_size() + tail.len());
        out.put_slice(head);
        properties.encode(&mut out);
        out.put_slice(tail);
        Ok(Message::from_bytes(out.freeze()))
    }
}
