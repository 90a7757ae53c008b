//! The control interface against a running broker on a memory store: queues created, changed
//! and deleted at run time, their counts, and definitions that survive a restart.

use std::time::Duration;

use busbar_core::{NewMessage, SubQueue};
use busbar_store::MemoryStorage;
use bytes::Bytes;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::*;
use crate::config::{Config, SubscriptionConfig, TopicConfig};
use crate::errors::BrokerError;
use crate::runtime::management::{Operation, OperationResult};

/// A broker on `storage` and its control interface; dropping `stop` shuts it down, and the
/// join handle gives the storage back.
pub(super) async fn start(
    storage: MemoryStorage,
) -> (
    Control,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<MemoryStorage>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (ready, control) = oneshot::channel();
    let (stop, stopped) = oneshot::channel::<()>();
    let broker = tokio::spawn(async move {
        let config = Config::emulator_default();
        let stop = async move {
            let _ = stopped.await;
        };
        let clock = crate::runtime::Clock::anchored_now().virtual_time();
        crate::runtime::run(&config, storage, listener, stop, clock, |control| {
            let _ = ready.send(control);
        })
        .await
        .unwrap()
    });
    (control.await.unwrap(), stop, broker)
}

pub(super) fn queue(name: &str) -> QueueConfig {
    let mut queue = Config::emulator_default().namespace.queues[0].clone();
    queue.name = EntityName::new(name);
    queue
}

/// Enqueues `messages` straight into the queue `name`'s task, as a sender link would: the reply.
pub(super) async fn enqueue(
    control: &Control,
    name: &str,
    messages: Vec<NewMessage>,
) -> Result<OperationResult, BrokerError> {
    let state = control.state().unwrap();
    let handle = state.queue_handle(&EntityName::new(name)).unwrap();
    let (reply, stored) = oneshot::channel();
    post_entity(
        &handle.inbox,
        EntityCommand::Execute {
            sub_queue: SubQueue::Main,
            operation: Operation::Enqueue(messages),
            reply: Box::new(move |result| {
                let _ = reply.send(result);
            }),
        },
    );
    stored.await.unwrap()
}

