//! `QueueDescription` (§6.2): a queue's settable properties, what a request sends of them, and
//! both directions of the wire form.

use super::common::{
    AuthorizationRule, DESCRIPTION_NAMESPACES, EntityStatus, override_text, override_with,
};
use super::element_values::{boolean, count, string, time_span};
use super::error::AtomError;
use super::namespaces::SERVICE_BUS;
use super::runtime::QueueRuntimeProperties;
use super::time_span::TimeSpan;
use super::xml_tree::Element;
use super::xml_writer::XmlWriter;

/// A queue's settable properties, each with the service's default.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueueProperties {
    /// `LockDuration`, default 1 minute.
    pub lock_duration: TimeSpan,
    /// `MaxSizeInMegabytes`, default 1024.
    pub max_size_in_megabytes: u64,
    /// `RequiresDuplicateDetection` (create-only), default false.
    pub requires_duplicate_detection: bool,
    /// `RequiresSession` (create-only), default false.
    pub requires_session: bool,
    /// `DefaultMessageTimeToLive`, default [`TimeSpan::MAX`].
    pub default_message_time_to_live: TimeSpan,
    /// `DeadLetteringOnMessageExpiration`, default false.
    pub dead_lettering_on_message_expiration: bool,
    /// `DuplicateDetectionHistoryTimeWindow`, default 10 minutes.
    pub duplicate_detection_history_time_window: TimeSpan,
    /// `MaxDeliveryCount`, default 10.
    pub max_delivery_count: u32,
    /// `EnableBatchedOperations`, default true.
    pub enable_batched_operations: bool,
    /// `AuthorizationRules`, default none.
    pub authorization_rules: Vec<AuthorizationRule>,
    /// `Status`, default `Active`.
    pub status: EntityStatus,
    /// `ForwardTo` as sent (see [`forward_target_entity`](super::forward_target_entity)).
    pub forward_to: Option<String>,
    /// `UserMetadata`.
    pub user_metadata: Option<String>,
    /// `SupportOrdering`, default true.
    pub support_ordering: bool,
    /// `AutoDeleteOnIdle`, default [`TimeSpan::MAX`].
    pub auto_delete_on_idle: TimeSpan,
    /// `EnablePartitioning` (create-only), default false.
    pub enable_partitioning: bool,
    /// `ForwardDeadLetteredMessagesTo` as sent.
    pub forward_dead_lettered_messages_to: Option<String>,
    /// `EnableExpress`, default false.
    pub enable_express: bool,
    /// `MaxMessageSizeInKilobytes`, default 256 (the standard tier's limit).
    pub max_message_size_in_kilobytes: u64,
}

impl Default for QueueProperties {
    fn default() -> QueueProperties {
        QueueProperties {
            lock_duration: TimeSpan::from_secs(60),
            max_size_in_megabytes: 1024,
            requires_duplicate_detection: false,
            requires_session: false,
            default_message_time_to_live: TimeSpan::MAX,
            dead_lettering_on_message_expiration: false,
            duplicate_detection_history_time_window: TimeSpan::from_secs(600),
            max_delivery_count: 10,
            enable_batched_operations: true,
            authorization_rules: Vec::new(),
            status: EntityStatus::Active,
            forward_to: None,
            user_metadata: None,
            support_ordering: true,
            auto_delete_on_idle: TimeSpan::MAX,
            enable_partitioning: false,
            forward_dead_lettered_messages_to: None,
            enable_express: false,
            max_message_size_in_kilobytes: 256,
        }
    }
}

/// The properties a request body carried: `None` for each element it left out. A create
/// applies it to [`QueueProperties::default`], an update to the stored properties (the live
/// service keeps what an update leaves out). A `ForwardTo`, `ForwardDeadLetteredMessagesTo` or
/// `UserMetadata` sent blank removes it. Each field is the [`QueueProperties`] field of the
/// same name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct QueueDescription {
    pub lock_duration: Option<TimeSpan>,
    pub max_size_in_megabytes: Option<u64>,
    pub requires_duplicate_detection: Option<bool>,
    pub requires_session: Option<bool>,
    pub default_message_time_to_live: Option<TimeSpan>,
    pub dead_lettering_on_message_expiration: Option<bool>,
    pub duplicate_detection_history_time_window: Option<TimeSpan>,
    pub max_delivery_count: Option<u32>,
    pub enable_batched_operations: Option<bool>,
    pub authorization_rules: Option<Vec<AuthorizationRule>>,
    pub status: Option<EntityStatus>,
    pub forward_to: Option<String>,
    pub user_metadata: Option<String>,
    pub support_ordering: Option<bool>,
    pub auto_delete_on_idle: Option<TimeSpan>,
    pub enable_partitioning: Option<bool>,
    pub forward_dead_lettered_messages_to: Option<String>,
    pub enable_express: Option<bool>,
    pub max_message_size_in_kilobytes: Option<u64>,
}

