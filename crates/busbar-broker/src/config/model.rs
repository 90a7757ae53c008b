//! The resolved configuration: every entity with every default filled in, ready for the registry.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::status::EntityStatus;
use crate::address::EntityPath;
use crate::auth::{AuthorizationRule, KeyRing};
use crate::names::EntityName;

/// The name Service Bus gives the rule of a subscription created without rules.
pub const DEFAULT_RULE_NAME: &str = "$Default";
/// The filter of [`DEFAULT_RULE_NAME`]: every message matches.
pub const MATCH_ALL_SQL: &str = "1=1";
/// Service Bus's default `MaxSizeInMegabytes` of queues and topics.
pub const DEFAULT_MAX_SIZE_IN_MEGABYTES: u32 = 1024;
/// The default `MaxMessageSizeInKilobytes` of queues and topics: Service Bus Standard's (and
/// the emulator's) 256 KiB.
pub const DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES: u32 = 256;
/// The largest `MaxMessageSizeInKilobytes`: Service Bus Premium's 100 MiB. Busbar has one tier
/// and accepts any limit from 1 KiB to this (Premium itself takes 1,024–102,400, Standard only
/// its fixed 256), so a small limit is as easy to try as Premium's largest.
pub const MAX_MESSAGE_SIZE_IN_KILOBYTES: u32 = 102_400;

/// A validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The single namespace.
    pub namespace: NamespaceConfig,
    /// Where the emulator would write its logs.
    pub logging: LoggingTargets,
    /// The broker-wide budget for messages held in memory, in bytes (the binary's
    /// `--memory-budget`; not part of `Config.json`): sends are refused once every entity's
    /// messages together reach it. `None`: no limit.
    pub memory_budget_bytes: Option<u64>,
    /// The shared-access rules tokens are checked against (the binary's `--policies`; not
    /// part of `Config.json`): the emulator's key unless set.
    pub keys: KeyRing,
}

/// The namespace and its entities, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct NamespaceConfig {
    /// The namespace name (`sbemulatorns` for the emulator).
    pub name: String,
    /// The queues.
    pub queues: Vec<QueueConfig>,
    /// The topics with their subscriptions.
    pub topics: Vec<TopicConfig>,
}

/// A queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueConfig {
    /// The queue's name.
    pub name: EntityName,
    /// Lock, delivery, expiry and forwarding settings.
    pub delivery: DeliverySettings,
    /// Duplicate detection on send.
    pub duplicate_detection: DuplicateDetection,
    /// The size quota (`MaxSizeInMegabytes`, a Busbar extension of the emulator's schema).
    pub max_size_in_megabytes: u32,
    /// The largest message it takes (`MaxMessageSizeInKilobytes`, a Busbar extension of the
    /// emulator's schema); definitions stored before it existed read as the default.
    #[serde(default = "default_max_message_size")]
    pub max_message_size_in_kilobytes: u32,
    /// Whether it takes sends and hands out messages (`Status`).
    #[serde(default)]
    pub status: EntityStatus,
    /// Its own shared-access rules (`AuthorizationRules`, set through the administration API):
    /// their tokens are good on this queue only.
    #[serde(default)]
    pub authorization_rules: Vec<AuthorizationRule>,
}

/// A topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicConfig {
    /// The topic's name.
    pub name: EntityName,
    /// Time-to-live of messages sent without one.
    pub default_message_time_to_live: Duration,
    /// Duplicate detection on send.
    pub duplicate_detection: DuplicateDetection,
    /// The size quota (`MaxSizeInMegabytes`, a Busbar extension of the emulator's schema),
    /// enforced on each subscription's stored messages.
    pub max_size_in_megabytes: u32,
    /// The largest message it takes (`MaxMessageSizeInKilobytes`), its subscriptions' limit
    /// too; definitions stored before it existed read as the default.
    #[serde(default = "default_max_message_size")]
    pub max_message_size_in_kilobytes: u32,
    /// Whether it takes sends (`Status`); `Disabled` also stops its subscriptions handing out.
    #[serde(default)]
    pub status: EntityStatus,
    /// Its own shared-access rules (`AuthorizationRules`, set through the administration API):
    /// their tokens are good on this topic and its subscriptions only.
    #[serde(default)]
    pub authorization_rules: Vec<AuthorizationRule>,
    /// The subscriptions, in file order.
    pub subscriptions: Vec<SubscriptionConfig>,
}

