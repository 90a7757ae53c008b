//! The broker's control interface, for the management plane: queues listed and described with
//! their message counts, and created, changed and deleted while the broker runs. A change is
//! answered once its definition is durable and takes effect at once: the registry is replaced,
//! a new queue's task started, a changed queue's state machine reconfigured (its locks end, as
//! in Service Bus), a deleted queue's messages removed and its receivers detached with
//! `amqp:not-found`. Changes are serialised; reads never wait behind the store.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use busbar_core::{Entity, MessageCounts};
use busbar_store::{GroupCommitHandle, Record, StoreError};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::clock::Clock;
use super::dead_letter_forwarding::DeadLetterForwarding;
use super::definitions::{self, QueueDefinition};
use super::live_registry::LiveRegistry;
use super::mailbox::{EntityCommand, post_entity};
use super::registry::{self, EntityHandle, IdAssigner, Resolved};
use super::{ENTITY_INBOX, spawn_entity};
use crate::address::EntityPath;
use crate::config::{NamespaceConfig, QueueConfig, TopicConfig, check_namespace};
use crate::errors::BrokerError;
use crate::names::EntityName;

/// A queue as the control interface describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueState {
    /// Its definition.
    pub config: QueueConfig,
    /// Properties kept for the management plane without the broker acting on them.
    pub kept: BTreeMap<String, String>,
    /// Its message counts now.
    pub counts: MessageCounts,
    /// When it was created (Unix milliseconds; queues of `Config.json` date from start-up).
    pub created_at: i64,
    /// When its definition last changed (Unix milliseconds).
    pub updated_at: i64,
}

/// Why a control operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// No entity of that name.
    #[error("the entity '{0}' could not be found")]
    NotFound(String),
    /// An entity of that name exists already.
    #[error("the entity '{0}' already exists")]
    AlreadyExists(String),
    /// The definition is not acceptable (a missing forwarding target, a loop, a changed
    /// `RequiresSession`, …).
    #[error("{0}")]
    Invalid(String),
    /// The store failed or the broker is shutting down; nothing changed.
    #[error("{0}")]
    Unavailable(String),
}

/// A handle on the running broker's namespace; cheap to clone. Once the broker has stopped,
/// every operation answers [`ControlError::Unavailable`].
#[derive(Clone)]
pub struct Control {
    state: Weak<ControlState>,
}

/// What the control interface works with, owned by the running broker.
pub(crate) struct ControlState {
    pub(crate) registry: Arc<LiveRegistry>,
    pub(crate) store: GroupCommitHandle,
    pub(crate) clock: Clock,
    pub(crate) namespace: String,
    pub(crate) tasks: Arc<Mutex<JoinSet<()>>>,
    /// Held across a change's durable wait, so changes apply one at a time.
    pub(crate) changes: tokio::sync::Mutex<Definitions>,
}

/// The namespace's definitions as the control interface changes them.
pub(crate) struct Definitions {
    pub(crate) queues: BTreeMap<EntityName, QueueDefinition>,
    /// The topics (not yet changeable at run time), for the cross-entity checks.
    pub(crate) topics: Vec<TopicConfig>,
    pub(crate) ids: IdAssigner,
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control").finish_non_exhaustive()
    }
}

impl Control {
    pub(crate) fn new(state: &Arc<ControlState>) -> Self {
        Self {
            state: Arc::downgrade(state),
        }
    }

    fn state(&self) -> Result<Arc<ControlState>, ControlError> {
        self.state
            .upgrade()
            .ok_or_else(|| ControlError::Unavailable("the broker is shutting down".into()))
    }

    /// Every queue, in name order.
    pub async fn queues(&self) -> Result<Vec<QueueState>, ControlError> {
        let state = self.state()?;
        let definitions: Vec<QueueDefinition> = {
            let changes = state.changes.lock().await;
            changes.queues.values().cloned().collect()
        };
        let mut queues = Vec::with_capacity(definitions.len());
        for definition in definitions {
            let counts = state.counts(&definition.config.name).await;
            queues.push(describe(definition, counts));
        }
        Ok(queues)
    }

