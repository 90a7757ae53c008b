//! Between the administration API's descriptions and the broker's definitions. Each entity keeps
//! the whole description its client sent (written with the ATOM codec), so every property reads
//! back as it was set, including those the broker does not act on; an entity of `Config.json`
//! is described from its definition. `Status` is both kept and acted on.

use std::collections::BTreeMap;
use std::time::Duration;

use busbar_admin::atom::{
    AuthorizationRule, CorrelationRuleFilter, EntityDescription, EntityStatus, EntityTimes, Entry,
    EntryContent, MessageCountDetails, QueueProperties, QueueRuntimeProperties, RuleAction,
    RuleFilter, RuleProperties, RuleValue, SqlExpression, SubscriptionProperties,
    SubscriptionRuntimeProperties, TimeSpan, Timestamp, TopicProperties, TopicRuntimeProperties,
    forward_target_entity, parse_entry, write_entry,
};
use busbar_admin::control::{QueueEntry, SubscriptionEntry, TopicEntry};
use busbar_broker::EntityName;
use busbar_broker::auth::{self, AccessRights, Claim};
use busbar_broker::config::{
    self, DeliverySettings, DuplicateDetection, QueueConfig, SubscriptionConfig, TopicConfig,
};
use busbar_broker::runtime::{EntityState, QueueState, SubscriptionState, TopicState};
use busbar_core::MessageCounts;
use busbar_rules::{
    CorrelationFilter, Filter, Parameter, ParameterValue, Rule, SqlAction, SqlFilter, Value,
};

/// Gives every rule sent without a primary or a secondary key a fresh 256-bit one, as the
/// service generates them, so the description kept (and read back) holds the keys that sign.
pub(crate) fn generate_missing_keys(rules: &mut [AuthorizationRule]) -> Result<(), String> {
    for rule in rules {
        for key in [&mut rule.primary_key, &mut rule.secondary_key] {
            if key.is_empty() {
                *key = crate::policies::generate_key()?;
            }
        }
    }
    Ok(())
}

/// The broker's shared-access rules of an entity's `AuthorizationRules` (whose keys
/// [`generate_missing_keys`] has filled).
fn authorization_rules(rules: &[AuthorizationRule]) -> Vec<auth::AuthorizationRule> {
    rules
        .iter()
        .map(|rule| auth::AuthorizationRule {
            key_name: rule.key_name.clone(),
            primary_key: rule.primary_key.clone(),
            secondary_key: Some(rule.secondary_key.clone()).filter(|key| !key.is_empty()),
            rights: AccessRights::of(
                rule.rights
                    .iter()
                    .filter_map(|right| Claim::parse(right.as_str())),
            ),
        })
        .collect()
}

/// The key under which an entity keeps its administration-API description.
const DESCRIPTION: &str = "Description";

/// Properties the description carries.
type Kept = BTreeMap<String, String>;

/// The broker's definition of a queue and the description kept with it.
pub(crate) fn queue_config(name: &str, properties: &QueueProperties) -> (QueueConfig, Kept) {
    let config = QueueConfig {
        name: EntityName::new(name),
        delivery: DeliverySettings {
            lock_duration: properties.lock_duration.to_std(),
            max_delivery_count: properties.max_delivery_count,
            requires_session: properties.requires_session,
            default_message_time_to_live: properties.default_message_time_to_live.to_std(),
            dead_lettering_on_message_expiration: properties.dead_lettering_on_message_expiration,
            forward_to: target(&properties.forward_to),
            forward_dead_lettered_messages_to: target(
                &properties.forward_dead_lettered_messages_to,
            ),
        },
        duplicate_detection: DuplicateDetection {
            enabled: properties.requires_duplicate_detection,
            history_time_window: properties.duplicate_detection_history_time_window.to_std(),
        },
        max_size_in_megabytes: saturated(properties.max_size_in_megabytes),
        max_message_size_in_kilobytes: saturated(properties.max_message_size_in_kilobytes),
        status: broker_status(properties.status),
        authorization_rules: authorization_rules(&properties.authorization_rules),
    };
    let runtime = QueueRuntimeProperties {
        size_in_bytes: 0,
        message_count: 0,
        counts: MessageCountDetails::default(),
        times: placeholder_times(),
    };
    (
        config,
        kept(name, EntryContent::Queue(properties, &runtime)),
    )
}

