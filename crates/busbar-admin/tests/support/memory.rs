//! `MemoryNamespace`: a complete in-memory `NamespaceControl`, standing in for the broker.
//! Names compare case-insensitively (maps are keyed by the lower-cased name), listings are
//! alphabetical, queues and topics share one name space. `hold_namespace` lets a test keep
//! `GET /$namespaceinfo` waiting, to observe deadlines and graceful shutdown.
//!
//! Busbar's controls: messages exist only as counts (`set_counts`), which purge and reset zero;
//! the virtual clock starts at [`CLOCK_START`]; injected faults are recorded (`faults`). The
//! clock and faults answer only after `enable_test_controls`, as the broker does. `GET /metrics`
//! reports those counts per queue, topic and subscription, with no traffic and no connections.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use busbar_admin::atom::{
    EntityTimes, MessageCountDetails, MessagingSku, NamespaceInfo, PageRequest, QueueProperties,
    QueueRuntimeProperties, RuleProperties, SubscriptionProperties, SubscriptionRuntimeProperties,
    Timestamp, TopicProperties, TopicRuntimeProperties,
};
use busbar_admin::control::{
    ClockState, ControlError, ControlResult, Fault, NamespaceControl, Page, QueueEntry, RuleEntry,
    SubscriptionEntry, TopicEntry,
};
use busbar_admin::data_plane::{DataPlane, DataPlaneResult, HttpMessage, ReceiveMode};
use busbar_admin::explorer::{EntityCounts, EntityKind};
use busbar_admin::metrics::{EntityMetrics, MetricsSnapshot};
use tokio::sync::{Notify, OwnedMutexGuard};

/// The namespace name the emulator uses.
pub const NAMESPACE: &str = "sbemulatorns";

/// Where the virtual clock starts: 2026-01-01T00:00:00Z.
pub const CLOCK_START: i64 = 1_767_225_600_000;

#[derive(Default)]
struct State {
    queues: BTreeMap<String, QueueEntry>,
    topics: BTreeMap<String, TopicState>,
}

struct TopicState {
    entry: TopicEntry,
    subscriptions: BTreeMap<String, SubscriptionState>,
}

struct SubscriptionState {
    entry: SubscriptionEntry,
    rules: BTreeMap<String, RuleEntry>,
}

/// What the controls have done.
#[derive(Default)]
struct Controls {
    enabled: bool,
    offset: Duration,
    resets: usize,
    faults: Vec<(String, Fault)>,
}

/// The in-memory namespace.
#[derive(Default)]
pub struct MemoryNamespace {
    state: Mutex<State>,
    controls: Mutex<Controls>,
    namespace_gate: std::sync::Arc<tokio::sync::Mutex<()>>,
    namespace_calls: AtomicUsize,
    namespace_entered: Notify,
    /// Signalled when a data-plane receive starts waiting.
    pub receive_waiting: Notify,
}

fn key(name: &str) -> String {
    name.to_ascii_lowercase()
}

fn now() -> Timestamp {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_millis());
    Timestamp::from_unix_millis(i64::try_from(millis).unwrap_or(i64::MAX))
}

fn page_of<T: Clone>(items: impl ExactSizeIterator<Item = T>, page: PageRequest) -> Page<T> {
    let total = items.len();
    let window = page.window(total);
    Page {
        items: items.skip(window.start).take(window.len()).collect(),
        total,
    }
}

impl MemoryNamespace {
    /// Makes `GET /$namespaceinfo` (and every request that needs the namespace's name) wait
    /// until the returned guard is dropped.
    pub async fn hold_namespace(&self) -> OwnedMutexGuard<()> {
        std::sync::Arc::clone(&self.namespace_gate)
            .lock_owned()
            .await
    }

    /// Waits until a call to `namespace` has started.
    pub async fn namespace_called(&self) {
        loop {
            let entered = self.namespace_entered.notified();
            if self.namespace_calls.load(Ordering::SeqCst) > 0 {
                return;
            }
            entered.await;
        }
    }

