//! From the JSON tree of `Config.json` to the resolved model: each entity's properties read,
//! range-checked against Service Bus's own limits (not the emulator's quotas) and defaulted.

use std::time::Duration;

use serde_json::Value;

use super::model::{
    Config, CorrelationFilter, DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES,
    DEFAULT_MAX_SIZE_IN_MEGABYTES, DeliverySettings, DuplicateDetection, LoggingTargets,
    MAX_MESSAGE_SIZE_IN_KILOBYTES, NamespaceConfig, PropertyValue, QueueConfig, RuleConfig,
    RuleFilter, SqlExpression, SubscriptionConfig, TopicConfig,
};
use super::reader::{DurationLimits, Fields, Invalid, describe_value};
use super::status::{EntityStatus, QUEUE_STATUSES, SUBSCRIPTION_STATUSES, TOPIC_STATUSES};
use crate::auth::KeyRing;
use crate::names::EntityName;

/// Service Bus: a peek-lock lasts 5 seconds to 5 minutes.
const LOCK_DURATION: DurationLimits = DurationLimits {
    min: Duration::from_secs(5),
    max: Some(Duration::from_secs(300)),
    default: Duration::from_secs(60),
};
/// .NET's `TimeSpan.MaxValue`, Service Bus's "never expires" and its largest time-to-live; it
/// also keeps `now + ttl` in milliseconds far from overflowing an `i64`.
const TIMESPAN_MAX: Duration = Duration::new(922_337_203_685, 477_580_700);
/// Service Bus: 1 second to `TimeSpan.MaxValue` (the emulator's 1-hour cap is a quota, not imposed).
const MESSAGE_TIME_TO_LIVE: DurationLimits = DurationLimits {
    min: Duration::from_secs(1),
    max: Some(TIMESPAN_MAX),
    default: Duration::from_secs(3_600),
};
/// Duplicate-detection history: 5 seconds to 7 days, 20 seconds by default.
const DUPLICATE_DETECTION_WINDOW: DurationLimits = DurationLimits {
    min: Duration::from_secs(5),
    max: Some(Duration::from_secs(7 * 86_400)),
    default: Duration::from_secs(20),
};
/// The emulator's default; Service Bus's only bound is at least 1 (its 10 is an emulator quota).
const DEFAULT_MAX_DELIVERY_COUNT: u32 = 3;
/// Service Bus name lengths: queues and topics 260, subscriptions and rules 50.
const ENTITY_NAME_MAX: usize = 260;
const CHILD_NAME_MAX: usize = 50;

const QUEUE_PROPERTIES: &[&str] = &[
    "DeadLetteringOnMessageExpiration",
    "DefaultMessageTimeToLive",
    "DuplicateDetectionHistoryTimeWindow",
    "ForwardDeadLetteredMessagesTo",
    "ForwardTo",
    "LockDuration",
    "MaxDeliveryCount",
    "MaxMessageSizeInKilobytes",
    "MaxSizeInMegabytes",
    "RequiresDuplicateDetection",
    "RequiresSession",
    "Status",
];
const TOPIC_PROPERTIES: &[&str] = &[
    "DefaultMessageTimeToLive",
    "DuplicateDetectionHistoryTimeWindow",
    "MaxMessageSizeInKilobytes",
    "MaxSizeInMegabytes",
    "RequiresDuplicateDetection",
    "Status",
];
const SUBSCRIPTION_PROPERTIES: &[&str] = &[
    "DeadLetteringOnFilterEvaluationExceptions",
    "DeadLetteringOnMessageExpiration",
    "DefaultMessageTimeToLive",
    "ForwardDeadLetteredMessagesTo",
    "ForwardTo",
    "LockDuration",
    "MaxDeliveryCount",
    "RequiresSession",
    "Status",
];
const RULE_PROPERTIES: &[&str] = &["FilterType", "CorrelationFilter", "SqlFilter", "Action"];
const CORRELATION_PROPERTIES: &[&str] = &[
    "ContentType",
    "CorrelationId",
    "Label",
    "MessageId",
    "ReplyTo",
    "ReplyToSessionId",
    "SessionId",
    "To",
    "Properties",
];
const SQL_PROPERTIES: &[&str] = &["SqlExpression"];
const LOGGING_TYPES: &[(&str, LoggingTargets)] = &[
    (
        "File",
        LoggingTargets {
            file: true,
            console: false,
        },
    ),
    (
        "Console",
        LoggingTargets {
            file: false,
            console: true,
        },
    ),
    (
        "File,Console",
        LoggingTargets {
            file: true,
            console: true,
        },
    ),
    (
        "Console,File",
        LoggingTargets {
            file: true,
            console: true,
        },
    ),
];
/// Busbar logs to the console when `Logging` is left out.
const DEFAULT_LOGGING: LoggingTargets = LoggingTargets {
    file: false,
    console: true,
};

