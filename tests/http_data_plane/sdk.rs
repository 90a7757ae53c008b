//! The legacy Rust REST client `azure_messaging_servicebus` 0.21 against the broker: what it
//! sends is received with its properties, its peek-lock responses parse (its
//! `BrokerProperties` type insists on the service's fields and date format), and it renews,
//! unlocks and completes through the `Location` the broker answers with.

use std::collections::HashMap;
use std::time::Duration;

use azure_messaging_servicebus::service_bus::{
    QueueClient, SendMessageOptions, SettableBrokerProperties, TopicClient,
};
use hyper::{Method, StatusCode};

use crate::http::{Http, KEY, KEY_NAME, ToBroker};
use crate::support::Broker;

/// The crate's wait for a peek-lock; nothing in these tests waits for it (messages are there).
const WAIT: Option<Duration> = Some(Duration::from_secs(5));

#[tokio::test]
async fn the_rest_crate_sends_peek_locks_renews_unlocks_and_completes() {
    let broker = Broker::default_with_test_controls();
    let http = ToBroker::client(broker.admin_port);
    let queue = QueueClient::new(http, "busbar", "queue.1", KEY_NAME, KEY).unwrap();
    let options = SendMessageOptions {
        content_type: Some("text/plain".into()),
        broker_properties: Some(SettableBrokerProperties {
            message_id: Some("order-1".into()),
            label: Some("orders".into()),
            correlation_id: Some("corr-1".into()),
            time_to_live: Some(Duration::from_secs(600)),
            ..SettableBrokerProperties::default()
        }),
        custom_properties: Some(HashMap::from([("color".to_owned(), "red".to_owned())])),
    };
    queue.send_message("hello", Some(options)).await.unwrap();

    let locked = queue.peek_lock_message2(WAIT).await.unwrap();
    assert_eq!(u16::from(*locked.status()), 201);
    assert_eq!(locked.body(), "hello");
    let properties = locked.broker_properties().unwrap();
    assert_eq!(properties.message_id, "order-1");
    assert_eq!(properties.delivery_count, 1);
    assert_eq!(properties.state, "Active");
    assert!((properties.time_to_live - 600.0).abs() < 1e-6);
    assert!(properties.enqueued_time_utc.is_some());
    let headers = locked
        .custom_properties::<azure_core_021::headers::Headers>()
        .unwrap();
    let color = azure_core_021::headers::HeaderName::from_static("color");
    assert_eq!(headers.get_optional_str(&color), Some("\"red\""));

    locked.renew_message_lock().await.unwrap();
    locked.unlock_message().await.unwrap();
    // Unlocked, it comes back with its delivery counted, under a new lock.
    let again = queue.peek_lock_message2(WAIT).await.unwrap();
    let properties = again.broker_properties().unwrap();
    assert_eq!(properties.delivery_count, 2);
    assert_eq!(properties.message_id, "order-1");
    again.delete_message().await.unwrap();
    // Completed: the old lock settles nothing more, and the queue is empty.
    assert!(again.delete_message().await.is_err());
    let raw = Http::new(broker.admin_port);
    let empty = raw
        .send(Method::DELETE, "/queue.1/messages/head?timeout=0", &[], "")
        .await;
    assert_eq!(empty.status, StatusCode::NO_CONTENT);

    queue.send_message("gone", None).await.unwrap();
    assert_eq!(queue.receive_and_delete_message().await.unwrap(), "gone");
}

#[tokio::test]
async fn the_rest_crate_sends_to_a_topic_and_its_content_type_meets_the_filter() {
    let broker = Broker::default_with_test_controls();
    let http = ToBroker::client(broker.admin_port);
    let topic = TopicClient::new(http, "busbar", "topic.1", KEY_NAME, KEY).unwrap();
    let json = || SendMessageOptions {
        content_type: Some("application/json".into()),
        ..SendMessageOptions::default()
    };
    let sender = topic.topic_sender();
    // subscription.1's correlation filter takes content type application/json only.
    sender.send_message("dropped", None).await.unwrap();
    sender
        .send_message("{\"n\":1}", Some(json()))
        .await
        .unwrap();
    let receiver = topic.subscription_receiver("subscription.1");
    let locked = receiver.peek_lock_message2(WAIT).await.unwrap();
    assert_eq!(locked.body(), "{\"n\":1}");
    locked.delete_message().await.unwrap();
    sender
        .send_message("{\"n\":2}", Some(json()))
        .await
        .unwrap();
    assert_eq!(
        receiver.receive_and_delete_message().await.unwrap(),
        "{\"n\":2}"
    );
    let raw = Http::new(broker.admin_port);
    let path = "/topic.1/subscriptions/subscription.1/messages/head?timeout=0";
    let empty = raw.send(Method::DELETE, path, &[], "").await;
    assert_eq!(empty.status, StatusCode::NO_CONTENT);
}