/// Sends `count` messages straight to the queue's task, as a sender link would.
async fn send(control: &Control, name: &str, count: usize) {
    let messages = (0..count)
        .map(|_| NewMessage {
            payload: Bytes::from_static(b"\x00\x53\x75\xa0\x01x"),
            message_id: None,
            session_id: None,
            time_to_live: None,
            scheduled_enqueue_time: None,
            dead_letter: None,
        })
        .collect();
    assert!(matches!(
        enqueue(control, name, messages).await,
        Ok(OperationResult::SequenceNumbers(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_created_at_run_time_takes_messages_changes_and_is_deleted() {
    let (control, stop, broker) = start(MemoryStorage::new()).await;
    let created = control
        .create_queue(queue("made"), BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(created.counts, MessageCounts::default());
    assert_eq!(
        control.create_queue(queue("MADE"), BTreeMap::new()).await,
        Err(ControlError::AlreadyExists("MADE".into()))
    );
    assert_eq!(
        control
            .create_queue(queue("topic.1"), BTreeMap::new())
            .await,
        Err(ControlError::AlreadyExists("topic.1".into())),
        "queues and topics share one name space"
    );

    send(&control, "made", 3).await;
    assert_eq!(control.queue("made").await.unwrap().counts.active, 3);

    let mut changed = queue("made");
    changed.delivery.lock_duration = Duration::from_secs(30);
    let updated = control
        .update_queue(changed.clone(), BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(updated.config, changed);
    assert_eq!(updated.created_at, created.created_at);
    let mut sessions = changed.clone();
    sessions.delivery.requires_session = true;
    assert!(matches!(
        control.update_queue(sessions, BTreeMap::new()).await,
        Err(ControlError::Invalid(_))
    ));

    let names: Vec<String> = control
        .queues()
        .await
        .unwrap()
        .into_iter()
        .map(|queue| queue.config.name.to_string())
        .collect();
    assert_eq!(names, ["made", "queue.1"]);

    control.delete_queue("made").await.unwrap();
    assert_eq!(
        control.queue("made").await,
        Err(ControlError::NotFound("made".into()))
    );
    assert_eq!(
        control.delete_queue("made").await,
        Err(ControlError::NotFound("made".into()))
    );
    drop(stop);
    broker.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn definitions_and_messages_survive_a_restart_and_deleted_ones_stay_gone() {
    let (control, stop, broker) = start(MemoryStorage::new()).await;
    let mut kept = queue("kept");
    kept.max_size_in_megabytes = 2048;
    let metadata = BTreeMap::from([("UserMetadata".to_owned(), "hello".to_owned())]);
    control
        .create_queue(kept.clone(), metadata.clone())
        .await
        .unwrap();
    send(&control, "kept", 2).await;
    control
        .create_queue(queue("dropped"), BTreeMap::new())
        .await
        .unwrap();
    send(&control, "dropped", 1).await;
    control.delete_queue("dropped").await.unwrap();
    drop(stop);
    let storage = broker.await.unwrap().restart();

    let (control, stop, broker) = start(storage).await;
    let restored = control.queue("kept").await.unwrap();
    assert_eq!(restored.config, kept);
    assert_eq!(restored.kept, metadata);
    assert_eq!(restored.counts.active, 2);
    assert_eq!(
        control.queue("dropped").await,
        Err(ControlError::NotFound("dropped".into()))
    );
    // Created again, it starts empty: the old messages were removed with it.
    control
        .create_queue(queue("dropped"), BTreeMap::new())
        .await
        .unwrap();
    assert_eq!(control.queue("dropped").await.unwrap().counts.active, 0);
    drop(stop);
    broker.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarding_target_must_exist_and_cannot_be_deleted_while_used() {
    let (control, stop, broker) = start(MemoryStorage::new()).await;
    let mut forwarding = queue("forwarding");
    forwarding.delivery.forward_to = Some(EntityName::new("nowhere"));
    assert!(matches!(
        control
            .create_queue(forwarding.clone(), BTreeMap::new())
            .await,
        Err(ControlError::Invalid(_))
    ));
    forwarding.delivery.forward_to = Some(EntityName::new("queue.1"));
    control
        .create_queue(forwarding, BTreeMap::new())
        .await
        .unwrap();
    assert!(matches!(
        control.delete_queue("queue.1").await,
        Err(ControlError::Invalid(_))
    ));
    drop(stop);
    broker.await.unwrap();
    assert!(matches!(
        control.queues().await,
        Err(ControlError::Unavailable(_))
    ));
}

fn topic(name: &str) -> TopicConfig {
    let mut topic = Config::emulator_default().namespace.topics[0].clone();
    topic.name = EntityName::new(name);
    topic.subscriptions.clear();
    topic
}

fn subscription(name: &str) -> SubscriptionConfig {
    let mut subscription = Config::emulator_default().namespace.topics[0].subscriptions[0].clone();
    subscription.name = EntityName::new(name);
    subscription
}

/// Sends one message to `topic`, as a sender link would (routed by the subscriptions' rules).
async fn publish(control: &Control, topic: &str, color: &str) {
    let state = control.state().unwrap();
    let mut properties = busbar_amqp::message::ApplicationProperties::default();
    properties.push("color", busbar_amqp::types::Value::from(color));
    let sent = busbar_amqp::message::MessageBuilder::new()
        .application_properties(properties)
        .data(Bytes::from_static(b"x"))
        .build();
    let message = crate::runtime::inbound::new_message(sent).unwrap();
    let targets = state.registry.current().route(
        &crate::address::EntityPath::QueueOrTopic(EntityName::new(topic)),
        vec![message],
    );
    let (reply, stored) = oneshot::channel();
    crate::runtime::connection::store_routed(
        targets,
        Box::new(move |result| {
            let _ = reply.send(result.map(drop));
        }),
    );
    stored.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topics_subscriptions_and_rules_change_at_run_time_and_survive_a_restart() {
    let (control, stop, broker) = start(MemoryStorage::new()).await;
    control
        .create_topic(topic("orders"), BTreeMap::new())
        .await
        .unwrap();
    assert!(matches!(
        control.create_topic(topic("orders"), BTreeMap::new()).await,
        Err(ControlError::AlreadyExists(_))
    ));
    for name in ["all", "red"] {
        control
            .create_subscription(
                "orders",
                subscription(name),
                vec![busbar_rules::Rule::default_rule()],
                BTreeMap::new(),
            )
            .await
            .unwrap();
    }
    let red = busbar_rules::Rule::new(
        "red",
        busbar_rules::Filter::Sql(busbar_rules::SqlFilter::parse("color = 'red'").unwrap()),
        None,
    )
    .unwrap();
    control
        .add_rule("orders", "red", red.clone())
        .await
        .unwrap();
    control
        .remove_rule("orders", "red", "$Default")
        .await
        .unwrap();
    let names: Vec<String> = control
        .rules("orders", "red")
        .await
        .unwrap()
        .iter()
        .map(|rule| rule.name().to_owned())
        .collect();
    assert_eq!(names, ["red"]);
    assert!(matches!(
        control.add_rule("orders", "red", red).await,
        Err(ControlError::AlreadyExists(_))
    ));

    publish(&control, "orders", "red").await;
    publish(&control, "orders", "blue").await;
    assert_eq!(
        control
            .subscription("orders", "all")
            .await
            .unwrap()
            .counts
            .active,
        2
    );
    assert_eq!(
        control
            .subscription("orders", "red")
            .await
            .unwrap()
            .counts
            .active,
        1
    );
    assert_eq!(
        control
            .topic("orders")
            .await
            .unwrap()
            .config
            .subscriptions
            .len(),
        2
    );

    control.delete_subscription("orders", "all").await.unwrap();
    assert!(matches!(
        control.subscription("orders", "all").await,
        Err(ControlError::NotFound(_))
    ));
    drop(stop);
    let storage = broker.await.unwrap().restart();

    let (control, stop, broker) = start(storage).await;
    let topic = control.topic("orders").await.unwrap();
    assert_eq!(topic.config.subscriptions.len(), 1);
    assert_eq!(
        control
            .subscription("orders", "red")
            .await
            .unwrap()
            .counts
            .active,
        1
    );
    let names: Vec<String> = control
        .rules("orders", "red")
        .await
        .unwrap()
        .iter()
        .map(|rule| rule.name().to_owned())
        .collect();
    assert_eq!(names, ["red"], "the changed rules came back");
    // Created again, a deleted subscription starts from its own rules, empty.
    control
        .create_subscription(
            "orders",
            subscription("all"),
            vec![busbar_rules::Rule::default_rule()],
            BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        control
            .subscription("orders", "all")
            .await
            .unwrap()
            .counts
            .active,
        0
    );
    control.delete_topic("orders").await.unwrap();
    assert!(matches!(
        control.topic("orders").await,
        Err(ControlError::NotFound(_))
    ));
    assert!(matches!(
        control.subscriptions("orders").await,
        Err(ControlError::NotFound(_))
    ));
    drop(stop);
    broker.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn purge_and_reset_put_the_namespace_back_as_configured_with_no_messages() {
    let (control, stop, broker) = start(MemoryStorage::new()).await;
    send(&control, "queue.1", 3).await;
    assert_eq!(
        control.purge("queue.1", true).await.unwrap(),
        0,
        "no dead letters"
    );
    assert_eq!(control.purge("QUEUE.1", false).await.unwrap(), 3);
    assert_eq!(control.queue("queue.1").await.unwrap().counts.active, 0);
    assert!(matches!(
        control.purge("nowhere", false).await,
        Err(ControlError::NotFound(_))
    ));

    // Made, changed and filled meanwhile: a reset undoes all of it.
    control
        .create_queue(queue("made"), BTreeMap::new())
        .await
        .unwrap();
    let mut changed = queue("queue.1");
    changed.delivery.max_delivery_count = 9;
    control
        .update_queue(changed, BTreeMap::new())
        .await
        .unwrap();
    control.delete_topic("topic.1").await.unwrap();
    send(&control, "queue.1", 2).await;
    control.reset().await.unwrap();

    let configured = Config::emulator_default().namespace;
    let queues = control.queues().await.unwrap();
    let names: Vec<String> = queues.iter().map(|q| q.config.name.to_string()).collect();
    assert_eq!(names, ["queue.1"]);
    assert_eq!(queues[0].config, configured.queues[0]);
    assert_eq!(queues[0].counts.active, 0);
    let topic = control.topic("topic.1").await.unwrap();
    let names = |subscriptions: &[SubscriptionConfig]| -> Vec<String> {
        subscriptions.iter().map(|s| s.name.to_string()).collect()
    };
    assert_eq!(
        names(&topic.config.subscriptions),
        names(&configured.topics[0].subscriptions)
    );
    let rules: Vec<String> = control
        .rules("topic.1", "subscription.1")
        .await
        .unwrap()
        .iter()
        .map(|rule| rule.name().to_owned())
        .collect();
    assert_eq!(rules, ["app-prop-filter-1"]);
    drop(stop);
    broker.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_virtual_clock_moves_and_faults_are_injected_only_with_test_controls() {
    let (control, stop, broker) = start(MemoryStorage::new()).await;
    assert!(control.test_controls());
    let before = control.clock().await.unwrap();
    assert_eq!(before.offset, Duration::ZERO);
    let after = control
        .advance_clock(Duration::from_secs(7_200))
        .await
        .unwrap();
    assert_eq!(after.offset, Duration::from_secs(7_200));
    assert!(after.now.0 >= before.now.0 + 7_200_000);

    control
        .inject_fault("queue.1", Fault::ServerBusy(1))
        .await
        .unwrap();
    // Held only here: the broker's tasks end once nothing holds their inboxes.
    let handle = control
        .state()
        .unwrap()
        .queue_handle(&EntityName::new("queue.1"))
        .unwrap();
    let (reply, refused) = oneshot::channel();
    post_entity(
        &handle.inbox,
        EntityCommand::Execute {
            sub_queue: SubQueue::Main,
            operation: Operation::Enqueue(Vec::new()),
            reply: Box::new(move |result| {
                let _ = reply.send(result);
            }),
        },
    );
    assert_eq!(refused.await.unwrap(), Err(BrokerError::ServerBusy));
    drop(handle);
    send(&control, "queue.1", 1).await;
    drop(stop);
    broker.await.unwrap();

    // Without test controls the clock and faults do not exist.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (ready, plain) = oneshot::channel();
    let (stop, stopped) = oneshot::channel::<()>();
    let broker = tokio::spawn(async move {
        let config = Config::emulator_default();
        let stop = async move {
            let _ = stopped.await;
        };
        let clock = crate::runtime::Clock::anchored_now();
        crate::runtime::run(
            &config,
            MemoryStorage::new(),
            listener,
            stop,
            clock,
            |control| {
                let _ = ready.send(control);
            },
        )
        .await
        .unwrap()
    });
    let plain = plain.await.unwrap();
    assert!(!plain.test_controls());
    assert!(matches!(
        plain.clock().await,
        Err(ControlError::NotFound(_))
    ));
    assert!(matches!(
        plain.advance_clock(Duration::from_secs(1)).await,
        Err(ControlError::NotFound(_))
    ));
    assert!(matches!(
        plain.inject_fault("queue.1", Fault::LockLost(1)).await,
        Err(ControlError::NotFound(_))
    ));
    drop(stop);
    broker.await.unwrap();
}
