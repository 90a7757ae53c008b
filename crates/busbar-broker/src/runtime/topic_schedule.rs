//! A topic's scheduled messages (`schedule-message` on `<topic>/$management`). As in Service
//! Bus, the topic holds them itself, under sequence numbers of its own that
//! `cancel-scheduled-message` takes: each topic has an entity for them, served by an entity task
//! like any queue. When one comes due, the task routes it to the subscriptions as a send to the
//! topic (rules evaluated then) and completes it once they hold it durably: at least once, since
//! a crash in between leaves it in both, and a refusal leaves it locked until its lock expires
//! and it is tried again.

use std::sync::Weak;
use std::time::Duration;

use busbar_amqp::message::Message;
use busbar_core::{Delivery, EntityConfig, LockToken};
use tokio::runtime::Handle;
use tokio::sync::mpsc::WeakSender;

use super::connection::store_routed;
use super::dead_letter_forwarding::post_back;
use super::inbound::new_message;
use super::live_registry::LiveRegistry;
use super::mailbox::EntityCommand;
use crate::address::EntityPath;
use crate::config::TopicConfig;
use crate::names::EntityName;

/// How long a due message whose release failed waits before it is tried again.
const RETRY_AFTER: Duration = Duration::from_secs(60);

/// The core configuration of a topic's scheduled messages: its duplicate detection and size
/// quota; their time to live applies in the subscriptions, which take them when due.
pub(crate) fn entity_config(topic: &TopicConfig) -> EntityConfig {
    EntityConfig {
        lock_duration: RETRY_AFTER,
        max_delivery_count: u32::MAX,
        default_message_ttl: None,
        dead_lettering_on_message_expiration: false,
        duplicate_detection_window: topic
            .duplicate_detection
            .enabled
            .then_some(topic.duplicate_detection.history_time_window),
        max_size_bytes: u64::from(topic.max_size_in_megabytes) * 1024 * 1024,
    }
}

/// Where a topic's due messages go, and how the answer comes back to its task.
pub(crate) struct TopicRelease {
    topic: EntityName,
    /// Weak, like `own_inbox`, so that the entity tasks end once the connections are gone.
    registry: Weak<LiveRegistry>,
    /// The topic entity's own inbox, for [`EntityCommand::ScheduledReleased`].
    own_inbox: WeakSender<EntityCommand>,
    /// The answer is posted from the store writer's thread, outside the runtime.
    runtime: Handle,
}

impl TopicRelease {
    /// Releases to the subscriptions of `topic`; must be created on the runtime.
    pub(crate) fn new(
        topic: EntityName,
        registry: Weak<LiveRegistry>,
        own_inbox: WeakSender<EntityCommand>,
    ) -> Self {
        Self {
            topic,
            registry,
            own_inbox,
            runtime: Handle::current(),
        }
    }

    /// Stores the due message (locked by the topic entity under `token`) in the subscriptions;
    /// the outcome comes back as [`EntityCommand::ScheduledReleased`].
    pub(crate) fn release(&self, delivery: &Delivery, token: LockToken) {
        let copy = match Message::parse(delivery.payload.clone()).and_then(new_message) {
            Ok(copy) => copy,
            Err(error) => {
                tracing::warn!(topic = %self.topic, %error, sequence = delivery.sequence.value(), "scheduled message cannot be decoded; not released");
                return;
            }
        };
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        let targets = registry
            .current()
            .route(&EntityPath::QueueOrTopic(self.topic.clone()), vec![copy]);
        let own_inbox = self.own_inbox.clone();
        let runtime = self.runtime.clone();
        store_routed(
            targets,
            Box::new(move |result| {
                let command = EntityCommand::ScheduledReleased {
                    token,
                    result: result.map(drop),
                };
                post_back(&own_inbox, &runtime, command);
            }),
        );
    }
}