/// Reads the whole document (after comment stripping and JSON parsing).
pub(super) fn resolve(document: &Value) -> Result<Config, Invalid> {
    let root = Fields::new(document, "the document", "", &["UserConfig"])?;
    let user = root
        .nested_unchecked("UserConfig")?
        .ok_or_else(|| root.invalid("UserConfig is required".to_owned()))?
        .rescoped("UserConfig".to_owned())
        .known(&["Namespaces", "Logging"])?;
    let namespaces = user.array("Namespaces")?;
    let [namespace_value] = namespaces else {
        return Err(user.invalid(format!(
            "Namespaces must contain exactly one namespace, found {}",
            namespaces.len()
        )));
    };
    let namespace = namespace(namespace_value)?;
    let logging = match user.nested("Logging", &["Type"])? {
        None => DEFAULT_LOGGING,
        Some(logging) => {
            let kind = logging.required_string("Type").map_err(in_logging)?;
            LOGGING_TYPES
                .iter()
                .find(|(name, _)| *name == kind)
                .map(|(_, targets)| *targets)
                .ok_or_else(|| {
                    let names: Vec<String> = LOGGING_TYPES
                        .iter()
                        .map(|(name, _)| format!("{name:?}"))
                        .collect();
                    logging.invalid(format!(
                        "Logging.Type {kind:?} must be one of {}",
                        names.join(", ")
                    ))
                })?
        }
    };
    Ok(Config {
        namespace,
        logging,
        memory_budget_bytes: None,
        keys: KeyRing::default(),
    })
}

fn in_logging(invalid: Invalid) -> Invalid {
    Invalid {
        message: format!("Logging.{}", invalid.message),
        ..invalid
    }
}

fn namespace(value: &Value) -> Result<NamespaceConfig, Invalid> {
    let path = "UserConfig.Namespaces[0]";
    let fields = Fields::object(value, path, "")?;
    let name = well_formed_name(&fields, ENTITY_NAME_MAX)?;
    let fields = fields
        .rescoped(format!("namespace {name:?}"))
        .known(&["Name", "Queues", "Topics"])?;
    let queues = fields
        .array("Queues")?
        .iter()
        .enumerate()
        .map(|(index, value)| queue(value, &format!("{path}.Queues[{index}]")))
        .collect::<Result<_, _>>()?;
    let topics = fields
        .array("Topics")?
        .iter()
        .enumerate()
        .map(|(index, value)| topic(value, &format!("{path}.Topics[{index}]")))
        .collect::<Result<_, _>>()?;
    Ok(NamespaceConfig {
        name: name.to_owned(),
        queues,
        topics,
    })
}

fn queue(value: &Value, path: &str) -> Result<QueueConfig, Invalid> {
    let (name, fields) = named_entity(
        value,
        path,
        "queue",
        &["Name", "Properties"],
        ENTITY_NAME_MAX,
    )?;
    let properties = properties(&fields, QUEUE_PROPERTIES)?;
    Ok(QueueConfig {
        name,
        delivery: delivery(properties.as_ref())?,
        duplicate_detection: duplicate_detection(properties.as_ref())?,
        max_size_in_megabytes: max_size(properties.as_ref())?,
        max_message_size_in_kilobytes: max_message_size(properties.as_ref())?,
        status: status(properties.as_ref(), QUEUE_STATUSES)?,
        authorization_rules: Vec::new(),
    })
}

