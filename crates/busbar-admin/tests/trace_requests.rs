//! Every request body the five SDKs sent in the traces parses, to the values they meant: the
//! same logical request from each SDK, whatever its element order, prefixes, envelope,
//! `ForwardTo` spelling or typed-value conventions (admin-api.md §0, §6).

#![allow(clippy::unwrap_used)]

mod common;

use busbar_admin::atom::{
    CorrelationRuleFilter, EntityDescription, EntityStatus, QueueDescription, QueueProperties,
    RuleAction, RuleDescription, RuleFilter, RuleValue, SqlExpression, SubscriptionDescription,
    TimeSpan, Timestamp, TopicDescription, forward_target_entity,
};
use common::{fixture_names, request};

const SDKS: [&str; 5] = ["python", "js", "jsbeta", "go", "java"];

fn queue(name: &str) -> QueueDescription {
    match request(name) {
        EntityDescription::Queue(queue) => queue,
        other => panic!("{name}: expected a queue, got {other:?}"),
    }
}

fn topic(name: &str) -> TopicDescription {
    match request(name) {
        EntityDescription::Topic(topic) => topic,
        other => panic!("{name}: expected a topic, got {other:?}"),
    }
}

fn subscription(name: &str) -> SubscriptionDescription {
    match request(name) {
        EntityDescription::Subscription(subscription) => subscription,
        other => panic!("{name}: expected a subscription, got {other:?}"),
    }
}

fn rule(name: &str) -> RuleDescription {
    match request(name) {
        EntityDescription::Rule(rule) => rule,
        other => panic!("{name}: expected a rule, got {other:?}"),
    }
}

fn secs(seconds: u64) -> TimeSpan {
    TimeSpan::from_secs(seconds)
}

/// What each SDK spelled the `q-min` forwarding target as.
fn forward_spelling(sdk: &str) -> &'static str {
    match sdk {
        "go" => "q-min",
        "java" => "https://localhost/q-min",
        _ => "sb://localhost:5399/q-min",
    }
}

/// Java's spelling of `TimeSpan.MaxValue` (milliseconds only).
fn java_never() -> TimeSpan {
    TimeSpan::parse("P10675199DT2H48M5.477S").unwrap()
}

#[test]
fn every_request_body_parses() {
    let names = fixture_names("requests");
    assert_eq!(names.len(), 52, "one fixture per PUT in the traces");
    for name in names {
        request(&name);
    }
}

#[test]
fn create_queue_from_every_sdk() {
    for sdk in SDKS {
        let name = format!("{sdk}_create_queue");
        let sent = queue(&name);
        assert_eq!(sent.lock_duration, Some(secs(45)), "{name}");
        assert_eq!(sent.max_size_in_megabytes, Some(2048), "{name}");
        assert_eq!(sent.requires_duplicate_detection, Some(true), "{name}");
        assert_eq!(
            sent.default_message_time_to_live,
            Some(secs(7200)),
            "{name}"
        );
        assert_eq!(
            sent.dead_lettering_on_message_expiration,
            Some(true),
            "{name}"
        );
        assert_eq!(
            sent.duplicate_detection_history_time_window,
            Some(secs(120)),
            "{name}"
        );
        assert_eq!(sent.max_delivery_count, Some(7), "{name}");
        assert_eq!(sent.auto_delete_on_idle, Some(secs(3 * 3600)), "{name}");
        assert_eq!(sent.user_metadata.as_deref(), Some("meta-1"), "{name}");
        let forward = sent.forward_dead_lettered_messages_to.as_deref();
        assert_eq!(forward, Some(forward_spelling(sdk)), "{name}");
        assert_eq!(forward.map(forward_target_entity), Some("q-min"), "{name}");
        // Go leaves unset booleans out; the others send RequiresSession=false.
        let requires_session = if sdk == "go" { None } else { Some(false) };
        assert_eq!(sent.requires_session, requires_session, "{name}");
        let properties = sent.into_properties();
        assert!(
            !properties.requires_session && properties.enable_batched_operations,
            "{name}"
        );
    }
    let java = queue("java_create_queue");
    assert_eq!(java.status, Some(EntityStatus::Active));
    assert_eq!(java.enable_partitioning, Some(false));
    assert_eq!(
        queue("go_create_queue").authorization_rules,
        Some(Vec::new())
    );
}