    /// The queue names, in listing order.
    pub fn queue_names(&self) -> Vec<String> {
        let state = self.state.lock().unwrap();
        state
            .queues
            .values()
            .map(|queue| queue.name.clone())
            .collect()
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> ControlResult<T>) -> ControlResult<T> {
        f(&mut self.state.lock().unwrap())
    }

    /// Serves the clock and faults, as `--test-controls` does.
    pub fn enable_test_controls(&self) {
        self.controls.lock().unwrap().enabled = true;
    }

    /// Gives the queue or `topic/Subscriptions/sub` these message counts.
    pub fn set_counts(&self, entity: &str, counts: MessageCountDetails) {
        self.with(|state| {
            let (message_count, details) = state.counts(entity)?;
            *details = counts;
            *message_count = counts.active + counts.dead_letter + counts.scheduled;
            Ok(())
        })
        .expect("the entity exists");
    }

    /// How many times the namespace was reset.
    pub fn resets(&self) -> usize {
        self.controls.lock().unwrap().resets
    }

    /// The faults injected, in order.
    pub fn faults(&self) -> Vec<(String, Fault)> {
        self.controls.lock().unwrap().faults.clone()
    }

    fn clock_state(controls: &Controls) -> ClockState {
        let offset_ticks = i64::try_from(controls.offset.as_nanos() / 100).unwrap_or(i64::MAX);
        ClockState {
            now: Timestamp::from_unix_ticks((CLOCK_START * 10_000).saturating_add(offset_ticks)),
            offset: controls.offset,
        }
    }

    fn test_controls_on(&self) -> ControlResult<std::sync::MutexGuard<'_, Controls>> {
        let controls = self.controls.lock().unwrap();
        if controls.enabled {
            Ok(controls)
        } else {
            Err(ControlError::NotFound)
        }
    }
}

impl State {
    fn topic(&mut self, topic: &str) -> ControlResult<&mut TopicState> {
        self.topics
            .get_mut(&key(topic))
            .ok_or(ControlError::NotFound)
    }

    fn subscription(&mut self, topic: &str, name: &str) -> ControlResult<&mut SubscriptionState> {
        self.topic(topic)?
            .subscriptions
            .get_mut(&key(name))
            .ok_or(ControlError::NotFound)
    }

    fn name_taken(&self, name: &str) -> bool {
        self.queues.contains_key(&key(name)) || self.topics.contains_key(&key(name))
    }

    /// The message count and count details of a queue or `topic/Subscriptions/sub`.
    fn counts(&mut self, entity: &str) -> ControlResult<(&mut u64, &mut MessageCountDetails)> {
        if let Some((topic, subscription)) = entity.split_once("/Subscriptions/") {
            let runtime = &mut self.subscription(topic, subscription)?.entry.runtime;
            return Ok((&mut runtime.message_count, &mut runtime.counts));
        }
        let runtime = &mut (self.queues.get_mut(&key(entity)))
            .ok_or(ControlError::NotFound)?
            .runtime;
        Ok((&mut runtime.message_count, &mut runtime.counts))
    }
}

impl TopicState {
    fn entry(&self) -> TopicEntry {
        let mut entry = self.entry.clone();
        entry.runtime.subscription_count = self.subscriptions.len() as u64;
        entry
    }
}

/// Of the HTTP data plane, only a receive that finds nothing: it waits until told to give up
/// (its timeout or the server's shutdown). Sends and settlements get the trait's 404.
impl DataPlane for MemoryNamespace {
    async fn receive_message(
        &self,
        _entity: &str,
        _mode: ReceiveMode,
        give_up: impl Future<Output = ()> + Send,
    ) -> DataPlaneResult<Option<HttpMessage>> {
        self.receive_waiting.notify_one();
        give_up.await;
        Ok(None)
    }
}

