//! Valid configurations: the emulator's shipped `Config.json` read verbatim, and one using every property.

use std::path::Path;
use std::time::Duration;

use busbar_broker::EntityName;
use busbar_broker::config::{
    self, Config, CorrelationFilter, DEFAULT_MAX_SIZE_IN_MEGABYTES, DEFAULT_RULE_NAME,
    EntityStatus, LoggingTargets, PropertyValue, RuleConfig, RuleFilter, SqlExpression,
};

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

#[test]
fn the_shipped_emulator_file_with_comments_equals_the_built_in_default() {
    let config = config::load_file(&fixture("emulator-config.json")).unwrap();
    assert_eq!(config, Config::emulator_default());
}

#[test]
fn the_built_in_default_has_the_emulator_values() {
    let config = Config::emulator_default();
    assert_eq!(config.namespace.name, "sbemulatorns");
    let [queue] = config.namespace.queues.as_slice() else {
        panic!("one queue")
    };
    assert_eq!(queue.name.as_str(), "queue.1");
    assert_eq!(queue.delivery.lock_duration, Duration::from_secs(60));
    assert_eq!(queue.delivery.max_delivery_count, 3);
    assert_eq!(
        queue.delivery.default_message_time_to_live,
        Duration::from_secs(3_600)
    );
    assert!(!queue.delivery.requires_session);
    assert!(!queue.delivery.dead_lettering_on_message_expiration);
    assert_eq!(queue.delivery.forward_to, None);
    assert!(!queue.duplicate_detection.enabled);
    assert_eq!(
        queue.duplicate_detection.history_time_window,
        Duration::from_secs(20)
    );
    let [topic] = config.namespace.topics.as_slice() else {
        panic!("one topic")
    };
    assert_eq!(topic.name.as_str(), "topic.1");
    let [subscription] = topic.subscriptions.as_slice() else {
        panic!("one subscription")
    };
    assert_eq!(subscription.name.as_str(), "subscription.1");
    let [rule] = subscription.rules.as_slice() else {
        panic!("one rule")
    };
    assert_eq!(rule.name.as_str(), "app-prop-filter-1");
    let RuleFilter::Correlation(filter) = &rule.filter else {
        panic!("correlation filter")
    };
    assert_eq!(filter.content_type.as_deref(), Some("application/json"));
    assert_eq!(
        config.logging,
        LoggingTargets {
            file: true,
            console: false
        }
    );
}

#[test]
fn max_size_in_megabytes_is_read_on_queues_and_topics_and_defaults_to_1024() {
    let text = r#"{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
        "Queues": [{"Name": "small", "Properties": {"MaxSizeInMegabytes": 1}}, {"Name": "plain"}],
        "Topics": [{"Name": "t", "Properties": {"MaxSizeInMegabytes": 5120},
                    "Subscriptions": [{"Name": "s"}]}]}]}}"#;
    let config = config::parse(text, "config.json").unwrap();
    let namespace = &config.namespace;
    assert_eq!(namespace.queues[0].max_size_in_megabytes, 1);
    assert_eq!(
        namespace.queues[1].max_size_in_megabytes,
        DEFAULT_MAX_SIZE_IN_MEGABYTES
    );
    assert_eq!(DEFAULT_MAX_SIZE_IN_MEGABYTES, 1024);
    assert_eq!(namespace.topics[0].max_size_in_megabytes, 5120);
}

#[test]
fn max_message_size_in_kilobytes_is_read_on_queues_and_topics_and_defaults_to_256() {
    let text = r#"{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
        "Queues": [{"Name": "large", "Properties": {"MaxMessageSizeInKilobytes": 102400}},
                   {"Name": "plain"}],
        "Topics": [{"Name": "t", "Properties": {"MaxMessageSizeInKilobytes": 1024},
                    "Subscriptions": [{"Name": "s"}]}]}]}}"#;
    let namespace = config::parse(text, "config.json").unwrap().namespace;
    assert_eq!(namespace.queues[0].max_message_size_in_kilobytes, 102_400);
    assert_eq!(namespace.queues[1].max_message_size_in_kilobytes, 256);
    assert_eq!(namespace.topics[0].max_message_size_in_kilobytes, 1024);
}

