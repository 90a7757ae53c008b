//! Queue definitions made or changed while the broker runs, kept durable as metadata of the
//! registry's store entity so that a restart brings them back with their messages. At start-up
//! they are merged with `Config.json`: a persisted definition wins over the file's, and a queue
//! only the file names is created as the file says.

use std::collections::BTreeMap;

use busbar_store::{Record, Recovered};
use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::registry::REGISTRY_ENTITY;
use crate::config::{NamespaceConfig, QueueConfig};
use crate::names::EntityName;

/// Prefix of the definition metadata keys (followed by the lower-case name).
const QUEUE_KEY_PREFIX: &str = "queue-def:";

/// A queue's definition and when it was made and last changed (Unix milliseconds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct QueueDefinition {
    /// The queue's properties.
    pub(crate) config: QueueConfig,
    /// Properties the broker keeps for the management plane without acting on them (name →
    /// value as the administration API writes it, e.g. `UserMetadata`).
    #[serde(default)]
    pub(crate) kept: BTreeMap<String, String>,
    /// When it was created.
    pub(crate) created_at: i64,
    /// When its definition last changed.
    pub(crate) updated_at: i64,
}

/// The record that persists `definition`.
pub(crate) fn stored(definition: &QueueDefinition) -> Record {
    let value = serde_json::to_vec(definition)
        // Plain data with string keys: serialising it cannot fail.
        .unwrap_or_default();
    Record::Meta {
        entity: REGISTRY_ENTITY,
        key: key(&definition.config.name),
        value: Some(Bytes::from(value)),
    }
}

/// The record that forgets the definition of `name`.
pub(crate) fn forgotten(name: &EntityName) -> Record {
    Record::Meta {
        entity: REGISTRY_ENTITY,
        key: key(name),
        value: None,
    }
}

fn key(name: &EntityName) -> Bytes {
    Bytes::from(format!(
        "{QUEUE_KEY_PREFIX}{}",
        name.as_str().to_ascii_lowercase()
    ))
}

/// The namespace to start: `configured` with every persisted definition applied, and each
/// queue's definition (those only the file names are dated `now`).
pub(crate) fn merged(
    configured: &NamespaceConfig,
    recovered: &Recovered,
    now: i64,
) -> (NamespaceConfig, BTreeMap<EntityName, QueueDefinition>) {
    let mut definitions: BTreeMap<EntityName, QueueDefinition> = configured
        .queues
        .iter()
        .map(|queue| {
            let definition = QueueDefinition {
                config: queue.clone(),
                kept: BTreeMap::new(),
                created_at: now,
                updated_at: now,
            };
            (queue.name.clone(), definition)
        })
        .collect();
    for (key, value) in &recovered.meta {
        let is_definition =
            key.entity == REGISTRY_ENTITY && key.key.starts_with(QUEUE_KEY_PREFIX.as_bytes());
        if !is_definition {
            continue;
        }
        match serde_json::from_slice::<QueueDefinition>(value) {
            Ok(definition) => {
                definitions.insert(definition.config.name.clone(), definition);
            }
            Err(error) => {
                tracing::error!(%error, key = %String::from_utf8_lossy(&key.key), "persisted queue definition unreadable; ignored");
            }
        }
    }
    let namespace = NamespaceConfig {
        queues: definitions
            .values()
            .map(|definition| definition.config.clone())
            .collect(),
        ..configured.clone()
    };
    (namespace, definitions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use busbar_store::{MemoryStorage, Storage};
    use std::time::Duration;

    #[test]
    fn a_persisted_definition_wins_over_the_file_and_adds_to_it() {
        let configured = Config::emulator_default().namespace;
        let mut changed = configured.queues[0].clone();
        changed.delivery.lock_duration = Duration::from_secs(30);
        let mut added = changed.clone();
        added.name = EntityName::new("made-at-run-time");
        let mut storage = MemoryStorage::new();
        for config in [changed.clone(), added.clone()] {
            let definition = QueueDefinition {
                config,
                kept: BTreeMap::new(),
                created_at: 5,
                updated_at: 7,
            };
            storage.append(&[stored(&definition)]).unwrap();
        }
        storage.sync().unwrap();
        let recovered = storage.restart().recover().unwrap();

        let (namespace, definitions) = merged(&configured, &recovered, 100);
        assert_eq!(namespace.queues, [added.clone(), changed.clone()]);
        assert_eq!(definitions[&added.name].created_at, 5);
        assert_eq!(definitions[&changed.name].updated_at, 7);
        assert_eq!(namespace.topics, configured.topics);
    }

    #[test]
    fn a_forgotten_definition_leaves_the_file_s_queue() {
        let configured = Config::emulator_default().namespace;
        let definition = QueueDefinition {
            config: configured.queues[0].clone(),
            kept: BTreeMap::new(),
            created_at: 1,
            updated_at: 1,
        };
        let mut storage = MemoryStorage::new();
        storage.append(&[stored(&definition)]).unwrap();
        storage
            .append(&[forgotten(&definition.config.name)])
            .unwrap();
        storage.sync().unwrap();
        let recovered = storage.restart().recover().unwrap();
        let (namespace, definitions) = merged(&configured, &recovered, 100);
        assert_eq!(namespace.queues, configured.queues);
        assert_eq!(definitions[&definition.config.name].created_at, 100);
    }
}
