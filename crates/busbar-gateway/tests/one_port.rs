//! One port, every protocol: AMQP, AMQP inside TLS, HTTP, HTTPS, and AMQP over WebSockets
//! (plain and inside TLS) each reach their handler on the same listener, told apart by their
//! first bytes.

#![allow(clippy::unwrap_used)]

mod support;

use busbar_gateway::Limits;
use futures_util::{SinkExt, StreamExt};
use support::{AMQP_HEADER, TestGateway, amqp_echo, http_get};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::client_async;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;

#[tokio::test]
async fn amqp_and_http_are_told_apart_in_the_clear_and_inside_tls() {
    let gateway = TestGateway::start(Limits::default()).await;
    assert_eq!(amqp_echo(gateway.tcp().await).await, AMQP_HEADER);
    assert_eq!(amqp_echo(gateway.tls().await.unwrap()).await, AMQP_HEADER);
    assert_eq!(http_get(gateway.tcp().await).await, "http");
    assert_eq!(http_get(gateway.tls().await.unwrap()).await, "https");
}

/// Upgrades `stream` to the AMQP WebSocket and checks that binary messages are echoed as one
/// byte stream (two messages sent, their bytes read back whatever the message boundaries).
async fn websocket_echo<S: AsyncRead + AsyncWrite + Unpin>(stream: S) {
    let mut request = "ws://localhost/$servicebus/websocket"
        .into_client_request()
        .unwrap();
    request.headers_mut().insert(
        "sec-websocket-protocol",
        HeaderValue::from_static("AMQPWSB10"),
    );
    let (mut socket, response) = client_async(request, stream).await.unwrap();
    assert_eq!(response.headers()["sec-websocket-protocol"], "AMQPWSB10");
    socket.send(Message::binary(&b"AMQP"[..])).await.unwrap();
    socket
        .send(Message::binary(&b"\x00\x01\x00\x00"[..]))
        .await
        .unwrap();
    let mut echoed = Vec::new();
    while echoed.len() < AMQP_HEADER.len() {
        match socket.next().await.unwrap().unwrap() {
            Message::Binary(data) => echoed.extend_from_slice(&data),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(echoed, AMQP_HEADER);
    socket.close(None).await.unwrap();
}

#[tokio::test]
async fn amqp_over_websockets_in_the_clear_and_inside_tls() {
    let gateway = TestGateway::start(Limits::default()).await;
    websocket_echo(gateway.tcp().await).await;
    websocket_echo(gateway.tls().await.unwrap()).await;
}
