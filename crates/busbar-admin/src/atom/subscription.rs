//! `SubscriptionDescription` (§6.4): a subscription's settable properties, what a request sends
//! of them (including a create's `DefaultRuleDescription`), and both directions of the wire form.

use super::common::{DESCRIPTION_NAMESPACES, EntityStatus, override_text, override_with};
use super::element_values::{boolean, count, string, time_span};
use super::error::AtomError;
use super::namespaces::SERVICE_BUS;
use super::rule::RuleDescription;
use super::runtime::SubscriptionRuntimeProperties;
use super::time_span::TimeSpan;
use super::xml_tree::Element;
use super::xml_writer::XmlWriter;

/// A subscription's settable properties, each with the service's default.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SubscriptionProperties {
    /// `LockDuration`, default 1 minute.
    pub lock_duration: TimeSpan,
    /// `RequiresSession` (create-only), default false.
    pub requires_session: bool,
    /// `DefaultMessageTimeToLive`, default [`TimeSpan::MAX`].
    pub default_message_time_to_live: TimeSpan,
    /// `DeadLetteringOnMessageExpiration`, default false.
    pub dead_lettering_on_message_expiration: bool,
    /// `DeadLetteringOnFilterEvaluationExceptions`, default true.
    pub dead_lettering_on_filter_evaluation_exceptions: bool,
    /// `MaxDeliveryCount`, default 10.
    pub max_delivery_count: u32,
    /// `EnableBatchedOperations`, default true.
    pub enable_batched_operations: bool,
    /// `Status`, default `Active`.
    pub status: EntityStatus,
    /// `ForwardTo` as sent (see [`forward_target_entity`](super::forward_target_entity)).
    pub forward_to: Option<String>,
    /// `UserMetadata`.
    pub user_metadata: Option<String>,
    /// `ForwardDeadLetteredMessagesTo` as sent.
    pub forward_dead_lettered_messages_to: Option<String>,
    /// `AutoDeleteOnIdle`, default [`TimeSpan::MAX`].
    pub auto_delete_on_idle: TimeSpan,
}

impl Default for SubscriptionProperties {
    fn default() -> SubscriptionProperties {
        SubscriptionProperties {
            lock_duration: TimeSpan::from_secs(60),
            requires_session: false,
            default_message_time_to_live: TimeSpan::MAX,
            dead_lettering_on_message_expiration: false,
            dead_lettering_on_filter_evaluation_exceptions: true,
            max_delivery_count: 10,
            enable_batched_operations: true,
            status: EntityStatus::Active,
            forward_to: None,
            user_metadata: None,
            forward_dead_lettered_messages_to: None,
            auto_delete_on_idle: TimeSpan::MAX,
        }
    }
}

/// The properties a request body carried: `None` for each element it left out (see
/// [`QueueDescription`](super::QueueDescription) for how it applies). Each field but
/// `default_rule` is the [`SubscriptionProperties`] field of the same name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SubscriptionDescription {
    pub lock_duration: Option<TimeSpan>,
    pub requires_session: Option<bool>,
    pub default_message_time_to_live: Option<TimeSpan>,
    pub dead_lettering_on_message_expiration: Option<bool>,
    pub dead_lettering_on_filter_evaluation_exceptions: Option<bool>,
    pub max_delivery_count: Option<u32>,
    pub enable_batched_operations: Option<bool>,
    pub status: Option<EntityStatus>,
    pub forward_to: Option<String>,
    pub user_metadata: Option<String>,
    pub forward_dead_lettered_messages_to: Option<String>,
    pub auto_delete_on_idle: Option<TimeSpan>,
    /// `DefaultRuleDescription`: the rule a create puts in place of `$Default`.
    pub default_rule: Option<RuleDescription>,
}

impl SubscriptionDescription {
    /// Overrides `properties` with every property this description carries (the default rule
    /// is not a property: a create reads it from [`SubscriptionDescription::default_rule`]).
    pub fn apply_to(self, properties: &mut SubscriptionProperties) {
        let p = properties;
        override_with(&mut p.lock_duration, self.lock_duration);
        override_with(&mut p.requires_session, self.requires_session);
        override_with(
            &mut p.default_message_time_to_live,
            self.default_message_time_to_live,
        );
        override_with(
            &mut p.dead_lettering_on_message_expiration,
            self.dead_lettering_on_message_expiration,
        );
        override_with(
            &mut p.dead_lettering_on_filter_evaluation_exceptions,
            self.dead_lettering_on_filter_evaluation_exceptions,
        );
        override_with(&mut p.max_delivery_count, self.max_delivery_count);
        override_with(
            &mut p.enable_batched_operations,
            self.enable_batched_operations,
        );
        override_with(&mut p.status, self.status);
        override_text(&mut p.forward_to, self.forward_to);
        override_text(&mut p.user_metadata, self.user_metadata);
        override_text(
            &mut p.forward_dead_lettered_messages_to,
            self.forward_dead_lettered_messages_to,
        );
        override_with(&mut p.auto_delete_on_idle, self.auto_delete_on_idle);
    }

