//! Topics, subscriptions and rules through the control interface. A topic is its entity of
//! scheduled messages plus a route to its subscriptions; a subscription is an entity of its own
//! with live rules. Rules change through the same path as `$management` add-rule and
//! remove-rule (`LiveRules::change`): they are one set of rules, persisted as one record.

use std::collections::BTreeMap;

use busbar_core::MessageCounts;
use busbar_rules::{Rule, RuleSet};

use super::{Control, ControlError, ControlState, EntityState, check, counts, describe};
use crate::config::{SubscriptionConfig, TopicConfig, subscription_refuses_receives};
use crate::errors::BrokerError;
use crate::names::EntityName;
use crate::runtime::definitions::{
    self, Definition, Kind, SubscriptionDefinition, subscription_name, subscription_record,
};
use crate::runtime::registry::{
    Delivery, SubscriptionRoute, subscription_entity_config, subscription_path, subscription_route,
};
use crate::runtime::rule_changes::{self, RuleChange};
use crate::runtime::topic_schedule;

/// A topic as the control interface describes it (its `subscriptions` listed).
pub type TopicState = EntityState<TopicConfig>;
/// A subscription as the control interface describes it (its `rules` are those it was created
/// with; [`Control::rules`] gives the ones in force).
pub type SubscriptionState = EntityState<SubscriptionConfig>;

impl Control {
    /// Every topic, in name order.
    pub async fn topics(&self) -> Result<Vec<TopicState>, ControlError> {
        let state = self.state()?;
        let names: Vec<EntityName> = {
            let changes = state.changes.lock().await;
            changes.namespace.topics.keys().cloned().collect()
        };
        let mut topics = Vec::with_capacity(names.len());
        for name in names {
            // One deleted meanwhile is left out.
            if let Ok(topic) = self.topic(name.as_str()).await {
                topics.push(topic);
            }
        }
        Ok(topics)
    }

    /// The topic named `name`.
    pub async fn topic(&self, name: &str) -> Result<TopicState, ControlError> {
        let state = self.state()?;
        let name = EntityName::new(name);
        let definition = {
            let changes = state.changes.lock().await;
            let namespace = &changes.namespace;
            namespace.topics.get(&name).map(|topic| Definition {
                config: TopicConfig {
                    subscriptions: namespace
                        .subscriptions
                        .iter()
                        .filter(|((owner, _), _)| *owner == name)
                        .map(|(_, subscription)| subscription.config.clone())
                        .collect(),
                    ..topic.config.clone()
                },
                ..topic.clone()
            })
        }
        .ok_or_else(|| ControlError::NotFound(name.to_string()))?;
        let counts = state.topic_counts(&name).await;
        Ok(describe(definition, counts))
    }

