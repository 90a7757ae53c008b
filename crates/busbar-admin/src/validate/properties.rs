//! Property values as Service Bus accepts them (admin-api.md §7, .NET
//! `AdministrationClientConstants`): LockDuration 5 s–5 min, DefaultMessageTimeToLive ≥ 1 s,
//! AutoDeleteOnIdle ≥ 5 min, DuplicateDetectionHistoryTimeWindow 20 s–7 days, MaxDeliveryCount
//! ≥ 1, MaxMessageSizeInKilobytes 1–102,400, UserMetadata ≤ 1024 characters, SQL expressions
//! ≤ 1024 characters; create-only properties that an update may not change; and the entities
//! forwarding properties name.

use super::ValidationError;
use super::names::{entity_name, rule_name};
use crate::atom::{
    EntityStatus, QueueProperties, RuleAction, RuleFilter, RuleProperties, SubscriptionProperties,
    TimeSpan, TopicProperties, forward_target_entity,
};

const LOCK_DURATION: Range = Range {
    property: "LockDuration",
    min: TimeSpan::from_secs(5),
    max: TimeSpan::from_secs(5 * 60),
    expected: "between PT5S and PT5M",
};
const TIME_TO_LIVE: Range = Range {
    property: "DefaultMessageTimeToLive",
    min: TimeSpan::from_secs(1),
    max: TimeSpan::MAX,
    expected: "at least PT1S",
};
const AUTO_DELETE_ON_IDLE: Range = Range {
    property: "AutoDeleteOnIdle",
    min: TimeSpan::from_secs(5 * 60),
    max: TimeSpan::MAX,
    expected: "at least PT5M",
};
const DUPLICATE_DETECTION_WINDOW: Range = Range {
    property: "DuplicateDetectionHistoryTimeWindow",
    min: TimeSpan::from_secs(20),
    max: TimeSpan::from_secs(7 * 24 * 60 * 60),
    expected: "between PT20S and P7D",
};
/// Largest `MaxMessageSizeInKilobytes` (Premium's 100 MiB).
const MAX_MESSAGE_SIZE_IN_KILOBYTES: u64 = 102_400;
/// Longest `UserMetadata` (.NET `MaxUserMetadataLength`).
const MAX_USER_METADATA_CHARS: usize = 1024;
/// Longest SQL filter or action expression (the service's quota).
const MAX_SQL_CHARS: usize = 1024;

/// A duration property's accepted range.
struct Range {
    property: &'static str,
    min: TimeSpan,
    max: TimeSpan,
    expected: &'static str,
}

impl Range {
    fn check(&self, value: TimeSpan) -> Result<(), ValidationError> {
        if (self.min..=self.max).contains(&value) {
            Ok(())
        } else {
            Err(out_of_range(self.property, self.expected, value))
        }
    }
}

/// A forwarding property and the queue or topic it names (the scheme, host and port clients
/// put in front of it dropped, admin-api.md §0 item 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardTarget<'a> {
    /// `ForwardTo` or `ForwardDeadLetteredMessagesTo`.
    pub property: &'static str,
    /// The entity's name.
    pub entity: &'a str,
}

/// Checks a queue's properties, `name` being the queue's own.
pub fn queue(name: &str, queue: &QueueProperties) -> Result<(), ValidationError> {
    LOCK_DURATION.check(queue.lock_duration)?;
    TIME_TO_LIVE.check(queue.default_message_time_to_live)?;
    AUTO_DELETE_ON_IDLE.check(queue.auto_delete_on_idle)?;
    DUPLICATE_DETECTION_WINDOW.check(queue.duplicate_detection_history_time_window)?;
    max_delivery_count(queue.max_delivery_count)?;
    positive("MaxSizeInMegabytes", queue.max_size_in_megabytes)?;
    max_message_size(queue.max_message_size_in_kilobytes)?;
    settable_status(queue.status, QUEUE_STATUSES)?;
    user_metadata(queue.user_metadata.as_deref())?;
    forwards(
        Some(name),
        [
            ("ForwardTo", &queue.forward_to),
            (
                "ForwardDeadLetteredMessagesTo",
                &queue.forward_dead_lettered_messages_to,
            ),
        ],
    )
}