/// A subscription of a topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionConfig {
    /// The subscription's name.
    pub name: EntityName,
    /// Lock, delivery, expiry and forwarding settings.
    pub delivery: DeliverySettings,
    /// Whether a copy whose filter or rule action fails to evaluate goes to the dead-letter
    /// queue (`DeadLetteringOnFilterEvaluationExceptions`, default true) or is dropped.
    pub dead_lettering_on_filter_evaluation_exceptions: bool,
    /// Whether it hands out messages (`Status`); it takes its topic's copies whatever it is.
    #[serde(default)]
    pub status: EntityStatus,
    /// The rules; never empty (a subscription without rules gets `$Default`, matching all).
    pub rules: Vec<RuleConfig>,
}

/// The settings queues and subscriptions share: everything about receiving.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliverySettings {
    /// How long a peek-lock holds a message (`LockDuration`).
    pub lock_duration: Duration,
    /// Deliveries before the broker dead-letters a message (`MaxDeliveryCount`).
    pub max_delivery_count: u32,
    /// Whether receivers must use sessions (`RequiresSession`).
    pub requires_session: bool,
    /// Time-to-live of messages sent without one (`DefaultMessageTimeToLive`).
    pub default_message_time_to_live: Duration,
    /// Whether expired messages go to the dead-letter queue (`DeadLetteringOnMessageExpiration`).
    pub dead_lettering_on_message_expiration: bool,
    /// Queue or topic every message is forwarded to (`ForwardTo`).
    pub forward_to: Option<EntityName>,
    /// Queue or topic dead-lettered messages are forwarded to (`ForwardDeadLetteredMessagesTo`).
    pub forward_dead_lettered_messages_to: Option<EntityName>,
}

/// Duplicate detection of queues and topics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DuplicateDetection {
    /// `RequiresDuplicateDetection`.
    pub enabled: bool,
    /// How long message ids are remembered (`DuplicateDetectionHistoryTimeWindow`).
    pub history_time_window: Duration,
}

/// A subscription rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleConfig {
    /// The rule's name.
    pub name: EntityName,
    /// Which messages the rule selects.
    pub filter: RuleFilter,
    /// A SQL action applied to selected messages (`SET sys.To = 'x'`), if any.
    pub action: Option<SqlExpression>,
}

/// A rule's filter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RuleFilter {
    /// Matches on system and user properties by equality.
    Correlation(CorrelationFilter),
    /// A SQL-92 subset expression, parsed later by the rules engine.
    Sql(SqlExpression),
}

/// The text of a SQL filter or action, kept as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SqlExpression(pub String);

/// A correlation filter: all given fields must equal the message's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CorrelationFilter {
    /// `ContentType`.
    pub content_type: Option<String>,
    /// `CorrelationId`.
    pub correlation_id: Option<String>,
    /// `Label` (the message's subject).
    pub label: Option<String>,
    /// `MessageId`.
    pub message_id: Option<String>,
    /// `ReplyTo`.
    pub reply_to: Option<String>,
    /// `ReplyToSessionId`.
    pub reply_to_session_id: Option<String>,
    /// `SessionId`.
    pub session_id: Option<String>,
    /// `To`.
    pub to: Option<String>,
    /// User (application) properties, sorted by name.
    pub properties: Vec<(String, PropertyValue)>,
}

/// The value of a user property in a correlation filter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PropertyValue {
    /// A string.
    String(String),
    /// A whole number.
    Integer(i64),
    /// A number with a fraction (or too large for an integer).
    Float(f64),
    /// `true` or `false`.
    Bool(bool),
}

/// `Logging.Type`: `File`, `Console`, `File,Console` or `Console,File`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoggingTargets {
    /// Log to a file.
    pub file: bool,
    /// Log to the console.
    pub console: bool,
}

