//! The entity registry: every queue and subscription with its task's inbox, topics as routers to
//! their subscriptions, and the stable numeric id of each entity in the store (persisted as
//! `Meta` records so a restart maps the same names to the same ids).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use busbar_amqp::message::Message;
use busbar_core::{DeadLetterInfo, Entity, EntityConfig, NewMessage, Properties};
use busbar_store::{EntityId, Record, Recovered};
use bytes::Bytes;
use tokio::sync::mpsc;

use busbar_rules::{Disposition, Guid, RuleSet, Subscription, fan_out};

use super::dead_letter_forwarding::forwarded_copy;
use super::mailbox::EntityCommand;
use super::metrics::EntityMetrics;
use super::rule_changes::{self, LiveRules};
use super::rules::{AmqpView, compile, edited_copy};
use super::{MAX_MESSAGE_SIZE, topic_schedule};
use crate::address::EntityPath;
use crate::auth::SasKeys;
use crate::config::{
    DeliverySettings, DuplicateDetection, EntityStatus, NamespaceConfig, QueueConfig,
    SubscriptionConfig, TopicConfig, message_size_limit, subscription_refuses_receives,
};
use crate::errors::BrokerError;
use crate::names::EntityName;

/// The store entity under which the name → id map is kept (never a real entity).
pub(crate) const REGISTRY_ENTITY: EntityId = EntityId(0);
/// Prefix of the name → id metadata keys.
const ID_KEY_PREFIX: &str = "entity-id:";

/// A queue or subscription: where its commands go.
#[derive(Clone, Debug)]
pub(crate) struct EntityHandle {
    /// The entity's path as configured (`queue.1`, `topic.1/Subscriptions/subscription.1`).
    pub(crate) path: String,
    /// Its task's inbox.
    pub(crate) inbox: mpsc::Sender<EntityCommand>,
    /// `RequiresSession`: receivers must accept a session, messages need a session id.
    pub(crate) requires_session: bool,
    /// Its messages in and out.
    pub(crate) metrics: Arc<EntityMetrics>,
}

/// A subscription as its topic routes to it.
#[derive(Clone, Debug)]
pub(crate) struct SubscriptionRoute {
    /// Which messages it takes; add-rule and remove-rule replace them.
    pub(crate) rules: Arc<LiveRules>,
    /// Its id in the store, under which changed rules are persisted.
    pub(crate) id: EntityId,
    /// The subscription.
    pub(crate) entity: EntityHandle,
    /// `ForwardTo`: where its messages go instead.
    pub(crate) forward_to: Option<EntityName>,
    /// `ForwardDeadLetteredMessagesTo`: where its dead-lettered messages go instead.
    pub(crate) forward_dead_letters_to: Option<EntityName>,
    /// `DeadLetteringOnFilterEvaluationExceptions`: whether a copy whose filter or action fails
    /// to evaluate is dead-lettered (or dropped).
    pub(crate) dead_letter_on_filter_error: bool,
}

/// A topic: the subscriptions a sent message is copied to, with their rules.
#[derive(Clone, Debug)]
pub(crate) struct TopicRoute {
    /// The topic's name as configured.
    pub(crate) path: String,
    /// The entity holding the topic's scheduled messages until they are due (its
    /// `$management` node); see `topic_schedule`.
    pub(crate) scheduled: EntityHandle,
    /// Each subscription with its rules.
    pub(crate) subscriptions: Vec<SubscriptionRoute>,
}

