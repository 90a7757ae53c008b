//! The administration API of the `busbar` binary: busbar-admin's HTTP server answering through
//! the broker's control interface, with the namespace keys `$cbs` checks. Queues, topics,
//! subscriptions and rules are created, read, listed, changed and deleted while the broker runs
//! (the descriptions are translated in `convert`); purge and reset, and with `--test-controls`
//! the virtual clock and fault injection, serve test suites; `GET /metrics` reports the
//! broker's counts (`metrics`). The HTTP data plane (send, receive, settle and renew over REST)
//! is served on the same port (`data_plane`, with messages converted in `http_message`); the
//! web explorer peeks, sends, re-drives and edits session state (`explorer`).

mod convert;
mod data_plane;
mod explorer;
mod http_message;
mod metrics;

use std::sync::Arc;
use std::time::Duration;

use busbar_admin::atom::{
    MessagingSku, NamespaceInfo, PageRequest, QueueProperties, RuleProperties,
    SubscriptionProperties, Timestamp, TopicProperties,
};
use busbar_admin::auth::{Authorization, Need, Right};
use busbar_admin::control::{
    ClockState, ControlError, ControlResult, Fault, Health, NamespaceControl, Page, QueueEntry,
    RuleEntry, SubscriptionEntry, TopicEntry,
};
use busbar_admin::explorer::{
    EntityCounts, OutgoingMessage, PeekedMessage, Redriven, SessionInfo, SubQueue,
};
use busbar_admin::metrics::MetricsSnapshot;
use busbar_broker::EntityName;
use busbar_broker::auth::{
    Claim, KeyRing, SasKeys, SasToken, SignedFor, top_level_entity, verify_within,
};
use busbar_broker::errors::BrokerError;
use busbar_broker::runtime::{self, Control};
use busbar_store::StoreCondition;

use convert::{
    generate_missing_keys, queue_config, queue_entry, rule, rule_created_at, rule_properties,
    subscription_config, subscription_entry, topic_config, topic_entry,
};

/// Requests carrying a SharedAccessSignature with the right they need, signed by a namespace
/// rule (as the ring holds them at the request) or by a rule of the entity the request is
/// within (`entity_keys`, its token signed for that entity or the namespace): Manage for the
/// administration API (an entity's rule: reading and updating that entity only), the
/// explorer's sign-in and the test controls; Send or Listen for the data plane. Refusals are
/// in the service's words, as `$cbs` and the links give them.
pub(crate) fn authorization(
    keys: KeyRing,
    namespace: String,
    entity_keys: impl Fn(&EntityName) -> Option<Arc<SasKeys>> + Send + Sync + 'static,
) -> Authorization {
    Authorization::SharedAccessSignature(Arc::new(
        move |header: &str, need: Need<'_>, now: i64| -> Result<(), String> {
            let refused = |error: BrokerError| error.to_string();
            let token = SasToken::parse(header).map_err(|error| refused(error.into()))?;
            let entity = need.entity.and_then(top_level_entity);
            let rights = verify_within(
                &keys.current(),
                &token,
                entity.as_ref(),
                SignedFor::EntityOrNamespace,
                now,
                &entity_keys,
            )
            .map_err(|error| refused(error.into()))?;
            let claim = match need.right {
                Right::Manage => Claim::Manage,
                Right::Send => Claim::Send,
                Right::Listen => Claim::Listen,
            };
            match need.entity {
                _ if rights.allow(claim) => Ok(()),
                Some(entity) if claim != Claim::Manage => Err(refused(BrokerError::MissingClaim {
                    claim: claim.name(),
                    resource: format!("sb://{namespace}/{entity}"),
                })),
                _ => Err("Manage,EntityRead claims required for this operation.".to_owned()),
            }
        },
    ))
}

/// The broker's namespace as the administration API sees it.
pub(crate) struct BrokerNamespace {
    control: Control,
    name: String,
    started: Timestamp,
}