#[test]
fn every_property_is_read_and_emulator_quotas_are_not_imposed() {
    let config = config::load_file(&fixture("full-config.json")).unwrap();
    let namespace = &config.namespace;
    let orders = &namespace.queues[0];
    assert_eq!(orders.delivery.lock_duration, Duration::from_secs(300));
    assert_eq!(orders.delivery.max_delivery_count, 100);
    assert!(orders.delivery.requires_session);
    assert_eq!(
        orders.delivery.default_message_time_to_live,
        Duration::from_secs(14 * 86_400)
    );
    assert!(orders.delivery.dead_lettering_on_message_expiration);
    assert_eq!(orders.delivery.forward_to, None);
    assert_eq!(
        orders.delivery.forward_dead_lettered_messages_to,
        Some(EntityName::from("orders-dlq"))
    );
    assert!(orders.duplicate_detection.enabled);
    assert_eq!(
        orders.duplicate_detection.history_time_window,
        Duration::from_secs(7 * 86_400)
    );
    // Defaults fill in what a queue leaves out.
    assert_eq!(namespace.queues[1].delivery, Default::default());
    assert_eq!(
        namespace.queues[2].delivery.lock_duration,
        Duration::from_secs(5)
    );
    assert_eq!(
        namespace.queues[4].delivery.default_message_time_to_live,
        Duration::from_millis(1_500)
    );
    // .NET's TimeSpan.MaxValue, Service Bus's "never expires", is the largest TTL allowed.
    assert_eq!(
        namespace.queues[5].delivery.default_message_time_to_live,
        Duration::new(922_337_203_685, 477_580_700)
    );

    let events = &namespace.topics[0];
    assert_eq!(
        events.default_message_time_to_live,
        Duration::from_secs(3_600)
    );
    let all = &events.subscriptions[0];
    assert_eq!(all.rules, vec![RuleConfig::match_all()]);
    assert_eq!(all.rules[0].name.as_str(), DEFAULT_RULE_NAME);
    let audit = &events.subscriptions[1];
    assert_eq!(audit.delivery.lock_duration, Duration::from_secs(30));
    assert_eq!(audit.delivery.max_delivery_count, 1);
    assert_eq!(
        audit.rules[0].filter,
        RuleFilter::Sql(SqlExpression(
            "sys.MessageId = '123456' AND userProp1 = 'value1'".into()
        ))
    );
    assert_eq!(
        audit.rules[0].action,
        Some(SqlExpression("SET sys.To = 'Entity'".into()))
    );
    let expected = CorrelationFilter {
        content_type: Some("application/json".into()),
        correlation_id: Some("id1".into()),
        label: Some("subject1".into()),
        message_id: Some("msgid1".into()),
        reply_to: Some("someQueue".into()),
        reply_to_session_id: Some("sessionId".into()),
        session_id: Some("session1".into()),
        to: Some("xyz".into()),
        properties: vec![
            ("priority".into(), PropertyValue::Integer(2)),
            ("region".into(), PropertyValue::String("eu".into())),
            ("urgent".into(), PropertyValue::Bool(true)),
            ("weight".into(), PropertyValue::Float(1.5)),
        ],
    };
    assert_eq!(audit.rules[1].filter, RuleFilter::Correlation(expected));
    assert_eq!(audit.rules[1].action, None);
    assert!(namespace.topics[1].subscriptions.is_empty());
    assert_eq!(
        config.logging,
        LoggingTargets {
            file: true,
            console: true
        }
    );
}

#[test]
fn many_entities_long_ttls_and_high_delivery_counts_are_accepted() {
    let queues: Vec<String> = (0..120)
        .map(|index| {
            format!(r#"{{"Name": "q{index}", "Properties": {{"MaxDeliveryCount": 2000, "DefaultMessageTimeToLive": "P365D"}}}}"#)
        })
        .collect();
    let subscriptions: Vec<String> = (0..80)
        .map(|index| format!(r#"{{"Name": "s{index}"}}"#))
        .collect();
    let text = format!(
        r#"{{"UserConfig": {{"Namespaces": [{{"Name": "sbemulatorns", "Queues": [{}],
            "Topics": [{{"Name": "t", "Subscriptions": [{}]}}]}}], "Logging": {{"Type": "Console"}}}}}}"#,
        queues.join(","),
        subscriptions.join(",")
    );
    let config = config::parse(&text, "config.json").unwrap();
    assert_eq!(config.namespace.queues.len(), 120);
    assert_eq!(config.namespace.queues[7].delivery.max_delivery_count, 2000);
    assert_eq!(config.namespace.topics[0].subscriptions.len(), 80);
}

