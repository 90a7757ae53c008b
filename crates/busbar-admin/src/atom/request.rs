//! Request bodies: the Atom entry every SDK PUTs, unwrapped to the description it carries.

use super::error::AtomError;
use super::namespaces::{ATOM, SERVICE_BUS};
use super::queue::QueueDescription;
use super::rule::RuleDescription;
use super::subscription::SubscriptionDescription;
use super::topic::TopicDescription;
use super::xml_tree::Element;

/// The description a request body carries. Which one a `PUT /{name}` creates (queue or topic)
/// is known only from the body.
#[derive(Debug, Clone, PartialEq)]
pub enum EntityDescription {
    /// `QueueDescription`.
    Queue(QueueDescription),
    /// `TopicDescription`.
    Topic(TopicDescription),
    /// `SubscriptionDescription`.
    Subscription(SubscriptionDescription),
    /// `RuleDescription`.
    Rule(RuleDescription),
}

/// Parses a `PUT` body: `<entry><content type="application/xml"><…Description>`, with the
/// Atom and Service Bus elements matched by namespace URI under whatever prefixes the SDK
/// chose (§6.1), the description's children in any order. A bare description without the
/// envelope is accepted too. Everything outside the description (JS's `<updated>`, the
/// `content` type) is ignored.
pub fn parse_entry(body: &[u8]) -> Result<EntityDescription, AtomError> {
    let root = Element::parse_document(body)?;
    let description = if root.is(ATOM, "entry") {
        root.child(ATOM, "content")
            .and_then(|content| content.children_in(SERVICE_BUS).next())
            .ok_or(AtomError::MissingDescription)?
    } else if root.namespace() == Some(SERVICE_BUS) {
        &root
    } else {
        return Err(AtomError::NotAnEntry {
            found: root.local_name().chars().take(64).collect(),
        });
    };
    match description.local_name() {
        "QueueDescription" => QueueDescription::decode(description).map(EntityDescription::Queue),
        "TopicDescription" => TopicDescription::decode(description).map(EntityDescription::Topic),
        "SubscriptionDescription" => {
            SubscriptionDescription::decode(description).map(EntityDescription::Subscription)
        }
        "RuleDescription" => RuleDescription::decode(description).map(EntityDescription::Rule),
        other => Err(AtomError::UnsupportedDescription {
            name: other.chars().take(64).collect(),
        }),
    }
}
