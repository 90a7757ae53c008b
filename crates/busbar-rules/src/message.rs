//! What rules read from a message: its system properties and user (application) properties.

use std::borrow::Cow;

use crate::value::{TimeSpan, Timestamp, Value};

/// A `sys.` property: a public property of the Service Bus message class.
///
/// Names are matched case-insensitively, as Service Bus matches every property name in a
/// filter. `sys.Label` and `sys.Subject` are the same property (the newer SDKs renamed it).
/// Lock-related properties (`LockToken`, `LockedUntilUtc`) have no value while a message is
/// routed, so they are not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SystemProperty {
    /// `sys.MessageId` (string).
    MessageId,
    /// `sys.CorrelationId` (string).
    CorrelationId,
    /// `sys.To` (string).
    To,
    /// `sys.ReplyTo` (string).
    ReplyTo,
    /// `sys.Label`, alias `sys.Subject` (string).
    Label,
    /// `sys.SessionId` (string).
    SessionId,
    /// `sys.ReplyToSessionId` (string).
    ReplyToSessionId,
    /// `sys.ContentType` (string).
    ContentType,
    /// `sys.PartitionKey` (string).
    PartitionKey,
    /// `sys.ViaPartitionKey` (string).
    ViaPartitionKey,
    /// `sys.DeadLetterSource` (string).
    DeadLetterSource,
    /// `sys.SequenceNumber` (long).
    SequenceNumber,
    /// `sys.EnqueuedSequenceNumber` (long).
    EnqueuedSequenceNumber,
    /// `sys.DeliveryCount` (long).
    DeliveryCount,
    /// `sys.Size` (long, bytes).
    Size,
    /// `sys.EnqueuedTimeUtc` (datetime).
    EnqueuedTimeUtc,
    /// `sys.ScheduledEnqueueTimeUtc` (datetime).
    ScheduledEnqueueTimeUtc,
    /// `sys.ExpiresAtUtc` (datetime).
    ExpiresAtUtc,
    /// `sys.TimeToLive` (timespan).
    TimeToLive,
}

impl SystemProperty {
    /// Every system property, in declaration order.
    pub const ALL: [SystemProperty; 19] = [
        SystemProperty::MessageId,
        SystemProperty::CorrelationId,
        SystemProperty::To,
        SystemProperty::ReplyTo,
        SystemProperty::Label,
        SystemProperty::SessionId,
        SystemProperty::ReplyToSessionId,
        SystemProperty::ContentType,
        SystemProperty::PartitionKey,
        SystemProperty::ViaPartitionKey,
        SystemProperty::DeadLetterSource,
        SystemProperty::SequenceNumber,
        SystemProperty::EnqueuedSequenceNumber,
        SystemProperty::DeliveryCount,
        SystemProperty::Size,
        SystemProperty::EnqueuedTimeUtc,
        SystemProperty::ScheduledEnqueueTimeUtc,
        SystemProperty::ExpiresAtUtc,
        SystemProperty::TimeToLive,
    ];

    /// The canonical name, without `sys.`.
    pub fn name(self) -> &'static str {
        match self {
            SystemProperty::MessageId => "MessageId",
            SystemProperty::CorrelationId => "CorrelationId",
            SystemProperty::To => "To",
            SystemProperty::ReplyTo => "ReplyTo",
            SystemProperty::Label => "Label",
            SystemProperty::SessionId => "SessionId",
            SystemProperty::ReplyToSessionId => "ReplyToSessionId",
            SystemProperty::ContentType => "ContentType",
            SystemProperty::PartitionKey => "PartitionKey",
            SystemProperty::ViaPartitionKey => "ViaPartitionKey",
            SystemProperty::DeadLetterSource => "DeadLetterSource",
            SystemProperty::SequenceNumber => "SequenceNumber",
            SystemProperty::EnqueuedSequenceNumber => "EnqueuedSequenceNumber",
            SystemProperty::DeliveryCount => "DeliveryCount",
            SystemProperty::Size => "Size",
            SystemProperty::EnqueuedTimeUtc => "EnqueuedTimeUtc",
            SystemProperty::ScheduledEnqueueTimeUtc => "ScheduledEnqueueTimeUtc",
            SystemProperty::ExpiresAtUtc => "ExpiresAtUtc",
            SystemProperty::TimeToLive => "TimeToLive",
        }
    }

    /// Looks a name up case-insensitively (`Subject` is `Label`).
    pub fn from_name(name: &str) -> Option<SystemProperty> {
        if name.eq_ignore_ascii_case("Subject") {
            return Some(SystemProperty::Label);
        }
        SystemProperty::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name))
    }

    /// Whether a rule action may `SET`/`REMOVE` it: the properties a sender sets. The ones the
    /// broker assigns (sequence numbers, times, counts, size) are read-only.
    pub fn is_writable(self) -> bool {
        self.is_string() || matches!(self, Self::ScheduledEnqueueTimeUtc | Self::TimeToLive)
    }

    /// Whether the property holds a string (an action converts what it assigns to text).
    pub fn is_string(self) -> bool {
        matches!(
            self,
            Self::MessageId
                | Self::CorrelationId
                | Self::To
                | Self::ReplyTo
                | Self::Label
                | Self::SessionId
                | Self::ReplyToSessionId
                | Self::ContentType
                | Self::PartitionKey
                | Self::ViaPartitionKey
                | Self::DeadLetterSource
        )
    }
}

