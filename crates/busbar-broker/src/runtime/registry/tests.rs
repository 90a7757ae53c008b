//! Tests of the registry: stable ids, send routing through ForwardTo and topic fan-out, where
//! copies dead-lettered by a failing filter go, and which statuses refuse sends and receives.

use super::*;
use crate::config::Config;
use busbar_store::{MemoryStorage, Storage};

#[test]
fn ids_are_assigned_once_and_survive_a_restart() {
    let namespace = Config::emulator_default().namespace;
    let mut storage = MemoryStorage::new();
    let recovered = storage.recover().unwrap();
    let (registry, specs, mut ids) = build(&namespace, &recovered, 4).unwrap();
    let records = ids.take_new_records();
    // queue.1, topic.1 (its scheduled messages) and its subscription.
    assert_eq!(records.len(), 3);
    let first: Vec<EntityId> = specs.iter().map(|s| s.id).collect();
    assert_eq!(first, [EntityId(1), EntityId(2), EntityId(3)]);
    let releasing: Vec<_> = specs
        .iter()
        .map(|s| s.releases_to_topic.as_ref().map(ToString::to_string))
        .collect();
    assert_eq!(releasing, [None, Some("topic.1".to_owned()), None]);
    assert!(
        registry
            .resolve(&EntityPath::QueueOrTopic("QUEUE.1".into()))
            .is_some()
    );
    assert!(matches!(
        registry.resolve(&EntityPath::QueueOrTopic("topic.1".into())),
        Some(Resolved::Topic(route)) if route.subscriptions.len() == 1
    ));
    assert!(
        registry
            .resolve(&EntityPath::QueueOrTopic("nope".into()))
            .is_none()
    );

    storage.append(&records).unwrap();
    storage.sync().unwrap();
    let mut restarted = storage.restart();
    let recovered = restarted.recover().unwrap();
    let (_, specs, mut ids) = build(&namespace, &recovered, 4).unwrap();
    assert!(ids.take_new_records().is_empty());
    assert_eq!(specs.iter().map(|s| s.id).collect::<Vec<_>>(), first);
}

#[test]
fn sends_follow_forward_to_and_topics_copy_to_matching_subscriptions() {
    let text = r#"{ "UserConfig": { "Namespaces": [ { "Name": "sbemulatorns",
        "Queues": [
            { "Name": "a", "Properties": { "ForwardTo": "b" } },
            { "Name": "b", "Properties": {} } ],
        "Topics": [ { "Name": "t", "Properties": {}, "Subscriptions": [
            { "Name": "s1", "Properties": { "ForwardTo": "a" } },
            { "Name": "s2", "Properties": {} } ] } ] } ],
        "Logging": { "Type": "Console" } } }"#;
    let namespace = crate::config::parse(text, "test.json").unwrap().namespace;
    let (registry, _specs, _) = build(&namespace, &Recovered::default(), 4).unwrap();
    let message = NewMessage {
        payload: busbar_amqp::message::MessageBuilder::new()
            .data(Bytes::from_static(b"x"))
            .build()
            .into_bytes(),
        ..NewMessage::default()
    };
    let paths = |path: &str| -> Vec<String> {
        registry
            .route(
                &EntityPath::QueueOrTopic(path.into()),
                vec![message.clone()],
            )
            .into_iter()
            .map(|(entity, messages)| format!("{}:{}", entity.path, messages.len()))
            .collect()
    };
    assert_eq!(paths("a"), ["b:1"]);
    assert_eq!(paths("B"), ["b:1"]);
    // s1 forwards to a, which forwards to b.
    assert_eq!(paths("t"), ["b:1", "t/Subscriptions/s2:1"]);
    assert!(paths("nope").is_empty());
}

