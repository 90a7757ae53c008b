//! The administration API of the `busbar` binary: busbar-admin's HTTP server answering through
//! the broker's control interface, with the namespace keys `$cbs` checks. Queues are served in
//! full; topics, subscriptions and rules are refused with a 400 that says so, until the broker
//! can change them while it runs.

use std::collections::BTreeMap;
use std::time::Duration;

use busbar_admin::atom::{
    EntityDescription, EntityTimes, Entry, EntryContent, MessageCountDetails, MessagingSku,
    NamespaceInfo, PageRequest, QueueProperties, QueueRuntimeProperties, RuleProperties,
    SubscriptionProperties, TimeSpan, Timestamp, TopicProperties, forward_target_entity,
    parse_entry, write_entry,
};
use busbar_admin::auth::Authorization;
use busbar_admin::control::{
    ControlError, ControlResult, NamespaceControl, Page, QueueEntry, RuleEntry, SubscriptionEntry,
    TopicEntry,
};
use busbar_broker::EntityName;
use busbar_broker::auth::{SasKeys, SasToken};
use busbar_broker::config::{DeliverySettings, DuplicateDetection, QueueConfig};
use busbar_broker::runtime::{self, Control, QueueState};

/// The key under which a queue keeps its whole administration-API description, so that every
/// property a client set reads back as it was set.
const DESCRIPTION: &str = "QueueDescription";
/// Why topics, subscriptions and rules are refused.
const NOT_YET: &str = "topics, subscriptions and rules cannot be created, changed or listed \
    through the administration API of this Busbar version yet; declare them in Config.json";

/// Requests carrying a SharedAccessSignature that the namespace keys validate.
pub(crate) fn authorization() -> Authorization {
    let keys = SasKeys::emulator();
    Authorization::SharedAccessSignature(std::sync::Arc::new(
        move |header: &str, now: i64| -> Result<(), String> {
            let token = SasToken::parse(header).map_err(|error| error.to_string())?;
            keys.verify(&token, now).map_err(|error| error.to_string())
        },
    ))
}

/// The broker's namespace as the administration API sees it.
pub(crate) struct BrokerNamespace {
    control: Control,
    name: String,
    started: Timestamp,
}

impl BrokerNamespace {
    pub(crate) fn new(control: Control, name: String, started_unix_millis: i64) -> Self {
        Self {
            control,
            name,
            started: Timestamp::from_unix_millis(started_unix_millis),
        }
    }
}

impl BrokerNamespace {
    /// Not found when no topic has the name (the HTTP layer asks for a topic when no queue has
    /// it); refused as not yet served otherwise.
    async fn existing_topic<T>(&self, name: &str) -> ControlResult<T> {
        match self.control.topic_exists(name).await {
            Ok(true) => not_yet(),
            Ok(false) => Err(ControlError::NotFound),
            Err(error) => Err(control_error(error)),
        }
    }
}

impl NamespaceControl for BrokerNamespace {
    async fn namespace(&self) -> ControlResult<NamespaceInfo> {
        Ok(NamespaceInfo {
            name: self.name.clone(),
            created_time: self.started,
            modified_time: self.started,
            messaging_sku: MessagingSku::Standard,
            messaging_units: None,
        })
    }

    async fn list_queues(&self, page: PageRequest) -> ControlResult<Page<QueueEntry>> {
        let queues = self.control.queues().await.map_err(control_error)?;
        let total = queues.len();
        let items = queues
            .into_iter()
            .skip(page.window(total).start)
            .take(page.window(total).len())
            .map(queue_entry)
            .collect();
        Ok(Page { items, total })
    }

    async fn queue(&self, name: &str) -> ControlResult<QueueEntry> {
        self.control
            .queue(name)
            .await
            .map(queue_entry)
            .map_err(control_error)
    }

    async fn create_queue(
        &self,
        name: &str,
        properties: QueueProperties,
    ) -> ControlResult<QueueEntry> {
        let (config, kept) = queue_config(name, &properties);
        self.control
            .create_queue(config, kept)
            .await
            .map(queue_entry)
            .map_err(control_error)
    }

    async fn update_queue(
        &self,
        name: &str,
        properties: QueueProperties,
    ) -> ControlResult<QueueEntry> {
        let (config, kept) = queue_config(name, &properties);
        self.control
            .update_queue(config, kept)
            .await
            .map(queue_entry)
            .map_err(control_error)
    }

    async fn delete_queue(&self, name: &str) -> ControlResult<()> {
        self.control.delete_queue(name).await.map_err(control_error)
    }

    async fn list_topics(&self, _page: PageRequest) -> ControlResult<Page<TopicEntry>> {
        not_yet()
    }

    async fn topic(&self, name: &str) -> ControlResult<TopicEntry> {
        self.existing_topic(name).await
    }

    async fn create_topic(&self, _: &str, _: TopicProperties) -> ControlResult<TopicEntry> {
        not_yet()
    }

    async fn update_topic(&self, _: &str, _: TopicProperties) -> ControlResult<TopicEntry> {
        not_yet()
    }

    async fn delete_topic(&self, name: &str) -> ControlResult<()> {
        self.existing_topic(name).await
    }

    async fn list_subscriptions(
        &self,
        _topic: &str,
        _page: PageRequest,
    ) -> ControlResult<Page<SubscriptionEntry>> {
        not_yet()
    }

    async fn subscription(&self, _topic: &str, _name: &str) -> ControlResult<SubscriptionEntry> {
        not_yet()
    }

    async fn create_subscription(
        &self,
        _: &str,
        _: &str,
        _: SubscriptionProperties,
        _: RuleProperties,
    ) -> ControlResult<SubscriptionEntry> {
        not_yet()
    }