/// A property a filter reads or an action writes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PropertyRef {
    /// `sys.<name>`.
    System(SystemProperty),
    /// `<name>` or `user.<name>`: an application property, as spelled in the expression.
    User(String),
}

/// Read access to a message, implemented by the broker over its AMQP message.
///
/// Contract for [`MessageView::user_property`]: property names match case-insensitively, as
/// Service Bus documents for filters ("property names are case-insensitive"); when several
/// keys differ only in case, an exact match wins. [`find_user_property`] implements that for
/// any list of pairs.
pub trait MessageView {
    /// The system property's value, [`Value::Null`] when the message does not set it.
    fn system_property(&self, property: SystemProperty) -> Value<'_>;

    /// The user property's value: `None` when absent, `Some(Value::Null)` when present with a
    /// null value (`EXISTS` tells the two apart; everything else does not).
    fn user_property(&self, name: &str) -> Option<Value<'_>>;
}

/// Finds a user property the way [`MessageView::user_property`] requires: exact name first,
/// then the first case-insensitive match.
pub fn find_user_property<'m, I>(properties: I, name: &str) -> Option<&'m Value<'static>>
where
    I: IntoIterator<Item = (&'m str, &'m Value<'static>)>,
    I::IntoIter: Clone,
{
    let properties = properties.into_iter();
    properties
        .clone()
        .find(|(key, _)| *key == name)
        .or_else(|| properties.clone().find(|(key, _)| same_name(key, name)))
        .map(|(_, value)| value)
}

/// Whether two user property names are the same name under Service Bus's case-insensitive
/// matching (Unicode lower-casing, no allocation).
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    a.chars()
        .flat_map(char::to_lowercase)
        .eq(b.chars().flat_map(char::to_lowercase))
}

/// A plain message: the broker can fill one from an AMQP message, and tests build them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    /// `sys.MessageId`.
    pub message_id: Option<String>,
    /// `sys.CorrelationId`.
    pub correlation_id: Option<String>,
    /// `sys.To`.
    pub to: Option<String>,
    /// `sys.ReplyTo`.
    pub reply_to: Option<String>,
    /// `sys.Label` / `sys.Subject`.
    pub label: Option<String>,
    /// `sys.SessionId`.
    pub session_id: Option<String>,
    /// `sys.ReplyToSessionId`.
    pub reply_to_session_id: Option<String>,
    /// `sys.ContentType`.
    pub content_type: Option<String>,
    /// `sys.PartitionKey`.
    pub partition_key: Option<String>,
    /// `sys.ViaPartitionKey`.
    pub via_partition_key: Option<String>,
    /// `sys.DeadLetterSource`.
    pub dead_letter_source: Option<String>,
    /// `sys.SequenceNumber`.
    pub sequence_number: Option<i64>,
    /// `sys.EnqueuedSequenceNumber`.
    pub enqueued_sequence_number: Option<i64>,
    /// `sys.DeliveryCount`.
    pub delivery_count: Option<i64>,
    /// `sys.Size`.
    pub size: Option<i64>,
    /// `sys.EnqueuedTimeUtc`.
    pub enqueued_time: Option<Timestamp>,
    /// `sys.ScheduledEnqueueTimeUtc`.
    pub scheduled_enqueue_time: Option<Timestamp>,
    /// `sys.ExpiresAtUtc`.
    pub expires_at: Option<Timestamp>,
    /// `sys.TimeToLive`.
    pub time_to_live: Option<TimeSpan>,
    /// Application properties in message order.
    pub user_properties: Vec<(String, Value<'static>)>,
}

