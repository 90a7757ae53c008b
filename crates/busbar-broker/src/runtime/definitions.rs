//! Entity definitions made or changed while the broker runs (queues, topics, subscriptions),
//! kept durable as metadata of the registry's store entity so that a restart brings them back
//! with their messages. At start-up they are merged with `Config.json`: a persisted definition
//! wins over the file's, and an entity only the file names is created as the file says. A
//! subscription's rules, once changed (add-rule, remove-rule, the administration API), are kept
//! by `rule_changes` and override the ones its definition started with.

use std::collections::BTreeMap;

use busbar_store::{Record, Recovered};
use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::registry::REGISTRY_ENTITY;
use crate::config::{NamespaceConfig, QueueConfig, SubscriptionConfig, TopicConfig};
use crate::names::EntityName;

/// An entity's definition and when it was made and last changed (Unix milliseconds).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Definition<C> {
    /// The entity's properties.
    pub(crate) config: C,
    /// Properties the broker keeps for the management plane without acting on them (name →
    /// value as the administration API writes it, e.g. `UserMetadata`).
    #[serde(default)]
    pub(crate) kept: BTreeMap<String, String>,
    /// When it was created.
    pub(crate) created_at: i64,
    /// When its definition last changed.
    pub(crate) updated_at: i64,
}

/// A queue's definition.
pub(crate) type QueueDefinition = Definition<QueueConfig>;
/// A topic's definition (its `subscriptions` are kept apart, each on its own).
pub(crate) type TopicDefinition = Definition<TopicConfig>;
/// A subscription's definition (its `rules` are the ones it was created with).
pub(crate) type SubscriptionDefinition = Definition<SubscriptionConfig>;

/// A subscription's key: its topic and its name.
pub(crate) type SubscriptionKey = (EntityName, EntityName);

impl<C> Definition<C> {
    /// A definition made now (or, for `Config.json`, dated from start-up).
    pub(crate) fn new(config: C, kept: BTreeMap<String, String>, now: i64) -> Self {
        Self {
            config,
            kept,
            created_at: now,
            updated_at: now,
        }
    }
}

/// The kinds of definition and the prefixes of their metadata keys (followed by the lower-case
/// name, `topic/subscription` for subscriptions).
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Queue,
    Topic,
    Subscription,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Queue => "queue-def:",
            Kind::Topic => "topic-def:",
            Kind::Subscription => "subscription-def:",
        }
    }

    fn key(self, name: &str) -> Bytes {
        Bytes::from(format!("{}{}", self.prefix(), name.to_ascii_lowercase()))
    }
}

/// The record that persists `definition` of the entity `name` (`topic/subscription` for one).
pub(crate) fn stored<C: Serialize>(kind: Kind, name: &str, definition: &Definition<C>) -> Record {
    let value = serde_json::to_vec(definition)
        // Plain data with string keys: serialising it cannot fail.
        .unwrap_or_default();
    Record::Meta {
        entity: REGISTRY_ENTITY,
        key: kind.key(name),
        value: Some(Bytes::from(value)),
    }
}

/// The record that forgets the definition of `name`.
pub(crate) fn forgotten(kind: Kind, name: &str) -> Record {
    Record::Meta {
        entity: REGISTRY_ENTITY,
        key: kind.key(name),
        value: None,
    }
}

/// The persisted definitions of one kind.
fn persisted<C: DeserializeOwned>(recovered: &Recovered, kind: Kind) -> Vec<Definition<C>> {
    recovered
        .meta
        .iter()
        .filter(|(key, _)| {
            key.entity == REGISTRY_ENTITY && key.key.starts_with(kind.prefix().as_bytes())
        })
        .filter_map(|(key, value)| {
            serde_json::from_slice(value)
                .inspect_err(|error| {
                    tracing::error!(%error, key = %String::from_utf8_lossy(&key.key), "persisted definition unreadable; ignored");
                })
                .ok()
        })
        .collect()
}