impl NamespaceControl for MemoryNamespace {
    async fn namespace(&self) -> ControlResult<NamespaceInfo> {
        self.namespace_calls.fetch_add(1, Ordering::SeqCst);
        self.namespace_entered.notify_waiters();
        let _open = self.namespace_gate.lock().await;
        Ok(NamespaceInfo {
            name: NAMESPACE.to_owned(),
            created_time: Timestamp::from_unix_millis(1_700_000_000_000),
            modified_time: Timestamp::from_unix_millis(1_700_000_000_000),
            messaging_sku: MessagingSku::Standard,
            messaging_units: None,
        })
    }

    async fn list_queues(&self, page: PageRequest) -> ControlResult<Page<QueueEntry>> {
        self.with(|state| Ok(page_of(state.queues.values().cloned(), page)))
    }

    async fn queue(&self, name: &str) -> ControlResult<QueueEntry> {
        self.with(|state| {
            state
                .queues
                .get(&key(name))
                .cloned()
                .ok_or(ControlError::NotFound)
        })
    }

    async fn create_queue(
        &self,
        name: &str,
        properties: QueueProperties,
    ) -> ControlResult<QueueEntry> {
        self.with(|state| {
            if state.name_taken(name) {
                return Err(ControlError::AlreadyExists);
            }
            let entry = QueueEntry {
                name: name.to_owned(),
                properties,
                runtime: QueueRuntimeProperties {
                    size_in_bytes: 0,
                    message_count: 0,
                    counts: MessageCountDetails::default(),
                    times: EntityTimes::all_at(now()),
                },
            };
            state.queues.insert(key(name), entry.clone());
            Ok(entry)
        })
    }

    async fn update_queue(
        &self,
        name: &str,
        properties: QueueProperties,
    ) -> ControlResult<QueueEntry> {
        self.with(|state| {
            let entry = state
                .queues
                .get_mut(&key(name))
                .ok_or(ControlError::NotFound)?;
            entry.properties = properties;
            entry.runtime.times.updated_at = now();
            Ok(entry.clone())
        })
    }

    async fn delete_queue(&self, name: &str) -> ControlResult<()> {
        self.with(|state| {
            state
                .queues
                .remove(&key(name))
                .map(drop)
                .ok_or(ControlError::NotFound)
        })
    }

    async fn list_topics(&self, page: PageRequest) -> ControlResult<Page<TopicEntry>> {
        self.with(|state| Ok(page_of(state.topics.values().map(TopicState::entry), page)))
    }

    async fn topic(&self, name: &str) -> ControlResult<TopicEntry> {
        self.with(|state| state.topic(name).map(|topic| topic.entry()))
    }

    async fn create_topic(
        &self,
        name: &str,
        properties: TopicProperties,
    ) -> ControlResult<TopicEntry> {
        self.with(|state| {
            if state.name_taken(name) {
                return Err(ControlError::AlreadyExists);
            }
            let entry = TopicEntry {
                name: name.to_owned(),
                properties,
                runtime: TopicRuntimeProperties {
                    size_in_bytes: 0,
                    subscription_count: 0,
                    counts: MessageCountDetails::default(),
                    times: EntityTimes::all_at(now()),
                },
            };
            let topic = TopicState {
                entry: entry.clone(),
                subscriptions: BTreeMap::new(),
            };
            state.topics.insert(key(name), topic);
            Ok(entry)
        })
    }

    async fn update_topic(
        &self,
        name: &str,
        properties: TopicProperties,
    ) -> ControlResult<TopicEntry> {
        self.with(|state| {
            let topic = state.topic(name)?;
            topic.entry.properties = properties;
            topic.entry.runtime.times.updated_at = now();
            Ok(topic.entry())
        })
    }

    async fn delete_topic(&self, name: &str) -> ControlResult<()> {
        self.with(|state| {
            state
                .topics
                .remove(&key(name))
                .map(drop)
                .ok_or(ControlError::NotFound)
        })
    }