impl Message {
    /// Adds (or replaces, by exact name) a user property; returns `self` for chaining.
    pub fn with_user(mut self, name: &str, value: Value<'static>) -> Message {
        match self.user_properties.iter_mut().find(|(key, _)| key == name) {
            Some(slot) => slot.1 = value,
            None => self.user_properties.push((name.to_owned(), value)),
        }
        self
    }
}

fn text(value: &Option<String>) -> Value<'_> {
    value
        .as_deref()
        .map_or(Value::Null, |s| Value::Str(Cow::Borrowed(s)))
}

impl MessageView for Message {
    fn system_property(&self, property: SystemProperty) -> Value<'_> {
        let int = |v: Option<i64>| v.map_or(Value::Null, Value::Int);
        let time = |v: Option<Timestamp>| v.map_or(Value::Null, Value::Timestamp);
        match property {
            SystemProperty::MessageId => text(&self.message_id),
            SystemProperty::CorrelationId => text(&self.correlation_id),
            SystemProperty::To => text(&self.to),
            SystemProperty::ReplyTo => text(&self.reply_to),
            SystemProperty::Label => text(&self.label),
            SystemProperty::SessionId => text(&self.session_id),
            SystemProperty::ReplyToSessionId => text(&self.reply_to_session_id),
            SystemProperty::ContentType => text(&self.content_type),
            SystemProperty::PartitionKey => text(&self.partition_key),
            SystemProperty::ViaPartitionKey => text(&self.via_partition_key),
            SystemProperty::DeadLetterSource => text(&self.dead_letter_source),
            SystemProperty::SequenceNumber => int(self.sequence_number),
            SystemProperty::EnqueuedSequenceNumber => int(self.enqueued_sequence_number),
            SystemProperty::DeliveryCount => int(self.delivery_count),
            SystemProperty::Size => int(self.size),
            SystemProperty::EnqueuedTimeUtc => time(self.enqueued_time),
            SystemProperty::ScheduledEnqueueTimeUtc => time(self.scheduled_enqueue_time),
            SystemProperty::ExpiresAtUtc => time(self.expires_at),
            SystemProperty::TimeToLive => self.time_to_live.map_or(Value::Null, Value::TimeSpan),
        }
    }

    fn user_property(&self, name: &str) -> Option<Value<'_>> {
        let pairs = self
            .user_properties
            .iter()
            .map(|(key, value)| (key.as_str(), value));
        find_user_property(pairs, name).map(Value::reborrow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_property_names_fold_case_and_prefer_an_exact_match() {
        let message = Message::default()
            .with_user("Color", Value::Int(1))
            .with_user("color", Value::Int(2))
            .with_user("ÄRGER", Value::Int(3));
        assert_eq!(message.user_property("color"), Some(Value::Int(2)));
        assert_eq!(message.user_property("Color"), Some(Value::Int(1)));
        assert_eq!(message.user_property("COLOR"), Some(Value::Int(1)));
        assert_eq!(message.user_property("ärger"), Some(Value::Int(3)));
        assert_eq!(message.user_property("colour"), None);
        assert!(!same_name("a", "ab"));
    }

    #[test]
    fn system_property_names_fold_case_and_subject_is_label() {
        assert_eq!(
            SystemProperty::from_name("subject"),
            Some(SystemProperty::Label)
        );
        assert_eq!(
            SystemProperty::from_name("ENQUEUEDTIMEUTC"),
            Some(SystemProperty::EnqueuedTimeUtc)
        );
        assert_eq!(SystemProperty::from_name("LockToken"), None);
        for property in SystemProperty::ALL {
            assert_eq!(SystemProperty::from_name(property.name()), Some(property));
        }
    }
}
