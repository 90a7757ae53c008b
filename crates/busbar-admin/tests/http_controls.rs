//! Busbar's own controls under `/$busbar/` against the in-memory control: purge, reset, the
//! virtual clock and fault injection, their JSON in and out, their errors, the 404s of the
//! clock and faults without `--test-controls`, and `"testControls"` in `/health`.

#![allow(clippy::unwrap_used)]

mod support;

use busbar_admin::atom::MessageCountDetails;
use busbar_admin::control::Fault;
use hyper::Method;
use serde_json::{Value, json};
use support::{Client, Reply, TestServer, queue_body, subscription_body, text_of, topic_body};

const V: &str = "?api-version=2021-05";

async fn post(client: &Client, path: &str, body: &str) -> Reply {
    client.send(Method::POST, path, &[], body).await
}

/// The reply's JSON, checking its content type.
fn json_of(reply: &Reply) -> Value {
    assert_eq!(reply.content_type(), "application/json", "{}", reply.body);
    serde_json::from_str(&reply.body).unwrap()
}

/// Checks a JSON error with `status` whose message contains `needle`.
fn assert_error(reply: &Reply, status: u16, needle: &str) {
    assert_eq!(reply.status, status, "{}", reply.body);
    let error = json_of(reply)["error"].as_str().unwrap().to_owned();
    assert!(error.contains(needle), "{error:?} lacks {needle:?}");
}

