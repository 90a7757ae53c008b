//! The server against clients that are wrong or hostile: no or bad tokens, unknown paths and
//! methods, a 100 MB body, a billion-laughs body, headers or bodies sent too slowly, a broker
//! that does not answer, too many connections, shutdown with requests in flight. After each,
//! the server still serves.
//!
//! Timeouts are observed on tokio's paused clock: when every task waits, the clock jumps to
//! the next timer, so a 10 s timeout takes no real time and nothing races a real sleep.

#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use hyper::Method;
use support::{
    TestServer, expired_token, forged_token, queue_body, raw_exchange, read_to_close, sender_token,
    status_of, valid_token,
};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::Instant;

const V: &str = "?api-version=2021-05";

#[tokio::test]
async fn requests_without_a_valid_token_get_a_401_saying_why() {
    let server = TestServer::start().await;
    let client = server.client();
    let path = format!("/q{V}");
    let missing = client.with_token(None).put(&path, &queue_body("")).await;
    assert_eq!((missing.status, missing.body.as_str()), (401, ""));
    for (token, why) in [
        (None, ""),
        (
            Some("Bearer eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9"),
            "<Code>401</Code><Detail>MalformedToken: ",
        ),
        (
            Some(expired_token().as_str()),
            "<Detail>expired TrackingId:",
        ),
        (Some(forged_token().as_str()), "<Detail>signature mismatch"),
        (
            Some("SharedAccessSignature sr=x&sig=y&se=4102444800&skn=Other"),
            "<Detail>unknown key",
        ),
        (Some(sender_token().as_str()), "<Detail>the Manage claim"),
    ] {
        let reply = client.with_token(token).put(&path, &queue_body("")).await;
        assert_eq!(reply.status, 401, "{token:?}");
        assert!(reply.body.contains(why), "{token:?}: {}", reply.body);
        // Unknown paths too: nothing is told to a caller without a token.
        let reply = client.with_token(token).get("/$Resources/Nope").await;
        assert_eq!(reply.status, 401, "{token:?}");
    }
    assert_eq!(client.get(&path).await.status, 200, "nothing was created");
    assert!(!client.get(&path).await.body.contains("<entry"));

    // A forwarding PUT's supplementary tokens are checked when present, whatever their case.
    assert_eq!(
        client
            .put(&format!("/q-min{V}"), &queue_body(""))
            .await
            .status,
        201
    );
    let forwarding = queue_body("<ForwardTo>q-min</ForwardTo>");
    for header in [
        "ServiceBusSupplementaryAuthorization",
        "Servicebusdlqsupplementaryauthorization",
    ] {
        let forged = forged_token();
        let reply = client
            .send(
                Method::PUT,
                &path,
                &[(header, forged.as_str())],
                &forwarding,
            )
            .await;
        assert_eq!(reply.status, 401, "{header}");
    }
    let valid = valid_token();
    let reply = client
        .send(
            Method::PUT,
            &path,
            &[("ServiceBusSupplementaryAuthorization", valid.as_str())],
            &forwarding,
        )
        .await;
    assert_eq!(reply.status, 201, "{}", reply.body);
    server.assert_serving().await;
}

#[tokio::test]
async fn unknown_paths_are_404_and_wrong_methods_405() {
    let server = TestServer::start().await;
    let client = server.client();
    for path in [
        "/",
        "/$Resources/Nope",
        "/$Resources",
        "/$cbs",
        "/$namespaceinfo/x",
    ] {
        let reply = client.get(path).await;
        assert_eq!(reply.status, 404, "{path}");
        assert!(
            reply.body.starts_with("<Error><Code>404</Code>"),
            "{}",
            reply.body
        );
    }
    for (method, path, allow) in [
        (Method::PUT, "/$Resources/Queues", "GET"),
        (Method::DELETE, "/$namespaceinfo", "GET"),
        (Method::DELETE, "/t/Subscriptions", "GET"),
        (Method::POST, "/q", "GET, PUT, DELETE"),
        (
            Method::PATCH,
            "/t/Subscriptions/s/Rules/r",
            "GET, PUT, DELETE",
        ),
        (Method::HEAD, "/$Resources/Topics", "GET"),
    ] {
        let reply = client.send(method.clone(), path, &[], "").await;
        assert_eq!(reply.status, 405, "{method} {path}");
        assert_eq!(reply.headers.get("allow").unwrap(), allow);
    }
    server.assert_serving().await;
}