/// A queue as the API describes it.
pub(crate) fn queue_entry(state: QueueState) -> QueueEntry {
    let properties = match described(&state.kept) {
        Some(EntityDescription::Queue(description)) => description.into_properties(),
        _ => configured_queue(&state.config),
    };
    let counts = count_details(&state.counts);
    QueueEntry {
        name: state.config.name.to_string(),
        properties,
        runtime: QueueRuntimeProperties {
            size_in_bytes: state.counts.size_bytes,
            message_count: counts.active + counts.dead_letter + counts.scheduled,
            counts,
            times: times(&state),
        },
    }
}

/// The broker's definition of a topic and the description kept with it.
pub(crate) fn topic_config(name: &str, properties: &TopicProperties) -> (TopicConfig, Kept) {
    let config = TopicConfig {
        name: EntityName::new(name),
        default_message_time_to_live: properties.default_message_time_to_live.to_std(),
        duplicate_detection: DuplicateDetection {
            enabled: properties.requires_duplicate_detection,
            history_time_window: properties.duplicate_detection_history_time_window.to_std(),
        },
        max_size_in_megabytes: saturated(properties.max_size_in_megabytes),
        max_message_size_in_kilobytes: saturated(properties.max_message_size_in_kilobytes),
        status: broker_status(properties.status),
        authorization_rules: authorization_rules(&properties.authorization_rules),
        subscriptions: Vec::new(),
    };
    let runtime = TopicRuntimeProperties {
        size_in_bytes: 0,
        subscription_count: 0,
        counts: MessageCountDetails::default(),
        times: placeholder_times(),
    };
    (
        config,
        kept(name, EntryContent::Topic(properties, &runtime)),
    )
}

/// A topic as the API describes it.
pub(crate) fn topic_entry(state: TopicState) -> TopicEntry {
    let properties = match described(&state.kept) {
        Some(EntityDescription::Topic(description)) => description.into_properties(),
        _ => TopicProperties {
            default_message_time_to_live: span(state.config.default_message_time_to_live),
            max_size_in_megabytes: u64::from(state.config.max_size_in_megabytes),
            max_message_size_in_kilobytes: u64::from(state.config.max_message_size_in_kilobytes),
            requires_duplicate_detection: state.config.duplicate_detection.enabled,
            duplicate_detection_history_time_window: span(
                state.config.duplicate_detection.history_time_window,
            ),
            status: api_status(state.config.status),
            ..TopicProperties::default()
        },
    };
    TopicEntry {
        name: state.config.name.to_string(),
        properties,
        runtime: TopicRuntimeProperties {
            size_in_bytes: state.counts.size_bytes,
            subscription_count: count(state.config.subscriptions.len()),
            counts: count_details(&state.counts),
            times: times(&state),
        },
    }
}

/// The broker's definition of a subscription and the description kept with it.
pub(crate) fn subscription_config(
    name: &str,
    properties: &SubscriptionProperties,
) -> (SubscriptionConfig, Kept) {
    let config = SubscriptionConfig {
        name: EntityName::new(name),
        delivery: DeliverySettings {
            lock_duration: properties.lock_duration.to_std(),
            max_delivery_count: properties.max_delivery_count,
            requires_session: properties.requires_session,
            default_message_time_to_live: properties.default_message_time_to_live.to_std(),
            dead_lettering_on_message_expiration: properties.dead_lettering_on_message_expiration,
            forward_to: target(&properties.forward_to),
            forward_dead_lettered_messages_to: target(
                &properties.forward_dead_lettered_messages_to,
            ),
        },
        dead_lettering_on_filter_evaluation_exceptions: properties
            .dead_lettering_on_filter_evaluation_exceptions,
        status: broker_status(properties.status),
        rules: Vec::new(),
    };
    let runtime = SubscriptionRuntimeProperties {
        message_count: 0,
        counts: MessageCountDetails::default(),
        times: placeholder_times(),
    };
    (
        config,
        kept(name, EntryContent::Subscription(properties, &runtime)),
    )
}

