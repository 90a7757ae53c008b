//! `TopicDescription` (§6.3): a topic's settable properties, what a request sends of them, and
//! both directions of the wire form.

use super::common::{
    AuthorizationRule, DESCRIPTION_NAMESPACES, EntityStatus, override_text, override_with,
};
use super::element_values::{boolean, count, string, time_span};
use super::error::AtomError;
use super::namespaces::SERVICE_BUS;
use super::runtime::TopicRuntimeProperties;
use super::time_span::TimeSpan;
use super::xml_tree::Element;
use super::xml_writer::XmlWriter;

/// A topic's settable properties, each with the service's default.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TopicProperties {
    /// `DefaultMessageTimeToLive`, default [`TimeSpan::MAX`].
    pub default_message_time_to_live: TimeSpan,
    /// `MaxSizeInMegabytes`, default 1024.
    pub max_size_in_megabytes: u64,
    /// `RequiresDuplicateDetection` (create-only), default false.
    pub requires_duplicate_detection: bool,
    /// `DuplicateDetectionHistoryTimeWindow`, default 10 minutes.
    pub duplicate_detection_history_time_window: TimeSpan,
    /// `EnableBatchedOperations`, default true.
    pub enable_batched_operations: bool,
    /// `AuthorizationRules`, default none.
    pub authorization_rules: Vec<AuthorizationRule>,
    /// `Status`, default `Active`.
    pub status: EntityStatus,
    /// `ForwardTo` as sent (.NET serialises it for topics too).
    pub forward_to: Option<String>,
    /// `UserMetadata`.
    pub user_metadata: Option<String>,
    /// `SupportOrdering`, default true.
    pub support_ordering: bool,
    /// `AutoDeleteOnIdle`, default [`TimeSpan::MAX`].
    pub auto_delete_on_idle: TimeSpan,
    /// `EnablePartitioning` (create-only), default false.
    pub enable_partitioning: bool,
    /// `EnableSubscriptionPartitioning`, default false.
    pub enable_subscription_partitioning: bool,
    /// `EnableExpress`, default false.
    pub enable_express: bool,
    /// `MaxMessageSizeInKilobytes`, default 256.
    pub max_message_size_in_kilobytes: u64,
}

impl Default for TopicProperties {
    fn default() -> TopicProperties {
        TopicProperties {
            default_message_time_to_live: TimeSpan::MAX,
            max_size_in_megabytes: 1024,
            requires_duplicate_detection: false,
            duplicate_detection_history_time_window: TimeSpan::from_secs(600),
            enable_batched_operations: true,
            authorization_rules: Vec::new(),
            status: EntityStatus::Active,
            forward_to: None,
            user_metadata: None,
            support_ordering: true,
            auto_delete_on_idle: TimeSpan::MAX,
            enable_partitioning: false,
            enable_subscription_partitioning: false,
            enable_express: false,
            max_message_size_in_kilobytes: 256,
        }
    }
}

/// The properties a request body carried: `None` for each element it left out (see
/// [`QueueDescription`](super::QueueDescription) for how it applies). Each field is the
/// [`TopicProperties`] field of the same name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TopicDescription {
    pub default_message_time_to_live: Option<TimeSpan>,
    pub max_size_in_megabytes: Option<u64>,
    pub requires_duplicate_detection: Option<bool>,
    pub duplicate_detection_history_time_window: Option<TimeSpan>,
    pub enable_batched_operations: Option<bool>,
    pub authorization_rules: Option<Vec<AuthorizationRule>>,
    pub status: Option<EntityStatus>,
    pub forward_to: Option<String>,
    pub user_metadata: Option<String>,
    pub support_ordering: Option<bool>,
    pub auto_delete_on_idle: Option<TimeSpan>,
    pub enable_partitioning: Option<bool>,
    pub enable_subscription_partitioning: Option<bool>,
    pub enable_express: Option<bool>,
    pub max_message_size_in_kilobytes: Option<u64>,
}

impl TopicDescription {
    /// Overrides `properties` with every property this description carries.
    pub fn apply_to(self, properties: &mut TopicProperties) {
        let p = properties;
        override_with(
            &mut p.default_message_time_to_live,
            self.default_message_time_to_live,
        );
        override_with(&mut p.max_size_in_megabytes, self.max_size_in_megabytes);
        override_with(
            &mut p.requires_duplicate_detection,
            self.requires_duplicate_detection,
        );
        override_with(
            &mut p.duplicate_detection_history_time_window,
            self.duplicate_detection_history_time_window,
        );
        override_with(
            &mut p.enable_batched_operations,
            self.enable_batched_operations,
        );
        override_with(&mut p.authorization_rules, self.authorization_rules);
        override_with(&mut p.status, self.status);
        override_text(&mut p.forward_to, self.forward_to);
        override_text(&mut p.user_metadata, self.user_metadata);
        override_with(&mut p.support_ordering, self.support_ordering);
        override_with(&mut p.auto_delete_on_idle, self.auto_delete_on_idle);
        override_with(&mut p.enable_partitioning, self.enable_partitioning);
        override_with(
            &mut p.enable_subscription_partitioning,
            self.enable_subscription_partitioning,
        );
        override_with(&mut p.enable_express, self.enable_express);
        override_with(
            &mut p.max_message_size_in_kilobytes,
            self.max_message_size_in_kilobytes,
        );
    }

