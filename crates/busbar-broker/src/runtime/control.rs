//! The broker's control interface, for the management plane: queues, topics and subscriptions
//! listed and described with their message counts, and created, changed and deleted while the
//! broker runs (topics and subscriptions in `control/topics.rs`). A change is answered once its
//! definition is durable and takes effect at once: the registry is replaced, a new entity's task
//! started, a changed entity's state machine reconfigured (its locks end, as in Service Bus), a
//! deleted entity's messages removed and its receivers detached with `amqp:not-found`. Changes
//! are serialised; reads never wait behind the store.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};

use busbar_core::{Entity, EntityConfig, MemoryBudget, MessageCounts};
use busbar_store::{EntityId, GroupCommitHandle, Record, Recovered, StoreError};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::clock::Clock;
use super::dead_letter_forwarding::DeadLetterForwarding;
use super::definitions::{self, Definition, Kind, Namespace};
use super::entity_task::OwnedEntity;
use super::live_registry::LiveRegistry;
use super::mailbox::{EntityCommand, post_entity};
use super::message_bodies::MessageBodies;
use super::metrics::{Metrics, MetricsSnapshot};
use super::registry::{self, Delivery, EntityHandle, IdAssigner};
use super::{ENTITY_INBOX, spawn_entity};
use crate::auth::SasKeys;
use crate::config::{NamespaceConfig, QueueConfig, check_namespace};
use crate::errors::BrokerError;
use crate::names::EntityName;

mod data_plane;
mod explorer;
mod peeked;
mod reset;
mod testing;
mod topics;

pub use data_plane::LockedMessageAction;
pub use explorer::{MAX_PAGE, Redriven};
pub use peeked::{OutgoingMessage, PeekedMessage};
pub use testing::{ClockState, Fault};
pub use topics::{SubscriptionState, TopicState};

/// An entity as the control interface describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityState<C> {
    /// Its definition (a topic's lists its subscriptions).
    pub config: C,
    /// Properties kept for the management plane without the broker acting on them.
    pub kept: BTreeMap<String, String>,
    /// Its message counts now (a topic's: the scheduled messages it holds).
    pub counts: MessageCounts,
    /// When it was created (Unix milliseconds; entities of `Config.json` date from start-up).
    pub created_at: i64,
    /// When its definition last changed (Unix milliseconds).
    pub updated_at: i64,
}

/// A queue as the control interface describes it.
pub type QueueState = EntityState<QueueConfig>;

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
    /// `RequiresSession`, a rule that does not parse, …).
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

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control").finish_non_exhaustive()
    }
}

/// What the control interface works with, owned by the running broker.
pub(crate) struct ControlState {
    pub(crate) registry: Arc<LiveRegistry>,
    pub(crate) store: GroupCommitHandle,
    pub(crate) clock: Clock,
    pub(crate) namespace: String,
    /// The namespace as `Config.json` defines it, which a reset goes back to.
    pub(crate) configured: NamespaceConfig,
    pub(crate) tasks: Arc<Mutex<JoinSet<()>>>,
    /// The broker-wide counters the connection handlers keep.
    pub(crate) metrics: Arc<Metrics>,
    /// The budget every entity's messages are charged to (entities created later too).
    pub(crate) memory: MemoryBudget,
    /// Where entities evict message bytes to, unless the store keeps nothing.
    pub(crate) bodies: Option<Arc<MessageBodies>>,
    /// Held across a change's durable wait, so changes apply one at a time.
    pub(crate) changes: tokio::sync::Mutex<Definitions>,
}

/// The namespace's definitions as the control interface changes them.
pub(crate) struct Definitions {
    pub(crate) namespace: Namespace,
    pub(crate) ids: IdAssigner,
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

    /// The storage's condition (full, failed or healthy) with why, for `GET /health`; a broker
    /// shutting down reports its store healthy.
    pub fn storage_condition(&self) -> busbar_store::StoreCondition {
        self.state()
            .map_or(busbar_store::StoreCondition::Healthy, |state| {
                state.store.condition()
            })
    }

    /// The shared-access rules of the queue or topic `name`, if it has its own (none once the
    /// broker has stopped). Reads the registry only; nothing waits.
    pub fn entity_keys(&self, name: &EntityName) -> Option<Arc<SasKeys>> {
        self.state().ok()?.registry.current().entity_keys(name)
    }