#[tokio::test]
async fn an_announced_100_mb_body_is_refused_unread() {
    let server = TestServer::start().await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "PUT /big{V} HTTP/1.1\r\nHost: localhost\r\nAuthorization: {}\r\nContent-Length: {}\r\n\r\n",
        valid_token(),
        100 * 1024 * 1024
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&[b'<'; 64 * 1024]).await.unwrap();
    // The answer comes after 64 KiB of the 100 MB: the server did not wait for the rest.
    let response = read_to_close(&mut stream).await;
    assert_eq!(status_of(&response), Some(413), "{response}");
    assert!(
        response.to_ascii_lowercase().contains("connection: close"),
        "{response}"
    );
    assert!(response.contains("larger than 1048576 bytes"), "{response}");
    server.assert_serving().await;
}

#[tokio::test]
async fn a_chunked_body_is_cut_off_at_the_limit() {
    let server = TestServer::start().await;
    let stream = TcpStream::connect(server.addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let head = format!(
        "PUT /big{V} HTTP/1.1\r\nHost: localhost\r\nAuthorization: {}\r\nTransfer-Encoding: chunked\r\n\r\n",
        valid_token()
    );
    writer.write_all(head.as_bytes()).await.unwrap();
    // Up to 100 MB in 64 KiB chunks, until the server stops taking them.
    let sender = tokio::spawn(async move {
        let chunk = format!("10000\r\n{}\r\n", "<".repeat(0x10000));
        let mut sent = 0usize;
        while sent < 100 * 1024 * 1024 {
            if writer.write_all(chunk.as_bytes()).await.is_err() {
                break;
            }
            sent += 0x10000;
        }
        sent
    });
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::io::AsyncReadExt::read(&mut reader, &mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => received.extend_from_slice(&buffer[..read]),
        }
    }
    let response = String::from_utf8_lossy(&received);
    assert_eq!(status_of(&response), Some(413), "{response}");
    let sent = sender.await.unwrap();
    assert!(sent < 100 * 1024 * 1024, "the server read all {sent} bytes");
    server.assert_serving().await;
}

