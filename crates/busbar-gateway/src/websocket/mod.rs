//! AMQP over WebSockets, as Service Bus serves it: `GET /$servicebus/websocket` upgraded (RFC
//! 6455) with subprotocol `AMQPWSB10`, the AMQP byte stream carried in binary messages. Every
//! SDK's WebSocket transport (Python `AmqpOverWebsocket`, JS `webSocketOptions`, Java
//! `AMQP_WEB_SOCKETS`, Go `NewWebSocketConn`) dials it, over TLS in production and plain with
//! the emulator's connection string.
//!
//! [`is_upgrade`] tells such a request from the administration API's; [`upgrade`] answers it
//! (101, or the error) and, once hyper hands the connection over, gives the AMQP side a plain
//! byte stream while `bridge` moves bytes between it and the WebSocket messages.

mod bridge;

use std::future::Future;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::header::{
    CONNECTION, HeaderMap, HeaderValue, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY,
    SEC_WEBSOCKET_PROTOCOL, SEC_WEBSOCKET_VERSION, UPGRADE,
};
use hyper::{Method, Request, Response, StatusCode};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::rewind::BoxedIo;

/// The path Service Bus serves WebSockets on.
pub const PATH: &str = "/$servicebus/websocket";

/// The subprotocols accepted, in order of preference: Service Bus's, and the one some
/// WebSocket samples offer for AMQP.
const SUBPROTOCOLS: [&str; 2] = ["AMQPWSB10", "amqp"];

/// The largest WebSocket message or frame read: one AMQP frame (the broker's maximum frame
/// size is 1 MiB) with room for a client that packs a few into one message.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Whether `request` asks for the AMQP WebSocket (its path, whatever its query); such a
/// request is answered by [`upgrade`], never by the administration API.
pub fn is_upgrade<B>(request: &Request<B>) -> bool {
    request.uri().path() == PATH
}

/// Answers a request for [`PATH`]: `101 Switching Protocols` with the accept key and the
/// chosen subprotocol when it is a valid WebSocket upgrade (then `on_open` receives the AMQP
/// byte stream once hyper has written the response), or the error that says why not: 405 for
/// another method, 426 for another WebSocket version, 400 for a missing key or upgrade header
/// or an unsupported subprotocol.
pub fn upgrade<F>(
    mut request: Request<Incoming>,
    on_open: impl FnOnce(BoxedIo) -> F + Send + 'static,
) -> Response<Full<Bytes>>
where
    F: Future<Output = ()> + Send + 'static,
{
    if request.method() != Method::GET {
        return refusal(
            StatusCode::METHOD_NOT_ALLOWED,
            "the WebSocket endpoint takes GET",
        );
    }
    let headers = request.headers();
    if !has_token(headers, &UPGRADE, "websocket") || !has_token(headers, &CONNECTION, "upgrade") {
        return refusal(
            StatusCode::BAD_REQUEST,
            "a WebSocket upgrade request is expected",
        );
    }
    if headers
        .get(SEC_WEBSOCKET_VERSION)
        .map(HeaderValue::as_bytes)
        != Some(b"13")
    {
        let mut response = refusal(
            StatusCode::UPGRADE_REQUIRED,
            "WebSocket version 13 is required",
        );
        response
            .headers_mut()
            .insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        return response;
    }
    let Some(key) = headers.get(SEC_WEBSOCKET_KEY) else {
        return refusal(StatusCode::BAD_REQUEST, "Sec-WebSocket-Key is missing");
    };
    let Some(subprotocol) = chosen_subprotocol(headers) else {
        return refusal(StatusCode::BAD_REQUEST, "the subprotocol must be AMQPWSB10");
    };
    let accept = derive_accept_key(key.as_bytes());
    let upgraded = hyper::upgrade::on(&mut request);
    tokio::spawn(bridge::run(upgraded, on_open));
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let answer = response.headers_mut();
    answer.insert(UPGRADE, HeaderValue::from_static("websocket"));
    answer.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    answer.insert(
        SEC_WEBSOCKET_PROTOCOL,
        HeaderValue::from_static(subprotocol),
    );
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        answer.insert(SEC_WEBSOCKET_ACCEPT, accept);
    }
    response
}

/// Whether the comma-separated header `name` holds `token`, case-insensitively.
fn has_token(headers: &HeaderMap, name: &hyper::header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|value| {
        value.to_str().is_ok_and(|value| {
            value
                .split(',')
                .any(|item| item.trim().eq_ignore_ascii_case(token))
        })
    })
}

/// The first of [`SUBPROTOCOLS`] the client offered.
fn chosen_subprotocol(headers: &HeaderMap) -> Option<&'static str> {
    SUBPROTOCOLS
        .into_iter()
        .find(|ours| has_token(headers, &SEC_WEBSOCKET_PROTOCOL, ours))
}

fn refusal(status: StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use hyper::header::{HeaderMap, HeaderValue, SEC_WEBSOCKET_PROTOCOL};

    use super::chosen_subprotocol;

    fn offering(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(SEC_WEBSOCKET_PROTOCOL, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn service_bus_subprotocol_is_preferred_and_others_refused() {
        assert_eq!(
            chosen_subprotocol(&offering("amqp, AMQPWSB10")),
            Some("AMQPWSB10")
        );
        assert_eq!(
            chosen_subprotocol(&offering("amqpwsb10")),
            Some("AMQPWSB10")
        );
        assert_eq!(chosen_subprotocol(&offering("amqp")), Some("amqp"));
        assert_eq!(chosen_subprotocol(&offering("mqtt")), None);
        assert_eq!(chosen_subprotocol(&HeaderMap::new()), None);
    }
}