impl Config {
    /// The configuration the emulator ships (`Config.json`): namespace `sbemulatorns`, queue
    /// `queue.1`, topic `topic.1` with `subscription.1` and its correlation rule
    /// `app-prop-filter-1` on content type `application/json`, logging to a file.
    pub fn emulator_default() -> Self {
        let delivery = DeliverySettings::default();
        let duplicate_detection = DuplicateDetection::default();
        let rule = RuleConfig {
            name: EntityName::from("app-prop-filter-1"),
            filter: RuleFilter::Correlation(CorrelationFilter {
                content_type: Some("application/json".to_owned()),
                ..CorrelationFilter::default()
            }),
            action: None,
        };
        Self {
            namespace: NamespaceConfig {
                name: "sbemulatorns".to_owned(),
                queues: vec![QueueConfig {
                    name: EntityName::from("queue.1"),
                    delivery: delivery.clone(),
                    duplicate_detection,
                    max_size_in_megabytes: DEFAULT_MAX_SIZE_IN_MEGABYTES,
                    max_message_size_in_kilobytes: DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES,
                    status: EntityStatus::Active,
                    authorization_rules: Vec::new(),
                }],
                topics: vec![TopicConfig {
                    name: EntityName::from("topic.1"),
                    default_message_time_to_live: delivery.default_message_time_to_live,
                    duplicate_detection,
                    max_size_in_megabytes: DEFAULT_MAX_SIZE_IN_MEGABYTES,
                    max_message_size_in_kilobytes: DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES,
                    status: EntityStatus::Active,
                    authorization_rules: Vec::new(),
                    subscriptions: vec![SubscriptionConfig {
                        name: EntityName::from("subscription.1"),
                        delivery,
                        dead_lettering_on_filter_evaluation_exceptions: true,
                        status: EntityStatus::Active,
                        rules: vec![rule],
                    }],
                }],
            },
            logging: LoggingTargets {
                file: true,
                console: false,
            },
            memory_budget_bytes: None,
            keys: KeyRing::default(),
        }
    }
}

impl NamespaceConfig {
    /// Whether the path names a configured queue or topic, or a subscription of a configured
    /// topic (names compare case-insensitively), e.g. for the `$cbs` existence check.
    pub fn has_entity(&self, path: &EntityPath) -> bool {
        match path {
            EntityPath::QueueOrTopic(name) => {
                self.queues.iter().any(|queue| queue.name == *name)
                    || self.topics.iter().any(|topic| topic.name == *name)
            }
            EntityPath::Subscription {
                topic,
                subscription,
            } => self
                .topics
                .iter()
                .filter(|candidate| candidate.name == *topic)
                .any(|candidate| {
                    candidate
                        .subscriptions
                        .iter()
                        .any(|entry| entry.name == *subscription)
                }),
        }
    }
}

fn default_max_message_size() -> u32 {
    DEFAULT_MAX_MESSAGE_SIZE_IN_KILOBYTES
}

/// A `MaxMessageSizeInKilobytes` in bytes.
pub const fn message_size_limit(kilobytes: u32) -> u64 {
    // Lossless: `From` is not const.
    kilobytes as u64 * 1024
}

/// The emulator's defaults (servicebus-amqp.md §9.4).
impl Default for DeliverySettings {
    fn default() -> Self {
        Self {
            lock_duration: Duration::from_secs(60),
            max_delivery_count: 3,
            requires_session: false,
            default_message_time_to_live: Duration::from_secs(3_600),
            dead_lettering_on_message_expiration: false,
            forward_to: None,
            forward_dead_lettered_messages_to: None,
        }
    }
}

/// Off, with the Service Bus default window of 20 seconds.
impl Default for DuplicateDetection {
    fn default() -> Self {
        Self {
            enabled: false,
            history_time_window: Duration::from_secs(20),
        }
    }
}

impl RuleConfig {
    /// The rule Service Bus creates for a subscription configured without rules.
    pub fn match_all() -> Self {
        Self {
            name: EntityName::from(DEFAULT_RULE_NAME),
            filter: RuleFilter::Sql(SqlExpression(MATCH_ALL_SQL.to_owned())),
            action: None,
        }
    }
}