impl BrokerNamespace {
    pub(crate) fn new(control: Control, name: String, started_unix_millis: i64) -> Self {
        Self {
            control,
            name,
            started: Timestamp::from_unix_millis(started_unix_millis),
        }
    }
}

impl NamespaceControl for BrokerNamespace {
    async fn namespace(&self) -> ControlResult<NamespaceInfo> {
        Ok(NamespaceInfo {
            name: self.name.clone(),
            created_time: self.started,
            modified_time: self.started,
            messaging_sku: MessagingSku::Standard,
            messaging_units: None,
        })
    }

    async fn list_queues(&self, page: PageRequest) -> ControlResult<Page<QueueEntry>> {
        let queues = self.control.queues().await.map_err(control_error)?;
        Ok(paged(queues, page, queue_entry))
    }

    async fn queue(&self, name: &str) -> ControlResult<QueueEntry> {
        let queue = self.control.queue(name).await.map_err(control_error)?;
        Ok(queue_entry(queue))
    }

    async fn create_queue(
        &self,
        name: &str,
        mut properties: QueueProperties,
    ) -> ControlResult<QueueEntry> {
        generate_missing_keys(&mut properties.authorization_rules).map_err(unavailable)?;
        let (config, kept) = queue_config(name, &properties);
        let queue = self.control.create_queue(config, kept).await;
        queue.map(queue_entry).map_err(control_error)
    }

    async fn update_queue(
        &self,
        name: &str,
        mut properties: QueueProperties,
    ) -> ControlResult<QueueEntry> {
        generate_missing_keys(&mut properties.authorization_rules).map_err(unavailable)?;
        let (config, kept) = queue_config(name, &properties);
        let queue = self.control.update_queue(config, kept).await;
        queue.map(queue_entry).map_err(control_error)
    }

    async fn delete_queue(&self, name: &str) -> ControlResult<()> {
        self.control.delete_queue(name).await.map_err(control_error)
    }

    async fn list_topics(&self, page: PageRequest) -> ControlResult<Page<TopicEntry>> {
        let topics = self.control.topics().await.map_err(control_error)?;
        Ok(paged(topics, page, topic_entry))
    }

    async fn topic(&self, name: &str) -> ControlResult<TopicEntry> {
        let topic = self.control.topic(name).await.map_err(control_error)?;
        Ok(topic_entry(topic))
    }

    async fn create_topic(
        &self,
        name: &str,
        mut properties: TopicProperties,
    ) -> ControlResult<TopicEntry> {
        generate_missing_keys(&mut properties.authorization_rules).map_err(unavailable)?;
        let (config, kept) = topic_config(name, &properties);
        let topic = self.control.create_topic(config, kept).await;
        topic.map(topic_entry).map_err(control_error)
    }

    async fn update_topic(
        &self,
        name: &str,
        mut properties: TopicProperties,
    ) -> ControlResult<TopicEntry> {
        generate_missing_keys(&mut properties.authorization_rules).map_err(unavailable)?;
        let (config, kept) = topic_config(name, &properties);
        let topic = self.control.update_topic(config, kept).await;
        topic.map(topic_entry).map_err(control_error)
    }

    async fn delete_topic(&self, name: &str) -> ControlResult<()> {
        self.control.delete_topic(name).await.map_err(control_error)
    }

    async fn list_subscriptions(
        &self,
        topic: &str,
        page: PageRequest,
    ) -> ControlResult<Page<SubscriptionEntry>> {
        let subscriptions = self
            .control
            .subscriptions(topic)
            .await
            .map_err(control_error)?;
        Ok(paged(subscriptions, page, subscription_entry))
    }

    async fn subscription(&self, topic: &str, name: &str) -> ControlResult<SubscriptionEntry> {
        let subscription = self.control.subscription(topic, name).await;
        subscription.map(subscription_entry).map_err(control_error)
    }