    /// The properties of a topic created from this description: the defaults, overridden.
    pub fn into_properties(self) -> TopicProperties {
        let mut properties = TopicProperties::default();
        self.apply_to(&mut properties);
        properties
    }

    /// Reads the children of a `TopicDescription` element, in any order, ignoring read-only
    /// and unknown elements.
    pub(crate) fn decode(description: &Element) -> Result<TopicDescription, AtomError> {
        let mut sent = TopicDescription::default();
        for element in description.children_in(SERVICE_BUS) {
            match element.local_name() {
                "DefaultMessageTimeToLive" => {
                    sent.default_message_time_to_live = Some(time_span(element)?);
                }
                "MaxSizeInMegabytes" => sent.max_size_in_megabytes = Some(count(element)?),
                "RequiresDuplicateDetection" => {
                    sent.requires_duplicate_detection = Some(boolean(element)?);
                }
                "DuplicateDetectionHistoryTimeWindow" => {
                    sent.duplicate_detection_history_time_window = Some(time_span(element)?);
                }
                "EnableBatchedOperations" => {
                    sent.enable_batched_operations = Some(boolean(element)?);
                }
                "AuthorizationRules" => {
                    sent.authorization_rules = Some(AuthorizationRule::decode_all(element)?);
                }
                "Status" => sent.status = Some(EntityStatus::decode(element)?),
                "ForwardTo" => sent.forward_to = Some(string(element)),
                "UserMetadata" => sent.user_metadata = Some(string(element)),
                "SupportOrdering" => sent.support_ordering = Some(boolean(element)?),
                "AutoDeleteOnIdle" => sent.auto_delete_on_idle = Some(time_span(element)?),
                "EnablePartitioning" => sent.enable_partitioning = Some(boolean(element)?),
                "EnableSubscriptionPartitioning" => {
                    sent.enable_subscription_partitioning = Some(boolean(element)?);
                }
                "EnableExpress" => sent.enable_express = Some(boolean(element)?),
                "MaxMessageSizeInKilobytes" => {
                    sent.max_message_size_in_kilobytes = Some(count(element)?);
                }
                _ => {}
            }
        }
        Ok(sent)
    }
}

/// Writes a `TopicDescription` in the live service's element order (§6.3).
pub(crate) fn encode(
    writer: &mut XmlWriter,
    topic: &TopicProperties,
    runtime: &TopicRuntimeProperties,
) {
    writer.start("TopicDescription", &DESCRIPTION_NAMESPACES);
    writer.leaf_display(
        "DefaultMessageTimeToLive",
        topic.default_message_time_to_live,
    );
    writer.leaf_display("MaxSizeInMegabytes", topic.max_size_in_megabytes);
    writer.leaf_bool(
        "RequiresDuplicateDetection",
        topic.requires_duplicate_detection,
    );
    writer.leaf_display(
        "DuplicateDetectionHistoryTimeWindow",
        topic.duplicate_detection_history_time_window,
    );
    writer.leaf_bool("EnableBatchedOperations", topic.enable_batched_operations);
    writer.leaf_display("SizeInBytes", runtime.size_in_bytes);
    writer.leaf_bool("FilteringMessagesBeforePublishing", false);
    writer.leaf_bool("IsAnonymousAccessible", false);
    AuthorizationRule::encode_all(writer, &topic.authorization_rules);
    writer.leaf("Status", topic.status.as_str());
    writer.optional_leaf("ForwardTo", topic.forward_to.as_deref());
    runtime.times.encode(writer);
    writer.optional_leaf("UserMetadata", topic.user_metadata.as_deref());
    writer.leaf_bool("SupportOrdering", topic.support_ordering);
    runtime.counts.encode(writer, "d2p1");
    writer.leaf_display("SubscriptionCount", runtime.subscription_count);
    writer.leaf_display("AutoDeleteOnIdle", topic.auto_delete_on_idle);
    writer.leaf_bool("EnablePartitioning", topic.enable_partitioning);
    writer.leaf("EntityAvailabilityStatus", "Available");
    writer.leaf_bool(
        "EnableSubscriptionPartitioning",
        topic.enable_subscription_partitioning,
    );
    writer.leaf_bool("EnableExpress", topic.enable_express);
    writer.leaf_display(
        "MaxMessageSizeInKilobytes",
        topic.max_message_size_in_kilobytes,
    );
    writer.end("TopicDescription");
}