#[tokio::test]
async fn a_billion_laughs_body_is_a_400() {
    let server = TestServer::start().await;
    let mut dtd = String::from(r#"<!ENTITY lol0 "lol">"#);
    for level in 1..10 {
        let refs = format!("&lol{};", level - 1).repeat(10);
        dtd.push_str(&format!(r#"<!ENTITY lol{level} "{refs}">"#));
    }
    let body = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE entry [{dtd}]>{}",
        queue_body("<UserMetadata>&lol9;</UserMetadata>").replacen(
            r#"<?xml version="1.0" encoding="utf-8"?>"#,
            "",
            1
        )
    );
    let reply = server.client().put(&format!("/laughs{V}"), &body).await;
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(
        reply
            .body
            .contains("document type declarations are not accepted"),
        "{}",
        reply.body
    );
    server.assert_serving().await;
}

#[tokio::test]
async fn malformed_http_is_answered_and_closed() {
    let server = TestServer::start().await;
    for request in [
        &b"GARBAGE\r\n\r\n"[..],
        b"GET /q HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n",
        b"GET /q HTTP/1.1\r\nBad Header\r\n\r\n",
    ] {
        let response = raw_exchange(server.addr, request).await;
        assert_eq!(status_of(&response), Some(400), "{response}");
    }
    let huge_header = format!(
        "GET /q HTTP/1.1\r\nHost: x\r\nX-Pad: {}\r\n\r\n",
        "a".repeat(128 * 1024)
    );
    let response = raw_exchange(server.addr, huge_header.as_bytes()).await;
    assert_eq!(status_of(&response), Some(431), "{response}");
    server.assert_serving().await;
}

#[tokio::test(start_paused = true)]
async fn headers_sent_too_slowly_close_the_connection() {
    let server = TestServer::start_with(|config| {
        config.header_read_timeout = Duration::from_secs(10);
    })
    .await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"GET /$namespaceinfo HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
        .await
        .unwrap();
    let started = Instant::now();
    let response = read_to_close(&mut stream).await;
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(10), "closed after {waited:?}");
    assert!(waited < Duration::from_secs(11), "closed after {waited:?}");
    assert!(
        status_of(&response).is_none_or(|status| status == 408),
        "{response}"
    );
    server.assert_serving().await;
}

#[tokio::test(start_paused = true)]
async fn an_idle_connection_is_closed_by_the_header_timeout() {
    let server = TestServer::start_with(|config| {
        config.header_read_timeout = Duration::from_secs(10);
    })
    .await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    assert_eq!(read_to_close(&mut stream).await, "");
    assert!(started.elapsed() >= Duration::from_secs(10));
    server.assert_serving().await;
}

#[tokio::test(start_paused = true)]
async fn a_body_sent_too_slowly_gets_a_408() {
    let server = TestServer::start_with(|config| {
        config.request_timeout = Duration::from_secs(20);
    })
    .await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "PUT /slow{V} HTTP/1.1\r\nHost: localhost\r\nAuthorization: {}\r\nContent-Length: 100\r\n\r\n<entry",
        valid_token()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let response = read_to_close(&mut stream).await;
    assert!(started.elapsed() >= Duration::from_secs(20));
    assert_eq!(status_of(&response), Some(408), "{response}");
    assert!(
        response.to_ascii_lowercase().contains("connection: close"),
        "{response}"
    );
    server.assert_serving().await;
}

#[tokio::test(start_paused = true)]
async fn a_broker_that_does_not_answer_gets_a_503_at_the_deadline() {
    let server = TestServer::start_with(|config| {
        config.request_timeout = Duration::from_secs(20);
    })
    .await;
    let held = server.control.hold_namespace().await;
    let started = Instant::now();
    let reply = server.client().get(&format!("/$namespaceinfo{V}")).await;
    assert!(started.elapsed() >= Duration::from_secs(20));
    assert_eq!(reply.status, 503);
    assert!(reply.body.contains("SubCode=50004"), "{}", reply.body);
    drop(held);
    server.assert_serving().await;
}

#[tokio::test(start_paused = true)]
async fn connections_beyond_the_limit_wait_for_a_free_slot() {
    let server = TestServer::start_with(|config| {
        config.max_connections = 1;
        config.header_read_timeout = Duration::from_secs(10);
    })
    .await;
    // An idle connection takes the only slot until the header timeout closes it.
    let _idle = TcpStream::connect(server.addr).await.unwrap();
    let started = Instant::now();
    server.assert_serving().await;
    assert!(started.elapsed() >= Duration::from_secs(10));
}

#[tokio::test]
async fn shutdown_answers_the_request_in_flight_then_stops() {
    let server = TestServer::start().await;
    let held = server.control.hold_namespace().await;
    let client = server.client();
    let in_flight = tokio::spawn(async move { client.get(&format!("/$namespaceinfo{V}")).await });
    server.control.namespace_called().await;
    let addr = server.addr;
    let shutting_down = tokio::spawn(server.shut_down());
    drop(held);
    let reply = in_flight.await.unwrap();
    assert_eq!(reply.status, 200);
    shutting_down.await.unwrap();
    // Nobody listens any more.
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test(start_paused = true)]
async fn shutdown_gives_up_on_a_stuck_request_after_the_grace_period() {
    let server = TestServer::start_with(|config| {
        config.shutdown_grace = Duration::from_secs(5);
        config.request_timeout = Duration::from_secs(600);
    })
    .await;
    let _held = server.control.hold_namespace().await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let request = format!(
        "GET /$namespaceinfo{V} HTTP/1.1\r\nHost: localhost\r\nAuthorization: {}\r\n\r\n",
        valid_token()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    server.control.namespace_called().await;
    let started = Instant::now();
    server.shut_down().await;
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(5), "{waited:?}");
    assert!(waited < Duration::from_secs(6), "{waited:?}");
    assert_eq!(
        read_to_close(&mut stream).await,
        "",
        "the stuck request was dropped"
    );
}