    /// The properties of a subscription created from this description: the defaults,
    /// overridden.
    pub fn into_properties(self) -> SubscriptionProperties {
        let mut properties = SubscriptionProperties::default();
        self.apply_to(&mut properties);
        properties
    }

    /// Reads the children of a `SubscriptionDescription` element, in any order (JS sends
    /// `DefaultRuleDescription` first, Go last), ignoring read-only and unknown elements.
    pub(crate) fn decode(description: &Element) -> Result<SubscriptionDescription, AtomError> {
        let mut sent = SubscriptionDescription::default();
        for element in description.children_in(SERVICE_BUS) {
            match element.local_name() {
                "LockDuration" => sent.lock_duration = Some(time_span(element)?),
                "RequiresSession" => sent.requires_session = Some(boolean(element)?),
                "DefaultMessageTimeToLive" => {
                    sent.default_message_time_to_live = Some(time_span(element)?);
                }
                "DeadLetteringOnMessageExpiration" => {
                    sent.dead_lettering_on_message_expiration = Some(boolean(element)?);
                }
                "DeadLetteringOnFilterEvaluationExceptions" => {
                    sent.dead_lettering_on_filter_evaluation_exceptions = Some(boolean(element)?);
                }
                "MaxDeliveryCount" => sent.max_delivery_count = Some(count(element)?),
                "EnableBatchedOperations" => {
                    sent.enable_batched_operations = Some(boolean(element)?);
                }
                "Status" => sent.status = Some(EntityStatus::decode(element)?),
                "ForwardTo" => sent.forward_to = Some(string(element)),
                "UserMetadata" => sent.user_metadata = Some(string(element)),
                "ForwardDeadLetteredMessagesTo" => {
                    sent.forward_dead_lettered_messages_to = Some(string(element));
                }
                "AutoDeleteOnIdle" => sent.auto_delete_on_idle = Some(time_span(element)?),
                "DefaultRuleDescription" => {
                    sent.default_rule = Some(RuleDescription::decode(element)?);
                }
                _ => {}
            }
        }
        Ok(sent)
    }
}

/// Writes a `SubscriptionDescription` in the live service's element order (§6.4).
pub(crate) fn encode(
    writer: &mut XmlWriter,
    subscription: &SubscriptionProperties,
    runtime: &SubscriptionRuntimeProperties,
) {
    let s = subscription;
    writer.start("SubscriptionDescription", &DESCRIPTION_NAMESPACES);
    writer.leaf_display("LockDuration", s.lock_duration);
    writer.leaf_bool("RequiresSession", s.requires_session);
    writer.leaf_display("DefaultMessageTimeToLive", s.default_message_time_to_live);
    writer.leaf_bool(
        "DeadLetteringOnMessageExpiration",
        s.dead_lettering_on_message_expiration,
    );
    writer.leaf_bool(
        "DeadLetteringOnFilterEvaluationExceptions",
        s.dead_lettering_on_filter_evaluation_exceptions,
    );
    writer.leaf_display("MessageCount", runtime.message_count);
    writer.leaf_display("MaxDeliveryCount", s.max_delivery_count);
    writer.leaf_bool("EnableBatchedOperations", s.enable_batched_operations);
    writer.leaf("Status", s.status.as_str());
    writer.optional_leaf("ForwardTo", s.forward_to.as_deref());
    runtime.times.encode(writer);
    writer.optional_leaf("UserMetadata", s.user_metadata.as_deref());
    writer.optional_leaf(
        "ForwardDeadLetteredMessagesTo",
        s.forward_dead_lettered_messages_to.as_deref(),
    );
    runtime.counts.encode(writer, "d3p1");
    writer.leaf_display("AutoDeleteOnIdle", s.auto_delete_on_idle);
    writer.leaf("EntityAvailabilityStatus", "Available");
    writer.end("SubscriptionDescription");
}
