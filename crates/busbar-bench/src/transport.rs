//! How the load tool reaches the broker, as Service Bus clients do: plain AMQP (`amqp://`), AMQP
//! over TLS (`amqps://`, TLS from the first byte), and AMQP over WebSockets (`ws://` and `wss://`
//! to `/$servicebus/websocket`, subprotocol `AMQPWSB10`, AMQP bytes in binary messages). Every
//! transport authenticates with SASL PLAIN from the URL's user and password, as `amqp://` did.
//!
//! TLS is rustls on `ring`, trusting only the `--ca` PEM file (the broker's development CA): the
//! handshake is done here and fe2o3-amqp gets the stream (`open_with_stream`), since its own
//! `rustls` feature would pull aws-lc-rs. The WebSocket handshake is tokio-tungstenite's, and
//! [`WebSocketIo`] turns its messages back into a byte stream: fe2o3-amqp-ws offers and accepts
//! only the subprotocol `amqp`, never `AMQPWSB10`.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use fe2o3_amqp::Connection;
use fe2o3_amqp::connection::ConnectionHandle;
use futures_util::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::{self, Bytes, Message};

use crate::error::BenchError;

/// The WebSocket path Service Bus serves, used when a `ws://` or `wss://` URL has none.
const WEBSOCKET_PATH: &str = "/$servicebus/websocket";
/// The WebSocket subprotocol of AMQP on Service Bus.
const SUBPROTOCOL: &str = "AMQPWSB10";

/// A failure to open a connection (TCP, TLS, WebSocket or AMQP).
type OpenError = Box<dyn std::error::Error + Send + Sync>;

/// The transport a URL's scheme names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scheme {
    /// `amqp://`.
    Amqp,
    /// `amqps://`: TLS, then AMQP.
    Amqps,
    /// `ws://`: a WebSocket carrying AMQP.
    Ws,
    /// `wss://`: TLS, then the WebSocket.
    Wss,
}

impl Scheme {
    fn tls(self) -> bool {
        matches!(self, Self::Amqps | Self::Wss)
    }
}

/// A parsed `--url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub(crate) scheme: Scheme,
    /// SASL PLAIN user and password, taken as written (no percent-decoding, as fe2o3-amqp).
    pub(crate) credentials: Option<(String, String)>,
    /// Host name or IP address (IPv6 without its brackets).
    pub(crate) host: String,
    pub(crate) port: u16,
    /// The WebSocket request path (empty for AMQP).
    pub(crate) path: String,
}

impl Endpoint {
    /// Parses `scheme://[user:password@]host[:port][/path]`.
    pub(crate) fn parse(url: &str) -> Result<Self, BenchError> {
        let bad = |why: &str| BenchError::Usage(format!("--url {url:?}: {why}"));
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("no scheme"))?;
        let (scheme, default_port) = match scheme.to_ascii_lowercase().as_str() {
            "amqp" => (Scheme::Amqp, 5672),
            "amqps" => (Scheme::Amqps, 5671),
            "ws" => (Scheme::Ws, 80),
            "wss" => (Scheme::Wss, 443),
            _ => return Err(bad("the scheme must be amqp, amqps, ws or wss")),
        };
        let (authority, path) = rest.find('/').map_or((rest, ""), |at| rest.split_at(at));
        let (credentials, host_port) = match authority.rsplit_once('@') {
            Some((user_info, host_port)) => {
                let (user, password) = user_info
                    .split_once(':')
                    .ok_or_else(|| bad("the user needs a password"))?;
                (Some((user.to_owned(), password.to_owned())), host_port)
            }
            None => (None, authority),
        };
        let (host, port) = match host_port.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed.split_once(']').ok_or_else(|| bad("no ']'"))?;
                (host, after.strip_prefix(':'))
            }
            None => match host_port.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (host_port, None),
            },
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = port.map_or(Ok(default_port), |port| {
            port.parse().map_err(|_| bad("the port is not a number"))
        })?;
        let path = match (scheme, path) {
            (Scheme::Amqp | Scheme::Amqps, "" | "/") => String::new(),
            (Scheme::Amqp | Scheme::Amqps, _) => return Err(bad("an AMQP URL has no path")),
            (Scheme::Ws | Scheme::Wss, "") => WEBSOCKET_PATH.to_owned(),
            (Scheme::Ws | Scheme::Wss, path) => path.to_owned(),
        };
        Ok(Self {
            scheme,
            credentials,
            host: host.to_owned(),
            port,
            path,
        })
    }

    /// The WebSocket request's URL (without credentials).
    fn websocket_url(&self) -> String {
        let scheme = if self.scheme.tls() { "wss" } else { "ws" };
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        format!("{scheme}://{host}:{}{}", self.port, self.path)
    }
}

