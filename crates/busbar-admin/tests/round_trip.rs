//! Write then parse gives back what was written: for arbitrary properties of every entity
//! kind, any text (markup characters, CR, tabs, astral planes), every typed value, and the
//! extremes of spans and times.

#![allow(clippy::unwrap_used)]

use busbar_admin::atom::{
    AccessRight, AuthorizationRule, CorrelationRuleFilter, EntityDescription, EntityStatus,
    EntityTimes, Entry, EntryContent, MessageCountDetails, QueueProperties, QueueRuntimeProperties,
    RuleAction, RuleFilter, RuleProperties, RuleValue, SqlExpression, SubscriptionProperties,
    SubscriptionRuntimeProperties, TimeSpan, Timestamp, TopicProperties, TopicRuntimeProperties,
    parse_entry, write_entry,
};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;

/// Any text XML can carry.
fn text() -> impl Strategy<Value = String> {
    "[\\PC\t\n\r<>&\"']{0,24}"
}

/// Text that is not blank (blank optional texts mean "none" on the wire).
fn non_blank_text() -> impl Strategy<Value = String> {
    text().prop_filter("not blank", |text| !text.trim().is_empty())
}

fn time_span() -> impl Strategy<Value = TimeSpan> {
    prop_oneof![
        Just(TimeSpan::MAX),
        Just(TimeSpan::ZERO),
        (0..=TimeSpan::MAX.ticks()).prop_map(TimeSpan::from_ticks),
        (0u64..100_000).prop_map(TimeSpan::from_secs),
    ]
}

fn timestamp() -> impl Strategy<Value = Timestamp> {
    prop_oneof![
        Just(Timestamp::MIN),
        Just(Timestamp::MAX),
        (Timestamp::MIN.unix_ticks()..=Timestamp::MAX.unix_ticks())
            .prop_map(Timestamp::from_unix_ticks),
    ]
}

fn status() -> impl Strategy<Value = EntityStatus> {
    prop_oneof![
        Just(EntityStatus::Active),
        Just(EntityStatus::Disabled),
        Just(EntityStatus::SendDisabled),
        Just(EntityStatus::ReceiveDisabled),
        Just(EntityStatus::Creating),
        Just(EntityStatus::Deleting),
        Just(EntityStatus::Renaming),
        Just(EntityStatus::Restoring),
        Just(EntityStatus::Unknown),
    ]
}

fn authorization_rules() -> impl Strategy<Value = Vec<AuthorizationRule>> {
    let right = prop_oneof![
        Just(AccessRight::Manage),
        Just(AccessRight::Send),
        Just(AccessRight::Listen)
    ];
    let rule = (
        text(),
        text(),
        text(),
        vec(right, 0..3),
        option::of(timestamp()),
        option::of(timestamp()),
    )
        .prop_map(
            |(key_name, primary_key, secondary_key, rights, created_time, modified_time)| {
                AuthorizationRule {
                    key_name,
                    primary_key,
                    secondary_key,
                    rights,
                    created_time,
                    modified_time,
                }
            },
        );
    vec(rule, 0..3)
}

fn queue() -> impl Strategy<Value = QueueProperties> {
    (
        (
            time_span(),
            any::<u64>(),
            any::<bool>(),
            any::<bool>(),
            time_span(),
            any::<bool>(),
        ),
        (
            time_span(),
            any::<u32>(),
            any::<bool>(),
            authorization_rules(),
            status(),
        ),
        (
            option::of(non_blank_text()),
            option::of(non_blank_text()),
            any::<bool>(),
            time_span(),
        ),
        (
            any::<bool>(),
            option::of(non_blank_text()),
            any::<bool>(),
            any::<u64>(),
        ),
    )
        .prop_map(|(a, b, c, d)| QueueProperties {
            lock_duration: a.0,
            max_size_in_megabytes: a.1,
            requires_duplicate_detection: a.2,
            requires_session: a.3,
            default_message_time_to_live: a.4,
            dead_lettering_on_message_expiration: a.5,
            duplicate_detection_history_time_window: b.0,
            max_delivery_count: b.1,
            enable_batched_operations: b.2,
            authorization_rules: b.3,
            status: b.4,
            forward_to: c.0,
            user_metadata: c.1,
            support_ordering: c.2,
            auto_delete_on_idle: c.3,
            enable_partitioning: d.0,
            forward_dead_lettered_messages_to: d.1,
            enable_express: d.2,
            max_message_size_in_kilobytes: d.3,
        })
}