/// A subscription as the API describes it.
pub(crate) fn subscription_entry(state: SubscriptionState) -> SubscriptionEntry {
    let properties = match described(&state.kept) {
        Some(EntityDescription::Subscription(description)) => description.into_properties(),
        _ => {
            let delivery = &state.config.delivery;
            SubscriptionProperties {
                lock_duration: span(delivery.lock_duration),
                requires_session: delivery.requires_session,
                default_message_time_to_live: span(delivery.default_message_time_to_live),
                dead_lettering_on_message_expiration: delivery.dead_lettering_on_message_expiration,
                dead_lettering_on_filter_evaluation_exceptions: state
                    .config
                    .dead_lettering_on_filter_evaluation_exceptions,
                max_delivery_count: delivery.max_delivery_count,
                forward_to: delivery.forward_to.as_ref().map(ToString::to_string),
                forward_dead_lettered_messages_to: delivery
                    .forward_dead_lettered_messages_to
                    .as_ref()
                    .map(ToString::to_string),
                status: api_status(state.config.status),
                ..SubscriptionProperties::default()
            }
        }
    };
    let counts = count_details(&state.counts);
    SubscriptionEntry {
        name: state.config.name.to_string(),
        properties,
        runtime: SubscriptionRuntimeProperties {
            message_count: counts.active + counts.dead_letter + counts.scheduled,
            counts,
            times: times(&state),
        },
    }
}

/// The broker's rule for a rule the API describes (an expression naming a parameter it does not
/// bind is refused).
pub(crate) fn rule(properties: &RuleProperties) -> Result<Rule, String> {
    let filter = match &properties.filter {
        RuleFilter::True => Filter::True,
        RuleFilter::False => Filter::False,
        RuleFilter::Sql(sql) => Filter::Sql(
            SqlFilter::with_parameters(&sql.text, parameters(sql)).map_err(|e| e.to_string())?,
        ),
        RuleFilter::Correlation(filter) => Filter::Correlation(CorrelationFilter {
            correlation_id: filter.correlation_id.clone(),
            message_id: filter.message_id.clone(),
            to: filter.to.clone(),
            reply_to: filter.reply_to.clone(),
            label: filter.label.clone(),
            session_id: filter.session_id.clone(),
            reply_to_session_id: filter.reply_to_session_id.clone(),
            content_type: filter.content_type.clone(),
            properties: filter
                .properties
                .iter()
                .map(|(name, value)| (name.clone(), rule_value(value)))
                .collect(),
        }),
    };
    let action = match &properties.action {
        RuleAction::Empty => None,
        RuleAction::Sql(sql) => Some(
            SqlAction::with_parameters(&sql.text, parameters(sql)).map_err(|e| e.to_string())?,
        ),
    };
    Rule::new(&properties.name, filter, action).map_err(|error| error.to_string())
}