/// Checks a topic's properties, `name` being the topic's own.
pub fn topic(name: &str, topic: &TopicProperties) -> Result<(), ValidationError> {
    TIME_TO_LIVE.check(topic.default_message_time_to_live)?;
    AUTO_DELETE_ON_IDLE.check(topic.auto_delete_on_idle)?;
    DUPLICATE_DETECTION_WINDOW.check(topic.duplicate_detection_history_time_window)?;
    positive("MaxSizeInMegabytes", topic.max_size_in_megabytes)?;
    max_message_size(topic.max_message_size_in_kilobytes)?;
    settable_status(topic.status, TOPIC_STATUSES)?;
    user_metadata(topic.user_metadata.as_deref())?;
    forwards(Some(name), [("ForwardTo", &topic.forward_to)])
}

/// Checks a subscription's properties. A subscription may forward to anything but itself,
/// which no queue or topic name can be, so its own name takes no part.
pub fn subscription(subscription: &SubscriptionProperties) -> Result<(), ValidationError> {
    LOCK_DURATION.check(subscription.lock_duration)?;
    TIME_TO_LIVE.check(subscription.default_message_time_to_live)?;
    AUTO_DELETE_ON_IDLE.check(subscription.auto_delete_on_idle)?;
    max_delivery_count(subscription.max_delivery_count)?;
    settable_status(subscription.status, SUBSCRIPTION_STATUSES)?;
    user_metadata(subscription.user_metadata.as_deref())?;
    forwards(
        None,
        [
            ("ForwardTo", &subscription.forward_to),
            (
                "ForwardDeadLetteredMessagesTo",
                &subscription.forward_dead_lettered_messages_to,
            ),
        ],
    )
}

/// Checks a rule: its name and the length of its SQL.
pub fn rule(rule: &RuleProperties) -> Result<(), ValidationError> {
    rule_name(&rule.name)?;
    if let RuleFilter::Sql(sql) = &rule.filter {
        sql_length("SqlFilter SqlExpression", &sql.text)?;
    }
    if let RuleAction::Sql(sql) = &rule.action {
        sql_length("SqlRuleAction SqlExpression", &sql.text)?;
    }
    Ok(())
}

/// Checks that an update of a queue leaves its create-only properties as they are.
pub fn queue_update(
    stored: &QueueProperties,
    updated: &QueueProperties,
) -> Result<(), ValidationError> {
    unchanged(
        "RequiresSession",
        stored.requires_session,
        updated.requires_session,
    )?;
    unchanged(
        "RequiresDuplicateDetection",
        stored.requires_duplicate_detection,
        updated.requires_duplicate_detection,
    )?;
    unchanged(
        "EnablePartitioning",
        stored.enable_partitioning,
        updated.enable_partitioning,
    )
}

/// Checks that an update of a topic leaves its create-only properties as they are.
pub fn topic_update(
    stored: &TopicProperties,
    updated: &TopicProperties,
) -> Result<(), ValidationError> {
    unchanged(
        "RequiresDuplicateDetection",
        stored.requires_duplicate_detection,
        updated.requires_duplicate_detection,
    )?;
    unchanged(
        "EnablePartitioning",
        stored.enable_partitioning,
        updated.enable_partitioning,
    )
}

/// Checks that an update of a subscription leaves `RequiresSession` as it is.
pub fn subscription_update(
    stored: &SubscriptionProperties,
    updated: &SubscriptionProperties,
) -> Result<(), ValidationError> {
    unchanged(
        "RequiresSession",
        stored.requires_session,
        updated.requires_session,
    )
}