    /// Creates a topic (its `subscriptions` are ignored: they are created one by one).
    pub async fn create_topic(
        &self,
        config: TopicConfig,
        kept: BTreeMap<String, String>,
    ) -> Result<TopicState, ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        if state.registry.current().resolve_name(&config.name) {
            return Err(ControlError::AlreadyExists(config.name.to_string()));
        }
        let config = TopicConfig {
            subscriptions: Vec::new(),
            ..config
        };
        let mut next = changes.namespace.config(&state.namespace);
        next.topics.push(config.clone());
        check(&next)?;
        let definition = Definition::new(config.clone(), kept, state.clock.now().as_millis());
        let path = config.name.to_string();
        let record = definitions::stored(Kind::Topic, &path, &definition);
        let (_, scheduled) = state
            .create_entity(
                &mut changes.ids,
                path,
                |_| vec![record],
                topic_schedule::entity_config(&config),
                Delivery::ToSubscriptionsOf(&config.name),
                false,
            )
            .await?;
        state
            .registry
            .change(|registry| registry.add_topic(&config, scheduled));
        changes
            .namespace
            .topics
            .insert(config.name.clone(), definition.clone());
        Ok(describe(definition, MessageCounts::default()))
    }

    /// Changes a topic's definition; its subscriptions take its duplicate detection and quota.
    pub async fn update_topic(
        &self,
        config: TopicConfig,
        kept: BTreeMap<String, String>,
    ) -> Result<TopicState, ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let current = changes
            .namespace
            .topics
            .get(&config.name)
            .cloned()
            .ok_or_else(|| ControlError::NotFound(config.name.to_string()))?;
        let config = TopicConfig {
            subscriptions: Vec::new(),
            ..config
        };
        let definition = Definition {
            config: config.clone(),
            kept,
            created_at: current.created_at,
            updated_at: state.clock.now().as_millis(),
        };
        let path = config.name.to_string();
        state
            .durable(vec![definitions::stored(Kind::Topic, &path, &definition)])
            .await?;
        let registry = state.registry.current();
        let route = registry
            .topic(&config.name)
            .ok_or_else(|| ControlError::NotFound(path.clone()))?;
        state
            .reconfigure(
                &route.scheduled,
                topic_schedule::entity_config(&config),
                &None,
                false,
            )
            .await?;
        state
            .registry
            .change(|registry| registry.change_topic(&config));
        let subscriptions: Vec<SubscriptionConfig> = changes
            .namespace
            .subscriptions
            .iter()
            .filter(|((owner, _), _)| *owner == config.name)
            .map(|(_, subscription)| subscription.config.clone())
            .collect();
        for subscription in &subscriptions {
            if let Some(route) = registry.subscription_route_of(&config.name, &subscription.name) {
                let entity_config = subscription_entity_config(&config, subscription);
                let forward = &subscription.delivery.forward_dead_lettered_messages_to;
                let refuses = subscription_refuses_receives(subscription.status, config.status);
                state
                    .reconfigure(&route.entity, entity_config, forward, refuses)
                    .await?;
            }
        }
        changes
            .namespace
            .topics
            .insert(config.name.clone(), definition);
        drop(changes);
        self.topic(&path).await
    }

    /// Deletes a topic with its subscriptions and every message they hold.
    pub async fn delete_topic(&self, name: &str) -> Result<(), ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let name = EntityName::new(name);
        if !changes.namespace.topics.contains_key(&name) {
            return Err(ControlError::NotFound(name.to_string()));
        }
        let mut remaining = changes.namespace.config(&state.namespace);
        remaining.topics.retain(|topic| topic.name != name);
        check(&remaining).map_err(|problem| {
            ControlError::Invalid(format!("'{name}' cannot be deleted: {problem}"))
        })?;
        let registry = state.registry.current();
        let route = registry
            .topic(&name)
            .cloned()
            .ok_or_else(|| ControlError::NotFound(name.to_string()))?;
        let mut records = vec![definitions::forgotten(Kind::Topic, name.as_str())];
        let subscriptions: Vec<EntityName> = changes
            .namespace
            .subscriptions
            .keys()
            .filter(|(owner, _)| *owner == name)
            .map(|(_, subscription)| subscription.clone())
            .collect();
        for subscription in &subscriptions {
            records.push(definitions::forgotten(
                Kind::Subscription,
                &subscription_name(&name, subscription),
            ));
        }
        records.extend(
            route
                .subscriptions
                .iter()
                .map(|subscription| rule_changes::forgotten(subscription.id)),
        );
        state.durable(records).await?;
        state
            .registry
            .change(|registry| registry.remove_topic(&name));
        changes.namespace.topics.remove(&name);
        changes
            .namespace
            .subscriptions
            .retain(|(owner, _), _| *owner != name);
        for subscription in &route.subscriptions {
            state.delete_entity(&subscription.entity).await?;
        }
        state.delete_entity(&route.scheduled).await
    }

    /// The subscriptions of `topic`, in name order.
    pub async fn subscriptions(&self, topic: &str) -> Result<Vec<SubscriptionState>, ControlError> {
        let state = self.state()?;
        let topic = EntityName::new(topic);
        let definitions: Vec<SubscriptionDefinition> = {
            let changes = state.changes.lock().await;
            if !changes.namespace.topics.contains_key(&topic) {
                return Err(ControlError::NotFound(topic.to_string()));
            }
            changes
                .namespace
                .subscriptions
                .iter()
                .filter(|((owner, _), _)| *owner == topic)
                .map(|(_, definition)| definition.clone())
                .collect()
        };
        let mut subscriptions = Vec::with_capacity(definitions.len());
        for definition in definitions {
            let counts = state
                .subscription_counts(&topic, &definition.config.name)
                .await;
            subscriptions.push(describe(definition, counts));
        }
        Ok(subscriptions)
    }

    /// The subscription `name` of `topic`.
    pub async fn subscription(
        &self,
        topic: &str,
        name: &str,
    ) -> Result<SubscriptionState, ControlError> {
        let state = self.state()?;
        let key = (EntityName::new(topic), EntityName::new(name));
        let definition = {
            let changes = state.changes.lock().await;
            changes.namespace.subscriptions.get(&key).cloned()
        }
        .ok_or_else(|| ControlError::NotFound(format!("{topic}/Subscriptions/{name}")))?;
        let counts = state.subscription_counts(&key.0, &key.1).await;
        Ok(describe(definition, counts))
    }

    /// Creates a subscription of `topic` taking what `rules` select (`config.rules` is left
    /// out: the rules are kept as `rule_changes` keeps them, true and false filters included).
    pub async fn create_subscription(
        &self,
        topic: &str,
        config: SubscriptionConfig,
        rules: Vec<Rule>,
        kept: BTreeMap<String, String>,
    ) -> Result<SubscriptionState, ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let topic = EntityName::new(topic);
        let topic_config = changes
            .namespace
            .topics
            .get(&topic)
            .map(|definition| definition.config.clone())
            .ok_or_else(|| ControlError::NotFound(topic.to_string()))?;
        let key = (topic.clone(), config.name.clone());
        if changes.namespace.subscriptions.contains_key(&key) {
            return Err(ControlError::AlreadyExists(config.name.to_string()));
        }
        let rules =
            RuleSet::with_rules(rules).map_err(|error| ControlError::Invalid(error.to_string()))?;
        let config = SubscriptionConfig {
            rules: Vec::new(),
            ..config
        };
        let mut next = changes.namespace.config(&state.namespace);
        if let Some(owner) = next.topics.iter_mut().find(|t| t.name == topic) {
            owner.subscriptions.push(config.clone());
        }
        check(&next)?;
        let definition = Definition::new(config.clone(), kept, state.clock.now().as_millis());
        let path = subscription_path(&topic_config, &config);
        let record = subscription_record(&topic, &definition);
        let (id, handle) = state
            .create_entity(
                &mut changes.ids,
                path,
                // The rules record also replaces what a deleted subscription of that name left.
                |id| vec![record, rule_changes::record(id, &rules)],
                subscription_entity_config(&topic_config, &config),
                Delivery::Receivers(&config.delivery),
                subscription_refuses_receives(config.status, topic_config.status),
            )
            .await?;
        let route = subscription_route(&config, rules, id, handle);
        state
            .registry
            .change(|registry| registry.add_subscription(&topic, &config, route));
        changes
            .namespace
            .subscriptions
            .insert(key, definition.clone());
        Ok(describe(definition, MessageCounts::default()))
    }

    /// Changes a subscription's definition (its rules stay as they are).
    pub async fn update_subscription(
        &self,
        topic: &str,
        config: SubscriptionConfig,
        kept: BTreeMap<String, String>,
    ) -> Result<SubscriptionState, ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let topic = EntityName::new(topic);
        let key = (topic.clone(), config.name.clone());
        let current = changes
            .namespace
            .subscriptions
            .get(&key)
            .cloned()
            .ok_or_else(|| ControlError::NotFound(config.name.to_string()))?;
        if current.config.delivery.requires_session != config.delivery.requires_session {
            return Err(ControlError::Invalid(
                "RequiresSession cannot be changed on an existing subscription".into(),
            ));
        }
        let config = SubscriptionConfig {
            rules: current.config.rules.clone(),
            ..config
        };
        let mut next = changes.namespace.config(&state.namespace);
        if let Some(owner) = next.topics.iter_mut().find(|t| t.name == topic) {
            owner.subscriptions.retain(|s| s.name != config.name);
            owner.subscriptions.push(config.clone());
        }
        check(&next)?;
        let definition = Definition {
            config: config.clone(),
            kept,
            created_at: current.created_at,
            updated_at: state.clock.now().as_millis(),
        };
        state
            .durable(vec![subscription_record(&topic, &definition)])
            .await?;
        let route = state.subscription_route(&topic, &config.name)?;
        let topic_config = changes
            .namespace
            .topics
            .get(&topic)
            .map(|definition| definition.config.clone())
            .ok_or_else(|| ControlError::NotFound(topic.to_string()))?;
        state
            .reconfigure(
                &route.entity,
                subscription_entity_config(&topic_config, &config),
                &config.delivery.forward_dead_lettered_messages_to,
                subscription_refuses_receives(config.status, topic_config.status),
            )
            .await?;
        state
            .registry
            .change(|registry| registry.change_subscription(&topic, &config));
        changes
            .namespace
            .subscriptions
            .insert(key.clone(), definition.clone());
        let counts = state.subscription_counts(&key.0, &key.1).await;
        Ok(describe(definition, counts))
    }

    /// Deletes a subscription with its messages and rules.
    pub async fn delete_subscription(&self, topic: &str, name: &str) -> Result<(), ControlError> {
        let state = self.state()?;
        let mut changes = state.changes.lock().await;
        let key = (EntityName::new(topic), EntityName::new(name));
        if !changes.namespace.subscriptions.contains_key(&key) {
            return Err(ControlError::NotFound(format!(
                "{topic}/Subscriptions/{name}"
            )));
        }
        let mut remaining = changes.namespace.config(&state.namespace);
        if let Some(owner) = remaining.topics.iter_mut().find(|t| t.name == key.0) {
            owner.subscriptions.retain(|s| s.name != key.1);
        }
        check(&remaining).map_err(|problem| {
            ControlError::Invalid(format!("'{name}' cannot be deleted: {problem}"))
        })?;
        let route = state.subscription_route(&key.0, &key.1)?;
        state
            .durable(vec![
                definitions::forgotten(Kind::Subscription, &subscription_name(&key.0, &key.1)),
                rule_changes::forgotten(route.id),
            ])
            .await?;
        state
            .registry
            .change(|registry| registry.remove_subscription(&key.0, &key.1));
        changes.namespace.subscriptions.remove(&key);
        state.delete_entity(&route.entity).await
    }

    /// The rules in force on a subscription, in name order.
    pub async fn rules(&self, topic: &str, subscription: &str) -> Result<Vec<Rule>, ControlError> {
        let state = self.state()?;
        let route =
            state.subscription_route(&EntityName::new(topic), &EntityName::new(subscription))?;
        Ok(route.rules.current().iter().cloned().collect())
    }

    /// Adds a rule to a subscription; in force for sends once durable.
    pub async fn add_rule(
        &self,
        topic: &str,
        subscription: &str,
        rule: Rule,
    ) -> Result<(), ControlError> {
        self.change_rules(topic, subscription, RuleChange::Add(Box::new(rule)))
            .await
    }

    /// Replaces the subscription's rule of the same name.
    pub async fn replace_rule(
        &self,
        topic: &str,
        subscription: &str,
        rule: Rule,
    ) -> Result<(), ControlError> {
        self.change_rules(topic, subscription, RuleChange::Replace(Box::new(rule)))
            .await
    }

    /// Removes the subscription's rule `name`.
    pub async fn remove_rule(
        &self,
        topic: &str,
        subscription: &str,
        name: &str,
    ) -> Result<(), ControlError> {
        self.change_rules(topic, subscription, RuleChange::Remove(name.to_owned()))
            .await
    }

    async fn change_rules(
        &self,
        topic: &str,
        subscription: &str,
        change: RuleChange,
    ) -> Result<(), ControlError> {
        let state = self.state()?;
        let route =
            state.subscription_route(&EntityName::new(topic), &EntityName::new(subscription))?;
        let (reply, changed) = tokio::sync::oneshot::channel();
        let store = state.store.clone();
        // Waits only while the store writer's queue is full (back-pressure).
        tokio::task::block_in_place(|| {
            route.rules.change(
                &change,
                route.id,
                |records, completion| store.submit(records, completion),
                Box::new(move |result| {
                    let _ = reply.send(result);
                }),
            );
        });
        match changed.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) => Err(rule_error(error)),
            Err(_) => Err(ControlError::Unavailable("the rule change was lost".into())),
        }
    }
}