/// A broker rule as the API describes it.
pub(crate) fn rule_properties(rule: &Rule) -> RuleProperties {
    let sql = |text: &str, parameters: &[Parameter]| SqlExpression {
        text: text.to_owned(),
        parameters: parameters
            .iter()
            .map(|parameter| (parameter.name.clone(), parameter_value(&parameter.value)))
            .collect(),
    };
    let filter = match rule.filter() {
        Filter::True => RuleFilter::True,
        Filter::False => RuleFilter::False,
        Filter::Sql(filter) => RuleFilter::Sql(sql(filter.expression(), filter.parameters())),
        Filter::Correlation(filter) => RuleFilter::Correlation(CorrelationRuleFilter {
            correlation_id: filter.correlation_id.clone(),
            message_id: filter.message_id.clone(),
            to: filter.to.clone(),
            reply_to: filter.reply_to.clone(),
            label: filter.label.clone(),
            session_id: filter.session_id.clone(),
            reply_to_session_id: filter.reply_to_session_id.clone(),
            content_type: filter.content_type.clone(),
            properties: filter
                .properties
                .iter()
                .filter_map(|(name, value)| Some((name.clone(), api_value(value)?)))
                .collect(),
        }),
    };
    let action = match rule.action() {
        None => RuleAction::Empty,
        Some(action) => RuleAction::Sql(sql(action.expression(), action.parameters())),
    };
    RuleProperties {
        name: rule.name().to_owned(),
        filter,
        action,
    }
}

/// When a subscription's rules date from: the API does not track rules one by one.
pub(crate) fn rule_created_at(state: &SubscriptionState) -> Timestamp {
    Timestamp::from_unix_millis(state.created_at)
}

/// The parameters of an expression as the rules take them, each keeping its declared type.
fn parameters(sql: &SqlExpression) -> Vec<Parameter> {
    sql.parameters
        .iter()
        .map(|(name, value)| {
            let value = match value {
                RuleValue::String(text) => ParameterValue::String(text.clone()),
                RuleValue::Int(number) => ParameterValue::Int(*number),
                RuleValue::Long(number) => ParameterValue::Long(*number),
                RuleValue::Double(number) => ParameterValue::Double(*number),
                RuleValue::Boolean(flag) => ParameterValue::Boolean(*flag),
                RuleValue::DateTime(at) => {
                    ParameterValue::DateTime(busbar_rules::Timestamp(at.unix_millis()))
                }
                RuleValue::Duration(span) => ParameterValue::Duration(rules_time_span(span)),
            };
            Parameter::new(name, value)
        })
        .collect()
}

/// A parameter as the API writes it, in its declared type.
fn parameter_value(value: &ParameterValue) -> RuleValue {
    match value {
        ParameterValue::String(text) => RuleValue::String(text.clone()),
        ParameterValue::Int(number) => RuleValue::Int(*number),
        ParameterValue::Long(number) => RuleValue::Long(*number),
        ParameterValue::Double(number) => RuleValue::Double(*number),
        ParameterValue::Boolean(flag) => RuleValue::Boolean(*flag),
        ParameterValue::DateTime(at) => RuleValue::DateTime(Timestamp::from_unix_millis(at.0)),
        // The API's durations are not negative; the rules' cannot be made so through it.
        ParameterValue::Duration(span) => {
            RuleValue::Duration(TimeSpan::from_millis(u64::try_from(span.0).unwrap_or(0)))
        }
    }
}

fn rules_time_span(span: &TimeSpan) -> busbar_rules::TimeSpan {
    busbar_rules::TimeSpan(i64::try_from(span.to_std().as_millis()).unwrap_or(i64::MAX))
}

fn rule_value(value: &RuleValue) -> Value<'static> {
    match value {
        RuleValue::String(text) => Value::Str(text.clone().into()),
        RuleValue::Int(number) => Value::Int(i64::from(*number)),
        RuleValue::Long(number) => Value::Int(*number),
        RuleValue::Double(number) => Value::Float(*number),
        RuleValue::Boolean(flag) => Value::Bool(*flag),
        RuleValue::DateTime(at) => Value::Timestamp(busbar_rules::Timestamp(at.unix_millis())),
        RuleValue::Duration(span) => Value::TimeSpan(rules_time_span(span)),
    }
}

fn api_value(value: &Value<'static>) -> Option<RuleValue> {
    Some(match value {
        Value::Str(text) => RuleValue::String(text.to_string()),
        Value::Int(number) => RuleValue::Long(*number),
        Value::Float(number) => RuleValue::Double(*number),
        Value::Bool(flag) => RuleValue::Boolean(*flag),
        Value::Timestamp(at) => RuleValue::DateTime(Timestamp::from_unix_millis(at.0)),
        Value::TimeSpan(span) => {
            RuleValue::Duration(TimeSpan::from_millis(u64::try_from(span.0).ok()?))
        }
        _ => return None,
    })
}