    /// The traffic counters now: the broker's, and each entity's (unordered). Reads atomics
    /// only; nothing waits.
    pub fn metrics(&self) -> Result<MetricsSnapshot, ControlError> {
        let state = self.state()?;
        let entities = state
            .registry
            .current()
            .entities()
            .iter()
            .map(|handle| {
                // O(1): the permits the inbox's sender has taken, commands not yet received.
                let depth = handle.inbox.max_capacity() - handle.inbox.capacity();
                handle.metrics.traffic(&handle.path, depth)
            })
            .collect();
        Ok(state
            .metrics
            .snapshot(entities, state.store.stats(), &state.memory))
    }

    /// Every queue, in name order.
    pub async fn queues(&self) -> Result<Vec<QueueState>, ControlError> {
        let state = self.state()?;
        let definitions: Vec<Definition<QueueConfig>> = {
            let changes = state.changes.lock().await;
            changes.namespace.queues.values().cloned().collect()
        };
        let mut queues = Vec::with_capacity(definitions.len());
        for definition in definitions {
            let counts = state.queue_counts(&definition.config.name).await;
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
            changes.namespace.queues.get(&name).cloned()
        }
        .ok_or_else(|| ControlError::NotFound(name.to_string()))?;
        let counts = state.queue_counts(&name).await;
        Ok(describe(definition, counts))
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
        if state.registry.current().resolve_name(&config.name) {
            return Err(ControlError::AlreadyExists(config.name.to_string()));
        }
        let mut next = changes.namespace.config(&state.namespace);
        next.queues.push(config.clone());
        check(&next)?;
        let definition = Definition::new(config.clone(), kept, state.clock.now().as_millis());
        let path = config.name.to_string();
        let record = definitions::stored(Kind::Queue, &path, &definition);
        let (_, handle) = state
            .create_entity(
                &mut changes.ids,
                path,
                |_| vec![record],
                registry::queue_entity_config(&config),
                Delivery::Receivers(&config.delivery),
                config.status.refuses_receives(),
            )
            .await?;
        state
            .registry
            .change(|registry| registry.add_queue(&config, handle));
        changes
            .namespace
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
            .namespace
            .queues
            .get(&config.name)
            .cloned()
            .ok_or_else(|| ControlError::NotFound(config.name.to_string()))?;
        if current.config.delivery.requires_session != config.delivery.requires_session {
            return Err(ControlError::Invalid(
                "RequiresSession cannot be changed on an existing queue".into(),
            ));
        }
        let mut next = changes.namespace.config(&state.namespace);
        next.queues.retain(|queue| queue.name != config.name);
        next.queues.push(config.clone());
        check(&next)?;
        let definition = Definition {
            config: config.clone(),
            kept,
            created_at: current.created_at,
            updated_at: state.clock.now().as_millis(),
        };
        let path = config.name.to_string();
        state
            .durable(vec![definitions::stored(Kind::Queue, &path, &definition)])
            .await?;
        let handle = state.queue_handle(&config.name)?;
        state
            .reconfigure(
                &handle,
                registry::queue_entity_config(&config),
                &config.delivery.forward_dead_lettered_messages_to,
                config.status.refuses_receives(),
            )
            .await?;
        state
            .registry
            .change(|registry| registry.change_queue(&config));
        changes
            .namespace
            .queues
            .insert(config.name.clone(), definition.clone());
        let counts = state.queue_counts(&config.name).await;
        Ok(describe(definition, counts))
    }

    /// Deletes a queue with its messages; answered once that is durable.
    pub async fn delete_queue(&self, name: &str) -> Result<(), ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let name = EntityName::new(name);
        if !changes.namespace.queues.contains_key(&name) {
            return Err(ControlError::NotFound(name.to_string()));
        }
        let mut remaining = changes.namespace.config(&state.namespace);
        remaining.queues.retain(|queue| queue.name != name);
        check(&remaining).map_err(|problem| {
            ControlError::Invalid(format!("'{name}' cannot be deleted: {problem}"))
        })?;
        state
            .durable(vec![definitions::forgotten(Kind::Queue, name.as_str())])
            .await?;
        let handle = state
            .registry
            .change(|registry| registry.remove_queue(&name))
            .ok_or_else(|| ControlError::NotFound(name.to_string()))?;
        changes.namespace.queues.remove(&name);
        state.delete_entity(&handle).await
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

    fn queue_handle(&self, name: &EntityName) -> Result<EntityHandle, ControlError> {
        self.registry
            .current()
            .queue(name)
            .cloned()
            .ok_or_else(|| ControlError::NotFound(name.to_string()))
    }