impl ControlState {
    fn subscription_route(
        &self,
        topic: &EntityName,
        name: &EntityName,
    ) -> Result<SubscriptionRoute, ControlError> {
        self.registry
            .current()
            .subscription_route_of(topic, name)
            .cloned()
            .ok_or_else(|| ControlError::NotFound(format!("{topic}/Subscriptions/{name}")))
    }

    async fn subscription_counts(&self, topic: &EntityName, name: &EntityName) -> MessageCounts {
        match self.subscription_route(topic, name) {
            Ok(route) => counts(&route.entity).await,
            Err(_) => MessageCounts::default(),
        }
    }

    /// A topic's counts: the scheduled messages it holds itself.
    async fn topic_counts(&self, name: &EntityName) -> MessageCounts {
        let scheduled = self
            .registry
            .current()
            .topic(name)
            .map(|route| route.scheduled.clone());
        match scheduled {
            Some(handle) => counts(&handle).await,
            None => MessageCounts::default(),
        }
    }
}

/// A refused rule change as the control interface reports it.
fn rule_error(error: BrokerError) -> ControlError {
    match error {
        BrokerError::EntityAlreadyExists { name } => ControlError::AlreadyExists(name),
        BrokerError::RuleNotFound { name } => ControlError::NotFound(name),
        BrokerError::StoreUnavailable { reason } => ControlError::Unavailable(reason),
        other => ControlError::Invalid(other.to_string()),
    }
}
