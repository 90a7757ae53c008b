//! The broker runtime: the entity tasks, the connection handlers on the amqp driver, and the
//! start-up (recovery, stable entity ids) and shutdown (close connections, finish syncs) that
//! tie them to one `busbar_store::GroupCommit`.

mod atomic_send;
mod clock;
mod connection;
mod control;
mod dead_letter_forwarding;
mod definitions;
mod entity_task;
mod inbound;
mod live_registry;
mod mailbox;
mod management;
mod message_bodies;
mod metrics;
mod outbound;
mod refusals;
mod registry;
mod request;
mod rule_changes;
mod rule_descriptions;
mod rule_parameters;
mod rules;
mod sections;
mod settlement;
mod topic_schedule;
mod transaction;

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use busbar_amqp::driver::{Acceptor, DriverConfig, Shutdown, serve};
use busbar_amqp::engine::ConnectionConfig;
use busbar_core::{CoreError, MemoryBudget, SubQueue};
use busbar_store::{
    Completion, GroupCommit, GroupCommitHandle, GroupCommitOptions, Record, Recovered, Storage,
    StoreError,
};
use tokio::task::JoinSet;

pub use clock::Clock;
pub use control::{
    ClockState, Control, ControlError, EntityState, Fault, LockedMessageAction, MAX_PAGE,
    OutgoingMessage, PeekedMessage, QueueState, Redriven, SubscriptionState, TopicState,
};
pub use entity_task::{SessionHolder, SessionView};
pub use metrics::{CacheSnapshot, EntityTraffic, MetricsSnapshot};

use crate::auth::KeyRing;
use crate::config::{
    Config, DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES, MAX_MESSAGE_SIZE_IN_KILOBYTES,
    message_size_limit,
};
use connection::BrokerConnection;
use control::{ControlState, Definitions};
use dead_letter_forwarding::DeadLetterForwarding;
use entity_task::{EntityTask, OwnedEntity};
use live_registry::LiveRegistry;
use mailbox::Mailbox;
use message_bodies::MessageBodies;
use metrics::Metrics;
use topic_schedule::TopicRelease;

/// The message size limit of a queue or topic that sets none (Service Bus Standard's, and the
/// emulator's).
pub const MAX_MESSAGE_SIZE: u64 = message_size_limit(DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES);
/// The largest limit a queue or topic may set (Premium's 100 MiB): the connection's cap on any
/// incoming message, whatever its link says.
pub const LARGEST_MESSAGE_SIZE: u64 = message_size_limit(MAX_MESSAGE_SIZE_IN_KILOBYTES);
/// The largest request a `$cbs`, `$management` or coordinator link reads whole (a
/// `$management` request may carry a batch of messages to schedule); past it, a transfer's
/// bytes are counted and dropped as they arrive.
pub(crate) const MAX_TRANSFER_SIZE: u64 = 1024 * 1024;
/// Commands an entity inbox holds before senders wait.
const ENTITY_INBOX: usize = 1_024;
/// Commands a connection's channel holds before entity tasks hold deliveries back.
const CONNECTION_CHANNEL: usize = 1_024;

