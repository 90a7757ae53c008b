//! The HTTP data plane's server side against the in-memory control: a long poll ends with 204
//! when the server shuts down, and malformed sends (BrokerProperties, batches, sizes, waits,
//! lock tokens) get the service's 4xx before the control is asked, while the server keeps
//! serving. The broker end to end is `tests/http_data_plane` of the workspace.

#![allow(clippy::unwrap_used)]

mod support;

use hyper::Method;
use support::TestServer;

/// A request and the status it must get: method, path, headers, body, status.
type Case<'a> = (Method, &'a str, Vec<(&'a str, &'a str)>, &'a str, u16);

#[tokio::test]
async fn a_shutdown_ends_a_long_poll_with_no_content() {
    let server = TestServer::start().await;
    let client = server.client();
    let waiting = tokio::spawn(async move {
        client
            .send(Method::POST, "/q/messages/head?timeout=3600", &[], "")
            .await
    });
    server.control.receive_waiting.notified().await;
    server.shut_down().await;
    let reply = waiting.await.unwrap();
    assert_eq!(reply.status, 204, "{}", reply.body);
}

#[tokio::test]
async fn a_receive_waits_its_timeout_and_finds_nothing() {
    let server = TestServer::start().await;
    let reply = server
        .client()
        .send(Method::DELETE, "/q/messages/head?timeout=0", &[], "")
        .await;
    assert_eq!(reply.status, 204, "{}", reply.body);
}

#[tokio::test]
async fn malformed_requests_get_4xx_and_the_server_keeps_serving() {
    let server = TestServer::start().await;
    let client = server.client();
    let batch = ("content-type", "application/vnd.microsoft.servicebus.json");
    let oversize = "x".repeat(256 * 1024 + 1);
    let cases: [Case<'_>; 9] = [
        (
            Method::POST,
            "/q/messages",
            vec![("brokerproperties", "{")],
            "",
            400,
        ),
        (
            Method::POST,
            "/q/messages",
            vec![("brokerproperties", "[1]")],
            "",
            400,
        ),
        (
            Method::POST,
            "/q/messages",
            vec![("brokerproperties", r#"{"ScheduledEnqueueTimeUtc":"soon"}"#)],
            "",
            400,
        ),
        (Method::POST, "/q/messages", vec![batch], "[{", 400),
        (Method::POST, "/q/messages", vec![batch], "[]", 400),
        (Method::POST, "/q/messages", vec![], &oversize, 413),
        (Method::POST, "/q/messages/head?timeout=-1", vec![], "", 400),
        (Method::DELETE, "/q/messages/1/not-a-guid", vec![], "", 400),
        // Well formed, but this control serves no sends.
        (Method::POST, "/q/messages", vec![], "fine", 404),
    ];
    for (method, path, headers, body, status) in cases {
        let reply = client.send(method.clone(), path, &headers, body).await;
        assert_eq!(reply.status, status, "{method} {path}: {}", reply.body);
        assert!(reply.body.contains("<Error>"), "{}", reply.body);
    }
    let unauthorized = client
        .with_token(None)
        .send(Method::POST, "/q/messages", &[], "x")
        .await;
    assert_eq!(unauthorized.status, 401);
    // A Send-only rule may send, but not receive or settle, and not learn what exists.
    let sender = client.with_token(Some(&support::sender_token()));
    let lock = "/nope/messages/1/00000000-0000-0000-0000-000000000001";
    for (method, path) in [
        (Method::POST, "/nope/messages/head"),
        (Method::DELETE, "/nope/messages/head"),
        (Method::DELETE, lock),
        (Method::POST, lock),
    ] {
        let reply = sender.send(method.clone(), path, &[], "").await;
        assert_eq!(reply.status, 401, "{method} {path}: {}", reply.body);
        assert!(reply.body.contains("the Listen claim"), "{}", reply.body);
    }
    let sent = sender.send(Method::POST, "/q/messages", &[], "x").await;
    assert_ne!(sent.status, 401, "{}", sent.body);
    server.assert_serving().await;
}