    async fn create_subscription(
        &self,
        topic: &str,
        name: &str,
        properties: SubscriptionProperties,
        default_rule: RuleProperties,
    ) -> ControlResult<SubscriptionEntry> {
        let (config, kept) = subscription_config(name, &properties);
        let rules = vec![rule(&default_rule).map_err(invalid)?];
        let subscription = self
            .control
            .create_subscription(topic, config, rules, kept)
            .await;
        subscription.map(subscription_entry).map_err(control_error)
    }

    async fn update_subscription(
        &self,
        topic: &str,
        name: &str,
        properties: SubscriptionProperties,
    ) -> ControlResult<SubscriptionEntry> {
        let (config, kept) = subscription_config(name, &properties);
        let subscription = self.control.update_subscription(topic, config, kept).await;
        subscription.map(subscription_entry).map_err(control_error)
    }

    async fn delete_subscription(&self, topic: &str, name: &str) -> ControlResult<()> {
        let deleted = self.control.delete_subscription(topic, name).await;
        deleted.map_err(control_error)
    }

    async fn list_rules(
        &self,
        topic: &str,
        subscription: &str,
        page: PageRequest,
    ) -> ControlResult<Page<RuleEntry>> {
        let (rules, created_at) = self.rules_of(topic, subscription).await?;
        Ok(paged(rules, page, |rule| RuleEntry {
            properties: rule_properties(&rule),
            created_at,
        }))
    }

    async fn rule(&self, topic: &str, subscription: &str, name: &str) -> ControlResult<RuleEntry> {
        let (rules, created_at) = self.rules_of(topic, subscription).await?;
        let found = rules
            .iter()
            .find(|rule| rule.name().eq_ignore_ascii_case(name));
        found
            .map(|rule| RuleEntry {
                properties: rule_properties(rule),
                created_at,
            })
            .ok_or(ControlError::NotFound)
    }

    async fn create_rule(
        &self,
        topic: &str,
        subscription: &str,
        properties: RuleProperties,
    ) -> ControlResult<RuleEntry> {
        let parsed = rule(&properties).map_err(invalid)?;
        let added = self.control.add_rule(topic, subscription, parsed).await;
        added.map_err(control_error)?;
        self.rule(topic, subscription, &properties.name).await
    }

    async fn update_rule(
        &self,
        topic: &str,
        subscription: &str,
        properties: RuleProperties,
    ) -> ControlResult<RuleEntry> {
        let parsed = rule(&properties).map_err(invalid)?;
        let replaced = self.control.replace_rule(topic, subscription, parsed).await;
        replaced.map_err(control_error)?;
        self.rule(topic, subscription, &properties.name).await
    }

    async fn delete_rule(&self, topic: &str, subscription: &str, name: &str) -> ControlResult<()> {
        let removed = self.control.remove_rule(topic, subscription, name).await;
        removed.map_err(control_error)
    }

    async fn metrics(&self) -> ControlResult<MetricsSnapshot> {
        metrics::snapshot(&self.control)
            .await
            .map_err(control_error)
    }

    fn health(&self) -> Health {
        match self.control.storage_condition() {
            StoreCondition::Healthy => Health::Healthy,
            StoreCondition::Full(why) => Health::Degraded(format!("The store is full: {why}.")),
            StoreCondition::Failed(why) => Health::Unhealthy(format!(
                "The storage failed and accepts nothing more until the broker restarts: {why}."
            )),
        }
    }

    fn test_controls(&self) -> bool {
        self.control.test_controls()
    }

    async fn purge(&self, entity: &str, dead_letter_only: bool) -> ControlResult<u64> {
        // Like every test control, purge and reset exist only with --test-controls.
        if !self.test_controls() {
            return Err(ControlError::NotFound);
        }
        explorer::purge(self, entity, dead_letter_only).await
    }

    async fn purge_messages(&self, entity: &str, dead_letter_only: bool) -> ControlResult<u64> {
        explorer::purge(self, entity, dead_letter_only).await
    }