fn topic(value: &Value, path: &str) -> Result<TopicConfig, Invalid> {
    let (name, fields) = named_entity(
        value,
        path,
        "topic",
        &["Name", "Properties", "Subscriptions"],
        ENTITY_NAME_MAX,
    )?;
    let properties = properties(&fields, TOPIC_PROPERTIES)?;
    let subscriptions = fields
        .array("Subscriptions")?
        .iter()
        .enumerate()
        .map(|(index, value)| {
            subscription(
                value,
                &format!("{} Subscriptions[{index}]", fields.scope()),
                &name,
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(TopicConfig {
        name,
        default_message_time_to_live: time_to_live(properties.as_ref())?,
        duplicate_detection: duplicate_detection(properties.as_ref())?,
        max_size_in_megabytes: max_size(properties.as_ref())?,
        max_message_size_in_kilobytes: max_message_size(properties.as_ref())?,
        status: status(properties.as_ref(), TOPIC_STATUSES)?,
        authorization_rules: Vec::new(),
        subscriptions,
    })
}

fn subscription(
    value: &Value,
    path: &str,
    topic: &EntityName,
) -> Result<SubscriptionConfig, Invalid> {
    let kind = format!("topic \"{topic}\" subscription");
    let (name, fields) = named_entity(
        value,
        path,
        &kind,
        &["Name", "Properties", "Rules"],
        CHILD_NAME_MAX,
    )?;
    let properties = properties(&fields, SUBSCRIPTION_PROPERTIES)?;
    let rules: Vec<RuleConfig> = fields
        .array("Rules")?
        .iter()
        .enumerate()
        .map(|(index, value)| {
            rule(
                value,
                &format!("{} Rules[{index}]", fields.scope()),
                fields.scope(),
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(SubscriptionConfig {
        name,
        delivery: delivery(properties.as_ref())?,
        dead_lettering_on_filter_evaluation_exceptions: filter_error_dead_lettering(
            properties.as_ref(),
        )?,
        status: status(properties.as_ref(), SUBSCRIPTION_STATUSES)?,
        rules: if rules.is_empty() {
            vec![RuleConfig::match_all()]
        } else {
            rules
        },
    })
}

fn rule(value: &Value, path: &str, subscription_scope: &str) -> Result<RuleConfig, Invalid> {
    let kind = format!("{subscription_scope} rule");
    let (name, fields) = named_entity(value, path, &kind, &["Name", "Properties"], CHILD_NAME_MAX)?;
    let properties = fields
        .nested("Properties", RULE_PROPERTIES)?
        .ok_or_else(|| fields.invalid("Properties is required".to_owned()))?;
    let filter_type = properties.required_string("FilterType")?;
    let correlation = properties.nested("CorrelationFilter", CORRELATION_PROPERTIES)?;
    let sql = properties.nested("SqlFilter", SQL_PROPERTIES)?;
    let filter = match (filter_type, correlation, sql) {
        ("Correlation", Some(correlation), None) => {
            RuleFilter::Correlation(correlation_filter(&correlation)?)
        }
        ("Correlation", None, _) => {
            return Err(
                fields.invalid("FilterType \"Correlation\" needs a CorrelationFilter".to_owned())
            );
        }
        ("Sql", None, Some(sql)) => RuleFilter::Sql(sql_expression(&sql, "SqlFilter", |text| {
            busbar_rules::SqlFilter::parse(text).map(drop)
        })?),
        ("Sql", _, None) => {
            return Err(fields.invalid("FilterType \"Sql\" needs a SqlFilter".to_owned()));
        }
        ("Correlation" | "Sql", Some(_), Some(_)) => {
            return Err(fields.invalid(
                "a rule has either a CorrelationFilter or a SqlFilter, not both".to_owned(),
            ));
        }
        (other, ..) => {
            return Err(fields.invalid(format!(
                "FilterType {other:?} must be \"Correlation\" or \"Sql\""
            )));
        }
    };
    let action = properties
        .nested("Action", SQL_PROPERTIES)?
        .map(|action| {
            sql_expression(&action, "Action", |text| {
                busbar_rules::SqlAction::parse(text).map(drop)
            })
        })
        .transpose()?;
    Ok(RuleConfig {
        name,
        filter,
        action,
    })
}

fn correlation_filter(fields: &Fields<'_>) -> Result<CorrelationFilter, Invalid> {
    if fields.is_empty() {
        return Err(fields.invalid("CorrelationFilter must set at least one property".to_owned()));
    }
    let text = |key: &str| fields.string(key).map(|value| value.map(str::to_owned));
    let properties = user_properties(fields)?;
    Ok(CorrelationFilter {
        content_type: text("ContentType")?,
        correlation_id: text("CorrelationId")?,
        label: text("Label")?,
        message_id: text("MessageId")?,
        reply_to: text("ReplyTo")?,
        reply_to_session_id: text("ReplyToSessionId")?,
        session_id: text("SessionId")?,
        to: text("To")?,
        properties,
    })
}

fn user_properties(filter: &Fields<'_>) -> Result<Vec<(String, PropertyValue)>, Invalid> {
    // Every key is allowed here: these are the message's own application properties.
    let Some(object) = filter.nested_unchecked("Properties")? else {
        return Ok(Vec::new());
    };
    if object.is_empty() {
        return Err(filter
            .invalid("CorrelationFilter.Properties must name at least one property".to_owned()));
    }
    object
        .entries()
        .map(|(key, value)| {
            let value = match value {
                Value::String(text) => PropertyValue::String(text.clone()),
                Value::Bool(flag) => PropertyValue::Bool(*flag),
                Value::Number(number) => match number.as_i64() {
                    Some(integer) => PropertyValue::Integer(integer),
                    None => PropertyValue::Float(number.as_f64().unwrap_or(f64::NAN)),
                },
                other => {
                    return Err(filter.invalid(format!(
                        "CorrelationFilter property {key:?} must be a string, number or boolean, found {}",
                        describe_value(other)
                    )));
                }
            };
            Ok((key.clone(), value))
        })
        .collect()
}

/// A SQL filter or action's text, checked with `parse` so that a malformed one stops start-up
/// naming the file, the rule and the position.
fn sql_expression(
    fields: &Fields<'_>,
    location: &str,
    parse: fn(&str) -> Result<(), busbar_rules::SyntaxError>,
) -> Result<SqlExpression, Invalid> {
    let expression = fields.string("SqlExpression")?.unwrap_or_default();
    if expression.trim().is_empty() {
        return Err(fields.invalid(format!("{location}.SqlExpression is required")));
    }
    parse(expression).map_err(|error| {
        fields.invalid(format!("{location}.SqlExpression {expression:?}: {error}"))
    })?;
    Ok(SqlExpression(expression.to_owned()))
}

/// Reads an entity object: first its `Name` (errors under the JSON path), then everything
/// else under `<kind> "<name>"`.
fn named_entity<'a>(
    value: &'a Value,
    path: &str,
    kind: &str,
    allowed: &[&str],
    max_name: usize,
) -> Result<(EntityName, Fields<'a>), Invalid> {
    let fields = Fields::object(value, path, "")?;
    let name = EntityName::new(well_formed_name(&fields, max_name)?);
    let fields = fields
        .rescoped(format!("{kind} \"{name}\""))
        .known(allowed)?;
    Ok((name, fields))
}

fn well_formed_name<'a>(fields: &Fields<'a>, max: usize) -> Result<&'a str, Invalid> {
    let name = fields.required_string("Name")?;
    if !EntityName::is_well_formed(name) {
        return Err(fields.invalid(format!(
            "Name {name:?} is not a valid name (letters, digits, '_', '-', '.', '/', starting and ending with a letter or digit)"
        )));
    }
    if name.len() > max {
        return Err(fields.invalid(format!("Name {name:?} is longer than {max} characters")));
    }
    Ok(name)
}

fn properties<'a>(entity: &Fields<'a>, allowed: &[&str]) -> Result<Option<Fields<'a>>, Invalid> {
    entity.nested("Properties", allowed)
}

fn delivery(properties: Option<&Fields<'_>>) -> Result<DeliverySettings, Invalid> {
    let Some(fields) = properties else {
        return Ok(DeliverySettings::default());
    };
    Ok(DeliverySettings {
        lock_duration: fields.duration("LockDuration", LOCK_DURATION)?,
        max_delivery_count: fields.count_at_least(
            "MaxDeliveryCount",
            1,
            DEFAULT_MAX_DELIVERY_COUNT,
        )?,
        requires_session: fields.bool_or("RequiresSession", false)?,
        default_message_time_to_live: fields
            .duration("DefaultMessageTimeToLive", MESSAGE_TIME_TO_LIVE)?,
        dead_lettering_on_message_expiration: fields
            .bool_or("DeadLetteringOnMessageExpiration", false)?,
        forward_to: forward_target(fields, "ForwardTo")?,
        forward_dead_lettered_messages_to: forward_target(fields, "ForwardDeadLetteredMessagesTo")?,
    })
}

fn time_to_live(properties: Option<&Fields<'_>>) -> Result<Duration, Invalid> {
    properties.map_or(Ok(MESSAGE_TIME_TO_LIVE.default), |fields| {
        fields.duration("DefaultMessageTimeToLive", MESSAGE_TIME_TO_LIVE)
    })
}

fn duplicate_detection(properties: Option<&Fields<'_>>) -> Result<DuplicateDetection, Invalid> {
    let Some(fields) = properties else {
        return Ok(DuplicateDetection::default());
    };
    Ok(DuplicateDetection {
        enabled: fields.bool_or("RequiresDuplicateDetection", false)?,
        history_time_window: fields.duration(
            "DuplicateDetectionHistoryTimeWindow",
            DUPLICATE_DETECTION_WINDOW,
        )?,
    })
}

/// `DeadLetteringOnFilterEvaluationExceptions`: not in the emulator's schema; Service Bus's
/// default (true) dead-letters a copy whose filter fails to evaluate, false drops it.
fn filter_error_dead_lettering(properties: Option<&Fields<'_>>) -> Result<bool, Invalid> {
    properties.map_or(Ok(true), |fields| {
        fields.bool_or("DeadLetteringOnFilterEvaluationExceptions", true)
    })
}

/// `MaxSizeInMegabytes`: not in the emulator's schema (its size is fixed at 100 MB), accepted
/// so that a small quota can be configured; at least 1, Service Bus's 1024 by default.
fn max_size(properties: Option<&Fields<'_>>) -> Result<u32, Invalid> {
    properties.map_or(Ok(DEFAULT_MAX_SIZE_IN_MEGABYTES), |fields| {
        fields.count_at_least("MaxSizeInMegabytes", 1, DEFAULT_MAX_SIZE_IN_MEGABYTES)
    })
}

/// `MaxMessageSizeInKilobytes`: not in the emulator's schema (its limit is fixed at 256),
/// accepted so that an entity can take Premium's large messages; 1 to 102,400, 256 by default.
fn max_message_size(properties: Option<&Fields<'_>>) -> Result<u32, Invalid> {
    properties.map_or(Ok(DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES), |fields| {
        fields.count_within(
            "MaxMessageSizeInKilobytes",
            1..=MAX_MESSAGE_SIZE_IN_KILOBYTES,
            DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES,
        )
    })
}

/// `Status`: not in the emulator's schema, accepted as Service Bus's ARM templates name it; one
/// of the statuses the entity's kind can take, `Active` by default.
fn status(
    properties: Option<&Fields<'_>>,
    allowed: &[EntityStatus],
) -> Result<EntityStatus, Invalid> {
    let Some(fields) = properties else {
        return Ok(EntityStatus::Active);
    };
    let Some(text) = fields.string("Status")? else {
        return Ok(EntityStatus::Active);
    };
    EntityStatus::parse(text, allowed).ok_or_else(|| {
        let names: Vec<String> = allowed
            .iter()
            .map(|status| format!("{:?}", status.as_str()))
            .collect();
        fields.invalid(format!(
            "Status {text:?} must be one of {}",
            names.join(", ")
        ))
    })
}

/// `""` (the emulator's way of saying "none") or the name of a queue or topic.
fn forward_target(fields: &Fields<'_>, key: &str) -> Result<Option<EntityName>, Invalid> {
    match fields.string(key)? {
        None | Some("") => Ok(None),
        Some(name) if EntityName::is_well_formed(name) => Ok(Some(EntityName::from(name))),
        Some(name) => Err(fields.invalid(format!("{key} {name:?} is not a valid entity name"))),
    }
}