    async fn update_subscription(
        &self,
        _: &str,
        _: &str,
        _: SubscriptionProperties,
    ) -> ControlResult<SubscriptionEntry> {
        not_yet()
    }

    async fn delete_subscription(&self, _topic: &str, _name: &str) -> ControlResult<()> {
        not_yet()
    }

    async fn list_rules(&self, _: &str, _: &str, _: PageRequest) -> ControlResult<Page<RuleEntry>> {
        not_yet()
    }

    async fn rule(&self, _: &str, _: &str, _: &str) -> ControlResult<RuleEntry> {
        not_yet()
    }

    async fn create_rule(&self, _: &str, _: &str, _: RuleProperties) -> ControlResult<RuleEntry> {
        not_yet()
    }

    async fn update_rule(&self, _: &str, _: &str, _: RuleProperties) -> ControlResult<RuleEntry> {
        not_yet()
    }

    async fn delete_rule(&self, _: &str, _: &str, _: &str) -> ControlResult<()> {
        not_yet()
    }
}

fn not_yet<T>() -> ControlResult<T> {
    Err(ControlError::Invalid {
        detail: NOT_YET.to_owned(),
    })
}

fn control_error(error: runtime::ControlError) -> ControlError {
    match error {
        runtime::ControlError::NotFound(_) => ControlError::NotFound,
        runtime::ControlError::AlreadyExists(_) => ControlError::AlreadyExists,
        runtime::ControlError::Invalid(detail) => ControlError::Invalid { detail },
        runtime::ControlError::Unavailable(detail) => ControlError::Unavailable { detail },
    }
}

/// The broker's definition of a queue the API describes, and the description itself, kept.
fn queue_config(
    name: &str,
    properties: &QueueProperties,
) -> (QueueConfig, BTreeMap<String, String>) {
    let entity = |target: &Option<String>| {
        target
            .as_deref()
            .map(|value| EntityName::new(forward_target_entity(value)))
    };
    let config = QueueConfig {
        name: EntityName::new(name),
        delivery: DeliverySettings {
            lock_duration: properties.lock_duration.to_std(),
            max_delivery_count: properties.max_delivery_count,
            requires_session: properties.requires_session,
            default_message_time_to_live: properties.default_message_time_to_live.to_std(),
            dead_lettering_on_message_expiration: properties.dead_lettering_on_message_expiration,
            forward_to: entity(&properties.forward_to),
            forward_dead_lettered_messages_to: entity(
                &properties.forward_dead_lettered_messages_to,
            ),
        },
        duplicate_detection: DuplicateDetection {
            enabled: properties.requires_duplicate_detection,
            history_time_window: properties.duplicate_detection_history_time_window.to_std(),
        },
        max_size_in_megabytes: u32::try_from(properties.max_size_in_megabytes).unwrap_or(u32::MAX),
    };
    // Only the description is kept: the runtime part is a placeholder the reader ignores.
    let epoch = Timestamp::from_unix_millis(0);
    let runtime = QueueRuntimeProperties {
        size_in_bytes: 0,
        message_count: 0,
        counts: MessageCountDetails::default(),
        times: EntityTimes::all_at(epoch),
    };
    let entry = Entry {
        id: name,
        title: name,
        published: epoch,
        updated: epoch,
        author: None,
        content: EntryContent::Queue(properties, &runtime),
    };
    let kept = BTreeMap::from([(DESCRIPTION.to_owned(), write_entry(&entry))]);
    (config, kept)
}

/// A queue as the API describes it: as its client set it, or (for a queue of `Config.json`) as
/// its definition says.
fn queue_entry(state: QueueState) -> QueueEntry {
    let properties = state
        .kept
        .get(DESCRIPTION)
        .and_then(|entry| match parse_entry(entry.as_bytes()) {
            Ok(EntityDescription::Queue(description)) => Some(description.into_properties()),
            _ => None,
        })
        .unwrap_or_else(|| configured_properties(&state.config));
    let counts = MessageCountDetails {
        active: count(state.counts.active),
        dead_letter: count(state.counts.dead_lettered),
        scheduled: count(state.counts.scheduled),
        transfer: 0,
        transfer_dead_letter: 0,
    };
    let total = counts.active + counts.dead_letter + counts.scheduled;
    let times = EntityTimes {
        created_at: Timestamp::from_unix_millis(state.created_at),
        updated_at: Timestamp::from_unix_millis(state.updated_at),
        accessed_at: None,
    };
    QueueEntry {
        name: state.config.name.to_string(),
        properties,
        runtime: QueueRuntimeProperties {
            size_in_bytes: state.counts.size_bytes,
            message_count: total,
            counts,
            times,
        },
    }
}

/// The description of a queue defined in `Config.json`.
fn configured_properties(config: &QueueConfig) -> QueueProperties {
    let span = |duration: Duration| {
        TimeSpan::from_millis(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
    };
    QueueProperties {
        lock_duration: span(config.delivery.lock_duration),
        max_size_in_megabytes: u64::from(config.max_size_in_megabytes),
        requires_duplicate_detection: config.duplicate_detection.enabled,
        requires_session: config.delivery.requires_session,
        default_message_time_to_live: span(config.delivery.default_message_time_to_live)
            .min(TimeSpan::MAX),
        dead_lettering_on_message_expiration: config.delivery.dead_lettering_on_message_expiration,
        duplicate_detection_history_time_window: span(
            config.duplicate_detection.history_time_window,
        ),
        max_delivery_count: config.delivery.max_delivery_count,
        forward_to: config.delivery.forward_to.as_ref().map(ToString::to_string),
        forward_dead_lettered_messages_to: config
            .delivery
            .forward_dead_lettered_messages_to
            .as_ref()
            .map(ToString::to_string),
        ..QueueProperties::default()
    }
}

fn count(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}