/// Opens connections to one endpoint.
pub(crate) struct Connector {
    endpoint: Endpoint,
    /// For `amqps` and `wss`: rustls trusting the `--ca` certificates.
    tls: Option<TlsConnector>,
}

impl Connector {
    /// A connector for `url`, trusting the PEM certificates in `ca` for TLS.
    pub(crate) fn new(url: &str, ca: Option<&Path>) -> Result<Self, BenchError> {
        let endpoint = Endpoint::parse(url)?;
        let tls = match (endpoint.scheme.tls(), ca) {
            (false, _) => None,
            (true, None) => {
                return Err(BenchError::Usage(
                    "amqps:// and wss:// need --ca FILE (the broker's `tls ca:` file)".into(),
                ));
            }
            (true, Some(ca)) => Some(tls_connector(ca)?),
        };
        Ok(Self { endpoint, tls })
    }

    /// Opens a connection: TCP, TLS and the WebSocket as the scheme asks, then SASL and AMQP.
    pub(crate) async fn open(
        &self,
        container_id: String,
    ) -> Result<ConnectionHandle<()>, OpenError> {
        let endpoint = &self.endpoint;
        let mut builder = Connection::builder()
            .container_id(container_id)
            .hostname(endpoint.host.as_str())
            .sasl_hostname(endpoint.host.as_str());
        if let Some(credentials) = &endpoint.credentials {
            builder = builder.sasl_profile(credentials.clone());
        }
        let tcp = TcpStream::connect((endpoint.host.as_str(), endpoint.port)).await?;
        let connection = match (endpoint.scheme, &self.tls) {
            (Scheme::Amqp, _) => builder.open_with_stream(tcp).await?,
            (Scheme::Ws, _) => {
                let ws = WebSocketIo::handshake(endpoint.websocket_url(), tcp).await?;
                builder.open_with_stream(ws).await?
            }
            (Scheme::Amqps | Scheme::Wss, None) => return Err("TLS without --ca".into()),
            (Scheme::Amqps, Some(tls)) => {
                let name = ServerName::try_from(endpoint.host.clone())?;
                builder
                    .open_with_stream(tls.connect(name, tcp).await?)
                    .await?
            }
            (Scheme::Wss, Some(tls)) => {
                let name = ServerName::try_from(endpoint.host.clone())?;
                let stream = tls.connect(name, tcp).await?;
                let ws = WebSocketIo::handshake(endpoint.websocket_url(), stream).await?;
                builder.open_with_stream(ws).await?
            }
        };
        Ok(connection)
    }
}

