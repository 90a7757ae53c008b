//! Subscription rules over `$management` driven by fe2o3-amqp against the real binary:
//! enumerate-rules answers with the §5.11 shapes (described lists, `ulong` descriptors);
//! add-rule / remove-rule change routing for the next send and survive a restart.

#![allow(clippy::unwrap_used)]

mod support;

use fe2o3_amqp::Sender;
use fe2o3_amqp::types::messaging::{ApplicationProperties, Message, Properties};
use fe2o3_amqp::types::primitives::{OrderedMap, Value};

use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::session::SessionHandle;

use support::client::{connect, step};
use support::management::Management;
use support::{Broker, scratch_dir};

/// `com.microsoft:rule-description:list`, `correlation-filter:list` and `empty-rule-action:list`.
const RULE_DESCRIPTION: u64 = 0x0000_0137_0000_0004;
const CORRELATION_FILTER: u64 = 0x0000_0013_7000_0009;
const EMPTY_RULE_ACTION: u64 = 0x0000_0137_0000_0005;

fn entry<'a>(map: &'a OrderedMap<Value, Value>, key: &str) -> &'a Value {
    map.get(&Value::String(key.to_owned())).unwrap()
}

/// The descriptor code and fields of a described list.
fn described(value: &Value) -> (String, &Vec<Value>) {
    let Value::Described(described) = value else {
        panic!("{value:?}")
    };
    let Value::List(fields) = &described.value else {
        panic!("{value:?}")
    };
    (format!("{:?}", described.descriptor), fields)
}

async fn close(mut connection: ConnectionHandle<()>, mut session: SessionHandle<()>) {
    session.end().await.unwrap();
    connection.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enumerate_rules_lists_the_configured_rule_as_described_lists() {
    // The emulator's default: topic.1/subscription.1 with correlation rule app-prop-filter-1.
    let broker = Broker::default_in_memory();
    let (connection, mut session) = connect(&broker, "fe2o3-rules").await;
    let mut management =
        Management::attach(&mut session, "topic.1/Subscriptions/subscription.1").await;
    let response = management
        .call(
            "com.microsoft:enumerate-rules",
            vec![("top", Value::Int(10)), ("skip", Value::Int(0))],
        )
        .await;
    assert_eq!(response.status, 200);
    let Value::Map(body) = &response.body else {
        panic!("{:?}", response.body)
    };
    let Value::List(rules) = entry(body, "rules") else {
        panic!("{body:?}")
    };
    assert_eq!(rules.len(), 1);
    let Value::Map(rule) = &rules[0] else {
        panic!("{rules:?}")
    };
    let (descriptor, fields) = described(entry(rule, "rule-description"));
    assert_eq!(descriptor, format!("Code({RULE_DESCRIPTION})"));
    let (filter, filter_fields) = described(&fields[0]);
    assert_eq!(filter, format!("Code({CORRELATION_FILTER})"));
    assert_eq!(filter_fields[7], Value::String("application/json".into()));
    let (action, _) = described(&fields[1]);
    assert_eq!(action, format!("Code({EMPTY_RULE_ACTION})"));
    assert_eq!(fields[2], Value::String("app-prop-filter-1".into()));

    management.close().await;
    close(connection, session).await;
}

/// Topic `t`: `all` with no rules (so `$Default`), `red` with a SQL filter on `color`; topic
/// `mixed`: `plain`, and `sessions` requiring a SessionId.
const TOPIC_CONFIG: &str = r#"{ "UserConfig": { "Namespaces": [ { "Name": "sbemulatorns",
    "Queues": [],
    "Topics": [ { "Name": "t", "Properties": {}, "Subscriptions": [
        { "Name": "all", "Properties": {}, "Rules": [] },
        { "Name": "red", "Properties": {}, "Rules": [ { "Name": "red-only", "Properties": {
            "FilterType": "Sql", "SqlFilter": { "SqlExpression": "color = 'red'" } } } ] } ] },
      { "Name": "mixed", "Properties": {}, "Subscriptions": [
        { "Name": "plain", "Properties": {} },
        { "Name": "sessions", "Properties": { "RequiresSession": true } } ] } ] } ],
    "Logging": { "Type": "Console" } } }"#;

fn expression(text: &str) -> Value {
    let mut map = OrderedMap::new();
    map.insert(
        Value::String("expression".into()),
        Value::String(text.into()),
    );
    Value::Map(map)
}

fn sql_rule(name: &str, filter: &str) -> Vec<(&'static str, Value)> {
    let mut description = OrderedMap::new();
    description.insert(Value::String("sql-filter".into()), expression(filter));
    description.insert(Value::String("sql-rule-action".into()), Value::Null);
    description.insert(
        Value::String("rule-name".into()),
        Value::String(name.into()),
    );
    vec![
        ("rule-name", Value::String(name.into())),
        ("rule-description", Value::Map(description)),
    ]
}

/// Sends one message per colour to topic `t` (each accepted once stored).
async fn send_colours(session: &mut SessionHandle<()>, colours: &[&str]) {
    let mut sender = step(Sender::attach(session, "colours", "t")).await.unwrap();
    for colour in colours {
        let message = Message::builder()
            .application_properties(
                ApplicationProperties::builder()
                    .insert("color", *colour)
                    .build(),
            )
            .value(Value::String((*colour).to_owned()))
            .build();
        step(sender.send(message))
            .await
            .unwrap()
            .accepted_or_else(|o| o)
            .unwrap();
    }
    sender.close().await.unwrap();
}