    async fn list_subscriptions(
        &self,
        topic: &str,
        page: PageRequest,
    ) -> ControlResult<Page<SubscriptionEntry>> {
        self.with(|state| {
            let subscriptions = &state.topic(topic)?.subscriptions;
            Ok(page_of(
                subscriptions.values().map(|s| s.entry.clone()),
                page,
            ))
        })
    }

    async fn subscription(&self, topic: &str, name: &str) -> ControlResult<SubscriptionEntry> {
        self.with(|state| Ok(state.subscription(topic, name)?.entry.clone()))
    }

    async fn create_subscription(
        &self,
        topic: &str,
        name: &str,
        properties: SubscriptionProperties,
        default_rule: RuleProperties,
    ) -> ControlResult<SubscriptionEntry> {
        self.with(|state| {
            let topic = state.topic(topic)?;
            if topic.subscriptions.contains_key(&key(name)) {
                return Err(ControlError::AlreadyExists);
            }
            let created = now();
            let entry = SubscriptionEntry {
                name: name.to_owned(),
                properties,
                runtime: SubscriptionRuntimeProperties {
                    message_count: 0,
                    counts: MessageCountDetails::default(),
                    times: EntityTimes::all_at(created),
                },
            };
            let rule = RuleEntry {
                properties: default_rule,
                created_at: created,
            };
            let rules = BTreeMap::from([(key(&rule.properties.name), rule)]);
            let subscription = SubscriptionState {
                entry: entry.clone(),
                rules,
            };
            topic.subscriptions.insert(key(name), subscription);
            Ok(entry)
        })
    }

    async fn update_subscription(
        &self,
        topic: &str,
        name: &str,
        properties: SubscriptionProperties,
    ) -> ControlResult<SubscriptionEntry> {
        self.with(|state| {
            let subscription = state.subscription(topic, name)?;
            subscription.entry.properties = properties;
            subscription.entry.runtime.times.updated_at = now();
            Ok(subscription.entry.clone())
        })
    }

    async fn delete_subscription(&self, topic: &str, name: &str) -> ControlResult<()> {
        self.with(|state| {
            (state.topic(topic)?.subscriptions.remove(&key(name)))
                .map(drop)
                .ok_or(ControlError::NotFound)
        })
    }

    async fn list_rules(
        &self,
        topic: &str,
        subscription: &str,
        page: PageRequest,
    ) -> ControlResult<Page<RuleEntry>> {
        self.with(|state| {
            let rules = &state.subscription(topic, subscription)?.rules;
            Ok(page_of(rules.values().cloned(), page))
        })
    }

    async fn rule(&self, topic: &str, subscription: &str, name: &str) -> ControlResult<RuleEntry> {
        self.with(|state| {
            (state
                .subscription(topic, subscription)?
                .rules
                .get(&key(name)))
            .cloned()
            .ok_or(ControlError::NotFound)
        })
    }

    async fn create_rule(
        &self,
        topic: &str,
        subscription: &str,
        rule: RuleProperties,
    ) -> ControlResult<RuleEntry> {
        self.with(|state| {
            let rules = &mut state.subscription(topic, subscription)?.rules;
            if rules.contains_key(&key(&rule.name)) {
                return Err(ControlError::AlreadyExists);
            }
            let entry = RuleEntry {
                properties: rule,
                created_at: now(),
            };
            rules.insert(key(&entry.properties.name), entry.clone());
            Ok(entry)
        })
    }

    async fn update_rule(
        &self,
        topic: &str,
        subscription: &str,
        rule: RuleProperties,
    ) -> ControlResult<RuleEntry> {
        self.with(|state| {
            let rules = &mut state.subscription(topic, subscription)?.rules;
            let entry = rules
                .get_mut(&key(&rule.name))
                .ok_or(ControlError::NotFound)?;
            entry.properties.filter = rule.filter;
            entry.properties.action = rule.action;
            Ok(entry.clone())
        })
    }