/// What an entity path resolves to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resolved<'a> {
    /// A queue or subscription.
    Entity(&'a EntityHandle),
    /// A topic (send only).
    Topic(&'a TopicRoute),
}

/// The entities of the namespace.
#[derive(Clone, Debug, Default)]
pub(crate) struct Registry {
    queues: HashMap<EntityName, EntityHandle>,
    /// `ForwardTo` of the queues that have one.
    queue_forwards: HashMap<EntityName, EntityName>,
    topics: HashMap<EntityName, TopicRoute>,
    subscriptions: HashMap<(EntityName, EntityName), EntityHandle>,
    /// The status of every entity that is not active (see `status`).
    statuses: HashMap<EntityPath, EntityStatus>,
    /// `MaxMessageSizeInKilobytes` of every queue and topic, in bytes.
    message_limits: HashMap<EntityName, u64>,
    /// The shared-access rules of the queues and topics that have their own (see `status`).
    entity_keys: HashMap<EntityName, Arc<SasKeys>>,
}

/// Service Bus forwards over at most this many hops (the configuration checks refuse more).
const MAX_FORWARD_HOPS: usize = 4;

impl Registry {
    /// The entity or topic a path names.
    pub(crate) fn resolve(&self, path: &EntityPath) -> Option<Resolved<'_>> {
        match path {
            EntityPath::QueueOrTopic(name) => self
                .queues
                .get(name)
                .map(Resolved::Entity)
                .or_else(|| self.topics.get(name).map(Resolved::Topic)),
            EntityPath::Subscription {
                topic,
                subscription,
            } => self
                .subscriptions
                .get(&(topic.clone(), subscription.clone()))
                .map(Resolved::Entity),
        }
    }

    /// The largest message the queue or topic at `path` takes (a subscription: its topic's);
    /// an entity this registry does not know gets the default.
    pub(crate) fn max_message_size(&self, path: &EntityPath) -> u64 {
        let name = match path {
            EntityPath::QueueOrTopic(name) => name,
            EntityPath::Subscription { topic, .. } => topic,
        };
        self.message_limits
            .get(name)
            .copied()
            .unwrap_or(MAX_MESSAGE_SIZE)
    }

    /// The subscription whose configured path is `path` (an entity handle's path).
    pub(crate) fn subscription(&self, path: &str) -> Option<&SubscriptionRoute> {
        self.topics
            .values()
            .flat_map(|topic| &topic.subscriptions)
            .find(|subscription| subscription.entity.path == path)
    }

    /// Where messages sent to `path` are stored: each entity with the messages it takes.
    /// Topics copy each message to the subscriptions whose rules select it; `ForwardTo` is
    /// followed at send time, so a forwarding entity never holds the messages itself.
    pub(crate) fn route(
        &self,
        path: &EntityPath,
        messages: Vec<NewMessage>,
    ) -> Vec<(EntityHandle, Vec<NewMessage>)> {
        let mut targets = Vec::new();
        self.route_into(path, messages, 0, &mut targets);
        targets
    }

    fn route_into(
        &self,
        path: &EntityPath,
        messages: Vec<NewMessage>,
        hops: usize,
        targets: &mut Vec<(EntityHandle, Vec<NewMessage>)>,
    ) {
        let EntityPath::QueueOrTopic(name) = path else {
            if let Some(Resolved::Entity(entity)) = self.resolve(path) {
                targets.push((entity.clone(), messages));
            }
            return;
        };
        if let Some(queue) = self.queues.get(name) {
            match self.queue_forwards.get(name) {
                Some(next) if hops < MAX_FORWARD_HOPS => self.route_into(
                    &EntityPath::QueueOrTopic(next.clone()),
                    messages,
                    hops + 1,
                    targets,
                ),
                _ => targets.push((queue.clone(), messages)),
            }
        } else if let Some(topic) = self.topics.get(name) {
            for (index, selected) in topic.fan_out(&messages).into_iter().enumerate() {
                let Some(subscription) = topic.subscriptions.get(index) else {
                    continue;
                };
                if selected.is_empty() {
                    continue;
                }
                // A copy a failing filter dead-lettered follows ForwardDeadLetteredMessagesTo,
                // the others ForwardTo; without one they stay in the subscription.
                let (dead_lettered, deliverable): (Vec<_>, Vec<_>) = selected
                    .into_iter()
                    .partition(|copy| copy.dead_letter.is_some());
                let dead_lettered = match &subscription.forward_dead_letters_to {
                    Some(_) if hops < MAX_FORWARD_HOPS => dead_lettered
                        .into_iter()
                        .filter_map(|copy| self.forwardable(&topic.path, copy))
                        .collect(),
                    _ => dead_lettered,
                };
                let routes = [
                    (&subscription.forward_dead_letters_to, dead_lettered),
                    (&subscription.forward_to, deliverable),
                ];
                for (forward, copies) in routes {
                    if copies.is_empty() {
                        continue;
                    }
                    match forward {
                        Some(next) if hops < MAX_FORWARD_HOPS => self.route_into(
                            &EntityPath::QueueOrTopic(next.clone()),
                            copies,
                            hops + 1,
                            targets,
                        ),
                        _ => targets.push((subscription.entity.clone(), copies)),
                    }
                }
            }
        }
    }
}

