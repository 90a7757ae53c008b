//! `GET /metrics` against the in-memory control: the Prometheus text without a token, each
//! entity's counts labelled by its name, and `/metrics` with an `api-version` still the queue
//! of that name (authorised as every entity request is).

#![allow(clippy::unwrap_used)]

mod support;

use busbar_admin::atom::MessageCountDetails;
use support::{TestServer, queue_body, subscription_body, topic_body};

const V: &str = "?api-version=2021-05";

fn counts(active: u64, dead_letter: u64, scheduled: u64) -> MessageCountDetails {
    MessageCountDetails {
        active,
        dead_letter,
        scheduled,
        ..MessageCountDetails::default()
    }
}

#[tokio::test]
async fn metrics_are_scraped_without_a_token() {
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
    server.control.set_counts("q", counts(2, 1, 0));
    server
        .control
        .set_counts("t/Subscriptions/s", counts(0, 0, 3));

    let reply = client.with_token(None).get("/metrics").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert!(
        reply
            .content_type()
            .starts_with("application/openmetrics-text"),
        "{}",
        reply.content_type()
    );
    for line in [
        r#"servicebus_active_messages{entity_name="q"} 2"#,
        r#"servicebus_dead_lettered_messages{entity_name="q"} 1"#,
        r#"servicebus_messages{entity_name="q"} 3"#,
        r#"servicebus_scheduled_messages{entity_name="t/Subscriptions/s"} 3"#,
        r#"servicebus_scheduled_messages{entity_name="t"} 0"#,
        r#"servicebus_incoming_messages_total{entity_name="q"} 0"#,
        "servicebus_active_connections 0",
    ] {
        assert!(
            reply.body.lines().any(|l| l == line),
            "{line:?} missing from\n{}",
            reply.body
        );
    }
    // No token was asked for.
    assert_eq!(server.tokens.lock().unwrap().len(), 3);

    // With an api-version it is an entity request: a queue called `metrics`, authorised.
    let reply = client.with_token(None).get(&format!("/metrics{V}")).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    server.shut_down().await;
}
