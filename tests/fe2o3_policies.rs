//! Shared-access policies over raw AMQP (fe2o3-amqp) against the real binary: each
//! `$management` operation needs its own claim, as in Service Bus — peeking needs Listen,
//! cancelling a scheduled message Send — whatever claim let the client attach the node; and a
//! key rotated away by a re-read of the policies file stops a client at its next token
//! renewal: the refused put-token detaches the links that held by it; a token never renewed
//! force-detaches its links when it lapses; an entity rule's key signs in with SASL PLAIN
//! for that entity alone; and a SASL PLAIN connection, which has no token to renew, loses the
//! links a rotated, removed or narrowed rule no longer covers as soon as the rule changes.

#![allow(clippy::unwrap_used)]

mod support;

use std::io::{Read as _, Write as _};
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
const MANAGER_KEY: &str = "MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMA=";
const ENTITY_KEY: &str = "EEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEEA=";

/// Writes the policies file: a Send rule with `sender_key`, a Listen rule and a Manage rule.
fn write_policies(path: &Path, sender_key: &str) {
    let rules = serde_json::json!({"SharedAccessPolicies": [
        {"KeyName": "sender", "PrimaryKey": sender_key, "Rights": ["Send"]},
        {"KeyName": "listener", "PrimaryKey": LISTENER_KEY, "Rights": ["Listen"]},
        {"KeyName": "manager", "PrimaryKey": MANAGER_KEY, "Rights": ["Manage"]},
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
/// `key`, good for an hour; returns the status code.
async fn put_token(cbs: &mut (Sender, Receiver), key: &str) -> i32 {
    put_token_as(cbs, "sender", key, unix_secs() + 3600).await
}

fn unix_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// `$cbs` put-token of a token for `sb://localhost/queue.1` signed with rule `name`'s `key`,
/// expiring at `expiry` (Unix seconds); returns the status code.
async fn put_token_as(cbs: &mut (Sender, Receiver), name: &str, key: &str, expiry: u64) -> i32 {
    let audience = "sb://localhost/queue.1";
    put_raw(cbs, audience, sign_token(audience, name, key, expiry)).await
}

/// `$cbs` put-token of `token`, whatever it holds, for `audience`; returns the status code.
async fn put_raw(cbs: &mut (Sender, Receiver), audience: &str, token: String) -> i32 {
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
        .value(token)
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

/// The `$cbs` request and reply links on `session`.
async fn cbs_links(session: &mut SessionHandle<()>) -> (Sender, Receiver) {
    let requests = step(Sender::attach(session, "cbs-requests", "$cbs")).await;
    let replies = Receiver::builder()
        .name("cbs-replies")
        .source("$cbs")
        .target("cbs-client")
        .attach(session);
    (requests.unwrap(), step(replies).await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_rotated_away_detaches_its_links_at_the_refused_renewal() {
    let (broker, policies) = secured_broker();
    let (_connection, mut session) = anonymous(&broker).await;
    let mut cbs = cbs_links(&mut session).await;
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
    let (connection, mut session) = plain_connection(broker, name, key).await;
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

/// A receiver on `queue.1`, on a connection of its own whose only token (the listener's) expires
/// at `expiry`, with what keeps it open.
async fn listening_until(
    broker: &Broker,
    name: &str,
    expiry: u64,
) -> (ConnectionHandle<()>, SessionHandle<()>, Receiver) {
    let (connection, mut session) = anonymous(broker).await;
    let mut cbs = cbs_links(&mut session).await;
    let status = put_token_as(&mut cbs, "listener", LISTENER_KEY, expiry).await;
    assert_eq!(status, 202);
    let receiver = step(Receiver::attach(&mut session, name, "queue.1"))
        .await
        .unwrap();
    (connection, session, receiver)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_that_lapses_without_renewal_force_detaches_its_links() {
    let (broker, _) = secured_broker();
    // Good for the next two seconds at most, and never renewed.
    let (_lapsing, _session, mut receiver) =
        listening_until(&broker, "lapsing", unix_secs() + 2).await;
    // A client whose token lasts keeps its link.
    let (_kept, _kept_session, mut kept) =
        listening_until(&broker, "kept", unix_secs() + 3600).await;
    // Nothing is queued: the receive ends only when the broker detaches the link.
    let detached = step(receiver.recv::<Value>()).await;
    let text = format!("{detached:?}");
    assert!(text.contains("DetachForced"), "{text}");
    assert!(text.contains("Code: RenewToken"), "{text}");
    assert!(text.contains("'Listen' claim(s) are required"), "{text}");
    let (_sending, mut sending) = plain_connection(&broker, "sender", SENDER_KEY).await;
    let mut sender = step(Sender::attach(&mut sending, "to-kept", "queue.1"))
        .await
        .unwrap();
    send_accepted(&mut sender, "still served").await;
    let delivery = step(kept.recv::<Value>()).await.unwrap();
    kept.accept(&delivery).await.unwrap();
}

/// Creates `queue` through the administration API with a rule `name` of `key` and `rights`.
fn create_queue_with_rule(broker: &Broker, queue: &str, name: &str, key: &str, rights: &str) {
    let response = put_queue_with_rule(broker, queue, (name, key, rights), "");
    assert!(response.starts_with("HTTP/1.1 201"), "{response}");
}

/// Replaces the rules of `queue` by one rule `name` of `key` and `rights`.
fn update_queue_rule(broker: &Broker, queue: &str, name: &str, key: &str, rights: &str) {
    let response = put_queue_with_rule(broker, queue, (name, key, rights), "If-Match: *\r\n");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
}

/// PUTs `queue` through the administration API with one rule (name, key, rights) and the
/// `extra` headers; returns the response.
fn put_queue_with_rule(
    broker: &Broker,
    queue: &str,
    (name, key, rights): (&str, &str, &str),
    extra: &str,
) -> String {
    let body = format!(
        "<entry xmlns=\"http://www.w3.org/2005/Atom\"><content type=\"application/xml\">\
         <QueueDescription xmlns=\"http://schemas.microsoft.com/netservices/2010/10/servicebus/connect\" \
         xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\"><AuthorizationRules>\
         <AuthorizationRule i:type=\"SharedAccessAuthorizationRule\"><ClaimType>SharedAccessKey</ClaimType>\
         <ClaimValue>None</ClaimValue><Rights><AccessRights>{rights}</AccessRights></Rights>\
         <KeyName>{name}</KeyName><PrimaryKey>{key}</PrimaryKey></AuthorizationRule>\
         </AuthorizationRules></QueueDescription></content></entry>"
    );
    let token = sign_token(
        "sb://localhost/",
        "manager",
        MANAGER_KEY,
        unix_secs() + 3600,
    );
    let request = format!(
        "PUT /{queue}?api-version=2021-05 HTTP/1.1\r\nHost: localhost\r\nAuthorization: {token}\r\n\
         Content-Type: application/atom+xml\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", broker.admin_port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// A connection authenticated with SASL PLAIN as `name` and a session on it.
async fn plain_connection(
    broker: &Broker,
    name: &str,
    key: &str,
) -> (ConnectionHandle<()>, SessionHandle<()>) {
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
    let session = step(Session::begin(&mut connection)).await.unwrap();
    (connection, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_entity_key_signs_in_with_sasl_plain_for_its_entity_only() {
    let (broker, _) = secured_broker();
    create_queue_with_rule(&broker, "q-plain-rule", "plain-app", ENTITY_KEY, "Send");
    let (_connection, mut session) = plain_connection(&broker, "plain-app", ENTITY_KEY).await;
    let mut own = step(Sender::attach(&mut session, "own", "q-plain-rule"))
        .await
        .unwrap();
    send_accepted(&mut own, "with the entity key").await;
    // Another queue, and receiving (the rule grants Send only), are refused (each on a
    // connection of its own, so one refusal cannot disturb the other's attach).
    let (_other, mut other) = plain_connection(&broker, "plain-app", ENTITY_KEY).await;
    let refused = step(Sender::attach(&mut other, "other", "queue.1")).await;
    assert!(
        format!("{refused:?}").contains("Unauthorized"),
        "{refused:?}"
    );
    let (_listen, mut listen) = plain_connection(&broker, "plain-app", ENTITY_KEY).await;
    let refused = step(Receiver::attach(&mut listen, "listen", "q-plain-rule")).await;
    assert!(
        format!("{refused:?}").contains("Unauthorized"),
        "{refused:?}"
    );
    // A wrong key of the rule does not sign in.
    let url = format!("amqp://127.0.0.1:{}", broker.port);
    let wrong = SaslProfile::Plain {
        username: "plain-app".to_owned(),
        password: SENDER_KEY.to_owned(),
    };
    let refused = step(
        Connection::builder()
            .container_id("wrong")
            .sasl_profile(wrong)
            .open(url.as_str()),
    )
    .await;
    assert!(refused.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sasl_plain_connection_loses_its_links_when_a_re_read_rotates_its_key() {
    let (broker, policies) = secured_broker();
    let (_connection, mut session) = plain_connection(&broker, "sender", SENDER_KEY).await;
    let mut sender = step(Sender::attach(&mut session, "rotated", "queue.1"))
        .await
        .unwrap();
    send_accepted(&mut sender, "before the rotation").await;
    let (_kept, mut kept_session) = plain_connection(&broker, "listener", LISTENER_KEY).await;
    let mut kept = step(Receiver::attach(&mut kept_session, "kept", "queue.1"))
        .await
        .unwrap();

    write_policies(&policies, ROTATED_SENDER_KEY);
    broker.hang_up();
    // No renewal to wait for: the link goes as soon as the rule changed.
    let detached = format!("{:?}", step(sender.on_detach()).await);
    assert!(detached.contains("UnauthorizedAccess"), "{detached}");
    assert!(
        detached.contains("'Send' claim(s) are required"),
        "{detached}"
    );
    // The old key signs in no more; the new one does, and the other rule's link was kept.
    let url = format!("amqp://127.0.0.1:{}", broker.port);
    let old = SaslProfile::Plain {
        username: "sender".to_owned(),
        password: SENDER_KEY.to_owned(),
    };
    let opened = Connection::builder()
        .container_id("old key")
        .sasl_profile(old)
        .open(url.as_str());
    assert!(step(opened).await.is_err());
    let (_rotated, mut rotated) = plain_connection(&broker, "sender", ROTATED_SENDER_KEY).await;
    let mut sender = step(Sender::attach(&mut rotated, "new key", "queue.1"))
        .await
        .unwrap();
    send_accepted(&mut sender, "with the rotated key").await;
    for expected in ["before the rotation", "with the rotated key"] {
        let delivery = step(kept.recv::<String>()).await.unwrap();
        assert_eq!(delivery.body(), expected);
        kept.accept(&delivery).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sasl_plain_connection_loses_its_links_when_its_entity_rule_narrows() {
    let (broker, _) = secured_broker();
    create_queue_with_rule(&broker, "q-narrowed", "app", ENTITY_KEY, "Listen");
    let (_connection, mut session) = plain_connection(&broker, "app", ENTITY_KEY).await;
    let mut receiver = step(Receiver::attach(&mut session, "narrowed", "q-narrowed"))
        .await
        .unwrap();

    update_queue_rule(&broker, "q-narrowed", "app", ENTITY_KEY, "Send");
    // Nothing is queued: the receive ends only when the broker detaches the link.
    let detached = format!("{:?}", step(receiver.recv::<Value>()).await);
    assert!(detached.contains("UnauthorizedAccess"), "{detached}");
    assert!(
        detached.contains("'Listen' claim(s) are required"),
        "{detached}"
    );
    // What the rule grants now still works on the same connection.
    let mut sender = step(Sender::attach(&mut session, "now-send", "q-narrowed"))
        .await
        .unwrap();
    send_accepted(&mut sender, "sent with the narrowed rule").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_tokens_and_a_thousand_failed_sign_ins_leave_other_clients_served() {
    let (broker, _) = secured_broker();
    // A client already at work, which must not notice.
    let (_kept, _kept_session, mut kept) =
        listening_until(&broker, "kept", unix_secs() + 3600).await;
    let (_connection, mut session) = anonymous(&broker).await;
    let mut cbs = cbs_links(&mut session).await;
    let queue = "sb://localhost/queue.1";
    let later = unix_secs() + 3600;
    let good = sign_token(queue, "listener", LISTENER_KEY, later);
    let hostile = [
        ("forged", sign_token(queue, "listener", SENDER_KEY, later)),
        ("expired", sign_token(queue, "listener", LISTENER_KEY, 1)),
        ("truncated", good[..good.len() / 2].to_owned()),
        (
            "oversized signature",
            format!(
                "SharedAccessSignature sr={queue}&sig={}&se={later}&skn=listener",
                "A".repeat(512 * 1024)
            ),
        ),
        (
            "oversized audience",
            sign_token(&"x".repeat(256 * 1024), "listener", LISTENER_KEY, later),
        ),
        (
            "another entity's",
            sign_token("sb://localhost/queue.2", "listener", LISTENER_KEY, later),
        ),
        ("no token", String::new()),
    ];
    for (what, token) in hostile {
        assert_eq!(put_raw(&mut cbs, queue, token).await, 401, "{what}");
    }
    let refused = step(Receiver::attach(&mut session, "no-grant", "queue.1")).await;
    assert!(
        format!("{refused:?}").contains("Unauthorized"),
        "{refused:?}"
    );
    // A thousand SASL PLAIN sign-ins with wrong keys are each refused.
    let url = format!("amqp://127.0.0.1:{}", broker.port);
    for attempt in 0..1_000 {
        let guess = SaslProfile::Plain {
            username: "listener".to_owned(),
            password: format!("guess {attempt}"),
        };
        let opened = Connection::builder()
            .container_id("guess")
            .sasl_profile(guess)
            .open(url.as_str());
        assert!(step(opened).await.is_err(), "guess {attempt} signed in");
    }
    let (_sending, mut sending) = plain_connection(&broker, "sender", SENDER_KEY).await;
    let mut sender = step(Sender::attach(&mut sending, "after", "queue.1"))
        .await
        .unwrap();
    send_accepted(&mut sender, "still served").await;
    let delivery = step(kept.recv::<Value>()).await.unwrap();
    kept.accept(&delivery).await.unwrap();
}