/// A server with queue `q`, topic `t` and subscription `t/Subscriptions/s`.
async fn server_with_entities() -> TestServer {
    let server = TestServer::start().await;
    let client = server.client();
    for (path, body) in [
        ("/q", queue_body("")),
        ("/t", topic_body("")),
        ("/t/Subscriptions/s", subscription_body("")),
    ] {
        let reply = client.put(&format!("{path}{V}"), &body).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    server
}

fn counts(active: u64, dead_letter: u64, scheduled: u64) -> MessageCountDetails {
    MessageCountDetails {
        active,
        dead_letter,
        scheduled,
        ..MessageCountDetails::default()
    }
}

#[tokio::test]
async fn health_says_whether_test_controls_are_on() {
    let server = TestServer::start().await;
    let client = server.client().with_token(None);
    let off = client.get("/health").await;
    assert_eq!(off.status, 200);
    assert_eq!(
        json_of(&off),
        json!({"status": "healthy", "message": "Service is healthy.", "testControls": false})
    );
    server.control.enable_test_controls();
    let on = client.get("/health").await;
    assert_eq!(json_of(&on)["testControls"], json!(true));
}

#[tokio::test]
async fn purge_answers_how_many_messages_went() {
    let server = server_with_entities().await;
    let client = server.client();
    server.control.set_counts("q", counts(5, 2, 1));

    let dead_letters = post(&client, "/$busbar/purge/q?deadLetter=true", "").await;
    assert_eq!(dead_letters.status, 200, "{}", dead_letters.body);
    assert_eq!(json_of(&dead_letters), json!({"purged": 2}));
    let queue = client.get(&format!("/q{V}")).await;
    assert_eq!(text_of(&queue.body, "DeadLetterMessageCount"), Some("0"));
    assert_eq!(text_of(&queue.body, "ActiveMessageCount"), Some("5"));

    let rest = post(&client, "/$busbar/purge/q?deadLetter=false", "").await;
    assert_eq!(json_of(&rest), json!({"purged": 6}));
    let queue = client.get(&format!("/q{V}")).await;
    assert_eq!(text_of(&queue.body, "MessageCount"), Some("0"));

    // A subscription, `Subscriptions` in any case.
    server
        .control
        .set_counts("t/Subscriptions/s", counts(3, 0, 0));
    let subscription = post(&client, "/$busbar/purge/t/subscriptions/s", "").await;
    assert_eq!(json_of(&subscription), json!({"purged": 3}));

    // Purge is there without --test-controls; nothing to purge is 0.
    let empty = post(&client, "/$busbar/PURGE/q", "").await;
    assert_eq!(json_of(&empty), json!({"purged": 0}));
}

#[tokio::test]
async fn purge_refusals() {
    let server = server_with_entities().await;
    let client = server.client();
    assert_error(
        &post(&client, "/$busbar/purge/missing", "").await,
        404,
        "\"missing\"",
    );
    assert_error(
        &post(&client, "/$busbar/purge/t/Subscriptions/nope", "").await,
        404,
        "t/Subscriptions/nope",
    );
    assert_error(
        &post(&client, "/$busbar/purge/q/$DeadLetterQueue", "").await,
        400,
        "reserved",
    );
    assert_error(
        &post(&client, "/$busbar/purge/q%40x", "").await,
        400,
        "not valid",
    );
    assert_error(
        &post(&client, "/$busbar/purge/q?deadLetter=yes", "").await,
        400,
        "deadLetter takes true or false",
    );
    let wrong_method = client.get("/$busbar/purge/q").await;
    assert_error(&wrong_method, 405, "only POST");
    assert_eq!(wrong_method.headers["allow"], "POST");
    assert_error(
        &post(&client, "/$busbar/purge", "").await,
        404,
        "no control",
    );
    assert_error(&client.get("/$busbar/nothing").await, 404, "no control");
}

#[tokio::test]
async fn reset_empties_every_entity() {
    let server = server_with_entities().await;
    let client = server.client();
    server.control.set_counts("q", counts(1, 1, 1));
    server
        .control
        .set_counts("t/Subscriptions/s", counts(4, 0, 0));
    let reply = post(&client, "/$busbar/reset", "").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(json_of(&reply), json!({}));
    assert_eq!(server.control.resets(), 1);
    let subscription = client.get(&format!("/t/Subscriptions/s{V}")).await;
    assert_eq!(text_of(&subscription.body, "MessageCount"), Some("0"));
    assert_error(&client.get("/$busbar/reset").await, 405, "only POST");
}

#[tokio::test]
async fn the_clock_and_faults_do_not_exist_without_test_controls() {
    let server = server_with_entities().await;
    let client = server.client();
    let fault = r#"{"kind":"server-busy","count":1}"#;
    for reply in [
        client.get("/$busbar/clock").await,
        post(&client, "/$busbar/clock", "").await,
        post(&client, "/$busbar/clock/advance?by=PT1H", "").await,
        post(&client, "/$busbar/faults/q", fault).await,
        client.get("/$busbar/faults/q").await,
    ] {
        assert_error(&reply, 404, "--test-controls");
    }
    assert!(server.control.faults().is_empty());
}

#[tokio::test]
async fn the_virtual_clock() {
    let server = TestServer::start().await;
    server.control.enable_test_controls();
    let client = server.client();
    let start = client.get("/$busbar/clock").await;
    assert_eq!(start.status, 200, "{}", start.body);
    assert_eq!(
        json_of(&start),
        json!({"now": "2026-01-01T00:00:00.0000000Z", "offset": "PT0S"})
    );
    let steps = [
        ("PT1H30M", "2026-01-01T01:30:00.0000000Z", "PT1H30M"),
        ("90s", "2026-01-01T01:31:30.0000000Z", "PT1H31M30S"),
        ("2h", "2026-01-01T03:31:30.0000000Z", "PT3H31M30S"),
        ("15m", "2026-01-01T03:46:30.0000000Z", "PT3H46M30S"),
        ("500ms", "2026-01-01T03:46:30.5000000Z", "PT3H46M30.5S"),
        ("P1D", "2026-01-02T03:46:30.5000000Z", "P1DT3H46M30.5S"),
    ];
    for (by, now, offset) in steps {
        let reply = post(&client, &format!("/$busbar/clock/advance?by={by}"), "").await;
        assert_eq!(reply.status, 200, "{by}: {}", reply.body);
        assert_eq!(
            json_of(&reply),
            json!({"now": now, "offset": offset}),
            "{by}"
        );
    }
    let read = client.get("/$busbar/clock").await;
    assert_eq!(json_of(&read)["offset"], json!("P1DT3H46M30.5S"));

    for garbage in ["soon", "1.5h", "-1h", "PT", "90", "2%20h"] {
        let reply = post(&client, &format!("/$busbar/clock/advance?by={garbage}"), "").await;
        assert_error(&reply, 400, "is not a duration");
    }
    assert_error(
        &post(&client, "/$busbar/clock/advance", "").await,
        400,
        "?by=",
    );
    assert_error(
        &client.get("/$busbar/clock/advance?by=1h").await,
        405,
        "only POST",
    );
    assert_error(&post(&client, "/$busbar/clock", "").await, 405, "only GET");
    // Refused requests left the clock alone.
    let read = client.get("/$busbar/clock").await;
    assert_eq!(json_of(&read)["offset"], json!("P1DT3H46M30.5S"));
}

#[tokio::test]
async fn faults_are_injected() {
    let server = server_with_entities().await;
    server.control.enable_test_controls();
    let client = server.client();
    let busy = post(
        &client,
        "/$busbar/faults/q",
        r#"{"kind":"server-busy","count":3}"#,
    )
    .await;
    assert_eq!(busy.status, 200, "{}", busy.body);
    assert_eq!(json_of(&busy), json!({}));
    let lock_lost = post(
        &client,
        "/$busbar/faults/t/SUBSCRIPTIONS/s",
        r#"{"count":1,"kind":"lock-lost"}"#,
    )
    .await;
    assert_eq!(json_of(&lock_lost), json!({}));
    assert_eq!(
        server.control.faults(),
        vec![
            ("q".to_owned(), Fault::ServerBusy { count: 3 }),
            ("t/Subscriptions/s".to_owned(), Fault::LockLost { count: 1 }),
        ]
    );

    for body in [
        "",
        "{",
        r#"{"kind":"server-busy"}"#,
        r#"{"kind":"slow","count":1}"#,
        r#"{"kind":"lock-lost","count":-2}"#,
        r#"{"kind":"lock-lost","count":1,"extra":true}"#,
    ] {
        let reply = post(&client, "/$busbar/faults/q", body).await;
        assert_error(&reply, 400, "the body must be");
    }
    assert_error(
        &post(
            &client,
            "/$busbar/faults/nowhere",
            r#"{"kind":"lock-lost","count":1}"#,
        )
        .await,
        404,
        "\"nowhere\"",
    );
    let huge = format!(
        r#"{{"kind":"lock-lost","count":1,"pad":"{}"}}"#,
        "x".repeat(4096)
    );
    let too_large = post(&client, "/$busbar/faults/q", &huge).await;
    assert_error(&too_large, 413, "larger than 1024 bytes");
    assert_eq!(server.control.faults().len(), 2);
}

#[tokio::test]
async fn controls_need_a_valid_token() {
    let server = server_with_entities().await;
    server.control.enable_test_controls();
    let anonymous = server.client().with_token(None);
    for reply in [
        post(&anonymous, "/$busbar/reset", "").await,
        post(&anonymous, "/$busbar/purge/q", "").await,
        anonymous.get("/$busbar/clock").await,
        anonymous.get("/$busbar/nothing").await,
    ] {
        assert_eq!(reply.status, 401, "{}", reply.body);
    }
    let forged = server.client().with_token(Some(&support::forged_token()));
    assert_eq!(post(&forged, "/$busbar/reset", "").await.status, 401);
    assert_eq!(server.control.resets(), 0);
}