/// The description a client sent, as kept with the entity.
fn kept(name: &str, content: EntryContent<'_>) -> Kept {
    // Only the description is kept: the runtime part written with it is a placeholder.
    let epoch = Timestamp::from_unix_millis(0);
    let entry = Entry {
        id: name,
        title: name,
        published: epoch,
        updated: epoch,
        author: None,
        content,
    };
    BTreeMap::from([(DESCRIPTION.to_owned(), write_entry(&entry))])
}

fn described(kept: &Kept) -> Option<EntityDescription> {
    parse_entry(kept.get(DESCRIPTION)?.as_bytes()).ok()
}

/// The description of a queue defined in `Config.json`.
fn configured_queue(config: &QueueConfig) -> QueueProperties {
    QueueProperties {
        lock_duration: span(config.delivery.lock_duration),
        max_size_in_megabytes: u64::from(config.max_size_in_megabytes),
        max_message_size_in_kilobytes: u64::from(config.max_message_size_in_kilobytes),
        requires_duplicate_detection: config.duplicate_detection.enabled,
        requires_session: config.delivery.requires_session,
        default_message_time_to_live: span(config.delivery.default_message_time_to_live),
        dead_lettering_on_message_expiration: config.delivery.dead_lettering_on_message_expiration,
        duplicate_detection_history_time_window: span(
            config.duplicate_detection.history_time_window,
        ),
        max_delivery_count: config.delivery.max_delivery_count,
        forward_to: config.delivery.forward_to.as_ref().map(ToString::to_string),
        forward_dead_lettered_messages_to: config
            .delivery
            .forward_dead_lettered_messages_to
            .as_ref()
            .map(ToString::to_string),
        status: api_status(config.status),
        ..QueueProperties::default()
    }
}

/// The broker's status for one the API sent (validated: one a client may set).
fn broker_status(status: EntityStatus) -> config::EntityStatus {
    match status {
        EntityStatus::Disabled => config::EntityStatus::Disabled,
        EntityStatus::SendDisabled => config::EntityStatus::SendDisabled,
        EntityStatus::ReceiveDisabled => config::EntityStatus::ReceiveDisabled,
        _ => config::EntityStatus::Active,
    }
}

/// A status of `Config.json` as the API describes it.
fn api_status(status: config::EntityStatus) -> EntityStatus {
    match status {
        config::EntityStatus::Active => EntityStatus::Active,
        config::EntityStatus::Disabled => EntityStatus::Disabled,
        config::EntityStatus::SendDisabled => EntityStatus::SendDisabled,
        config::EntityStatus::ReceiveDisabled => EntityStatus::ReceiveDisabled,
    }
}

fn target(value: &Option<String>) -> Option<EntityName> {
    value
        .as_deref()
        .map(|value| EntityName::new(forward_target_entity(value)))
}

fn count_details(counts: &MessageCounts) -> MessageCountDetails {
    MessageCountDetails {
        active: count(counts.active),
        dead_letter: count(counts.dead_lettered),
        scheduled: count(counts.scheduled),
        transfer: 0,
        transfer_dead_letter: 0,
        deferred: count(counts.deferred),
    }
}

fn times<C>(state: &EntityState<C>) -> EntityTimes {
    EntityTimes {
        created_at: Timestamp::from_unix_millis(state.created_at),
        updated_at: Timestamp::from_unix_millis(state.updated_at),
        accessed_at: None,
    }
}

fn placeholder_times() -> EntityTimes {
    EntityTimes::all_at(Timestamp::from_unix_millis(0))
}

fn span(duration: Duration) -> TimeSpan {
    TimeSpan::from_millis(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
        .min(TimeSpan::MAX)
}

/// A size the API sent (validated within range) as the broker keeps it.
fn saturated(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

fn count(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}
