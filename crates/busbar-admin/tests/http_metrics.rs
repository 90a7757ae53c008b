//! `GET /metrics` against the in-memory control: the Prometheus text (0.0.4, or OpenMetrics when
//! asked for) without a token, each entity's counts labelled by its name, and `/metrics` with an
//! `api-version` still the queue of that name (authorised as every entity request is). `GET /`
//! from a browser is sent to the explorer.

#![allow(clippy::unwrap_used)]

mod support;

use busbar_admin::atom::MessageCountDetails;
use hyper::Method;
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

    // A plain scrape gets Prometheus's 0.0.4 text format.
    let reply = client.with_token(None).get("/metrics").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.content_type(),
        "text/plain; version=0.0.4; charset=utf-8"
    );
    assert!(!reply.body.contains("# EOF"), "{}", reply.body);
    assert!(
        reply
            .body
            .contains("# TYPE servicebus_incoming_messages_total counter\n"),
        "{}",
        reply.body
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
    // Prometheus's own Accept asks for OpenMetrics first, and gets it.
    let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                      version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    let reply = client
        .with_token(None)
        .send(Method::GET, "/metrics", &[("accept", prometheus)], "")
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.content_type(),
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    assert!(reply.body.ends_with("# EOF\n"), "{}", reply.body);
    assert!(
        reply
            .body
            .contains("# TYPE servicebus_incoming_messages counter\n"),
        "{}",
        reply.body
    );
    // No token was asked for.
    assert_eq!(server.tokens.lock().unwrap().len(), 3);

    // With an api-version it is an entity request: a queue called `metrics`, authorised.
    let reply = client.with_token(None).get(&format!("/metrics{V}")).await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    server.shut_down().await;
}

#[tokio::test]
async fn a_browser_at_the_root_is_sent_to_the_explorer() {
    let server = TestServer::start().await;
    let client = server.client().with_token(None);
    let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    let reply = client
        .send(Method::GET, "/", &[("accept", browser)], "")
        .await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    assert_eq!(reply.headers["location"], "/explorer");
    // Anything else at the root is still the administration API's, which wants a token.
    for accept in ["application/xml", "*/*", "text/html;q=0"] {
        let reply = client
            .send(Method::GET, "/", &[("accept", accept)], "")
            .await;
        assert_eq!(reply.status, 401, "{accept}: {}", reply.body);
    }
    let reply = client
        .send(Method::GET, &format!("/{V}"), &[("accept", browser)], "")
        .await;
    assert_eq!(reply.status, 401, "{}", reply.body);
    server.shut_down().await;
}