#[test]
fn minimal_queues_are_the_defaults() {
    for sdk in SDKS {
        for operation in ["create_queue_minimal", "create_queue_conflict"] {
            let name = format!("{sdk}_{operation}");
            let properties = queue(&name).into_properties();
            let expected = match sdk {
                // Java sends every field, with its own defaults for "never" and the window.
                "java" => QueueProperties {
                    default_message_time_to_live: java_never(),
                    auto_delete_on_idle: java_never(),
                    duplicate_detection_history_time_window: secs(60),
                    ..QueueProperties::default()
                },
                _ => QueueProperties::default(),
            };
            assert_eq!(properties, expected, "{name}");
        }
    }
    assert_eq!(
        queue("python_create_queue_minimal"),
        QueueDescription::default()
    );
}

#[test]
fn update_queue_from_every_sdk() {
    for sdk in SDKS {
        let name = format!("{sdk}_update_queue");
        let sent = queue(&name);
        assert_eq!(sent.lock_duration, Some(secs(50)), "{name}");
        assert_eq!(sent.max_delivery_count, Some(9), "{name}");
        assert_eq!(sent.status, Some(EntityStatus::Active), "{name}");
        assert_eq!(sent.max_message_size_in_kilobytes, Some(256), "{name}");
        assert_eq!(sent.user_metadata.as_deref(), Some("meta-1"), "{name}");
        let forward = sent.forward_dead_lettered_messages_to.as_deref();
        assert_eq!(forward, Some(forward_spelling(sdk)), "{name}");
        // An update leaves what it did not send as stored.
        let mut stored = QueueProperties {
            forward_to: Some("kept".to_owned()),
            ..QueueProperties::default()
        };
        sent.apply_to(&mut stored);
        assert_eq!(stored.forward_to.as_deref(), Some("kept"), "{name}");
        assert_eq!(stored.lock_duration, secs(50), "{name}");
    }
    // Python re-sends read-only elements (SizeInBytes, CountDetails, …): ignored.
    let python = queue("python_update_queue");
    assert_eq!(python.enable_express, Some(false));
    assert_eq!(python.support_ordering, Some(true));
}

#[test]
fn create_topic_from_every_sdk() {
    for sdk in SDKS {
        let name = format!("{sdk}_create_topic");
        let sent = topic(&name);
        assert_eq!(
            sent.default_message_time_to_live,
            Some(secs(3600)),
            "{name}"
        );
        assert_eq!(sent.requires_duplicate_detection, Some(true), "{name}");
        assert_eq!(
            sent.duplicate_detection_history_time_window,
            Some(secs(300)),
            "{name}"
        );
        assert_eq!(sent.user_metadata.as_deref(), Some("tmeta"), "{name}");
        assert_eq!(sent.support_ordering, Some(true), "{name}");
        let auto_delete = match sdk {
            "go" => None,
            "java" => Some(java_never()),
            _ => Some(secs(4 * 3600)),
        };
        assert_eq!(sent.auto_delete_on_idle, auto_delete, "{name}");
    }
}

#[test]
fn update_topic_from_every_sdk_that_has_it() {
    for sdk in ["python", "js", "jsbeta"] {
        let name = format!("{sdk}_update_topic");
        let sent = topic(&name);
        assert_eq!(
            sent.default_message_time_to_live,
            Some(secs(1800)),
            "{name}"
        );
        assert_eq!(sent.auto_delete_on_idle, Some(secs(4 * 3600)), "{name}");
        assert_eq!(sent.enable_express, Some(false), "{name}");
        assert_eq!(sent.max_message_size_in_kilobytes, Some(256), "{name}");
    }
    assert_eq!(
        topic("python_update_topic").enable_subscription_partitioning,
        Some(false)
    );
}

