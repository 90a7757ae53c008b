//! Reset: the namespace put back to its configured entities with no messages (test controls).

use std::collections::BTreeMap;

use busbar_rules::Rule;

use super::{Control, ControlError};
use crate::config::{QueueConfig, SubscriptionConfig, TopicConfig};
use crate::names::EntityName;
use crate::runtime::rules::compile;

/// One step of a reset.
enum Step {
    /// Put a configured queue back as configured (made again if it is gone).
    Queue(QueueConfig),
    /// Likewise a configured topic (its own properties).
    Topic(TopicConfig),
    /// Likewise a configured subscription of a topic, with its rules.
    Subscription(EntityName, SubscriptionConfig),
    /// Delete every entity the configuration does not name.
    RemoveUnconfigured,
}

impl Control {
    /// Resets the namespace to its configured entities with no messages: configured entities
    /// changed meanwhile are put back as configured (a subscription whose rules changed is made
    /// again), those deleted are made again, the others are deleted, and then every entity is
    /// purged, session state included. Forwarding between entities can order these steps, so
    /// each is tried in passes until nothing more succeeds.
    pub async fn reset(&self) -> Result<(), ControlError> {
        let configured = self.state()?.configured.clone();
        let mut steps: Vec<Step> = Vec::new();
        for queue in &configured.queues {
            steps.push(Step::Queue(queue.clone()));
        }
        for topic in &configured.topics {
            steps.push(Step::Topic(topic.clone()));
            for subscription in &topic.subscriptions {
                steps.push(Step::Subscription(topic.name.clone(), subscription.clone()));
            }
        }
        steps.push(Step::RemoveUnconfigured);
        self.in_passes(steps).await?;
        let state = self.state()?;
        let registry = state.registry.current();
        for entity in registry.entities() {
            state.purge_entity(&entity, false).await?;
        }
        Ok(())
    }

    /// Runs `steps`, again and again while some fail and others succeed.
    async fn in_passes(&self, mut steps: Vec<Step>) -> Result<(), ControlError> {
        loop {
            let mut failed = Vec::new();
            let mut last_error = None;
            let count = steps.len();
            for step in steps {
                if let Err(error) = self.apply(&step).await {
                    last_error = Some(error);
                    failed.push(step);
                }
            }
            match last_error {
                None => return Ok(()),
                Some(error) if failed.len() == count => return Err(error),
                Some(_) => steps = failed,
            }
        }
    }

    async fn apply(&self, step: &Step) -> Result<(), ControlError> {
        match step {
            Step::Queue(queue) => self.restore_queue(queue).await,
            Step::Topic(topic) => self.restore_topic(topic).await,
            Step::Subscription(topic, subscription) => {
                self.restore_subscription(topic, subscription).await
            }
            Step::RemoveUnconfigured => self.remove_unconfigured().await,
        }
    }
}

impl Control {
    async fn restore_queue(&self, queue: &QueueConfig) -> Result<(), ControlError> {
        let current = match self.queue(queue.name.as_str()).await {
            Ok(current) => current,
            Err(ControlError::NotFound(_)) => {
                return self
                    .create_queue(queue.clone(), BTreeMap::new())
                    .await
                    .map(drop);
            }
            Err(error) => return Err(error),
        };
        if current.config == *queue && current.kept.is_empty() {
            return Ok(());
        }
        if current.config.delivery.requires_session != queue.delivery.requires_session {
            self.delete_queue(queue.name.as_str()).await?;
            return self
                .create_queue(queue.clone(), BTreeMap::new())
                .await
                .map(drop);
        }
        self.update_queue(queue.clone(), BTreeMap::new())
            .await
            .map(drop)
    }

    async fn restore_topic(&self, topic: &TopicConfig) -> Result<(), ControlError> {
        let own = TopicConfig {
            subscriptions: Vec::new(),
            ..topic.clone()
        };
        let current = match self.topic(topic.name.as_str()).await {
            Ok(current) => current,
            Err(ControlError::NotFound(_)) => {
                return self.create_topic(own, BTreeMap::new()).await.map(drop);
            }
            Err(error) => return Err(error),
        };
        let current_own = TopicConfig {
            subscriptions: Vec::new(),
            ..current.config
        };
        if current_own == own && current.kept.is_empty() {
            return Ok(());
        }
        self.update_topic(own, BTreeMap::new()).await.map(drop)
    }

    async fn restore_subscription(
        &self,
        topic: &EntityName,
        subscription: &SubscriptionConfig,
    ) -> Result<(), ControlError> {
        let rules: Vec<Rule> = compile(&subscription.rules)
            .map_err(|error| ControlError::Invalid(error.to_string()))?
            .iter()
            .cloned()
            .collect();
        let (topic, name) = (topic.as_str(), subscription.name.as_str());
        match self.subscription(topic, name).await {
            Ok(current) => {
                let same = SubscriptionConfig {
                    rules: subscription.rules.clone(),
                    ..current.config
                } == *subscription
                    && current.kept.is_empty()
                    && self.rules(topic, name).await? == rules;
                if same {
                    return Ok(());
                }
                self.delete_subscription(topic, name).await?;
            }
            Err(ControlError::NotFound(_)) => {}
            Err(error) => return Err(error),
        }
        let config = subscription.clone();
        self.create_subscription(topic, config, rules, BTreeMap::new())
            .await
            .map(drop)
    }

    /// Deletes the queues, topics and subscriptions the configuration does not name; one that
    /// cannot go yet (something forwards to it) fails the step, to be tried again.
    async fn remove_unconfigured(&self) -> Result<(), ControlError> {
        let configured = self.state()?.configured.clone();
        let mut last_error = None;
        for queue in self.queues().await? {
            let unconfigured = !configured
                .queues
                .iter()
                .any(|q| q.name == queue.config.name);
            if unconfigured && let Err(error) = self.delete_queue(queue.config.name.as_str()).await
            {
                last_error = Some(error);
            }
        }
        for topic in self.topics().await? {
            let Some(kept) = configured
                .topics
                .iter()
                .find(|t| t.name == topic.config.name)
            else {
                if let Err(error) = self.delete_topic(topic.config.name.as_str()).await {
                    last_error = Some(error);
                }
                continue;
            };
            for subscription in &topic.config.subscriptions {
                if !kept
                    .subscriptions
                    .iter()
                    .any(|s| s.name == subscription.name)
                {
                    let deleted = self
                        .delete_subscription(topic.config.name.as_str(), subscription.name.as_str())
                        .await;
                    if let Err(error) = deleted {
                        last_error = Some(error);
                    }
                }
            }
        }
        last_error.map_or(Ok(()), Err)
    }
}
