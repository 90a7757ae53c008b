//! The bytes of an upgraded WebSocket connection: binary messages in become a byte stream the
//! AMQP driver reads, and what it writes goes out as binary messages. tungstenite enforces the
//! rules of RFC 6455 (client frames masked, control frames, the frame and message caps) and
//! answers pings; a violation closes the WebSocket with the code that names it.

use std::future::Future;

use bytes::BytesMut;
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Error, Message};
use tracing::debug;

use super::MAX_MESSAGE_BYTES;
use crate::rewind::BoxedIo;

/// The pipe between the bridge and the AMQP driver, and the most read from it per message.
const PIPE_BYTES: usize = 64 * 1024;

/// Waits for hyper to hand the connection over, gives `on_open` the AMQP side of a pipe, and
/// moves bytes both ways until either side closes.
pub(super) async fn run<F: Future<Output = ()>>(
    upgraded: OnUpgrade,
    on_open: impl FnOnce(BoxedIo) -> F,
) {
    let upgraded = match upgraded.await {
        Ok(upgraded) => upgraded,
        Err(error) => {
            debug!(%error, "WebSocket upgrade failed");
            return;
        }
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let socket =
        WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await;
    let (amqp, pipe) = tokio::io::duplex(PIPE_BYTES);
    on_open(Box::new(amqp)).await;
    pump(socket, pipe).await;
}

/// Moves bytes until one side ends, then closes the other.
async fn pump<S>(socket: WebSocketStream<S>, pipe: DuplexStream)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (mut outgoing, mut incoming) = socket.split();
    let (mut from_amqp, mut to_amqp) = tokio::io::split(pipe);
    let mut buffer = BytesMut::with_capacity(PIPE_BYTES);
    let close = loop {
        tokio::select! {
            message = incoming.next() => match message {
                Some(Ok(Message::Binary(data))) => {
                    if to_amqp.write_all(&data).await.is_err() {
                        break Some(CloseCode::Away);
                    }
                }
                // Pings are answered by tungstenite; pongs and raw frames carry nothing.
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Ok(Message::Text(_))) => break Some(CloseCode::Unsupported),
                Some(Ok(Message::Close(_))) | None => break None,
                Some(Err(error)) => {
                    debug!(%error, "WebSocket closed on an error");
                    break close_code(&error);
                }
            },
            read = from_amqp.read_buf(&mut buffer) => match read {
                Ok(0) | Err(_) => break Some(CloseCode::Normal),
                Ok(_) => {
                    let message = Message::Binary(buffer.split().freeze());
                    if outgoing.send(message).await.is_err() {
                        break None;
                    }
                    buffer.reserve(PIPE_BYTES);
                }
            },
        }
    };
    let _ = to_amqp.shutdown().await;
    if let Some(code) = close {
        let frame = CloseFrame {
            code,
            reason: "".into(),
        };
        let _ = outgoing.send(Message::Close(Some(frame))).await;
    }
    // Flushes the reply to a client's close (queued by tungstenite) or closes with no code.
    let _ = outgoing.close().await;
}

/// The close code that names a WebSocket error, when the connection can still carry one.
fn close_code(error: &Error) -> Option<CloseCode> {
    match error {
        Error::Capacity(_) => Some(CloseCode::Size),
        Error::Protocol(_) | Error::Utf8 => Some(CloseCode::Protocol),
        _ => None,
    }
}