/// Why the broker could not start or stopped abnormally.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The store failed (recovery, the writer thread, or persisting entity ids).
    #[error("storage failed: {0}")]
    Store(#[from] StoreError),
    /// What the store returned for an entity cannot be restored.
    #[error("entity {entity}: stored data cannot be restored: {source}")]
    Restore {
        /// The entity's path.
        entity: String,
        /// The core's complaint.
        source: CoreError,
    },
    /// The session states stored for a `RequiresSession` entity cannot be decoded.
    #[error("entity {entity}: stored session state cannot be restored: {source}")]
    RestoreSessions {
        /// The entity's path.
        entity: String,
        /// The session layer's complaint.
        source: busbar_sessions::SessionError,
    },
    /// Serving connections failed.
    #[error("listener failed: {0}")]
    Io(#[from] std::io::Error),
    /// The store's writer thread panicked.
    #[error("the storage writer thread panicked")]
    WriterPanicked,
    /// A subscription's configured rules cannot be parsed.
    #[error("subscription {subscription}: {source}")]
    Rules {
        /// The subscription's path.
        subscription: String,
        /// What is wrong with its rules.
        source: busbar_rules::Error,
    },
}

/// What every connection handler shares: read-only after start-up but for the rules.
pub(crate) struct Shared {
    pub(crate) registry: Arc<LiveRegistry>,
    pub(crate) keys: KeyRing,
    pub(crate) namespace: String,
    pub(crate) clock: Clock,
    /// Where rule changes are persisted (entity tasks hold their own handles).
    pub(crate) store: GroupCommitHandle,
    /// The broker-wide counters.
    pub(crate) metrics: Arc<Metrics>,
}

/// Runs the broker for `config` on the connections of `acceptor` (a TCP listener, or the
/// gateway's channel of opened streams) until `stop` resolves, then closes every
/// connection with `amqp:connection:forced`, lets the entity tasks submit what they hold, waits
/// for the last sync and returns the storage.
///
/// At start-up every entity is restored from what `storage` recovers (queues created or changed
/// through [`Control`] as they were made); entity ids are kept in the store, so a restart maps
/// the same names to the same ids. `ready` receives the control interface before the first
/// connection is accepted; it fails with [`ControlError::Unavailable`] once the broker stops.
/// `clock` is [`Clock::anchored_now`], or its [`virtual_time`](Clock::virtual_time) for test
/// controls (the virtual clock and fault injection exist only then).
///
/// Must run on tokio's multi-thread runtime: entity tasks wait for room in the store writer's
/// bounded queue with `block_in_place` (see `submit_from_task`).
pub async fn run<S, A, F>(
    config: &Config,
    mut storage: S,
    acceptor: A,
    stop: F,
    clock: Clock,
    ready: impl FnOnce(Control),
) -> Result<S, RuntimeError>
where
    S: Storage + 'static,
    A: Acceptor + 'static,
    F: Future<Output = ()>,
{
    let recovery_started = std::time::Instant::now();
    // Where bodies stay in the store, a restart rebuilds the index, not the cache: each
    // message is kept as its index part only, so a backlog larger than memory is never whole.
    let recovered = if storage.is_volatile() {
        storage.recover()?
    } else {
        storage.recover_keeping(busbar_core::index_part)?
    };
    let definitions = definitions::merged(&config.namespace, &recovered, clock.now().as_millis());
    let namespace = definitions.config(&config.namespace.name);
    let (registry, specs, mut ids) = registry::build(&namespace, &recovered, ENTITY_INBOX)
        .map_err(|error| RuntimeError::Rules {
            subscription: error.subscription,
            source: error.source,
        })?;
    let now = clock.now();
    // Recovered messages count too: past the budget, sends wait for receivers to drain them.
    let memory = MemoryBudget::new(config.memory_budget_bytes.unwrap_or(u64::MAX));
    let entities = restore_entities(specs, &recovered, &memory, now)?;
    tracing::info!(
        messages = recovered.messages.len(),
        elapsed_ms = recovery_started.elapsed().as_millis(),
        "recovered"
    );
    drop(recovered);
    let metrics = Arc::new(Metrics::default());
    // A store that keeps nothing (`--memory`) has nowhere to evict to: bodies stay in memory
    // and the budget refuses sends instead.
    let bodies = if storage.is_volatile() {
        None
    } else {
        let reader = storage.reader()?;
        Some(Arc::new(MessageBodies::new(
            reader,
            Arc::clone(&metrics.cache),
        )))
    };
    let writer = GroupCommit::spawn(storage, GroupCommitOptions::default())?;
    let store = writer.handle();
    let id_records = ids.take_new_records();
    if !id_records.is_empty() {
        let (done, durable) = std::sync::mpsc::channel();
        store.submit(
            id_records,
            Box::new(move |outcome| {
                let _ = done.send(outcome);
            }),
        );
        let outcome = tokio::task::block_in_place(|| durable.recv());
        outcome.unwrap_or(Err(StoreError::Closed))?;
    }
    // Entity tasks hold it weakly (to forward dead-lettered messages): once the connections
    // are gone, so is every inbox sender, and the tasks end.
    let registry = Arc::new(LiveRegistry::new(registry));
    let tasks = Arc::new(Mutex::new(JoinSet::new()));
    for (spec, entity) in entities {
        spawn_entity(
            spec,
            entity,
            &clock,
            &store,
            &registry,
            &tasks,
            bodies.as_ref(),
        );
    }
    let control = Arc::new(ControlState {
        registry: Arc::clone(&registry),
        store: store.clone(),
        clock: clock.clone(),
        namespace: config.namespace.name.clone(),
        configured: config.namespace.clone(),
        tasks: Arc::clone(&tasks),
        metrics: Arc::clone(&metrics),
        memory,
        bodies,
        changes: tokio::sync::Mutex::new(Definitions {
            namespace: definitions,
            ids,
        }),
    });
    ready(Control::new(&control));
    let shared = Arc::new(Shared {
        registry,
        keys: config.keys.clone(),
        namespace: config.namespace.name.clone(),
        clock,
        store: store.clone(),
        metrics,
    });
    let served = serve_until(acceptor, shared, stop).await;
    // Every entity inbox sender lived in the registry, the control state and the connection
    // handlers, all gone now: the tasks submit their last records and end.
    drop(control);
    let mut tasks = std::mem::take(&mut *tasks.lock().unwrap_or_else(PoisonError::into_inner));
    while tasks.join_next().await.is_some() {}
    drop(store);
    let storage = tokio::task::spawn_blocking(move || writer.shutdown())
        .await
        .map_err(|_| RuntimeError::WriterPanicked)?
        .map_err(|_| RuntimeError::WriterPanicked)?;
    served?;
    Ok(storage)
}

async fn serve_until<A: Acceptor + 'static, F: Future<Output = ()>>(
    acceptor: A,
    shared: Arc<Shared>,
    stop: F,
) -> Result<(), RuntimeError> {
    let (shutdown, signal) = Shutdown::new();
    let driver = DriverConfig {
        engine: ConnectionConfig {
            container_id: "busbar".to_owned(),
            max_message_size: LARGEST_MESSAGE_SIZE,
            // A receiver takes messages up to its entity's limit, as from Service Bus, whatever
            // its attach advertised (Python's advertises 1 MiB).
            honour_peer_max_message_size: false,
            ..ConnectionConfig::default()
        },
        command_capacity: CONNECTION_CHANNEL,
        ..DriverConfig::default()
    };
    let next_id = AtomicU64::new(1);
    let server = tokio::spawn(serve(
        acceptor,
        driver,
        move |peer, sender| {
            let id = next_id.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(connection = id, %peer, "connection accepted");
            BrokerConnection::new(Arc::clone(&shared), id, Mailbox::new(sender))
        },
        signal,
    ));
    tokio::pin!(server);
    tokio::select! {
        () = stop => {
            tracing::info!("shutting down: closing connections");
            shutdown.trigger();
            server.await.map_err(|error| std::io::Error::other(error.to_string()))??;
        }
        finished = &mut server => {
            finished.map_err(|error| std::io::Error::other(error.to_string()))??;
        }
    }
    Ok(())
}

