//! Telling TLS from plain HTTP on one port by the first byte a client sends: a TLS client
//! opens with a handshake record, whose first byte is its content type, 22 (RFC 8446 §5.1); an
//! HTTP request opens with a method's letter.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_rustls::server::TlsStream;
use tracing::debug;

use super::TlsConfig;

/// The content type of a TLS handshake record (`handshake(22)`).
const TLS_HANDSHAKE: u8 = 0x16;

/// An accepted connection, ready for HTTP.
pub(crate) enum Opened {
    /// Plain HTTP.
    Plain(TcpStream),
    /// HTTP inside TLS, the handshake done.
    Tls(Box<TlsStream<TcpStream>>),
}

impl TlsConfig {
    /// Waits at most `first_byte_timeout` for the client's first byte, without consuming it. A
    /// handshake record starts TLS, which must complete within
    /// [`TlsConfig::handshake_timeout`]; anything else is plain HTTP. `None` when the client
    /// closes, stays silent, or fails the handshake: the connection is dropped, and only it.
    pub(crate) async fn open(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
        first_byte_timeout: Duration,
    ) -> Option<Opened> {
        let mut first = [0u8; 1];
        match timeout(first_byte_timeout, stream.peek(&mut first)).await {
            Ok(Ok(0)) => return None,
            Ok(Ok(_)) => {}
            Ok(Err(error)) => {
                debug!(%error, %peer, "admin connection failed before its first byte");
                return None;
            }
            Err(_) => {
                debug!(%peer, "admin client sent nothing in time; closing");
                return None;
            }
        }
        if first[0] != TLS_HANDSHAKE {
            return Some(Opened::Plain(stream));
        }
        match timeout(self.handshake_timeout, self.acceptor.accept(stream)).await {
            Ok(Ok(stream)) => Some(Opened::Tls(Box::new(stream))),
            Ok(Err(error)) => {
                debug!(%error, %peer, "admin TLS handshake failed");
                None
            }
            Err(_) => {
                debug!(%peer, "admin TLS handshake not completed in time; closing");
                None
            }
        }
    }
}