    /// The queue named `name`.
    pub async fn queue(&self, name: &str) -> Result<QueueState, ControlError> {
        let state = self.state()?;
        let name = EntityName::new(name);
        let definition = {
            let changes = state.changes.lock().await;
            changes.queues.get(&name).cloned()
        }
        .ok_or_else(|| ControlError::NotFound(name.to_string()))?;
        let counts = state.counts(&name).await;
        Ok(describe(definition, counts))
    }

    /// Whether a topic is named `name`.
    pub async fn topic_exists(&self, name: &str) -> Result<bool, ControlError> {
        let state = self.state()?;
        let name = EntityName::new(name);
        Ok(state
            .registry
            .current()
            .resolve(&EntityPath::QueueOrTopic(name))
            .is_some_and(|resolved| matches!(resolved, Resolved::Topic(_))))
    }

    /// Creates a queue with the properties it `kept` for the management plane; answered once
    /// its definition is durable.
    pub async fn create_queue(
        &self,
        config: QueueConfig,
        kept: BTreeMap<String, String>,
    ) -> Result<QueueState, ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let taken = state.registry.current().resolve_name(&config.name);
        if taken {
            return Err(ControlError::AlreadyExists(config.name.to_string()));
        }
        changes.check_with(&config)?;
        let now = state.clock.now().as_millis();
        let definition = QueueDefinition {
            config: config.clone(),
            kept,
            created_at: now,
            updated_at: now,
        };
        let id = changes.ids.id_of(config.name.as_str());
        let mut records = changes.ids.take_new_records();
        records.push(definitions::stored(&definition));
        state.durable(records).await?;
        let (spec, handle) = registry::new_queue(&config, id, ENTITY_INBOX);
        let seed = uuid::Uuid::new_v4().as_u128();
        let entity = Entity::new(spec.config.clone(), seed)
            .map_err(|error| ControlError::Invalid(error.to_string()))?;
        spawn_entity(
            spec,
            entity.into(),
            state.clock,
            &state.store,
            &state.registry,
            &state.tasks,
        );
        state
            .registry
            .change(|registry| registry.add_queue(&config, handle));
        changes
            .queues
            .insert(config.name.clone(), definition.clone());
        Ok(describe(definition, MessageCounts::default()))
    }

    /// Changes a queue's definition (and the properties it keeps for the management plane);
    /// answered once it is durable and applied.
    pub async fn update_queue(
        &self,
        config: QueueConfig,
        kept: BTreeMap<String, String>,
    ) -> Result<QueueState, ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let current = changes
            .queues
            .get(&config.name)
            .cloned()
            .ok_or_else(|| ControlError::NotFound(config.name.to_string()))?;
        if current.config.delivery.requires_session != config.delivery.requires_session {
            return Err(ControlError::Invalid(
                "RequiresSession cannot be changed on an existing queue".into(),
            ));
        }
        changes.check_with(&config)?;
        let definition = QueueDefinition {
            config: config.clone(),
            kept,
            created_at: current.created_at,
            updated_at: state.clock.now().as_millis(),
        };
        state
            .durable(vec![definitions::stored(&definition)])
            .await?;
        let handle = state.handle(&config.name)?;
        let forwarding = config
            .delivery
            .forward_dead_lettered_messages_to
            .clone()
            .map(|destination| {
                DeadLetterForwarding::new(
                    destination,
                    Arc::downgrade(&state.registry),
                    handle.inbox.downgrade(),
                )
            });
        let (done, applied) = oneshot::channel();
        post_entity(
            &handle.inbox,
            EntityCommand::Reconfigure {
                config: registry::queue_entity_config(&config),
                forwarding,
                done,
            },
        );
        answered(applied.await)?;
        state
            .registry
            .change(|registry| registry.set_queue_forward(&config));
        changes
            .queues
            .insert(config.name.clone(), definition.clone());
        let counts = state.counts(&config.name).await;
        Ok(describe(definition, counts))
    }

    /// Deletes a queue with its messages; answered once that is durable.
    pub async fn delete_queue(&self, name: &str) -> Result<(), ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let name = EntityName::new(name);
        if !changes.queues.contains_key(&name) {
            return Err(ControlError::NotFound(name.to_string()));
        }
        let remaining = NamespaceConfig {
            queues: changes
                .queues
                .values()
                .filter(|definition| definition.config.name != name)
                .map(|definition| definition.config.clone())
                .collect(),
            topics: changes.topics.clone(),
            name: state.namespace.clone(),
        };
        check_namespace(&remaining).map_err(|problem| {
            ControlError::Invalid(format!("'{name}' cannot be deleted: {problem}"))
        })?;
        state.durable(vec![definitions::forgotten(&name)]).await?;
        let handle = state
            .registry
            .change(|registry| registry.remove_queue(&name))
            .ok_or_else(|| ControlError::NotFound(name.to_string()))?;
        changes.queues.remove(&name);
        let (done, removed) = oneshot::channel();
        let error = BrokerError::EntityNotFound {
            namespace: state.namespace.clone(),
            entity: name.to_string(),
        };
        post_entity(&handle.inbox, EntityCommand::Delete { error, done });
        answered(removed.await)
    }
}