#[test]
fn create_subscription_from_every_sdk() {
    for sdk in SDKS {
        let name = format!("{sdk}_create_subscription");
        let sent = subscription(&name);
        assert_eq!(sent.lock_duration, Some(secs(30)), "{name}");
        assert_eq!(sent.requires_session, Some(true), "{name}");
        assert_eq!(sent.max_delivery_count, Some(4), "{name}");
        assert_eq!(
            sent.forward_to.as_deref(),
            Some(forward_spelling(sdk)),
            "{name}"
        );
        assert_eq!(sent.user_metadata.as_deref(), Some("smeta"), "{name}");
        let properties = sent.clone().into_properties();
        let (ttl, dead_letter_on_filter_errors) = match sdk {
            "go" => (TimeSpan::MAX, true),
            "java" => (java_never(), true),
            _ => (secs(1200), false),
        };
        assert_eq!(properties.default_message_time_to_live, ttl, "{name}");
        assert_eq!(
            properties.dead_lettering_on_filter_evaluation_exceptions, dead_letter_on_filter_errors,
            "{name}"
        );
        // Go sends its default rule inside the create; the others in a separate trace.
        assert_eq!(sent.default_rule.is_some(), sdk == "go", "{name}");
    }
}

#[test]
fn default_rules_inside_subscriptions() {
    let only_red = RuleDescription {
        name: Some("only-red".to_owned()),
        filter: RuleFilter::Sql(SqlExpression {
            text: "color = 'red'".to_owned(),
            parameters: Vec::new(),
        }),
        action: RuleAction::Empty,
    };
    for name in [
        "js_create_subscription_with_default_rule",
        "jsbeta_create_subscription_with_default_rule",
        "go_create_subscription",
    ] {
        assert_eq!(
            subscription(name).default_rule.as_ref(),
            Some(&only_red),
            "{name}"
        );
    }
}

#[test]
fn update_subscription_from_every_sdk_that_has_it() {
    for sdk in ["python", "js", "jsbeta"] {
        let name = format!("{sdk}_update_subscription");
        let sent = subscription(&name);
        assert_eq!(sent.max_delivery_count, Some(6), "{name}");
        assert_eq!(sent.status, Some(EntityStatus::Active), "{name}");
        assert_eq!(
            sent.forward_to.as_deref(),
            Some("sb://localhost:5399/q-min"),
            "{name}"
        );
    }
    // Python computes "never" in floating point: kept to the digit, just under MAX.
    let python = subscription("python_update_subscription")
        .auto_delete_on_idle
        .unwrap();
    assert_eq!(python.to_string(), "P10675199DT2H48M5.477539S");
    assert_eq!(
        subscription("js_update_subscription").auto_delete_on_idle,
        Some(TimeSpan::MAX)
    );
}

fn string(text: &str) -> RuleValue {
    RuleValue::String(text.to_owned())
}

#[test]
fn create_rule_sql_from_every_sdk() {
    for sdk in SDKS {
        let name = format!("{sdk}_create_rule_sql");
        let sent = rule(&name);
        // Python and Go type 3 as an int, JS as a double, Java sends everything as a string.
        let three = match sdk {
            "js" | "jsbeta" => RuleValue::Double(3.0),
            "java" => string("3"),
            _ => RuleValue::Int(3),
        };
        let expected = RuleDescription {
            name: Some("r-sql".to_owned()),
            filter: RuleFilter::Sql(SqlExpression {
                text: "color = @c AND size > @n".to_owned(),
                parameters: vec![("@c".to_owned(), string("red")), ("@n".to_owned(), three)],
            }),
            action: RuleAction::Sql(SqlExpression {
                text: "SET sys.Label = @l".to_owned(),
                parameters: vec![("@l".to_owned(), string("routed"))],
            }),
        };
        assert_eq!(sent, expected, "{name}");
    }
}

