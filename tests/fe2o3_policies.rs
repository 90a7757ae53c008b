//! Shared-access policies over raw AMQP (fe2o3-amqp) against the real binary: each
//! `$management` operation needs its own claim, as in Service Bus — peeking needs Listen,
//! cancelling a scheduled message Send — whatever claim let the client attach the node; and a
//! key rotated away by a re-read of the policies file stops a client at its next token
//! renewal: the refused put-token detaches the links that held by it.

#![allow(clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use busbar_broker::auth::sign_token;
use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::sasl_profile::SaslProfile;
use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::messaging::{ApplicationProperties, Message, Properties};
use fe2o3_amqp::types::primitives::{Array, SimpleValue, Value};
use fe2o3_amqp::{Connection, Receiver, Sender, Session};

use support::client::{send_accepted, step};
use support::management::Management;
use support::{Broker, scratch_dir};

/// 256-bit keys in base64.
const SENDER_KEY: &str = "SSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSA=";
const ROTATED_SENDER_KEY: &str = "RRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRA=";
const LISTENER_KEY: &str = "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLA=";

/// Writes the policies file: a Send rule with `sender_key` and a Listen rule.
fn write_policies(path: &Path, sender_key: &str) {
    let rules = serde_json::json!({"SharedAccessPolicies": [
        {"KeyName": "sender", "PrimaryKey": sender_key, "Rights": ["Send"]},
        {"KeyName": "listener", "PrimaryKey": LISTENER_KEY, "Rights": ["Listen"]},
    ]});
    std::fs::write(path, rules.to_string()).unwrap();
}

/// A broker with the default entities and its policies file.
fn secured_broker() -> (Broker, PathBuf) {
    let policies = scratch_dir("busbar-policies").join("policies.json");
    write_policies(&policies, SENDER_KEY);
    let flags = ["--policies", policies.to_str().unwrap()];
    (Broker::spawn_with(None, None, &flags), policies)
}

/// A connection without credentials (SASL ANONYMOUS: tokens go to `$cbs`) and a session.
async fn anonymous(broker: &Broker) -> (ConnectionHandle<()>, SessionHandle<()>) {
    let url = format!("amqp://127.0.0.1:{}", broker.port);
    let mut connection = step(
        Connection::builder()
            .container_id("anonymous")
            .sasl_profile(SaslProfile::Anonymous)
            .open(url.as_str()),
    )
    .await
    .unwrap();
    let session = step(Session::begin(&mut connection)).await.unwrap();
    (connection, session)
}

/// `$cbs` put-token of a token for `sb://localhost/queue.1` signed with the sender rule's
/// `key`; returns the status code.
async fn put_token(cbs: &mut (Sender, Receiver), key: &str) -> i32 {
    let audience = "sb://localhost/queue.1";
    let expiry = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 3600;
    let request = Message::builder()
        .properties(Properties {
            message_id: Some("put".to_owned().into()),
            reply_to: Some("cbs-client".to_owned()),
            ..Properties::default()
        })
        .application_properties(
            ApplicationProperties::builder()
                .insert("operation", "put-token")
                .insert("type", "servicebus.windows.net:sastoken")
                .insert("name", audience)
                .build(),
        )
        .value(sign_token(audience, "sender", key, expiry))
        .build();
    step(cbs.0.send(request)).await.unwrap();
    let response = step(cbs.1.recv::<Value>()).await.unwrap();
    cbs.1.accept(&response).await.unwrap();
    let properties = response.message().application_properties.as_ref().unwrap();
    match properties.get("status-code") {
        Some(SimpleValue::Int(status)) => *status,
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotated_away_detaches_its_links_at_the_refused_renewal() {
    let (broker, policies) = secured_broker();
    let (_connection, mut session) = anonymous(&broker).await;
    let requests = step(Sender::attach(&mut session, "cbs-requests", "$cbs")).await;
    let replies = Receiver::builder()
        .name("cbs-replies")
        .source("$cbs")
        .target("cbs-client")
        .attach(&mut session);
    let mut cbs = (requests.unwrap(), step(replies).await.unwrap());
    assert_eq!(put_token(&mut cbs, SENDER_KEY).await, 202);
    let mut sender = step(Sender::attach(&mut session, "to-queue", "queue.1"))
        .await
        .unwrap();
    send_accepted(&mut sender, "before the rotation").await;

    write_policies(&policies, ROTATED_SENDER_KEY);
    broker.hang_up();
    // The client renews with the key it has: refused, and its sender is detached.
    assert_eq!(put_token(&mut cbs, SENDER_KEY).await, 401);
    let refused = step(sender.send("after the rotation".to_owned())).await;
    assert!(
        format!("{refused:?}").contains("UnauthorizedAccess"),
        "{refused:?}"
    );
    // With the rotated key it works again.
    assert_eq!(put_token(&mut cbs, ROTATED_SENDER_KEY).await, 202);
    let mut sender = step(Sender::attach(&mut session, "again", "queue.1"))
        .await
        .unwrap();
    send_accepted(&mut sender, "with the rotated key").await;
}

/// `queue.1/$management` on a connection authenticated as `name`, with the connection and
/// session it needs kept open.
async fn management_as(
    broker: &Broker,
    name: &str,
    key: &str,
) -> (ConnectionHandle<()>, SessionHandle<()>, Management) {
    // Given apart from the URL, which would percent-encode the key's `=`.
    let profile = SaslProfile::Plain {
        username: name.to_owned(),
        password: key.to_owned(),
    };
    let url = format!("amqp://127.0.0.1:{}", broker.port);
    let mut connection = step(
        Connection::builder()
            .container_id(name)
            .sasl_profile(profile)
            .open(url.as_str()),
    )
    .await
    .unwrap();
    let mut session = step(Session::begin(&mut connection)).await.unwrap();
    let management = Management::attach(&mut session, "queue.1").await;
    (connection, session, management)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_management_operation_needs_its_own_claim() {
    let (broker, _) = secured_broker();
    let peek = || {
        vec![
            ("from-sequence-number", Value::Long(1)),
            ("message-count", Value::Int(10)),
        ]
    };
    let cancel = || {
        let sequences = Array::from(vec![Value::Long(7)]);
        vec![("sequence-numbers", Value::Array(sequences))]
    };

    let (_sender_connection, _sender_session, mut sender) =
        management_as(&broker, "sender", SENDER_KEY).await;
    let refused = (sender.call("com.microsoft:peek-message", peek())).await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.condition.as_deref(),
        Some("amqp:unauthorized-access")
    );
    let cancelled = (sender.call("com.microsoft:cancel-scheduled-message", cancel())).await;
    assert_ne!(cancelled.status, 401, "{:?}", cancelled.condition);

    let (_listener_connection, _listener_session, mut listener) =
        management_as(&broker, "listener", LISTENER_KEY).await;
    let peeked = (listener.call("com.microsoft:peek-message", peek())).await;
    assert_eq!(
        peeked.status, 204,
        "nothing to peek: {:?}",
        peeked.condition
    );
    let refused = (listener.call("com.microsoft:cancel-scheduled-message", cancel())).await;
    assert_eq!(refused.status, 401);
}