impl ControlState {
    /// Stores `records` and waits until they are durable.
    async fn durable(&self, records: Vec<Record>) -> Result<(), ControlError> {
        let (done, durable) = oneshot::channel();
        self.store.submit(
            records,
            Box::new(move |outcome| {
                let _ = done.send(outcome);
            }),
        );
        match durable.await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(store_unavailable(&error)),
            Err(_) => Err(store_unavailable(&StoreError::Closed)),
        }
    }

    fn handle(&self, name: &EntityName) -> Result<EntityHandle, ControlError> {
        self.registry
            .current()
            .queue(name)
            .cloned()
            .ok_or_else(|| ControlError::NotFound(name.to_string()))
    }

    /// The queue's counts, asked of its task (zero if it is gone meanwhile).
    async fn counts(&self, name: &EntityName) -> MessageCounts {
        let Ok(handle) = self.handle(name) else {
            return MessageCounts::default();
        };
        let (reply, counts) = oneshot::channel();
        post_entity(&handle.inbox, EntityCommand::Counts(reply));
        counts.await.unwrap_or_default()
    }
}

impl Definitions {
    /// The cross-entity checks on the namespace as it would be with `queue` in it.
    fn check_with(&self, queue: &QueueConfig) -> Result<(), ControlError> {
        let mut queues: Vec<QueueConfig> = self
            .queues
            .values()
            .filter(|definition| definition.config.name != queue.name)
            .map(|definition| definition.config.clone())
            .collect();
        queues.push(queue.clone());
        let namespace = NamespaceConfig {
            name: String::new(),
            queues,
            topics: self.topics.clone(),
        };
        check_namespace(&namespace).map_err(ControlError::Invalid)
    }
}

fn describe(definition: QueueDefinition, counts: MessageCounts) -> QueueState {
    QueueState {
        config: definition.config,
        kept: definition.kept,
        counts,
        created_at: definition.created_at,
        updated_at: definition.updated_at,
    }
}

/// The answer an entity task sent back, or why there was none.
fn answered(
    answer: Result<Result<(), BrokerError>, oneshot::error::RecvError>,
) -> Result<(), ControlError> {
    match answer {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) => Err(ControlError::Unavailable(error.to_string())),
        Err(_) => Err(ControlError::Unavailable(
            "the entity's task has stopped".into(),
        )),
    }
}

fn store_unavailable(error: &StoreError) -> ControlError {
    ControlError::Unavailable(format!("storage is unavailable ({error})"))
}

#[cfg(test)]
mod tests;