impl Registry {
    /// Adds a queue created while the broker runs.
    pub(crate) fn add_queue(&mut self, queue: &QueueConfig, handle: EntityHandle) {
        self.queues.insert(queue.name.clone(), handle);
        self.change_queue(queue);
    }

    /// Routes a queue's sends and applies its status and message size limit as its (changed)
    /// definition says.
    pub(crate) fn change_queue(&mut self, queue: &QueueConfig) {
        match &queue.delivery.forward_to {
            Some(next) => self.queue_forwards.insert(queue.name.clone(), next.clone()),
            None => self.queue_forwards.remove(&queue.name),
        };
        self.set_status(EntityPath::QueueOrTopic(queue.name.clone()), queue.status);
        let limit = message_size_limit(queue.max_message_size_in_kilobytes);
        self.message_limits.insert(queue.name.clone(), limit);
        self.set_entity_keys(&queue.name, &queue.authorization_rules);
    }

    /// Removes a deleted queue; returns its handle.
    pub(crate) fn remove_queue(&mut self, name: &EntityName) -> Option<EntityHandle> {
        self.queue_forwards.remove(name);
        self.message_limits.remove(name);
        self.statuses
            .remove(&EntityPath::QueueOrTopic(name.clone()));
        self.entity_keys.remove(name);
        self.queues.remove(name)
    }

    /// Adds a topic (without subscriptions) whose scheduled messages `scheduled` holds.
    pub(crate) fn add_topic(&mut self, topic: &TopicConfig, scheduled: EntityHandle) {
        let route = TopicRoute {
            path: topic.name.to_string(),
            scheduled,
            subscriptions: Vec::new(),
        };
        self.topics.insert(topic.name.clone(), route);
        self.change_topic(topic);
    }

    /// Applies a topic's (changed) status and message size limit.
    pub(crate) fn change_topic(&mut self, topic: &TopicConfig) {
        self.set_status(EntityPath::QueueOrTopic(topic.name.clone()), topic.status);
        let limit = message_size_limit(topic.max_message_size_in_kilobytes);
        self.message_limits.insert(topic.name.clone(), limit);
        self.set_entity_keys(&topic.name, &topic.authorization_rules);
    }

    /// Removes a deleted topic with its subscriptions; returns its route.
    pub(crate) fn remove_topic(&mut self, name: &EntityName) -> Option<TopicRoute> {
        self.subscriptions.retain(|(topic, _), _| topic != name);
        self.message_limits.remove(name);
        self.entity_keys.remove(name);
        self.statuses.retain(|path, _| match path {
            EntityPath::QueueOrTopic(entity) => entity != name,
            EntityPath::Subscription { topic, .. } => topic != name,
        });
        self.topics.remove(name)
    }

    /// The topic named `name`.
    pub(crate) fn topic(&self, name: &EntityName) -> Option<&TopicRoute> {
        self.topics.get(name)
    }

    /// Adds `subscription` to `topic` (which exists).
    pub(crate) fn add_subscription(
        &mut self,
        topic: &EntityName,
        subscription: &SubscriptionConfig,
        route: SubscriptionRoute,
    ) {
        let Some(routes) = self.topics.get_mut(topic) else {
            return;
        };
        self.subscriptions.insert(
            (topic.clone(), subscription.name.clone()),
            route.entity.clone(),
        );
        routes.subscriptions.push(route);
        self.set_status(
            subscription_entity_path(topic, subscription),
            subscription.status,
        );
    }

