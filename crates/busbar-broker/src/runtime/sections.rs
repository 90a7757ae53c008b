//! Whole-message edits the codec's header/annotation rewrite cannot do (properties and
//! application-properties): decode every section, change some, encode again. Used only on the
//! rare paths that need it (a message sent without a message-id, dead-lettered or modified
//! messages), so the common path stays zero-copy.

use busbar_amqp::DecodeError;
use busbar_amqp::message::{
    ApplicationProperties, Body, Header, Message, MessageBuilder, Properties,
};
use busbar_amqp::types::Annotations;

/// Every section of a message, decoded.
#[derive(Debug, Clone)]
pub(crate) struct Sections {
    pub(crate) header: Option<Header>,
    pub(crate) delivery_annotations: Option<Annotations>,
    pub(crate) message_annotations: Option<Annotations>,
    pub(crate) properties: Option<Properties>,
    pub(crate) application_properties: Option<ApplicationProperties>,
    pub(crate) body: Body,
    pub(crate) footer: Option<Annotations>,
}

impl Sections {
    /// Decodes every section of `message`.
    pub(crate) fn decode(message: &Message) -> Result<Self, DecodeError> {
        Ok(Self {
            header: message.header()?,
            delivery_annotations: message.delivery_annotations()?,
            message_annotations: message.message_annotations()?,
            properties: message.properties()?,
            application_properties: message.application_properties()?,
            body: message.body()?,
            footer: message.footer()?,
        })
    }

    /// Encodes the sections back into a message.
    pub(crate) fn encode(self) -> Message {
        let mut builder = MessageBuilder::new().body(self.body);
        if let Some(header) = self.header {
            builder = builder.header(header);
        }
        if let Some(annotations) = self.delivery_annotations {
            builder = builder.delivery_annotations(annotations);
        }
        if let Some(annotations) = self.message_annotations {
            builder = builder.message_annotations(annotations);
        }
        if let Some(properties) = self.properties {
            builder = builder.properties(properties);
        }
        if let Some(properties) = self.application_properties {
            builder = builder.application_properties(properties);
        }
        if let Some(footer) = self.footer {
            builder = builder.footer(footer);
        }
        builder.build()
    }
}