#[test]
fn optional_sections_take_defaults() {
    let text = r#"{"UserConfig": {"Namespaces": [{"Name": "ns"}]}}"#;
    let config = config::parse(text, "config.json").unwrap();
    assert_eq!(config.namespace.name, "ns");
    assert!(config.namespace.queues.is_empty() && config.namespace.topics.is_empty());
    assert_eq!(
        config.logging,
        LoggingTargets {
            file: false,
            console: true
        }
    );
}

#[test]
fn entities_are_found_by_address_ignoring_case() {
    use busbar_broker::Address;
    let namespace = Config::emulator_default().namespace;
    let exists = |address: &str| {
        namespace.has_entity(&Address::parse(address).unwrap().entity_node().unwrap().path)
    };
    assert!(exists("amqps://localhost:5673/queue.1"));
    assert!(exists("/QUEUE.1/$DeadLetterQueue"));
    assert!(exists("topic.1"));
    assert!(exists("Topic.1/subscriptions/Subscription.1/$management"));
    assert!(!exists("queue.2"));
    assert!(!exists("topic.1/Subscriptions/subscription.2"));
    assert!(
        !exists("queue.1/Subscriptions/subscription.1"),
        "queues have no subscriptions"
    );
}

#[test]
fn put_token_checks_existence_against_the_configuration() {
    use busbar_broker::auth::{PutTokenOutcome, SasKeys, put_token, sign_token};
    let namespace = Config::emulator_default().namespace;
    let decide = |audience: &str| {
        let token = sign_token(
            audience,
            "RootManageSharedAccessKey",
            "SAS_KEY_VALUE",
            2_000_000_000,
        );
        put_token(
            &SasKeys::emulator(),
            &token,
            audience,
            1_000_000_000_000,
            |path| namespace.has_entity(path),
            |_| None,
        )
    };
    let accepted = PutTokenOutcome::Accepted {
        expires_at_unix_millis: 2_000_000_000_000,
        rights: busbar_broker::auth::AccessRights::ALL,
    };
    assert_eq!(
        decide("sb://localhost/topic.1/Subscriptions/subscription.1"),
        accepted
    );
    assert_eq!(
        decide("sb://localhost/queue.9"),
        PutTokenOutcome::EntityNotFound {
            entity: "queue.9".into()
        }
    );
}

#[test]
fn filter_error_dead_lettering_is_read_on_subscriptions_and_defaults_to_on() {
    let text = r#"{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
        "Topics": [{"Name": "t", "Subscriptions": [
            {"Name": "off", "Properties": {"DeadLetteringOnFilterEvaluationExceptions": false}},
            {"Name": "default", "Properties": {}},
            {"Name": "bare"}]}]}]}}"#;
    let config = config::parse(text, "config.json").unwrap();
    let dead_lettering: Vec<bool> = config.namespace.topics[0]
        .subscriptions
        .iter()
        .map(|subscription| subscription.dead_lettering_on_filter_evaluation_exceptions)
        .collect();
    assert_eq!(dead_lettering, [false, true, true]);
}

#[test]
fn status_is_read_on_queues_topics_and_subscriptions_and_defaults_to_active() {
    let text = r#"{"UserConfig": {"Namespaces": [{"Name": "sbemulatorns",
        "Queues": [{"Name": "off", "Properties": {"Status": "Disabled"}},
                   {"Name": "drain", "Properties": {"Status": "senddisabled"}}, {"Name": "plain"}],
        "Topics": [{"Name": "t", "Properties": {"Status": "SendDisabled"},
                    "Subscriptions": [{"Name": "s", "Properties": {"Status": "ReceiveDisabled"}}]}]}]}}"#;
    let config = config::parse(text, "config.json").unwrap();
    let namespace = &config.namespace;
    let statuses: Vec<EntityStatus> = namespace.queues.iter().map(|q| q.status).collect();
    assert_eq!(
        statuses,
        [
            EntityStatus::Disabled,
            EntityStatus::SendDisabled,
            EntityStatus::Active
        ]
    );
    assert_eq!(namespace.topics[0].status, EntityStatus::SendDisabled);
    assert_eq!(
        namespace.topics[0].subscriptions[0].status,
        EntityStatus::ReceiveDisabled
    );
}