    /// Routes to a subscription as its changed definition says (its rules stay).
    pub(crate) fn change_subscription(
        &mut self,
        topic: &EntityName,
        subscription: &SubscriptionConfig,
    ) {
        let Some(route) = self.subscription_route_mut(topic, &subscription.name) else {
            return;
        };
        route.forward_to = subscription.delivery.forward_to.clone();
        route.forward_dead_letters_to = subscription
            .delivery
            .forward_dead_lettered_messages_to
            .clone();
        route.dead_letter_on_filter_error =
            subscription.dead_lettering_on_filter_evaluation_exceptions;
        self.set_status(
            subscription_entity_path(topic, subscription),
            subscription.status,
        );
    }

    /// Removes a deleted subscription; returns its route.
    pub(crate) fn remove_subscription(
        &mut self,
        topic: &EntityName,
        name: &EntityName,
    ) -> Option<SubscriptionRoute> {
        let handle = self.subscriptions.remove(&(topic.clone(), name.clone()))?;
        self.statuses.remove(&EntityPath::Subscription {
            topic: topic.clone(),
            subscription: name.clone(),
        });
        let routes = &mut self.topics.get_mut(topic)?.subscriptions;
        let index = routes
            .iter()
            .position(|route| route.entity.path == handle.path)?;
        Some(routes.remove(index))
    }

    /// The route to the subscription `name` of `topic`.
    pub(crate) fn subscription_route_of(
        &self,
        topic: &EntityName,
        name: &EntityName,
    ) -> Option<&SubscriptionRoute> {
        let handle = self.subscriptions.get(&(topic.clone(), name.clone()))?;
        self.topics
            .get(topic)?
            .subscriptions
            .iter()
            .find(|route| route.entity.path == handle.path)
    }

    fn subscription_route_mut(
        &mut self,
        topic: &EntityName,
        name: &EntityName,
    ) -> Option<&mut SubscriptionRoute> {
        let path = self
            .subscriptions
            .get(&(topic.clone(), name.clone()))?
            .path
            .clone();
        self.topics
            .get_mut(topic)?
            .subscriptions
            .iter_mut()
            .find(|route| route.entity.path == path)
    }

    /// Every entity: the queues, each topic's scheduled messages and its subscriptions.
    pub(crate) fn entities(&self) -> Vec<EntityHandle> {
        let topics = self.topics.values().flat_map(|topic| {
            std::iter::once(topic.scheduled.clone())
                .chain(topic.subscriptions.iter().map(|s| s.entity.clone()))
        });
        self.queues.values().cloned().chain(topics).collect()
    }

    /// Whether a queue or topic is named `name`.
    pub(crate) fn resolve_name(&self, name: &EntityName) -> bool {
        self.queues.contains_key(name) || self.topics.contains_key(name)
    }

    /// The queue named `name`.
    pub(crate) fn queue(&self, name: &EntityName) -> Option<&EntityHandle> {
        self.queues.get(name)
    }

    /// A copy dead-lettered by a failing filter as it is forwarded: its reason written into its
    /// application properties (dropped with a warning if its sections cannot be read).
    fn forwardable(&self, topic: &str, copy: NewMessage) -> Option<NewMessage> {
        forwarded_copy(copy.payload, &Properties::new(), copy.dead_letter.as_ref())
            .inspect_err(|error| {
                tracing::warn!(topic, %error, "dead-lettered copy cannot be forwarded");
            })
            .ok()
    }
}