#[test]
fn create_rule_correlation_from_every_sdk() {
    let at = RuleValue::DateTime(Timestamp::parse("2024-01-02T03:04:05Z").unwrap());
    let all_fields = CorrelationRuleFilter {
        correlation_id: Some("cid".to_owned()),
        message_id: Some("mid".to_owned()),
        to: Some("to".to_owned()),
        reply_to: Some("rt".to_owned()),
        label: Some("lbl".to_owned()),
        session_id: Some("sid".to_owned()),
        reply_to_session_id: Some("rsid".to_owned()),
        content_type: Some("ct".to_owned()),
        properties: Vec::new(),
    };
    let three_fields = CorrelationRuleFilter {
        correlation_id: Some("cid".to_owned()),
        to: Some("to".to_owned()),
        label: Some("lbl".to_owned()),
        ..CorrelationRuleFilter::default()
    };
    let pairs = |pairs: &[(&str, RuleValue)]| -> Vec<(String, RuleValue)> {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.clone()))
            .collect()
    };
    let python = CorrelationRuleFilter {
        properties: pairs(&[
            ("s", string("str")),
            ("i", RuleValue::Int(42)),
            ("l", RuleValue::Long(1_099_511_627_776)),
            ("b", RuleValue::Boolean(true)),
            ("d", RuleValue::Double(1.5)),
            ("t", at.clone()),
            ("dur", RuleValue::Duration(TimeSpan::from_secs(300))),
        ]),
        ..all_fields.clone()
    };
    let js = CorrelationRuleFilter {
        properties: pairs(&[
            ("s", string("str")),
            ("i", RuleValue::Double(42.0)),
            ("d", RuleValue::Double(1.5)),
            ("b", RuleValue::Boolean(true)),
            ("t", at.clone()),
        ]),
        ..all_fields
    };
    let go = CorrelationRuleFilter {
        // Go types an int64 over 2^31 as `int`: read as a long.
        properties: pairs(&[
            ("d", RuleValue::Double(1.5)),
            ("t", at),
            ("s", string("str")),
            ("i", RuleValue::Int(42)),
            ("l", RuleValue::Long(1_099_511_627_776)),
            ("b", RuleValue::Boolean(true)),
        ]),
        ..three_fields.clone()
    };
    let java = CorrelationRuleFilter {
        properties: pairs(&[
            ("dur", string("PT5M")),
            ("b", string("true")),
            ("s", string("str")),
            ("d", string("1.5")),
            ("t", string("2024-01-02T03:04:05Z")),
            ("i", string("42")),
            ("l", string("1099511627776")),
        ]),
        ..three_fields
    };
    for (sdk, filter) in [
        ("python", python),
        ("js", js.clone()),
        ("jsbeta", js),
        ("go", go),
        ("java", java),
    ] {
        let name = format!("{sdk}_create_rule_correlation");
        let expected = RuleDescription {
            name: Some("r-corr".to_owned()),
            filter: RuleFilter::Correlation(filter),
            action: RuleAction::Empty,
        };
        assert_eq!(rule(&name), expected, "{name}");
    }
}

#[test]
fn true_filter_and_rule_updates() {
    let true_rule = rule("python_create_rule_true");
    assert_eq!(true_rule.filter, RuleFilter::True);
    assert_eq!(true_rule.action, RuleAction::Empty);
    for sdk in ["python", "js", "jsbeta"] {
        let name = format!("{sdk}_update_rule");
        let sent = rule(&name);
        let RuleFilter::Sql(filter) = &sent.filter else {
            panic!("{name}: {sent:?}");
        };
        assert_eq!(filter.text, "color = 'blue'", "{name}");
        assert!(
            matches!(&sent.action, RuleAction::Sql(action) if action.text == "SET sys.Label = @l")
        );
        assert_eq!(sent.name.as_deref(), Some("r-sql"), "{name}");
    }
}