/// The entities the forwarding properties name, each of which must exist (the one check that
/// needs the broker). Call after the properties validated, so that each is a valid name.
pub fn forward_targets<'a>(
    forward_to: Option<&'a str>,
    forward_dead_lettered_messages_to: Option<&'a str>,
) -> Vec<ForwardTarget<'a>> {
    [
        ("ForwardTo", forward_to),
        (
            "ForwardDeadLetteredMessagesTo",
            forward_dead_lettered_messages_to,
        ),
    ]
    .into_iter()
    .filter_map(|(property, value)| {
        value.map(|value| ForwardTarget {
            property,
            entity: forward_target_entity(value),
        })
    })
    .collect()
}

/// Each forwarding property that is set must name a valid queue or topic other than the
/// entity's own (a queue's or topic's `own_name`).
fn forwards<const N: usize>(
    own_name: Option<&str>,
    properties: [(&'static str, &Option<String>); N],
) -> Result<(), ValidationError> {
    for (property, value) in properties {
        let Some(value) = value else { continue };
        let target = forward_target_entity(value);
        entity_name(target)?;
        if own_name.is_some_and(|own| target.eq_ignore_ascii_case(own)) {
            return Err(ValidationError::ForwardToSelf { property });
        }
    }
    Ok(())
}

fn max_delivery_count(count: u32) -> Result<(), ValidationError> {
    if count >= 1 {
        Ok(())
    } else {
        Err(out_of_range("MaxDeliveryCount", "at least 1", count))
    }
}

/// `MaxMessageSizeInKilobytes`: Service Bus Premium takes 1,024 to 102,400 (Standard only its
/// fixed 256); Busbar, with one tier, takes 1 to 102,400 so that Standard's default stays and
/// any smaller limit can be set too.
fn max_message_size(kilobytes: u64) -> Result<(), ValidationError> {
    if (1..=MAX_MESSAGE_SIZE_IN_KILOBYTES).contains(&kilobytes) {
        Ok(())
    } else {
        Err(out_of_range(
            "MaxMessageSizeInKilobytes",
            "between 1 and 102400",
            kilobytes,
        ))
    }
}

fn positive(property: &'static str, value: u64) -> Result<(), ValidationError> {
    if value > 0 {
        Ok(())
    } else {
        Err(out_of_range(property, "at least 1", value))
    }
}

/// The statuses a client may set on one kind of entity, and how an error names them.
struct Settable {
    statuses: &'static [EntityStatus],
    names: &'static str,
}

/// A queue's; the other statuses (`Creating`, …) are ones the service reports.
const QUEUE_STATUSES: Settable = Settable {
    statuses: &[
        EntityStatus::Active,
        EntityStatus::Disabled,
        EntityStatus::SendDisabled,
        EntityStatus::ReceiveDisabled,
    ],
    names: "Active, Disabled, SendDisabled or ReceiveDisabled",
};
/// A topic's: nothing receives from a topic itself.
const TOPIC_STATUSES: Settable = Settable {
    statuses: &[
        EntityStatus::Active,
        EntityStatus::Disabled,
        EntityStatus::SendDisabled,
    ],
    names: "Active, Disabled or SendDisabled",
};
/// A subscription's: nothing sends to a subscription itself.
const SUBSCRIPTION_STATUSES: Settable = Settable {
    statuses: &[
        EntityStatus::Active,
        EntityStatus::Disabled,
        EntityStatus::ReceiveDisabled,
    ],
    names: "Active, Disabled or ReceiveDisabled",
};

/// `status` must be one a client may set on the entity's kind.
fn settable_status(status: EntityStatus, allowed: Settable) -> Result<(), ValidationError> {
    if allowed.statuses.contains(&status) {
        Ok(())
    } else {
        Err(out_of_range("Status", allowed.names, status.as_str()))
    }
}

fn user_metadata(metadata: Option<&str>) -> Result<(), ValidationError> {
    let length = metadata.map_or(0, |text| text.chars().count());
    if length <= MAX_USER_METADATA_CHARS {
        Ok(())
    } else {
        Err(out_of_range(
            "UserMetadata",
            "at most 1024 characters long",
            format!("a text of {length} characters"),
        ))
    }
}

fn sql_length(property: &'static str, text: &str) -> Result<(), ValidationError> {
    let length = text.chars().count();
    if length <= MAX_SQL_CHARS {
        Ok(())
    } else {
        Err(out_of_range(
            property,
            "at most 1024 characters long",
            format!("an expression of {length} characters"),
        ))
    }
}

fn unchanged(property: &'static str, stored: bool, updated: bool) -> Result<(), ValidationError> {
    if stored == updated {
        Ok(())
    } else {
        Err(ValidationError::CreateOnly { property })
    }
}

fn out_of_range(
    property: &'static str,
    expected: &'static str,
    value: impl std::fmt::Display,
) -> ValidationError {
    ValidationError::OutOfRange {
        property,
        expected,
        value: value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atom::SqlExpression;

    fn secs(seconds: u64) -> TimeSpan {
        TimeSpan::from_secs(seconds)
    }

    #[test]
    fn defaults_are_valid() {
        assert_eq!(queue("q", &QueueProperties::default()), Ok(()));
        assert_eq!(topic("t", &TopicProperties::default()), Ok(()));
        assert_eq!(subscription(&SubscriptionProperties::default()), Ok(()));
        let default_rule = RuleProperties {
            name: "$Default".into(),
            ..RuleProperties::default()
        };
        assert_eq!(rule(&default_rule), Ok(()));
    }

    #[test]
    fn lock_duration_bounds_are_inclusive() {
        for (seconds, valid) in [(4, false), (5, true), (300, true), (301, false)] {
            let queue_properties = QueueProperties {
                lock_duration: secs(seconds),
                ..QueueProperties::default()
            };
            assert_eq!(queue("q", &queue_properties).is_ok(), valid, "{seconds} s");
            let subscription_properties = SubscriptionProperties {
                lock_duration: secs(seconds),
                ..SubscriptionProperties::default()
            };
            assert_eq!(
                subscription(&subscription_properties).is_ok(),
                valid,
                "{seconds} s"
            );
        }
    }

    #[test]
    fn duplicate_detection_window_is_twenty_seconds_to_seven_days() {
        for (seconds, valid) in [
            (19, false),
            (20, true),
            (7 * 86_400, true),
            (7 * 86_400 + 1, false),
        ] {
            let properties = TopicProperties {
                duplicate_detection_history_time_window: secs(seconds),
                ..TopicProperties::default()
            };
            assert_eq!(topic("t", &properties).is_ok(), valid, "{seconds} s");
        }
    }

    #[test]
    fn max_message_size_is_one_to_premiums_102400_kilobytes() {
        for (kilobytes, valid) in [(0, false), (1, true), (102_400, true), (102_401, false)] {
            let queue_properties = QueueProperties {
                max_message_size_in_kilobytes: kilobytes,
                ..QueueProperties::default()
            };
            assert_eq!(queue("q", &queue_properties).is_ok(), valid, "{kilobytes}");
            let topic_properties = TopicProperties {
                max_message_size_in_kilobytes: kilobytes,
                ..TopicProperties::default()
            };
            assert_eq!(topic("t", &topic_properties).is_ok(), valid, "{kilobytes}");
        }
    }

    #[test]
    fn other_ranges() {
        let zero_deliveries = QueueProperties {
            max_delivery_count: 0,
            ..QueueProperties::default()
        };
        assert_eq!(
            queue("q", &zero_deliveries),
            Err(ValidationError::OutOfRange {
                property: "MaxDeliveryCount",
                expected: "at least 1",
                value: "0".into()
            })
        );
        let short_ttl = SubscriptionProperties {
            default_message_time_to_live: TimeSpan::from_millis(999),
            ..SubscriptionProperties::default()
        };
        assert!(subscription(&short_ttl).is_err());
        let quick_delete = TopicProperties {
            auto_delete_on_idle: secs(299),
            ..TopicProperties::default()
        };
        assert!(topic("t", &quick_delete).is_err());
        let long_metadata = QueueProperties {
            user_metadata: Some("m".repeat(1025)),
            ..QueueProperties::default()
        };
        assert!(queue("q", &long_metadata).is_err());
        let no_room = QueueProperties {
            max_size_in_megabytes: 0,
            ..QueueProperties::default()
        };
        assert!(queue("q", &no_room).is_err());
        let reported_status = QueueProperties {
            status: EntityStatus::Creating,
            ..QueueProperties::default()
        };
        assert!(queue("q", &reported_status).is_err());
        let receive_disabled_topic = TopicProperties {
            status: EntityStatus::ReceiveDisabled,
            ..TopicProperties::default()
        };
        assert!(topic("t", &receive_disabled_topic).is_err());
        let send_disabled_subscription = SubscriptionProperties {
            status: EntityStatus::SendDisabled,
            ..SubscriptionProperties::default()
        };
        assert!(subscription(&send_disabled_subscription).is_err());
        let send_disabled_queue = QueueProperties {
            status: EntityStatus::SendDisabled,
            ..QueueProperties::default()
        };
        assert!(queue("q", &send_disabled_queue).is_ok());
    }

    #[test]
    fn forwarding_must_name_another_valid_entity() {
        let to_self = QueueProperties {
            forward_to: Some("sb://localhost:5300/Q".into()),
            ..QueueProperties::default()
        };
        assert_eq!(
            queue("q", &to_self),
            Err(ValidationError::ForwardToSelf {
                property: "ForwardTo"
            })
        );
        let to_subscription = SubscriptionProperties {
            forward_dead_lettered_messages_to: Some("https://h/t/x@y".into()),
            ..SubscriptionProperties::default()
        };
        assert!(matches!(
            subscription(&to_subscription),
            Err(ValidationError::Name { .. })
        ));
        let elsewhere = QueueProperties {
            forward_to: Some("http://localhost/other".into()),
            ..QueueProperties::default()
        };
        assert_eq!(queue("q", &elsewhere), Ok(()));
        assert_eq!(
            forward_targets(Some("sb://localhost:5300/q-min"), Some("dlq")),
            [
                ForwardTarget {
                    property: "ForwardTo",
                    entity: "q-min"
                },
                ForwardTarget {
                    property: "ForwardDeadLetteredMessagesTo",
                    entity: "dlq"
                }
            ]
        );
        assert_eq!(forward_targets(None, None), []);
    }

    #[test]
    fn create_only_properties_stay() {
        let stored = QueueProperties::default();
        let same = stored.clone();
        assert_eq!(queue_update(&stored, &same), Ok(()));
        let with_sessions = QueueProperties {
            requires_session: true,
            ..QueueProperties::default()
        };
        assert_eq!(
            queue_update(&stored, &with_sessions),
            Err(ValidationError::CreateOnly {
                property: "RequiresSession"
            })
        );
        let partitioned = TopicProperties {
            enable_partitioning: true,
            ..TopicProperties::default()
        };
        assert!(topic_update(&TopicProperties::default(), &partitioned).is_err());
        let sessions = SubscriptionProperties {
            requires_session: true,
            ..SubscriptionProperties::default()
        };
        assert!(subscription_update(&SubscriptionProperties::default(), &sessions).is_err());
    }

    #[test]
    fn rules_have_valid_names_and_bounded_sql() {
        let long_sql = RuleProperties {
            name: "r".into(),
            filter: RuleFilter::Sql(SqlExpression {
                text: format!("a = '{}'", "x".repeat(1020)),
                parameters: Vec::new(),
            }),
            action: RuleAction::Empty,
        };
        assert!(rule(&long_sql).is_err());
        let bad_name = RuleProperties {
            name: "a/b".into(),
            ..RuleProperties::default()
        };
        assert!(rule(&bad_name).is_err());
    }
}
