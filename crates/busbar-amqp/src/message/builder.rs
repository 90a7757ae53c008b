//! `MessageBuilder`: assembles a message from typed sections, sized once and encoded in one pass.

use bytes::{Bytes, BytesMut};

use super::Message;
use super::sections::{ApplicationProperties, Body, Header, Properties, code};
use super::sections::{encode_section, section_size};
use crate::types::{Annotations, Composite, Value};

/// Builds a message (e.g. a request/response reply, or a delivery the broker originates).
#[derive(Debug, Clone, Default)]
pub struct MessageBuilder {
    header: Option<Header>,
    delivery_annotations: Option<Annotations>,
    message_annotations: Option<Annotations>,
    properties: Option<Properties>,
    application_properties: Option<ApplicationProperties>,
    body: Option<Body>,
    footer: Option<Annotations>,
}

impl MessageBuilder {
    /// An empty message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the header section.
    pub fn header(mut self, header: Header) -> Self {
        self.header = Some(header);
        self
    }

    /// Sets the delivery-annotations section.
    pub fn delivery_annotations(mut self, annotations: Annotations) -> Self {
        self.delivery_annotations = Some(annotations);
        self
    }

    /// Sets the message-annotations section.
    pub fn message_annotations(mut self, annotations: Annotations) -> Self {
        self.message_annotations = Some(annotations);
        self
    }

    /// Sets the properties section.
    pub fn properties(mut self, properties: Properties) -> Self {
        self.properties = Some(properties);
        self
    }

    /// Sets the application-properties section.
    pub fn application_properties(mut self, properties: ApplicationProperties) -> Self {
        self.application_properties = Some(properties);
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: Body) -> Self {
        self.body = Some(body);
        self
    }

    /// Sets an `amqp-value` body.
    pub fn value(self, value: Value) -> Self {
        self.body(Body::Value(value))
    }

    /// Sets a single `data` section body.
    pub fn data(self, data: Bytes) -> Self {
        self.body(Body::Data(vec![data]))
    }

    /// Sets the footer section.
    pub fn footer(mut self, footer: Annotations) -> Self {
        self.footer = Some(footer);
        self
    }

    /// The encoded size of the message.
    pub fn encoded_size(&self) -> usize {
        let body = match &self.body {
            None | Some(Body::Empty) => 0,
            Some(Body::Data(sections)) => {
                sections.iter().map(|d| section_size(code::DATA, d)).sum()
            }
            Some(Body::Sequence(sections)) => sections
                .iter()
                .map(|s| section_size(code::AMQP_SEQUENCE, s))
                .sum(),
            Some(Body::Value(value)) => section_size(code::AMQP_VALUE, value),
        };
        self.header.as_ref().map_or(0, Header::encoded_size)
            + self
                .delivery_annotations
                .as_ref()
                .map_or(0, |a| section_size(code::DELIVERY_ANNOTATIONS, a))
            + self
                .message_annotations
                .as_ref()
                .map_or(0, |a| section_size(code::MESSAGE_ANNOTATIONS, a))
            + self.properties.as_ref().map_or(0, Properties::encoded_size)
            + self
                .application_properties
                .as_ref()
                .map_or(0, |a| section_size(code::APPLICATION_PROPERTIES, a))
            + body
            + self
                .footer
                .as_ref()
                .map_or(0, |f| section_size(code::FOOTER, f))
    }

    /// Appends the encoded message to `out`.
    pub fn encode(&self, out: &mut BytesMut) {
        out.reserve(self.encoded_size());
        if let Some(header) = &self.header {
            header.encode(out);
        }
        if let Some(annotations) = &self.delivery_annotations {
            encode_section(code::DELIVERY_ANNOTATIONS, annotations, out);
        }
        if let Some(annotations) = &self.message_annotations {
            encode_section(code::MESSAGE_ANNOTATIONS, annotations, out);
        }
        if let Some(properties) = &self.properties {
            properties.encode(out);
        }
        if let Some(properties) = &self.application_properties {
            encode_section(code::APPLICATION_PROPERTIES, properties, out);
        }
        match &self.body {
            None | Some(Body::Empty) => {}
            Some(Body::Data(sections)) => {
                sections
                    .iter()
                    .for_each(|d| encode_section(code::DATA, d, out));
            }
            Some(Body::Sequence(sections)) => {
                sections
                    .iter()
                    .for_each(|s| encode_section(code::AMQP_SEQUENCE, s, out));
            }
            Some(Body::Value(value)) => encode_section(code::AMQP_VALUE, value, out),
        }
        if let Some(footer) = &self.footer {
            encode_section(code::FOOTER, footer, out);
        }
    }

    /// The encoded message.
    pub fn build(&self) -> Message {
        let mut out = BytesMut::with_capacity(self.encoded_size());
        self.encode(&mut out);
        Message::from_bytes(out.freeze())
    }
}