    /// The queue's counts (zero if it is gone meanwhile).
    async fn queue_counts(&self, name: &EntityName) -> MessageCounts {
        match self.queue_handle(name) {
            Ok(handle) => counts(&handle).await,
            Err(_) => MessageCounts::default(),
        }
    }

    /// Makes a new entity durable (its id, then the records `definition` makes for that id) and
    /// starts its task; returns its id and the handle that reaches it.
    async fn create_entity(
        &self,
        ids: &mut IdAssigner,
        path: String,
        definition: impl FnOnce(EntityId) -> Vec<Record>,
        config: EntityConfig,
        delivery: Delivery<'_>,
        refuses_receives: bool,
    ) -> Result<(EntityId, EntityHandle), ControlError> {
        let id = ids.id_of(&path);
        let mut records = ids.take_new_records();
        records.extend(definition(id));
        self.durable(records).await?;
        let handle = self.start_entity(path, id, config, delivery, refuses_receives)?;
        Ok((id, handle))
    }

    /// Starts the task of a new, empty entity; returns the handle that reaches it.
    fn start_entity(
        &self,
        path: String,
        id: EntityId,
        config: EntityConfig,
        delivery: Delivery<'_>,
        refuses_receives: bool,
    ) -> Result<EntityHandle, ControlError> {
        let (spec, handle) = registry::new_entity(path, id, config, delivery, ENTITY_INBOX);
        let spec = spec.refusing_receives(refuses_receives, &self.namespace);
        let seed = uuid::Uuid::new_v4().as_u128();
        let entity = Entity::new(spec.config.clone(), seed)
            .map_err(|error| ControlError::Invalid(error.to_string()))?
            .with_memory_budget(self.memory.clone());
        let entity = if spec.requires_session {
            OwnedEntity::with_sessions(entity, spec.id, &Recovered::default())
                .map_err(|error| ControlError::Invalid(error.to_string()))?
        } else {
            entity.into()
        };
        spawn_entity(
            spec,
            entity,
            &self.clock,
            &self.store,
            &self.registry,
            &self.tasks,
            self.bodies.as_ref(),
        );
        Ok(handle)
    }

    /// Applies an entity's changed definition to its state machine (its locks end) and tells it
    /// whether its status refuses receives (its receive links then end).
    async fn reconfigure(
        &self,
        handle: &EntityHandle,
        config: EntityConfig,
        forward_dead_letters_to: &Option<EntityName>,
        refuses_receives: bool,
    ) -> Result<(), ControlError> {
        let receive_refusal = refuses_receives.then(|| BrokerError::EntityDisabled {
            namespace: self.namespace.clone(),
            entity: handle.path.clone(),
        });
        let forwarding = forward_dead_letters_to.clone().map(|destination| {
            DeadLetterForwarding::new(
                destination,
                Arc::downgrade(&self.registry),
                handle.inbox.downgrade(),
            )
        });
        let (done, applied) = oneshot::channel();
        post_entity(
            &handle.inbox,
            EntityCommand::Reconfigure {
                config,
                forwarding,
                receive_refusal,
                done,
            },
        );
        answered(applied.await)
    }

    /// Removes a deleted entity's messages (answered once durable) and detaches its receivers.
    async fn delete_entity(&self, handle: &EntityHandle) -> Result<(), ControlError> {
        let (done, removed) = oneshot::channel();
        let error = BrokerError::EntityNotFound {
            namespace: self.namespace.clone(),
            entity: handle.path.clone(),
        };
        post_entity(&handle.inbox, EntityCommand::Delete { error, done });
        answered(removed.await)
    }
}

/// An entity's counts, asked of its task (zero if it has stopped).
async fn counts(handle: &EntityHandle) -> MessageCounts {
    let (reply, counts) = oneshot::channel();
    post_entity(&handle.inbox, EntityCommand::Counts(reply));
    counts.await.unwrap_or_default()
}

/// The cross-entity checks (unique names, forwarding targets, loops) on the namespace a change
/// would make.
fn check(namespace: &NamespaceConfig) -> Result<(), ControlError> {
    check_namespace(namespace).map_err(ControlError::Invalid)
}

fn describe<C>(definition: Definition<C>, counts: MessageCounts) -> EntityState<C> {
    EntityState {
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
mod status_tests;
#[cfg(test)]
mod tests;
