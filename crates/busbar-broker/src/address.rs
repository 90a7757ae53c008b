//! Node addresses as the SDKs send them in attach frames, normalised into a typed [`Address`].
//!
//! The SDKs disagree on the form (servicebus-amqp.md §2.1): Python and azservicebus send
//! `amqps://host:port/<path>`, .NET a URI-escaped `/<path>`, JavaScript a bare `<path>`. All of
//! them reduce to the same node here; the original string is the caller's to echo back.

use std::fmt;

use crate::names::EntityName;
use crate::percent;

const CBS_NODE: &str = "$cbs";
const MANAGEMENT_SEGMENT: &str = "$management";
const DEAD_LETTER_SEGMENT: &str = "$DeadLetterQueue";
const TRANSFER_SEGMENT: &str = "$Transfer";
const SUBSCRIPTIONS_SEGMENT: &str = "Subscriptions";

/// A normalised link address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    /// The claims-based-security node `$cbs`.
    Cbs,
    /// An entity (or one of its sub-queues) for sending or receiving messages.
    Entity(EntityNode),
    /// The `$management` request/response node of an entity or sub-queue.
    Management(EntityNode),
}

/// What kind of node an [`Address`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// Messages flow to or from an entity.
    Entity,
    /// Request/response management operations.
    Management,
    /// Token put requests.
    Cbs,
}

/// An entity and which of its queues is meant.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntityNode {
    /// The queue, topic or subscription.
    pub path: EntityPath,
    /// The active queue or one of the dead-letter sub-queues.
    pub sub_queue: SubQueue,
}

/// The entity part of an address. Names compare case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EntityPath {
    /// A queue or a topic: which one is for the registry to say.
    QueueOrTopic(EntityName),
    /// `<topic>/Subscriptions/<subscription>`.
    Subscription {
        /// The topic the subscription belongs to.
        topic: EntityName,
        /// The subscription's name.
        subscription: EntityName,
    },
}

impl EntityPath {
    /// The queue or topic this is within: itself, or a subscription's topic (whose rules
    /// cover it).
    pub fn top_level(&self) -> &EntityName {
        match self {
            Self::QueueOrTopic(name) => name,
            Self::Subscription { topic, .. } => topic,
        }
    }
}

/// Which queue of an entity an address names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubQueue {
    /// The entity's own (active) queue.
    Active,
    /// `<entity>/$DeadLetterQueue`.
    DeadLetter,
    /// `<entity>/$Transfer/$DeadLetterQueue`: messages that auto-forwarding could not deliver.
    TransferDeadLetter,
}

/// An address that names no node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed address {address:?}: {problem}")]
pub struct AddressError {
    /// The address as received.
    pub address: String,
    /// What is wrong with it.
    pub problem: AddressProblem,
}

/// Why an address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AddressProblem {
    /// Nothing is left once scheme, authority and slashes are removed.
    #[error("it names no entity")]
    Empty,
    /// A `%` escape is cut short, not hexadecimal, or decodes to invalid UTF-8.
    #[error("invalid percent-encoding")]
    InvalidPercentEncoding,
    /// Two slashes in a row, or a trailing slash.
    #[error("empty path segment")]
    EmptySegment,
    /// `<topic>/Subscriptions` without a subscription name.
    #[error("no subscription name after \"Subscriptions\"")]
    MissingSubscriptionName,
    /// `$Transfer` not followed by `$DeadLetterQueue`.
    #[error("\"$Transfer\" must be followed by \"$DeadLetterQueue\"")]
    TransferWithoutDeadLetter,
    /// A `$` segment this broker does not know, or a known one in the wrong place.
    #[error("unexpected system segment {0:?}")]
    UnexpectedSystemSegment(String),
}