/// Rebuilds every entity from its recovered messages, in `specs`' order, on as many threads as
/// there are cores: a deep backlog's entity takes seconds, and a restart waits for the last.
fn restore_entities(
    specs: Vec<registry::EntitySpec>,
    recovered: &Recovered,
    memory: &MemoryBudget,
    now: busbar_core::Timestamp,
) -> Result<Vec<(registry::EntitySpec, OwnedEntity)>, RuntimeError> {
    let workers = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(specs.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut restored: Vec<(usize, Result<OwnedEntity, RuntimeError>)> =
        std::thread::scope(|scope| {
            let workers: Vec<_> = (0..workers)
                .map(|_| {
                    scope.spawn(|| {
                        let mut done = Vec::new();
                        loop {
                            let index = next.fetch_add(1, Ordering::Relaxed);
                            let Some(spec) = specs.get(index) else {
                                return done;
                            };
                            done.push((index, restore_one(spec, recovered, memory, now)));
                        }
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|worker| {
                    worker
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
    restored.sort_by_key(|(index, _)| *index);
    specs
        .into_iter()
        .zip(restored)
        .map(|(spec, (_, entity))| Ok((spec, entity?)))
        .collect()
}

/// Rebuilds the entity of `spec` from its recovered messages, charging `memory`.
fn restore_one(
    spec: &registry::EntitySpec,
    recovered: &Recovered,
    memory: &MemoryBudget,
    now: busbar_core::Timestamp,
) -> Result<OwnedEntity, RuntimeError> {
    let seed = uuid::Uuid::new_v4().as_u128();
    let entity = registry::restore_entity(spec, recovered, seed, now)
        .map_err(|source| RuntimeError::Restore {
            entity: spec.path.clone(),
            source,
        })?
        .with_memory_budget(memory.clone());
    tracing::info!(
        entity = %spec.path,
        messages = entity.len(SubQueue::Main),
        dead_lettered = entity.len(SubQueue::DeadLetter),
        "entity restored"
    );
    if spec.requires_session {
        OwnedEntity::with_sessions(entity, spec.id, recovered).map_err(|source| {
            RuntimeError::RestoreSessions {
                entity: spec.path.clone(),
                source,
            }
        })
    } else {
        Ok(entity.into())
    }
}

/// Starts the task of an entity (restored at start-up or created through [`Control`]).
fn spawn_entity(
    spec: registry::EntitySpec,
    entity: OwnedEntity,
    clock: &Clock,
    store: &GroupCommitHandle,
    registry: &Arc<LiveRegistry>,
    tasks: &Mutex<JoinSet<()>>,
    bodies: Option<&Arc<MessageBodies>>,
) {
    let mut task =
        EntityTask::new(entity, spec.id, clock.clone(), store.clone()).with_metrics(spec.metrics);
    if let Some(bodies) = bodies {
        task = task.keeping_bodies_in_store(Arc::clone(bodies));
    }
    if let Some(destination) = spec.forward_dead_letters_to {
        task = task.forwarding_dead_letters(DeadLetterForwarding::new(
            destination,
            Arc::downgrade(registry),
            spec.own_inbox.clone(),
        ));
    }
    if let Some(refusal) = spec.receive_refusal {
        task = task.refusing_receives(refusal);
    }
    if let Some(topic) = spec.releases_to_topic {
        task = task.releasing_to_topic(TopicRelease::new(
            topic,
            Arc::downgrade(registry),
            spec.own_inbox,
        ));
    }
    tasks
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .spawn(task.run(spec.inbox));
}

/// Hands records to the store writer from a runtime task. Usually its queue has room and this
/// returns at once; only when it is full does the task wait, with `block_in_place` so the
/// worker's other tasks move to another thread meanwhile. That hand-over costs a thread wake-up
/// and several context switches, too much to pay on every batch.
pub(crate) fn submit_from_task(
    store: &GroupCommitHandle,
    records: Vec<Record>,
    completion: Completion,
) {
    if let Err(rejected) = store.try_submit(records, completion) {
        // Full (back-pressure we want) or closed (`submit` reports that to the completion).
        let store = store.clone();
        tokio::task::block_in_place(move || store.submit(rejected.records, rejected.completion));
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use busbar_store::{EntityId, MemoryStorage, MessageKey};

    use super::*;

    pub(super) fn insert(sequence: i64) -> Vec<Record> {
        vec![Record::Insert {
            key: MessageKey {
                entity: EntityId(1),
                sequence,
            },
            message: bytes::Bytes::new(),
            state: bytes::Bytes::new(),
        }]
    }

    /// With the writer held inside a completion and its one-place queue taken, a submission
    /// from a task waits for room (unless the release below overtakes it, which only makes it
    /// take the direct path) and every submission is stored.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn submit_from_task_waits_for_room_and_stores_everything() {
        let options = GroupCommitOptions {
            queue_capacity: 1,
            compaction: false,
        };
        let writer = GroupCommit::spawn(MemoryStorage::new(), options).unwrap();
        let store = writer.handle();
        let (outcomes, outcomes_seen) = mpsc::channel();
        let completion = |sequence: i64| -> Completion {
            let outcomes = outcomes.clone();
            Box::new(move |outcome| outcomes.send((sequence, outcome.is_ok())).unwrap())
        };
        let (entered, writer_entered) = mpsc::channel();
        let (release, released) = mpsc::channel::<()>();
        let first = completion(1);
        submit_from_task(
            &store,
            insert(1),
            Box::new(move |outcome| {
                entered.send(()).unwrap();
                released.recv().unwrap();
                first(outcome);
            }),
        );
        writer_entered.recv().unwrap();
        submit_from_task(&store, insert(2), completion(2));
        let probe = store.try_submit(insert(99), completion(99));
        assert!(
            probe.is_err_and(|rejected| !rejected.closed),
            "queue not full"
        );
        let (ready, about_to_submit) = mpsc::channel();
        let releaser = std::thread::spawn(move || {
            about_to_submit.recv().unwrap();
            release.send(()).unwrap();
        });
        ready.send(()).unwrap();
        submit_from_task(&store, insert(3), completion(3));
        releaser.join().unwrap();
        let mut storage = writer.shutdown().unwrap();
        drop(outcomes);
        let mut seen: Vec<_> = outcomes_seen.iter().collect();
        seen.sort_unstable();
        assert_eq!(seen, [(1, true), (2, true), (3, true)]);
        assert_eq!(storage.recover().unwrap().messages.len(), 3);
    }
}