/// How many messages a subscription holds (peek from the first sequence number; 204 is none).
async fn held(management: &mut Management) -> usize {
    let response = management
        .call(
            "com.microsoft:peek-message",
            vec![
                ("from-sequence-number", Value::Long(1)),
                ("message-count", Value::Int(100)),
            ],
        )
        .await;
    match (response.status, &response.body) {
        (204, _) => 0,
        (200, Value::Map(body)) => match entry(body, "messages") {
            Value::List(messages) => messages.len(),
            other => panic!("{other:?}"),
        },
        (status, body) => panic!("{status} {body:?}"),
    }
}

async fn rule_names(management: &mut Management) -> Vec<String> {
    let response = management
        .call("com.microsoft:enumerate-rules", Vec::new())
        .await;
    if response.status == 204 {
        return Vec::new();
    }
    let Value::Map(body) = &response.body else {
        panic!("{:?}", response.body)
    };
    let Value::List(rules) = entry(body, "rules") else {
        panic!("{body:?}")
    };
    rules
        .iter()
        .map(|rule| {
            let Value::Map(rule) = rule else {
                panic!("{rule:?}")
            };
            let (_, fields) = described(entry(rule, "rule-description"));
            match &fields[2] {
                Value::String(name) => name.clone(),
                other => panic!("{other:?}"),
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_and_remove_rule_change_routing_for_the_next_send_and_survive_a_restart() {
    let dir = scratch_dir("busbar-rule-changes");
    let config = dir.join("Config.json");
    std::fs::write(&config, TOPIC_CONFIG).unwrap();
    let data = dir.join("data");
    let broker = Broker::on_disk(config.clone(), data.clone());
    let (connection, mut session) = connect(&broker, "fe2o3-rule-changes").await;
    let mut all = Management::attach(&mut session, "t/Subscriptions/all").await;
    let mut red = Management::attach(&mut session, "t/Subscriptions/red").await;

    let added = red
        .call("com.microsoft:add-rule", sql_rule("blue", "color = 'blue'"))
        .await;
    assert_eq!(added.status, 200);
    let duplicate = red
        .call(
            "com.microsoft:add-rule",
            sql_rule("blue", "color = 'green'"),
        )
        .await;
    assert_eq!(duplicate.status, 409);
    assert_eq!(
        duplicate.condition.as_deref(),
        Some("com.microsoft:entity-already-exists")
    );
    let malformed = red
        .call("com.microsoft:add-rule", sql_rule("broken", "color = "))
        .await;
    assert_eq!(malformed.status, 400);
    let removed = all
        .call(
            "com.microsoft:remove-rule",
            vec![("rule-name", Value::String("$Default".into()))],
        )
        .await;
    assert_eq!(removed.status, 200);
    let unknown = all
        .call(
            "com.microsoft:remove-rule",
            vec![("rule-name", Value::String("$Default".into()))],
        )
        .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.condition.as_deref(), Some("amqp:not-found"));

    send_colours(&mut session, &["red", "blue", "green"]).await;
    assert_eq!(held(&mut all).await, 0);
    assert_eq!(held(&mut red).await, 2);

    all.close().await;
    red.close().await;
    close(connection, session).await;
    assert!(broker.terminate().success());

    let broker = Broker::on_disk(config, data);
    let (connection, mut session) = connect(&broker, "fe2o3-rule-changes-after").await;
    let mut all = Management::attach(&mut session, "t/Subscriptions/all").await;
    let mut red = Management::attach(&mut session, "t/Subscriptions/red").await;
    assert!(rule_names(&mut all).await.is_empty());
    assert_eq!(rule_names(&mut red).await, ["red-only", "blue"]);
    send_colours(&mut session, &["blue", "green"]).await;
    assert_eq!(held(&mut all).await, 0);
    assert_eq!(held(&mut red).await, 3);

    all.close().await;
    red.close().await;
    close(connection, session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_topic_send_refused_by_a_session_subscription_stores_no_copy_anywhere() {
    let dir = scratch_dir("busbar-mixed-topic");
    let config = dir.join("Config.json");
    std::fs::write(&config, TOPIC_CONFIG).unwrap();
    let broker = Broker::on_disk(config, dir.join("data"));
    let (connection, mut session) = connect(&broker, "fe2o3-mixed-topic").await;
    let mut plain = Management::attach(&mut session, "mixed/Subscriptions/plain").await;
    let mut sender = step(Sender::attach(&mut session, "mixed-sender", "mixed"))
        .await
        .unwrap();

    let outcome = step(
        sender.send(
            Message::builder()
                .value(Value::String("no session".into()))
                .build(),
        ),
    )
    .await
    .unwrap();
    assert!(
        format!("{outcome:?}").contains("AmqpError(NotAllowed)"),
        "{outcome:?}"
    );
    assert_eq!(held(&mut plain).await, 0);

    let with_session = Message::builder()
        .properties(Properties {
            group_id: Some("s1".to_owned()),
            ..Properties::default()
        })
        .value(Value::String("in a session".into()))
        .build();
    step(sender.send(with_session))
        .await
        .unwrap()
        .accepted_or_else(|o| o)
        .unwrap();
    assert_eq!(held(&mut plain).await, 1);

    sender.close().await.unwrap();
    plain.close().await;
    close(connection, session).await;
}