#[test]
fn a_copy_whose_filter_fails_goes_to_the_subscription_dead_letter_queue_with_its_reason() {
    // `color > 5` on a string colour cannot be evaluated; s2 forwards, s3 matches.
    let text = r#"{ "UserConfig": { "Namespaces": [ { "Name": "sbemulatorns",
        "Queues": [ { "Name": "q", "Properties": {} } ],
        "Topics": [ { "Name": "t", "Properties": {}, "Subscriptions": [
            { "Name": "s1", "Properties": { "RequiresSession": true }, "Rules": [ { "Name": "bad",
                "Properties": { "FilterType": "Sql", "SqlFilter": { "SqlExpression": "color > 5" } } } ] },
            { "Name": "s2", "Properties": { "ForwardTo": "q" }, "Rules": [ { "Name": "bad",
                "Properties": { "FilterType": "Sql", "SqlFilter": { "SqlExpression": "color > 5" } } } ] },
            { "Name": "s3", "Properties": {} },
            { "Name": "s4", "Properties": { "ForwardDeadLetteredMessagesTo": "q" }, "Rules": [ { "Name": "bad",
                "Properties": { "FilterType": "Sql", "SqlFilter": { "SqlExpression": "color > 5" } } } ] } ] } ] } ],
        "Logging": { "Type": "Console" } } }"#;
    let namespace = crate::config::parse(text, "test.json").unwrap().namespace;
    let (registry, _specs, _) = build(&namespace, &Recovered::default(), 4).unwrap();
    let message = NewMessage {
        payload: busbar_amqp::message::MessageBuilder::new()
            .application_properties(busbar_amqp::message::ApplicationProperties(vec![(
                "color".into(),
                busbar_amqp::types::Value::from("red"),
            )]))
            .data(Bytes::from_static(b"x"))
            .build()
            .into_bytes(),
        ..NewMessage::default()
    };
    let targets = registry.route(&EntityPath::QueueOrTopic("t".into()), vec![message]);
    let routed: Vec<(String, Option<DeadLetterInfo>)> = targets
        .iter()
        .flat_map(|(entity, messages)| {
            messages
                .iter()
                .map(|message| (entity.path.clone(), message.dead_letter.clone()))
        })
        .collect();
    let failed = Some(DeadLetterInfo {
        reason: Some(busbar_rules::FILTER_EXCEPTION_REASON.to_owned()),
        description: Some(
            "rule 'bad': operator '>' cannot be applied to operands of type 'string' and 'long'"
                .to_owned(),
        ),
    });
    // The dead-lettered copy stays with s2 (ForwardTo moves deliverable copies only); s4
    // forwards it, no longer dead-lettered but with its reason as a property.
    assert_eq!(
        routed,
        [
            ("t/Subscriptions/s1".to_owned(), failed.clone()),
            ("t/Subscriptions/s2".to_owned(), failed),
            ("t/Subscriptions/s3".to_owned(), None),
            ("q".to_owned(), None),
        ]
    );
    let forwarded = Message::from_bytes(targets[3].1[0].payload.clone());
    let properties = forwarded.application_properties().unwrap().unwrap();
    assert_eq!(
        properties.get("DeadLetterReason"),
        Some(&busbar_amqp::types::Value::from(
            busbar_rules::FILTER_EXCEPTION_REASON
        ))
    );
    // A session subscription takes a dead-lettered copy without a SessionId.
    let (session_subscription, copies) = &targets[0];
    assert!(session_subscription.requires_session);
    assert_eq!(busbar_sessions::check_session_message(&copies[0]), Ok(()));
}

#[test]
fn statuses_refuse_sends_and_receives_and_a_disabled_topic_stops_its_subscriptions() {
    let text = r#"{ "UserConfig": { "Namespaces": [ { "Name": "sbemulatorns",
        "Queues": [
            { "Name": "off", "Properties": { "Status": "Disabled" } },
            { "Name": "drain", "Properties": { "Status": "SendDisabled" } },
            { "Name": "fill", "Properties": { "Status": "ReceiveDisabled" } } ],
        "Topics": [
            { "Name": "t", "Properties": { "Status": "Disabled" }, "Subscriptions": [
                { "Name": "s", "Properties": {} } ] },
            { "Name": "u", "Properties": { "Status": "SendDisabled" }, "Subscriptions": [
                { "Name": "paused", "Properties": { "Status": "ReceiveDisabled" } },
                { "Name": "s", "Properties": {} } ] } ] } ],
        "Logging": { "Type": "Console" } } }"#;
    let namespace = crate::config::parse(text, "test.json").unwrap().namespace;
    let (mut registry, specs, _) = build(&namespace, &Recovered::default(), 4).unwrap();
    let entity = |name: &str| EntityPath::QueueOrTopic(name.into());
    let subscription = |topic: &str, name: &str| EntityPath::Subscription {
        topic: topic.into(),
        subscription: name.into(),
    };
    let sends = |registry: &Registry, path: &EntityPath| {
        registry
            .send_refusal("ns", path)
            .map(|error| error.to_string())
    };
    let receives =
        |registry: &Registry, path: &EntityPath| registry.receive_refusal("ns", path).is_some();
    assert!(
        sends(&registry, &entity("off"))
            .unwrap()
            .contains("'sb://ns/off' is currently disabled.")
    );
    assert!(
        sends(&registry, &entity("drain"))
            .unwrap()
            .contains("'ns:Queue:drain' is currently disabled for Send operations.")
    );
    assert!(
        sends(&registry, &entity("u"))
            .unwrap()
            .contains("'ns:Topic:u'")
    );
    assert_eq!(sends(&registry, &entity("fill")), None);
    let refusing: Vec<bool> = [
        entity("off"),
        entity("drain"),
        entity("fill"),
        subscription("t", "s"),
        subscription("u", "paused"),
        subscription("u", "s"),
    ]
    .iter()
    .map(|path| receives(&registry, path))
    .collect();
    assert_eq!(refusing, [true, false, true, true, true, false]);
    // The entity tasks start refusing what the registry refuses.
    let started: Vec<(&str, bool)> = specs
        .iter()
        .map(|spec| (spec.path.as_str(), spec.receive_refusal.is_some()))
        .collect();
    assert_eq!(
        started,
        [
            ("off", true),
            ("drain", false),
            ("fill", true),
            ("t", false),
            ("t/Subscriptions/s", true),
            ("u", false),
            ("u/Subscriptions/paused", true),
            ("u/Subscriptions/s", false),
        ]
    );

    registry.remove_topic(&"t".into());
    registry.remove_queue(&"off".into());
    assert!(!receives(&registry, &subscription("t", "s")));
    assert_eq!(sends(&registry, &entity("off")), None);
}