    async fn delete_rule(&self, topic: &str, subscription: &str, name: &str) -> ControlResult<()> {
        self.with(|state| {
            (state
                .subscription(topic, subscription)?
                .rules
                .remove(&key(name)))
            .map(drop)
            .ok_or(ControlError::NotFound)
        })
    }

    async fn metrics(&self) -> ControlResult<MetricsSnapshot> {
        let state = self.state.lock().unwrap();
        let entity = |name: &str, counts: &MessageCountDetails, size_bytes: u64| EntityMetrics {
            name: name.to_owned(),
            active: counts.active,
            dead_lettered: counts.dead_letter,
            scheduled: counts.scheduled,
            size_bytes,
            ..EntityMetrics::default()
        };
        let mut entities = Vec::new();
        for queue in state.queues.values() {
            let runtime = &queue.runtime;
            entities.push(entity(&queue.name, &runtime.counts, runtime.size_in_bytes));
        }
        for topic in state.topics.values() {
            let runtime = &topic.entry.runtime;
            entities.push(entity(
                &topic.entry.name,
                &runtime.counts,
                runtime.size_in_bytes,
            ));
            for subscription in topic.subscriptions.values() {
                let name = format!(
                    "{}/Subscriptions/{}",
                    topic.entry.name, subscription.entry.name
                );
                entities.push(entity(&name, &subscription.entry.runtime.counts, 0));
            }
        }
        Ok(MetricsSnapshot {
            entities,
            ..MetricsSnapshot::default()
        })
    }

    fn test_controls(&self) -> bool {
        self.controls.lock().unwrap().enabled
    }

    async fn overview(&self) -> ControlResult<Vec<EntityCounts>> {
        let row = |path: String| EntityCounts {
            path,
            kind: EntityKind::Queue,
            active: 0,
            dead_letter: 0,
            scheduled: 0,
            deferred: 0,
            requires_session: false,
        };
        Ok(self.queue_names().into_iter().map(row).collect())
    }

    async fn purge(&self, entity: &str, dead_letter_only: bool) -> ControlResult<u64> {
        self.with(|state| {
            let (message_count, counts) = state.counts(entity)?;
            let purged = if dead_letter_only {
                std::mem::take(&mut counts.dead_letter)
            } else {
                let taken = std::mem::take(counts);
                taken.active + taken.dead_letter + taken.scheduled
            };
            *message_count -= purged;
            Ok(purged)
        })
    }

    async fn reset(&self) -> ControlResult<()> {
        self.with(|state| {
            let queues = state.queues.values_mut().map(|queue| &mut queue.runtime);
            for runtime in queues {
                runtime.message_count = 0;
                runtime.counts = MessageCountDetails::default();
            }
            let subscriptions = (state.topics.values_mut())
                .flat_map(|topic| topic.subscriptions.values_mut())
                .map(|subscription| &mut subscription.entry.runtime);
            for runtime in subscriptions {
                runtime.message_count = 0;
                runtime.counts = MessageCountDetails::default();
            }
            Ok(())
        })?;
        self.controls.lock().unwrap().resets += 1;
        Ok(())
    }

    async fn clock(&self) -> ControlResult<ClockState> {
        Ok(Self::clock_state(&*self.test_controls_on()?))
    }

    async fn advance_clock(&self, by: Duration) -> ControlResult<ClockState> {
        let mut controls = self.test_controls_on()?;
        controls.offset += by;
        Ok(Self::clock_state(&controls))
    }

    async fn inject_fault(&self, entity: &str, fault: Fault) -> ControlResult<()> {
        self.with(|state| state.counts(entity).map(drop))
            .or_else(|_| self.with(|state| state.topic(entity).map(drop)))?;
        self.test_controls_on()?
            .faults
            .push((entity.to_owned(), fault));
        Ok(())
    }
}
