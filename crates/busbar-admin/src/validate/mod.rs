//! Validation of what a request asks for, before the broker is asked: names and property
//! values as Service Bus checks them (the limits the .NET SDK's `AdministrationClientConstants`
//! and `EntityNameFormatter` enforce, which the service enforces too), not the emulator's
//! stricter `Config.json` rules. Pure: no IO, no clock, no broker state; whether a `ForwardTo`
//! target exists is the one check that needs the broker, so [`forward_targets`] only names the
//! entities for the HTTP layer to look up.
//!
//! Every failure is a [`ValidationError`], answered with 400 and an `<Error>` body.

mod names;
mod properties;

pub use names::{entity_name, rule_name, subscription_name};
pub use properties::{
    ForwardTarget, forward_targets, queue, queue_update, rule, subscription, subscription_update,
    topic, topic_update,
};

/// What kind of name a [`ValidationError::Name`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameKind {
    /// A queue or topic: they share one name space, and a `GET /{name}` may mean either.
    Entity,
    /// A subscription.
    Subscription,
    /// A rule.
    Rule,
}

impl NameKind {
    fn as_str(self) -> &'static str {
        match self {
            NameKind::Entity => "queue or topic",
            NameKind::Subscription => "subscription",
            NameKind::Rule => "rule",
        }
    }
}

impl std::fmt::Display for NameKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A request the service would refuse. The messages are shown to users (the SDKs surface the
/// `<Detail>` text), so they name the property and say what it takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValidationError {
    /// A name breaks the naming rules.
    #[error("the {kind} name {name:?} is not valid: {reason}")]
    Name {
        /// Which kind of name.
        kind: NameKind,
        /// The name, shortened.
        name: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// A property value outside the range the service accepts.
    #[error("{property} must be {expected}; {value} is not")]
    OutOfRange {
        /// The property's wire name.
        property: &'static str,
        /// The accepted range.
        expected: &'static str,
        /// The value sent, in wire form.
        value: String,
    },
    /// An update tried to change a property that is fixed at creation.
    #[error("{property} cannot be changed once the entity exists")]
    CreateOnly {
        /// The property's wire name.
        property: &'static str,
    },
    /// A forwarding property names the entity it is set on.
    #[error("{property} cannot forward the entity to itself")]
    ForwardToSelf {
        /// `ForwardTo` or `ForwardDeadLetteredMessagesTo`.
        property: &'static str,
    },
    /// A forwarding property names no queue or topic.
    #[error("{property} names {entity:?}, which is not an existing queue or topic")]
    ForwardTargetMissing {
        /// `ForwardTo` or `ForwardDeadLetteredMessagesTo`.
        property: &'static str,
        /// The entity it names.
        entity: String,
    },
}
