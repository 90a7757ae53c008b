//! Shared-access policies over raw AMQP (fe2o3-amqp with SASL PLAIN) against the real binary:
//! each `$management` operation needs its own claim, as in Service Bus — peeking needs Listen,
//! cancelling a scheduled message Send — whatever claim let the client attach the node.

#![allow(clippy::unwrap_used)]

mod support;

use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::sasl_profile::SaslProfile;
use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::primitives::{Array, Value};
use fe2o3_amqp::{Connection, Session};

use support::client::step;
use support::management::Management;
use support::{Broker, scratch_dir};

/// 256-bit keys in base64.
const SENDER_KEY: &str = "SSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSSA=";
const LISTENER_KEY: &str = "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLA=";

fn secured_broker() -> Broker {
    let dir = scratch_dir("busbar-policies");
    let policies = dir.join("policies.json");
    let rules = serde_json::json!({"SharedAccessPolicies": [
        {"KeyName": "sender", "PrimaryKey": SENDER_KEY, "Rights": ["Send"]},
        {"KeyName": "listener", "PrimaryKey": LISTENER_KEY, "Rights": ["Listen"]},
    ]});
    std::fs::write(&policies, rules.to_string()).unwrap();
    Broker::spawn_with(None, None, &["--policies", policies.to_str().unwrap()])
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
    let broker = secured_broker();
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