impl TopicRoute {
    /// The copies of `messages` for each subscription (by index), edited by the rule actions
    /// that made them; a copy whose filter or action failed to evaluate goes unmodified to the
    /// subscription's dead-letter sub-queue with the reason `busbar_rules` names (unless the
    /// subscription turned `DeadLetteringOnFilterEvaluationExceptions` off: then it is dropped). A message
    /// whose sections cannot be decoded is dropped with a warning.
    fn fan_out(&self, messages: &[NewMessage]) -> Vec<Vec<NewMessage>> {
        let rules: Vec<Arc<RuleSet>> = self
            .subscriptions
            .iter()
            .map(|subscription| subscription.rules.current())
            .collect();
        let subscriptions: Vec<Subscription<'_>> = rules
            .iter()
            .zip(&self.subscriptions)
            .map(|(rules, subscription)| Subscription {
                rules,
                dead_letter_on_filter_error: subscription.dead_letter_on_filter_error,
            })
            .collect();
        let mut selected = vec![Vec::new(); subscriptions.len()];
        let mut new_guid = || Guid(*uuid::Uuid::new_v4().as_bytes());
        for message in messages {
            let view = match AmqpView::of(&Message::from_bytes(message.payload.clone())) {
                Ok(view) => view,
                Err(error) => {
                    tracing::warn!(topic = %self.path, %error, "message sections cannot be read; no subscription takes it");
                    continue;
                }
            };
            for copy in fan_out(&subscriptions, &view, &mut new_guid) {
                let Some(target) = selected.get_mut(copy.subscription) else {
                    continue;
                };
                match copy.disposition {
                    Disposition::Deliver { rule: None, .. } => target.push(message.clone()),
                    Disposition::Deliver {
                        rule: Some(rule),
                        edits,
                    } => match edited_copy(message, &rule, &edits) {
                        Ok(copy) => target.push(copy),
                        Err(error) => {
                            tracing::warn!(topic = %self.path, rule, %error, "rule action cannot edit the message");
                        }
                    },
                    Disposition::DeadLetter {
                        reason,
                        description,
                    } => target.push(NewMessage {
                        dead_letter: Some(DeadLetterInfo {
                            reason: Some(reason.to_owned()),
                            description: Some(description),
                        }),
                        ..message.clone()
                    }),
                }
            }
        }
        selected
    }
}

/// A subscription whose configured rules cannot be parsed.
#[derive(Debug)]
pub(crate) struct RulesError {
    /// The subscription's path.
    pub(crate) subscription: String,
    /// What is wrong with its rules.
    pub(crate) source: busbar_rules::Error,
}

/// One entity to start: its store id, core configuration and inbox.
pub(crate) struct EntitySpec {
    pub(crate) path: String,
    pub(crate) id: EntityId,
    pub(crate) config: EntityConfig,
    pub(crate) requires_session: bool,
    pub(crate) inbox: mpsc::Receiver<EntityCommand>,
    /// A handle on its own inbox that does not keep the task alive.
    pub(crate) own_inbox: mpsc::WeakSender<EntityCommand>,
    /// `ForwardDeadLetteredMessagesTo`.
    pub(crate) forward_dead_letters_to: Option<EntityName>,
    /// Set for a topic's scheduled messages: the topic whose subscriptions take them when due.
    pub(crate) releases_to_topic: Option<EntityName>,
    /// Its counters, shared with its handle.
    pub(crate) metrics: Arc<EntityMetrics>,
    /// Set when its status (or its topic's) refuses receives: what they are refused with.
    pub(crate) receive_refusal: Option<BrokerError>,
}

impl EntitySpec {
    /// Refuses receives from the start when `refused` (the entity's status says so).
    pub(crate) fn refusing_receives(mut self, refused: bool, namespace: &str) -> Self {
        self.receive_refusal = refused.then(|| BrokerError::EntityDisabled {
            namespace: namespace.to_owned(),
            entity: self.path.clone(),
        });
        self
    }
}

