//! `MemoryNamespace`: a complete in-memory `NamespaceControl`, standing in for the broker.
//! Names compare case-insensitively (maps are keyed by the lower-cased name), listings are
//! alphabetical, queues and topics share one name space. `hold_namespace` lets a test keep
//! `GET /$namespaceinfo` waiting, to observe deadlines and graceful shutdown.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use busbar_admin::atom::{
    EntityTimes, MessageCountDetails, MessagingSku, NamespaceInfo, PageRequest, QueueProperties,
    QueueRuntimeProperties, RuleProperties, SubscriptionProperties, SubscriptionRuntimeProperties,
    Timestamp, TopicProperties, TopicRuntimeProperties,
};
use busbar_admin::control::{
    ControlError, ControlResult, NamespaceControl, Page, QueueEntry, RuleEntry, SubscriptionEntry,
    TopicEntry,
};
use tokio::sync::{Notify, OwnedMutexGuard};

/// The namespace name the emulator uses.
pub const NAMESPACE: &str = "sbemulatorns";

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

/// The in-memory namespace.
#[derive(Default)]
pub struct MemoryNamespace {
    state: Mutex<State>,
    namespace_gate: std::sync::Arc<tokio::sync::Mutex<()>>,
    namespace_calls: AtomicUsize,
    namespace_entered: Notify,
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
}

impl TopicState {
    fn entry(&self) -> TopicEntry {
        let mut entry = self.entry.clone();
        entry.runtime.subscription_count = self.subscriptions.len() as u64;
        entry
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
}