/// rustls on `ring` trusting the certificates of the PEM file `ca`.
fn tls_connector(ca: &Path) -> Result<TlsConnector, BenchError> {
    let file_error = |detail: String| BenchError::File {
        path: ca.display().to_string(),
        source: io::Error::new(io::ErrorKind::InvalidData, detail),
    };
    let mut roots = RootCertStore::empty();
    for certificate in
        CertificateDer::pem_file_iter(ca).map_err(|error| file_error(error.to_string()))?
    {
        let certificate = certificate.map_err(|error| file_error(error.to_string()))?;
        roots
            .add(certificate)
            .map_err(|error| file_error(error.to_string()))?;
    }
    if roots.is_empty() {
        return Err(file_error("no certificate".into()));
    }
    let config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|error| file_error(error.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// A WebSocket as a byte stream: each write is one binary message, reads take the bytes of the
/// binary messages in order (pings are answered by tungstenite; a close ends the stream).
#[derive(Debug)]
struct WebSocketIo<S> {
    socket: tokio_tungstenite::WebSocketStream<S>,
    /// What is left of the last binary message read.
    unread: Bytes,
}

impl<S: AsyncRead + AsyncWrite + Unpin> WebSocketIo<S> {
    /// The client handshake over `stream`, offering only `AMQPWSB10` (tungstenite refuses an
    /// answer that picks another subprotocol).
    async fn handshake(url: String, stream: S) -> Result<Self, OpenError> {
        let mut request = url.into_client_request()?;
        request.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        let (socket, _response) = tokio_tungstenite::client_async(request, stream).await?;
        Ok(Self {
            socket,
            unread: Bytes::new(),
        })
    }
}

fn io_error(error: tungstenite::Error) -> io::Error {
    match error {
        tungstenite::Error::Io(error) => error,
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
            io::ErrorKind::NotConnected.into()
        }
        other => io::Error::other(other),
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for WebSocketIo<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        while self.unread.is_empty() {
            match ready!(Pin::new(&mut self.socket).poll_next(cx)) {
                Some(Ok(Message::Binary(bytes))) => self.unread = bytes,
                Some(Ok(Message::Text(_))) => {
                    let error = io::Error::new(io::ErrorKind::InvalidData, "a text message");
                    return Poll::Ready(Err(error));
                }
                Some(Ok(_)) => {}
                Some(Err(error)) => return Poll::Ready(Err(io_error(error))),
                None => return Poll::Ready(Ok(())),
            }
        }
        let taken = self.unread.len().min(buf.remaining());
        buf.put_slice(&self.unread.split_to(taken));
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for WebSocketIo<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut socket = Pin::new(&mut self.socket);
        ready!(socket.as_mut().poll_ready(cx)).map_err(io_error)?;
        let message = Message::Binary(Bytes::copy_from_slice(buf));
        socket.start_send(message).map_err(io_error)?;
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.socket).poll_flush(cx).map_err(io_error)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.socket).poll_close(cx).map_err(io_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(
        scheme: Scheme,
        credentials: Option<(&str, &str)>,
        host: &str,
        port: u16,
        path: &str,
    ) -> Endpoint {
        Endpoint {
            scheme,
            credentials: credentials.map(|(user, password)| (user.into(), password.into())),
            host: host.into(),
            port,
            path: path.into(),
        }
    }

    #[test]
    fn urls_of_every_transport() {
        let creds = Some(("Root", "KEY"));
        let ws = WEBSOCKET_PATH;
        let table = [
            (
                "amqp://Root:KEY@127.0.0.1:5000",
                endpoint(Scheme::Amqp, creds, "127.0.0.1", 5000, ""),
            ),
            ("amqp://h", endpoint(Scheme::Amqp, None, "h", 5672, "")),
            (
                "AMQPS://Root:KEY@localhost/",
                endpoint(Scheme::Amqps, creds, "localhost", 5671, ""),
            ),
            (
                "amqps://Root:KEY@[::1]:6000",
                endpoint(Scheme::Amqps, creds, "::1", 6000, ""),
            ),
            (
                "ws://Root:KEY@127.0.0.1:80/$servicebus/websocket",
                endpoint(Scheme::Ws, creds, "127.0.0.1", 80, ws),
            ),
            ("ws://h:81", endpoint(Scheme::Ws, None, "h", 81, ws)),
            (
                "wss://Root:KEY@h/other?x=1",
                endpoint(Scheme::Wss, creds, "h", 443, "/other?x=1"),
            ),
        ];
        for (url, expected) in table {
            assert_eq!(Endpoint::parse(url).unwrap(), expected, "{url}");
        }
        assert_eq!(
            Endpoint::parse("wss://u:p@[::1]:7/$servicebus/websocket")
                .unwrap()
                .websocket_url(),
            "wss://[::1]:7/$servicebus/websocket"
        );
        assert_eq!(
            Endpoint::parse("ws://u:p@h:8").unwrap().websocket_url(),
            "ws://h:8/$servicebus/websocket"
        );
    }

    #[test]
    fn bad_urls_and_tls_without_a_ca() {
        let table = [
            ("127.0.0.1:5672", "no scheme"),
            ("http://h", "the scheme must be amqp, amqps, ws or wss"),
            ("amqp://user@h", "the user needs a password"),
            ("amqp://u:p@:5672", "no host"),
            ("amqp://h:port", "the port is not a number"),
            ("amqp://[::1:5672", "no ']'"),
            ("amqp://h/queue", "an AMQP URL has no path"),
        ];
        for (url, why) in table {
            let error = Endpoint::parse(url).unwrap_err();
            assert_eq!(error.to_string(), format!("usage: --url {url:?}: {why}"));
        }
        for url in ["amqps://u:p@h", "wss://u:p@h"] {
            let Err(error) = Connector::new(url, None) else {
                panic!("{url} without --ca");
            };
            assert!(error.to_string().contains("need --ca FILE"), "{error}");
        }
        assert!(Connector::new("ws://u:p@h", None).is_ok());
    }
}