/// The registry of `namespace`, the entities to start, and the metadata records that persist
/// ids assigned for the first time.
pub(crate) fn build(
    namespace: &NamespaceConfig,
    recovered: &Recovered,
    inbox_capacity: usize,
) -> Result<(Registry, Vec<EntitySpec>, IdAssigner), RulesError> {
    let mut ids = IdAssigner::new(recovered);
    let mut registry = Registry::default();
    let mut specs = Vec::new();
    let mut open =
        |path: String, config: EntityConfig, delivery: Delivery<'_>, refuses_receives: bool| {
            let id = ids.id_of(&path);
            let (spec, handle) = new_entity(path, id, config, delivery, inbox_capacity);
            specs.push(spec.refusing_receives(refuses_receives, &namespace.name));
            (handle, id)
        };
    for queue in &namespace.queues {
        let (handle, _) = open(
            queue.name.to_string(),
            queue_entity_config(queue),
            Delivery::Receivers(&queue.delivery),
            queue.status.refuses_receives(),
        );
        registry.add_queue(queue, handle);
    }
    for topic in &namespace.topics {
        let (scheduled, _) = open(
            topic.name.to_string(),
            topic_schedule::entity_config(topic),
            Delivery::ToSubscriptionsOf(&topic.name),
            false,
        );
        registry.add_topic(topic, scheduled);
        for subscription in &topic.subscriptions {
            let path = subscription_path(topic, subscription);
            let configured = compile(&subscription.rules).map_err(|source| RulesError {
                subscription: path.clone(),
                source,
            })?;
            let config = subscription_entity_config(topic, subscription);
            let refuses_receives = subscription_refuses_receives(subscription.status, topic.status);
            let delivery = Delivery::Receivers(&subscription.delivery);
            let (handle, id) = open(path, config, delivery, refuses_receives);
            // Rules changed through add-rule / remove-rule replace the configured ones.
            let rules = match rule_changes::persisted(recovered, id) {
                None => configured,
                Some(Ok(changed)) => changed,
                Some(Err(error)) => {
                    tracing::error!(subscription = %handle.path, %error, "persisted rules unreadable; configured rules used");
                    configured
                }
            };
            let route = subscription_route(subscription, rules, id, handle);
            registry.add_subscription(&topic.name, subscription, route);
        }
    }
    Ok((registry, specs, ids))
}