    async fn overview(&self) -> ControlResult<Vec<EntityCounts>> {
        explorer::overview(&self.control).await
    }

    async fn peek(
        &self,
        entity: &str,
        sub_queue: SubQueue,
        from: i64,
        count: usize,
    ) -> ControlResult<Vec<PeekedMessage>> {
        explorer::peek(&self.control, entity, sub_queue, from, count).await
    }

    async fn send(&self, entity: &str, message: OutgoingMessage) -> ControlResult<()> {
        explorer::send(&self.control, entity, message).await
    }

    async fn redrive(
        &self,
        entity: &str,
        sequences: Option<Vec<i64>>,
        destination: Option<String>,
    ) -> ControlResult<Redriven> {
        explorer::redrive(&self.control, entity, sequences, destination).await
    }

    async fn sessions(
        &self,
        entity: &str,
        skip: usize,
        top: usize,
    ) -> ControlResult<Vec<SessionInfo>> {
        explorer::sessions(&self.control, entity, skip, top).await
    }

    async fn set_session_state(
        &self,
        entity: &str,
        session: &str,
        state: Option<Vec<u8>>,
    ) -> ControlResult<()> {
        let state = state.map(Into::into);
        let set = self.control.set_session_state(entity, session, state).await;
        set.map_err(control_error)
    }

    async fn reset(&self) -> ControlResult<()> {
        if !self.test_controls() {
            return Err(ControlError::NotFound);
        }
        self.control.reset().await.map_err(control_error)
    }

    async fn clock(&self) -> ControlResult<ClockState> {
        self.control
            .clock()
            .await
            .map(clock_state)
            .map_err(control_error)
    }

    async fn advance_clock(&self, by: Duration) -> ControlResult<ClockState> {
        let advanced = self.control.advance_clock(by).await;
        advanced.map(clock_state).map_err(control_error)
    }

    async fn inject_fault(&self, entity: &str, fault: Fault) -> ControlResult<()> {
        let fault = match fault {
            Fault::ServerBusy { count } => runtime::Fault::ServerBusy(count),
            Fault::LockLost { count } => runtime::Fault::LockLost(count),
            Fault::DetachLink { condition } => runtime::Fault::DetachLink(condition),
            Fault::DropConnection { condition } => runtime::Fault::DropConnection(condition),
            Fault::Delay { millis, count } => runtime::Fault::Delay {
                delay: Duration::from_millis(millis),
                count,
            },
        };
        let injected = self.control.inject_fault(entity, fault).await;
        injected.map_err(control_error)
    }
}

fn clock_state(clock: runtime::ClockState) -> ClockState {
    ClockState {
        now: Timestamp::from_unix_millis(clock.now.as_millis()),
        offset: clock.offset,
    }
}

impl BrokerNamespace {
    /// A subscription's rules in force and when they date from.
    async fn rules_of(
        &self,
        topic: &str,
        subscription: &str,
    ) -> ControlResult<(Vec<busbar_rules::Rule>, Timestamp)> {
        let state = self.control.subscription(topic, subscription).await;
        let created_at = rule_created_at(&state.map_err(control_error)?);
        let rules = self.control.rules(topic, subscription).await;
        Ok((rules.map_err(control_error)?, created_at))
    }
}

/// One page of `items` (in the broker's name order), each turned into what the API lists.
fn paged<T, E>(items: Vec<T>, page: PageRequest, entry: impl Fn(T) -> E) -> Page<E> {
    let total = items.len();
    let window = page.window(total);
    let items = items
        .into_iter()
        .skip(window.start)
        .take(window.len())
        .map(entry)
        .collect();
    Page { items, total }
}

fn invalid(detail: String) -> ControlError {
    ControlError::Invalid { detail }
}

fn unavailable(detail: String) -> ControlError {
    ControlError::Unavailable { detail }
}

