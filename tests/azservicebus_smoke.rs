//! A smoke test with `azservicebus`, the Rust Service Bus client (on fe2o3-amqp), against the real
//! binary: send, peek-lock receive and complete; receive-and-delete; a session's messages
//! received in order under the session lock and completed.
//!
//! The crate has no emulator mode: it ignores `UseDevelopmentEmulator=true` in a connection string
//! and keeps only the endpoint's host (so always port 5672). Its `unsecured` client with a named
//! key credential and `127.0.0.1:PORT` as the namespace is how it reaches a plain `amqp://` broker
//! on another port; authentication is still the CBS put-token of a SAS token for the key.
//!
//! The tests run on tokio's single-threaded runtime: the crate is on fe2o3-amqp 0.14, whose
//! sender registers an unsettled delivery only after handing its transfer to the session, so on
//! a multi-threaded runtime a broker that settles within a fraction of a millisecond can beat the
//! registration and leave `send_message` waiting forever (fixed in fe2o3-amqp 0.18.2).

#![allow(clippy::unwrap_used)]

mod support;

use azservicebus::authorization::AzureNamedKeyCredential;
use azservicebus::core::BasicRetryPolicy;
use azservicebus::prelude::*;

use support::Broker;
use support::client::step;

async fn client(broker: &Broker) -> ServiceBusClient<BasicRetryPolicy> {
    let key = AzureNamedKeyCredential::new("RootManageSharedAccessKey", "SAS_KEY_VALUE");
    let namespace = format!("127.0.0.1:{}", broker.port);
    step(ServiceBusClient::unsecured().new_from_named_key_credential(
        namespace,
        key,
        ServiceBusClientOptions::default(),
    ))
    .await
    .unwrap()
}

async fn send(
    client: &mut ServiceBusClient<BasicRetryPolicy>,
    queue: &str,
    session: Option<&str>,
    bodies: &[&str],
) {
    let mut sender = step(client.create_sender(queue, Default::default()))
        .await
        .unwrap();
    for body in bodies {
        let mut message = ServiceBusMessage::new(*body);
        if let Some(session) = session {
            message.set_session_id(session.to_owned()).unwrap();
        }
        step(sender.send_message(message)).await.unwrap();
    }
    step(sender.dispose()).await.unwrap();
}

/// Seconds since the Unix epoch, to compare with lock expiries.
fn now() -> i64 {
    let since_epoch = std::time::UNIX_EPOCH.elapsed().unwrap();
    i64::try_from(since_epoch.as_secs()).unwrap()
}

fn body(message: &ServiceBusReceivedMessage) -> &str {
    std::str::from_utf8(message.body().unwrap()).unwrap()
}

#[tokio::test]
async fn peek_lock_receive_and_complete() {
    let broker = Broker::in_memory(&["q"]);
    let mut client = client(&broker).await;
    send(&mut client, "q", None, &["first"]).await;

    let mut receiver = step(client.create_receiver_for_queue("q", Default::default()))
        .await
        .unwrap();
    assert_eq!(receiver.receive_mode(), ServiceBusReceiveMode::PeekLock);
    let message = step(receiver.receive_message()).await.unwrap();
    assert_eq!(body(&message), "first");
    assert_eq!(message.sequence_number(), 1);
    assert_eq!(message.delivery_count(), Some(1));
    assert_ne!(message.lock_token().as_inner(), &[0; 16]);
    assert!(message.locked_until().unwrap().unix_timestamp() >= now());
    step(receiver.complete_message(&message)).await.unwrap();

    // Completed, not merely unlocked: a peek (which also sees locked messages) finds nothing.
    let left = step(receiver.peek_messages(10, None)).await.unwrap();
    assert!(left.is_empty(), "{left:?}");

    step(receiver.dispose()).await.unwrap();
    step(client.dispose()).await.unwrap();
}

// The crate takes every delivery's lock token from `x-opt-lock-token` or a 16-byte tag, even in
// receive-and-delete: the broker tags pre-settled transfers with a fresh GUID, as Service Bus does.
#[tokio::test]
async fn receive_and_delete() {
    let broker = Broker::in_memory(&["q"]);
    let mut client = client(&broker).await;
    send(&mut client, "q", None, &["one", "two"]).await;

    let options = ServiceBusReceiverOptions {
        receive_mode: ServiceBusReceiveMode::ReceiveAndDelete,
        ..Default::default()
    };
    let mut receiver = step(client.create_receiver_for_queue("q", options))
        .await
        .unwrap();
    let mut bodies = Vec::new();
    while bodies.len() < 2 {
        for message in step(receiver.receive_messages(2)).await.unwrap() {
            bodies.push(body(&message).to_owned());
        }
    }
    assert_eq!(bodies, ["one", "two"]);

    // Deleted on delivery, with no settlement from the client.
    let left = step(receiver.peek_messages(10, None)).await.unwrap();
    assert!(left.is_empty(), "{left:?}");

    step(receiver.dispose()).await.unwrap();
    step(client.dispose()).await.unwrap();
}

#[tokio::test]
async fn session_messages_in_order() {
    let broker = Broker::in_memory_with(&[("s", r#"{ "RequiresSession": true }"#)]);
    let mut client = client(&broker).await;
    send(&mut client, "s", Some("other"), &["not ours"]).await;
    send(&mut client, "s", Some("s1"), &["a", "b", "c"]).await;

    let mut receiver = step(client.accept_session_for_queue("s", "s1", Default::default()))
        .await
        .unwrap();
    assert_eq!(receiver.session_id(), "s1");
    // The attach carries the lock's end as .NET ticks (a long, as Service Bus sends it), which
    // this crate only reads as an AMQP timestamp; a renewal's answer it does read.
    step(receiver.renew_session_lock()).await.unwrap();
    assert!(receiver.session_locked_until().unix_timestamp() >= now());
    let mut bodies = Vec::new();
    while bodies.len() < 3 {
        for message in step(receiver.receive_messages(3)).await.unwrap() {
            assert_eq!(message.session_id(), Some("s1"));
            step(receiver.complete_message(&message)).await.unwrap();
            bodies.push(body(&message).to_owned());
        }
    }
    assert_eq!(bodies, ["a", "b", "c"]);

    // The session is empty; the other session's message is not visible through its lock.
    let left = step(receiver.peek_messages(10, None)).await.unwrap();
    assert!(left.is_empty(), "{left:?}");

    step(receiver.dispose()).await.unwrap();
    step(client.dispose()).await.unwrap();
}