/// Who takes an entity's messages.
#[derive(Clone, Copy)]
pub(crate) enum Delivery<'a> {
    /// Receivers of a queue or subscription, with these settings.
    Receivers(&'a DeliverySettings),
    /// The subscriptions of this topic, when a scheduled message comes due.
    ToSubscriptionsOf(&'a EntityName),
}

/// The core configuration of a queue.
pub(crate) fn queue_entity_config(queue: &QueueConfig) -> EntityConfig {
    entity_config(
        &queue.delivery,
        Some(queue.duplicate_detection),
        queue.max_size_in_megabytes,
    )
}

/// An entity's task to start and the handle that reaches it.
pub(crate) fn new_entity(
    path: String,
    id: EntityId,
    config: EntityConfig,
    delivery: Delivery<'_>,
    inbox_capacity: usize,
) -> (EntitySpec, EntityHandle) {
    let (sender, inbox) = mpsc::channel(inbox_capacity);
    let (requires_session, forward_dead_letters_to, releases_to_topic) = match delivery {
        Delivery::Receivers(settings) => (
            settings.requires_session,
            settings.forward_dead_lettered_messages_to.clone(),
            None,
        ),
        Delivery::ToSubscriptionsOf(topic) => (false, None, Some(topic.clone())),
    };
    let metrics = Arc::<EntityMetrics>::default();
    let spec = EntitySpec {
        path: path.clone(),
        id,
        config,
        requires_session,
        inbox,
        own_inbox: sender.downgrade(),
        forward_dead_letters_to,
        releases_to_topic,
        metrics: Arc::clone(&metrics),
        receive_refusal: None,
    };
    let handle = EntityHandle {
        path,
        inbox: sender,
        requires_session,
        metrics,
    };
    (spec, handle)
}

/// A subscription's entity path (`topic/Subscriptions/name`), as configured.
pub(crate) fn subscription_path(topic: &TopicConfig, subscription: &SubscriptionConfig) -> String {
    format!("{}/Subscriptions/{}", topic.name, subscription.name)
}

/// The address path of `subscription` of `topic`.
fn subscription_entity_path(topic: &EntityName, subscription: &SubscriptionConfig) -> EntityPath {
    EntityPath::Subscription {
        topic: topic.clone(),
        subscription: subscription.name.clone(),
    }
}

/// The core configuration of a subscription of `topic`. A topic's duplicate detection applied
/// at each subscription drops exactly the copies a topic-level check would have dropped. Its
/// size quota bounds each subscription on its own (Service Bus counts a message once across
/// them; see ARCHITECTURE.md, "Entity size quota").
pub(crate) fn subscription_entity_config(
    topic: &TopicConfig,
    subscription: &SubscriptionConfig,
) -> EntityConfig {
    entity_config(
        &subscription.delivery,
        Some(topic.duplicate_detection),
        topic.max_size_in_megabytes,
    )
}

/// How a topic routes to `subscription`, which takes what `rules` select.
pub(crate) fn subscription_route(
    subscription: &SubscriptionConfig,
    rules: RuleSet,
    id: EntityId,
    entity: EntityHandle,
) -> SubscriptionRoute {
    SubscriptionRoute {
        rules: Arc::new(LiveRules::new(rules)),
        id,
        entity,
        forward_to: subscription.delivery.forward_to.clone(),
        forward_dead_letters_to: subscription
            .delivery
            .forward_dead_lettered_messages_to
            .clone(),
        dead_letter_on_filter_error: subscription.dead_lettering_on_filter_evaluation_exceptions,
    }
}

/// The core configuration of a queue or subscription.
fn entity_config(
    delivery: &DeliverySettings,
    duplicates: Option<DuplicateDetection>,
    max_size_in_megabytes: u32,
) -> EntityConfig {
    EntityConfig {
        lock_duration: delivery.lock_duration,
        max_delivery_count: delivery.max_delivery_count,
        default_message_ttl: Some(delivery.default_message_time_to_live),
        dead_lettering_on_message_expiration: delivery.dead_lettering_on_message_expiration,
        duplicate_detection_window: duplicates
            .filter(|d| d.enabled)
            .map(|d| d.history_time_window),
        max_size_bytes: u64::from(max_size_in_megabytes) * 1024 * 1024,
    }
}

/// Hands out ids: the persisted one for a known name, the next free one otherwise.
pub(crate) struct IdAssigner {
    known: BTreeMap<String, EntityId>,
    next: u32,
    new_records: Vec<Record>,
}

impl IdAssigner {
    fn new(recovered: &Recovered) -> Self {
        let known: BTreeMap<String, EntityId> = recovered
            .meta
            .iter()
            .filter(|(key, _)| key.entity == REGISTRY_ENTITY)
            .filter_map(|(key, value)| {
                let name = std::str::from_utf8(&key.key)
                    .ok()?
                    .strip_prefix(ID_KEY_PREFIX)?;
                let bytes: [u8; 4] = value.as_ref().try_into().ok()?;
                Some((name.to_owned(), EntityId(u32::from_be_bytes(bytes))))
            })
            .collect();
        let used = known.values().map(|id| id.0);
        let next = used
            .chain(recovered.high_water.keys().map(|id| id.0))
            .max()
            .unwrap_or(0)
            + 1;
        Self {
            known,
            next,
            new_records: Vec::new(),
        }
    }

    /// The records that persist the ids assigned since the last call.
    pub(crate) fn take_new_records(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.new_records)
    }

    /// The id of the entity at `path`, assigned now if it has none.
    pub(crate) fn id_of(&mut self, path: &str) -> EntityId {
        // Names are case-insensitive, so the key is the lower-case path.
        let name = path.to_ascii_lowercase();
        if let Some(id) = self.known.get(&name) {
            return *id;
        }
        let id = EntityId(self.next);
        self.next += 1;
        self.new_records.push(Record::Meta {
            entity: REGISTRY_ENTITY,
            key: Bytes::from(format!("{ID_KEY_PREFIX}{name}")),
            value: Some(Bytes::copy_from_slice(&id.0.to_be_bytes())),
        });
        self.known.insert(name, id);
        id
    }
}

/// The entity as the store left it (or empty); `seed` keys its lock tokens.
pub(crate) fn restore_entity(
    spec: &EntitySpec,
    recovered: &Recovered,
    seed: u128,
    now: busbar_core::Timestamp,
) -> Result<Entity, busbar_core::CoreError> {
    let high_water = recovered.high_water.get(&spec.id).copied().unwrap_or(0);
    let messages = recovered
        .messages_of(spec.id)
        .map(|(sequence, stored)| (sequence, stored.message.clone(), stored.state.clone()));
    Entity::restore(spec.config.clone(), seed, high_water, messages, now)
}

mod status;
#[cfg(test)]
mod tests;