/// Every definition of the namespace, as the control interface changes them.
#[derive(Debug, Default)]
pub(crate) struct Namespace {
    pub(crate) queues: BTreeMap<EntityName, QueueDefinition>,
    pub(crate) topics: BTreeMap<EntityName, TopicDefinition>,
    pub(crate) subscriptions: BTreeMap<SubscriptionKey, SubscriptionDefinition>,
}

impl Namespace {
    /// The namespace `name` these definitions make, entities in name order.
    pub(crate) fn config(&self, name: &str) -> NamespaceConfig {
        let topics = self
            .topics
            .values()
            .map(|topic| TopicConfig {
                subscriptions: self
                    .subscriptions
                    .iter()
                    .filter(|((owner, _), _)| *owner == topic.config.name)
                    .map(|(_, subscription)| subscription.config.clone())
                    .collect(),
                ..topic.config.clone()
            })
            .collect();
        NamespaceConfig {
            name: name.to_owned(),
            queues: self
                .queues
                .values()
                .map(|queue| queue.config.clone())
                .collect(),
            topics,
        }
    }
}

/// `configured` with every persisted definition applied (those only the file names are dated
/// `now`).
pub(crate) fn merged(configured: &NamespaceConfig, recovered: &Recovered, now: i64) -> Namespace {
    let mut namespace = Namespace::default();
    for queue in &configured.queues {
        let definition = Definition::new(queue.clone(), BTreeMap::new(), now);
        namespace.queues.insert(queue.name.clone(), definition);
    }
    for topic in &configured.topics {
        for subscription in &topic.subscriptions {
            let key = (topic.name.clone(), subscription.name.clone());
            let definition = Definition::new(subscription.clone(), BTreeMap::new(), now);
            namespace.subscriptions.insert(key, definition);
        }
        let topic = TopicConfig {
            subscriptions: Vec::new(),
            ..topic.clone()
        };
        let definition = Definition::new(topic.clone(), BTreeMap::new(), now);
        namespace.topics.insert(topic.name, definition);
    }
    for queue in persisted::<QueueConfig>(recovered, Kind::Queue) {
        namespace.queues.insert(queue.config.name.clone(), queue);
    }
    for topic in persisted::<TopicConfig>(recovered, Kind::Topic) {
        namespace.topics.insert(topic.config.name.clone(), topic);
    }
    // Stored as `{topic, subscription}` pairs: the definition itself names only the latter.
    for (topic, subscription) in
        persisted::<(EntityName, SubscriptionConfig)>(recovered, Kind::Subscription)
            .into_iter()
            .map(split_subscription)
    {
        if namespace.topics.contains_key(&topic) {
            let key = (topic, subscription.config.name.clone());
            namespace.subscriptions.insert(key, subscription);
        } else {
            tracing::warn!(%topic, subscription = %subscription.config.name, "persisted subscription of a missing topic; ignored");
        }
    }
    namespace
}

/// The record form of a subscription's definition: its topic travels with it.
pub(crate) fn subscription_record(
    topic: &EntityName,
    definition: &SubscriptionDefinition,
) -> Record {
    let paired = Definition {
        config: (topic.clone(), definition.config.clone()),
        kept: definition.kept.clone(),
        created_at: definition.created_at,
        updated_at: definition.updated_at,
    };
    stored(
        Kind::Subscription,
        &subscription_name(topic, &definition.config.name),
        &paired,
    )
}

/// The key name of a subscription's definition.
pub(crate) fn subscription_name(topic: &EntityName, subscription: &EntityName) -> String {
    format!("{topic}/{subscription}")
}

fn split_subscription(
    paired: Definition<(EntityName, SubscriptionConfig)>,
) -> (EntityName, SubscriptionDefinition) {
    let (topic, config) = paired.config;
    let definition = Definition {
        config,
        kept: paired.kept,
        created_at: paired.created_at,
        updated_at: paired.updated_at,
    };
    (topic, definition)
}

#[cfg(test)]
mod tests;
