//! Subscription rules over `$management` driven by fe2o3-amqp against the real binary:
//! enumerate-rules answers with the §5.11 shapes (described lists, `ulong` descriptors).

#![allow(clippy::unwrap_used)]

mod support;

use fe2o3_amqp::types::messaging::{ApplicationProperties, Message, Properties};
use fe2o3_amqp::types::primitives::{OrderedMap, Value};
use fe2o3_amqp::{Receiver, Sender};

use support::Broker;
use support::client::{connect, step};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enumerate_rules_lists_the_configured_rule_as_described_lists() {
    // The emulator's default: topic.1/subscription.1 with correlation rule app-prop-filter-1.
    let broker = Broker::default_in_memory();
    let (mut connection, mut session) = connect(&broker, "fe2o3-rules").await;
    let node = "topic.1/Subscriptions/subscription.1/$management";
    let mut requests = step(Sender::attach(&mut session, "rules-requests", node))
        .await
        .unwrap();
    let mut replies = step(
        Receiver::builder()
            .name("rules-replies")
            .source(node)
            .target("rules-client")
            .attach(&mut session),
    )
    .await
    .unwrap();
    let mut body = OrderedMap::new();
    body.insert(Value::String("top".into()), Value::Int(10));
    body.insert(Value::String("skip".into()), Value::Int(0));
    let request = Message::builder()
        .properties(Properties {
            message_id: Some("request-1".to_owned().into()),
            reply_to: Some("rules-client".to_owned()),
            ..Properties::default()
        })
        .application_properties(
            ApplicationProperties::builder()
                .insert("operation", "com.microsoft:enumerate-rules")
                .build(),
        )
        .value(Value::Map(body))
        .build();
    step(requests.send(request)).await.unwrap();

    let response = step(replies.recv::<Value>()).await.unwrap();
    replies.accept(&response).await.unwrap();
    let status = response
        .message()
        .application_properties
        .as_ref()
        .unwrap()
        .get("statusCode")
        .map(|code| format!("{code:?}"));
    assert_eq!(status.as_deref(), Some("Int(200)"));
    let Value::Map(body) = response.body() else {
        panic!("{:?}", response.body())
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

    requests.close().await.unwrap();
    replies.close().await.unwrap();
    session.end().await.unwrap();
    connection.close().await.unwrap();
}
