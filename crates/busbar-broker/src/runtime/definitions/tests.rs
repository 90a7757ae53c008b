//! Persisted definitions merged with `Config.json`.

use std::time::Duration;

use busbar_store::{MemoryStorage, Storage};

use super::*;
use crate::config::Config;

fn recovered(records: &[Record]) -> Recovered {
    let mut storage = MemoryStorage::new();
    for record in records {
        storage.append(std::slice::from_ref(record)).unwrap();
    }
    storage.sync().unwrap();
    storage.restart().recover().unwrap()
}

#[test]
fn a_persisted_queue_wins_over_the_file_and_adds_to_it() {
    let configured = Config::emulator_default().namespace;
    let mut changed = configured.queues[0].clone();
    changed.delivery.lock_duration = Duration::from_secs(30);
    let mut added = changed.clone();
    added.name = EntityName::new("made-at-run-time");
    let records: Vec<Record> = [changed.clone(), added.clone()]
        .into_iter()
        .map(|config| {
            let name = config.name.to_string();
            stored(
                Kind::Queue,
                &name,
                &Definition::new(config, BTreeMap::new(), 5),
            )
        })
        .collect();

    let namespace = merged(&configured, &recovered(&records), 100);
    let config = namespace.config("ns");
    assert_eq!(config.queues, [added.clone(), changed.clone()]);
    assert_eq!(namespace.queues[&added.name].created_at, 5);
    assert_eq!(config.topics, configured.topics);
}

#[test]
fn a_forgotten_queue_leaves_the_file_s_one() {
    let configured = Config::emulator_default().namespace;
    let queue = configured.queues[0].clone();
    let name = queue.name.to_string();
    let records = [
        stored(
            Kind::Queue,
            &name,
            &Definition::new(queue, BTreeMap::new(), 1),
        ),
        forgotten(Kind::Queue, &name),
    ];
    let namespace = merged(&configured, &recovered(&records), 100);
    assert_eq!(namespace.config("ns").queues, configured.queues);
    assert_eq!(namespace.queues[&configured.queues[0].name].created_at, 100);
}

#[test]
fn persisted_topics_and_subscriptions_join_the_file_s() {
    let configured = Config::emulator_default().namespace;
    let file_topic = configured.topics[0].clone();
    let mut topic = file_topic.clone();
    topic.name = EntityName::new("made-topic");
    topic.subscriptions.clear();
    let mut subscription = file_topic.subscriptions[0].clone();
    subscription.name = EntityName::new("made-sub");
    let orphan = Definition::new(subscription.clone(), BTreeMap::new(), 3);
    let records = [
        stored(
            Kind::Topic,
            "made-topic",
            &Definition::new(topic.clone(), BTreeMap::new(), 2),
        ),
        subscription_record(
            &topic.name,
            &Definition::new(subscription.clone(), BTreeMap::new(), 3),
        ),
        // Its topic is gone: ignored.
        subscription_record(&EntityName::new("gone"), &orphan),
    ];
    let namespace = merged(&configured, &recovered(&records), 100);
    let config = namespace.config("ns");
    let names: Vec<String> = config.topics.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["made-topic", "topic.1"]);
    assert_eq!(config.topics[0].subscriptions, [subscription]);
    assert_eq!(config.topics[1], file_topic);
    assert_eq!(namespace.subscriptions.len(), 2);
}