fn control_error(error: runtime::ControlError) -> ControlError {
    match error {
        runtime::ControlError::NotFound(_) => ControlError::NotFound,
        runtime::ControlError::AlreadyExists(_) => ControlError::AlreadyExists,
        runtime::ControlError::Invalid(detail) => ControlError::Invalid { detail },
        runtime::ControlError::Unavailable(detail) => ControlError::Unavailable { detail },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use busbar_admin::auth::Unauthorized;
    use busbar_broker::auth::{AccessRights, AuthorizationRule, SasKeys, sign_token};
    use hyper::HeaderMap;
    use hyper::header::{AUTHORIZATION, HeaderValue};

    const NOW: i64 = 1_700_000_000_000;
    const LATER: u64 = 1_700_003_600;

    fn rule(name: &str, key: &str, rights: AccessRights) -> AuthorizationRule {
        AuthorizationRule {
            key_name: name.to_owned(),
            primary_key: key.to_owned(),
            secondary_key: None,
            rights,
        }
    }

    /// What the verifier says of `token` for `need`: `Ok`, or the 401's detail.
    fn check(token: &str, need: Need<'_>) -> Result<(), Option<String>> {
        let keys = SasKeys::from_rules([
            rule("root", "root key", AccessRights::ALL),
            rule("listener", "listen key", AccessRights::of([Claim::Listen])),
        ]);
        let verifier = authorization(KeyRing::new(keys), "ns".to_owned(), |_: &EntityName| None);
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(token).unwrap());
        verifier
            .check(&headers, need, NOW)
            .map_err(|refused: Unauthorized| refused.detail().map(str::to_owned))
    }

    fn send_to_q() -> Need<'static> {
        Need {
            right: Right::Send,
            entity: Some("q"),
        }
    }

    #[test]
    fn refusals_are_in_the_service_s_words() {
        let root = sign_token("sb://h/", "root", "root key", LATER);
        assert_eq!(check(&root, Need::MANAGE), Ok(()));
        let listener = sign_token("sb://h/", "listener", "listen key", LATER);
        assert_eq!(
            check(&listener, Need::MANAGE),
            Err(Some(
                "Manage,EntityRead claims required for this operation.".into()
            ))
        );
        assert_eq!(
            check(&listener, send_to_q()),
            Err(Some(
                "Unauthorized access. 'Send' claim(s) are required to perform this operation. \
                 Resource: 'sb://ns/q'."
                    .into()
            ))
        );
        let forged = sign_token("sb://h/", "root", "a guess", LATER);
        assert_eq!(
            check(&forged, Need::MANAGE),
            Err(Some(
                "InvalidSignature: The token has an invalid signature.".into()
            ))
        );
    }

    #[test]
    fn hostile_tokens_are_refused_and_leave_good_ones_working() {
        let good = sign_token("sb://h/", "root", "root key", LATER);
        let expired = sign_token("sb://h/", "root", "root key", 1);
        let oversized = sign_token(&"x".repeat(100_000), "root", "root key", LATER);
        let hostile = [
            expired,
            good[..good.len() / 2].to_owned(),
            good.replace("&se=", "&se=9"),
            good.replace("sig=", "sig=%"),
            format!("{good}&skn=root&skn=listener"),
            "SharedAccessSignature ".to_owned(),
            "SharedAccessSignature sr=&sig=&se=&skn=".to_owned(),
            format!(
                "SharedAccessSignature sr=a&sig={}&se=1&skn=root",
                "A".repeat(100_000)
            ),
        ];
        for token in &hostile {
            assert!(check(token, Need::MANAGE).is_err(), "{:.80}", token);
        }
        // A signature over a huge audience is still a valid token: its size is not a refusal.
        assert_eq!(check(&oversized, Need::MANAGE), Ok(()));
        for _ in 0..1_000 {
            let forged = sign_token("sb://h/", "root", "a guess", LATER);
            assert!(check(&forged, Need::MANAGE).is_err());
        }
        assert_eq!(check(&good, Need::MANAGE), Ok(()));
    }
}