fn topic() -> impl Strategy<Value = TopicProperties> {
    (
        (
            time_span(),
            any::<u64>(),
            any::<bool>(),
            time_span(),
            any::<bool>(),
        ),
        (
            authorization_rules(),
            status(),
            option::of(non_blank_text()),
            option::of(non_blank_text()),
        ),
        (
            any::<bool>(),
            time_span(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<u64>(),
        ),
    )
        .prop_map(|(a, b, c)| TopicProperties {
            default_message_time_to_live: a.0,
            max_size_in_megabytes: a.1,
            requires_duplicate_detection: a.2,
            duplicate_detection_history_time_window: a.3,
            enable_batched_operations: a.4,
            authorization_rules: b.0,
            status: b.1,
            forward_to: b.2,
            user_metadata: b.3,
            support_ordering: c.0,
            auto_delete_on_idle: c.1,
            enable_partitioning: c.2,
            enable_subscription_partitioning: c.3,
            enable_express: c.4,
            max_message_size_in_kilobytes: c.5,
        })
}

fn subscription() -> impl Strategy<Value = SubscriptionProperties> {
    (
        (
            time_span(),
            any::<bool>(),
            time_span(),
            any::<bool>(),
            any::<bool>(),
            any::<u32>(),
        ),
        (
            any::<bool>(),
            status(),
            option::of(non_blank_text()),
            option::of(non_blank_text()),
        ),
        (option::of(non_blank_text()), time_span()),
    )
        .prop_map(|(a, b, c)| SubscriptionProperties {
            lock_duration: a.0,
            requires_session: a.1,
            default_message_time_to_live: a.2,
            dead_lettering_on_message_expiration: a.3,
            dead_lettering_on_filter_evaluation_exceptions: a.4,
            max_delivery_count: a.5,
            enable_batched_operations: b.0,
            status: b.1,
            forward_to: b.2,
            user_metadata: b.3,
            forward_dead_lettered_messages_to: c.0,
            auto_delete_on_idle: c.1,
        })
}

fn rule_value() -> impl Strategy<Value = RuleValue> {
    prop_oneof![
        text().prop_map(RuleValue::String),
        any::<i32>().prop_map(RuleValue::Int),
        any::<i64>().prop_map(RuleValue::Long),
        any::<f64>()
            .prop_filter("NaN is not equal to itself", |x| !x.is_nan())
            .prop_map(RuleValue::Double),
        any::<bool>().prop_map(RuleValue::Boolean),
        timestamp().prop_map(RuleValue::DateTime),
        time_span().prop_map(RuleValue::Duration),
    ]
}

fn sql() -> impl Strategy<Value = SqlExpression> {
    (non_blank_text(), vec((text(), rule_value()), 0..4))
        .prop_map(|(text, parameters)| SqlExpression { text, parameters })
}

fn correlation() -> impl Strategy<Value = CorrelationRuleFilter> {
    let field = || option::of(non_blank_text());
    (
        (field(), field(), field(), field()),
        (field(), field(), field(), field()),
        vec((text(), rule_value()), 0..4),
    )
        .prop_map(|(a, b, properties)| CorrelationRuleFilter {
            correlation_id: a.0,
            message_id: a.1,
            to: a.2,
            reply_to: a.3,
            label: b.0,
            session_id: b.1,
            reply_to_session_id: b.2,
            content_type: b.3,
            properties,
        })
}

fn rule() -> impl Strategy<Value = RuleProperties> {
    let filter = prop_oneof![
        Just(RuleFilter::True),
        Just(RuleFilter::False),
        sql().prop_map(RuleFilter::Sql),
        correlation().prop_map(RuleFilter::Correlation),
    ];
    let action = prop_oneof![Just(RuleAction::Empty), sql().prop_map(RuleAction::Sql)];
    (text(), filter, action).prop_map(|(name, filter, action)| RuleProperties {
        name,
        filter,
        action,
    })
}

fn counts() -> impl Strategy<Value = MessageCountDetails> {
    any::<[u64; 5]>().prop_map(
        |[
            active,
            dead_letter,
            scheduled,
            transfer,
            transfer_dead_letter,
        ]| {
            MessageCountDetails {
                active,
                dead_letter,
                scheduled,
                transfer,
                transfer_dead_letter,
                deferred: 0,
            }
        },
    )
}

fn times() -> impl Strategy<Value = EntityTimes> {
    (timestamp(), timestamp(), option::of(timestamp())).prop_map(
        |(created_at, updated_at, accessed_at)| EntityTimes {
            created_at,
            updated_at,
            accessed_at,
        },
    )
}

/// The body of an entry around `content`, with arbitrary envelope texts.
fn written(content: EntryContent<'_>, title: &str) -> Vec<u8> {
    let moment = Timestamp::from_unix_millis(1_700_000_000_000);
    write_entry(&Entry {
        id: "https://localhost:5300/entity?api-version=2021-05",
        title,
        published: moment,
        updated: moment,
        author: Some("sbemulatorns"),
        content,
    })
    .into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn queues_round_trip(queue in queue(), size in any::<u64>(), total in any::<u64>(), counts in counts(), times in times(), title in text()) {
        let runtime = QueueRuntimeProperties { size_in_bytes: size, message_count: total, counts, times };
        let body = written(EntryContent::Queue(&queue, &runtime), &title);
        let Ok(EntityDescription::Queue(parsed)) = parse_entry(&body) else {
            panic!("not a queue: {}", String::from_utf8_lossy(&body));
        };
        prop_assert_eq!(parsed.into_properties(), queue);
    }

    #[test]
    fn topics_round_trip(topic in topic(), size in any::<u64>(), subscriptions in any::<u64>(), counts in counts(), times in times()) {
        let runtime = TopicRuntimeProperties { size_in_bytes: size, subscription_count: subscriptions, counts, times };
        let body = written(EntryContent::Topic(&topic, &runtime), "t");
        let Ok(EntityDescription::Topic(parsed)) = parse_entry(&body) else {
            panic!("not a topic: {}", String::from_utf8_lossy(&body));
        };
        prop_assert_eq!(parsed.into_properties(), topic);
    }

    #[test]
    fn subscriptions_round_trip(subscription in subscription(), total in any::<u64>(), counts in counts(), times in times()) {
        let runtime = SubscriptionRuntimeProperties { message_count: total, counts, times };
        let body = written(EntryContent::Subscription(&subscription, &runtime), "s");
        let Ok(EntityDescription::Subscription(parsed)) = parse_entry(&body) else {
            panic!("not a subscription: {}", String::from_utf8_lossy(&body));
        };
        prop_assert_eq!(parsed.default_rule.clone(), None);
        prop_assert_eq!(parsed.into_properties(), subscription);
    }

    #[test]
    fn rules_round_trip(rule in rule(), created_at in timestamp()) {
        let body = written(EntryContent::Rule(&rule, created_at), &rule.name);
        let Ok(EntityDescription::Rule(parsed)) = parse_entry(&body) else {
            panic!("not a rule: {}", String::from_utf8_lossy(&body));
        };
        prop_assert_eq!(parsed.name.as_deref(), Some(rule.name.as_str()));
        prop_assert_eq!(parsed.into_properties(rule.name.clone()), rule);
    }

    #[test]
    fn spans_round_trip_through_their_text(span in time_span()) {
        prop_assert_eq!(TimeSpan::parse(&span.to_string()), Some(span));
    }
}

#[test]
fn defaults_round_trip() {
    let times = EntityTimes {
        created_at: Timestamp::MIN,
        updated_at: Timestamp::MAX,
        accessed_at: None,
    };
    let queue = QueueProperties::default();
    let runtime = QueueRuntimeProperties {
        size_in_bytes: 0,
        message_count: 0,
        counts: MessageCountDetails::default(),
        times,
    };
    let body = written(EntryContent::Queue(&queue, &runtime), "q");
    let text = String::from_utf8(body.clone()).unwrap();
    assert!(
        text.contains("<AccessedAt>0001-01-01T00:00:00</AccessedAt>"),
        "{text}"
    );
    assert!(text.contains(
        "<DefaultMessageTimeToLive>P10675199DT2H48M5.4775807S</DefaultMessageTimeToLive>"
    ));
    let Ok(EntityDescription::Queue(parsed)) = parse_entry(&body) else {
        panic!("{text}")
    };
    assert_eq!(parsed.into_properties(), queue);
}