impl QueueDescription {
    /// Overrides `properties` with every property this description carries.
    pub fn apply_to(self, properties: &mut QueueProperties) {
        let p = properties;
        override_with(&mut p.lock_duration, self.lock_duration);
        override_with(&mut p.max_size_in_megabytes, self.max_size_in_megabytes);
        override_with(
            &mut p.requires_duplicate_detection,
            self.requires_duplicate_detection,
        );
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
            &mut p.duplicate_detection_history_time_window,
            self.duplicate_detection_history_time_window,
        );
        override_with(&mut p.max_delivery_count, self.max_delivery_count);
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
        override_text(
            &mut p.forward_dead_lettered_messages_to,
            self.forward_dead_lettered_messages_to,
        );
        override_with(&mut p.enable_express, self.enable_express);
        override_with(
            &mut p.max_message_size_in_kilobytes,
            self.max_message_size_in_kilobytes,
        );
    }

    /// The properties of a queue created from this description: the defaults, overridden.
    pub fn into_properties(self) -> QueueProperties {
        let mut properties = QueueProperties::default();
        self.apply_to(&mut properties);
        properties
    }

    /// Reads the children of a `QueueDescription` element, in any order. Read-only elements
    /// (which Python's update re-sends: `SizeInBytes`, `CountDetails`, …) and unknown ones are
    /// ignored.
    pub(crate) fn decode(description: &Element) -> Result<QueueDescription, AtomError> {
        let mut sent = QueueDescription::default();
        for element in description.children_in(SERVICE_BUS) {
            match element.local_name() {
                "LockDuration" => sent.lock_duration = Some(time_span(element)?),
                "MaxSizeInMegabytes" => sent.max_size_in_megabytes = Some(count(element)?),
                "RequiresDuplicateDetection" => {
                    sent.requires_duplicate_detection = Some(boolean(element)?);
                }
                "RequiresSession" => sent.requires_session = Some(boolean(element)?),
                "DefaultMessageTimeToLive" => {
                    sent.default_message_time_to_live = Some(time_span(element)?);
                }
                "DeadLetteringOnMessageExpiration" => {
                    sent.dead_lettering_on_message_expiration = Some(boolean(element)?);
                }
                "DuplicateDetectionHistoryTimeWindow" => {
                    sent.duplicate_detection_history_time_window = Some(time_span(element)?);
                }
                "MaxDeliveryCount" => sent.max_delivery_count = Some(count(element)?),
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
                "ForwardDeadLetteredMessagesTo" => {
                    sent.forward_dead_lettered_messages_to = Some(string(element));
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

/// Writes a `QueueDescription` in the live service's element order (§6.2), which
/// DataContract-based clients depend on.
pub(crate) fn encode(
    writer: &mut XmlWriter,
    queue: &QueueProperties,
    runtime: &QueueRuntimeProperties,
) {
    writer.start("QueueDescription", &DESCRIPTION_NAMESPACES);
    writer.leaf_display("LockDuration", queue.lock_duration);
    writer.leaf_display("MaxSizeInMegabytes", queue.max_size_in_megabytes);
    writer.leaf_bool(
        "RequiresDuplicateDetection",
        queue.requires_duplicate_detection,
    );
    writer.leaf_bool("RequiresSession", queue.requires_session);
    writer.leaf_display(
        "DefaultMessageTimeToLive",
        queue.default_message_time_to_live,
    );
    writer.leaf_bool(
        "DeadLetteringOnMessageExpiration",
        queue.dead_lettering_on_message_expiration,
    );
    writer.leaf_display(
        "DuplicateDetectionHistoryTimeWindow",
        queue.duplicate_detection_history_time_window,
    );
    writer.leaf_display("MaxDeliveryCount", queue.max_delivery_count);
    writer.leaf_bool("EnableBatchedOperations", queue.enable_batched_operations);
    writer.leaf_display("SizeInBytes", runtime.size_in_bytes);
    writer.leaf_display("MessageCount", runtime.message_count);
    writer.leaf_bool("IsAnonymousAccessible", false);
    AuthorizationRule::encode_all(writer, &queue.authorization_rules);
    writer.leaf("Status", queue.status.as_str());
    writer.optional_leaf("ForwardTo", queue.forward_to.as_deref());
    runtime.times.encode(writer);
    writer.optional_leaf("UserMetadata", queue.user_metadata.as_deref());
    writer.leaf_bool("SupportOrdering", queue.support_ordering);
    runtime.counts.encode(writer, "d2p1");
    writer.leaf_display("AutoDeleteOnIdle", queue.auto_delete_on_idle);
    writer.leaf_bool("EnablePartitioning", queue.enable_partitioning);
    writer.leaf("EntityAvailabilityStatus", "Available");
    writer.optional_leaf(
        "ForwardDeadLetteredMessagesTo",
        queue.forward_dead_lettered_messages_to.as_deref(),
    );
    writer.leaf_bool("EnableExpress", queue.enable_express);
    writer.leaf_display(
        "MaxMessageSizeInKilobytes",
        queue.max_message_size_in_kilobytes,
    );
    writer.end("QueueDescription");
}