impl Address {
    /// Normalises an address: strips `scheme://authority` and the leading `/`, percent-decodes,
    /// then recognises `$cbs`, the `$management` suffix, dead-letter sub-queues and
    /// `<topic>/Subscriptions/<sub>` (system segments and `Subscriptions` in any case).
    pub fn parse(raw: &str) -> Result<Self, AddressError> {
        let fail = |problem| AddressError {
            address: raw.to_owned(),
            problem,
        };
        let decoded = percent::decode(path_of(raw))
            .ok_or_else(|| fail(AddressProblem::InvalidPercentEncoding))?;
        if decoded.is_empty() {
            return Err(fail(AddressProblem::Empty));
        }
        if decoded.eq_ignore_ascii_case(CBS_NODE) {
            return Ok(Self::Cbs);
        }
        let mut segments: Vec<&str> = decoded.split('/').collect();
        if segments.iter().any(|segment| segment.is_empty()) {
            return Err(fail(AddressProblem::EmptySegment));
        }
        let management = pop_if(&mut segments, MANAGEMENT_SEGMENT);
        let sub_queue = if pop_if(&mut segments, DEAD_LETTER_SEGMENT) {
            if pop_if(&mut segments, TRANSFER_SEGMENT) {
                SubQueue::TransferDeadLetter
            } else {
                SubQueue::DeadLetter
            }
        } else {
            SubQueue::Active
        };
        if let Some(system) = segments.iter().find(|segment| segment.starts_with('$')) {
            let problem = if system.eq_ignore_ascii_case(TRANSFER_SEGMENT) {
                AddressProblem::TransferWithoutDeadLetter
            } else {
                AddressProblem::UnexpectedSystemSegment((*system).to_owned())
            };
            return Err(fail(problem));
        }
        if segments.is_empty() {
            return Err(fail(AddressProblem::Empty));
        }
        let path =
            entity_path(&segments).ok_or_else(|| fail(AddressProblem::MissingSubscriptionName))?;
        let node = EntityNode { path, sub_queue };
        Ok(if management {
            Self::Management(node)
        } else {
            Self::Entity(node)
        })
    }

    /// The kind of node addressed.
    pub fn kind(&self) -> NodeKind {
        match self {
            Self::Cbs => NodeKind::Cbs,
            Self::Entity(_) => NodeKind::Entity,
            Self::Management(_) => NodeKind::Management,
        }
    }

    /// The entity node, unless this is `$cbs`.
    pub fn entity_node(&self) -> Option<&EntityNode> {
        match self {
            Self::Cbs => None,
            Self::Entity(node) | Self::Management(node) => Some(node),
        }
    }
}

/// The path part of an address: without `scheme://authority` and without the leading `/`.
pub(crate) fn path_of(raw: &str) -> &str {
    let without_authority = match raw.split_once("://") {
        Some((_scheme, rest)) => rest.find('/').map_or("", |slash| &rest[slash..]),
        None => raw,
    };
    without_authority
        .strip_prefix('/')
        .unwrap_or(without_authority)
}

fn pop_if(segments: &mut Vec<&str>, expected: &str) -> bool {
    let matches = segments
        .last()
        .is_some_and(|last| last.eq_ignore_ascii_case(expected));
    if matches {
        segments.pop();
    }
    matches
}

/// `None` when `Subscriptions` ends the path without a subscription name.
fn entity_path(segments: &[&str]) -> Option<EntityPath> {
    // A topic name may itself contain '/', so the marker is searched from the second segment on.
    let marker = segments
        .iter()
        .skip(1)
        .position(|segment| segment.eq_ignore_ascii_case(SUBSCRIPTIONS_SEGMENT))
        .map(|index| index + 1);
    match marker {
        Some(index) => {
            let (topic, rest) = segments.split_at(index);
            let subscription = rest.get(1..).filter(|names| !names.is_empty())?;
            Some(EntityPath::Subscription {
                topic: EntityName::new(topic.join("/")),
                subscription: EntityName::new(subscription.join("/")),
            })
        }
        None => Some(EntityPath::QueueOrTopic(EntityName::new(
            segments.join("/"),
        ))),
    }
}

impl fmt::Display for EntityPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::QueueOrTopic(name) => write!(f, "{name}"),
            Self::Subscription {
                topic,
                subscription,
            } => {
                write!(f, "{topic}/{SUBSCRIPTIONS_SEGMENT}/{subscription}")
            }
        }
    }
}

impl fmt::Display for EntityNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        match self.sub_queue {
            SubQueue::Active => Ok(()),
            SubQueue::DeadLetter => write!(f, "/{DEAD_LETTER_SEGMENT}"),
            SubQueue::TransferDeadLetter => write!(f, "/{TRANSFER_SEGMENT}/{DEAD_LETTER_SEGMENT}"),
        }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cbs => f.write_str(CBS_NODE),
            Self::Entity(node) => write!(f, "{node}"),
            Self::Management(node) => write!(f, "{node}/{MANAGEMENT_SEGMENT}"),
        }
    }
}

#[cfg(test)]
mod tests;
