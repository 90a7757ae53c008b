//! The accept loop of one listener: each connection is opened (its first byte read, TLS
//! terminated when it asks for it, its protocol told) within a deadline, then handed to the
//! [`Dispatch`]. Connections still opening and HTTP connections are capped; one beyond a cap is
//! closed at once, so clients that connect and stay silent cannot pin file descriptors or
//! hold up the accept loop.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tracing::{debug, warn};

use crate::quick_ack::QuickAckStream;
use crate::rewind::{BoxedIo, Rewind};
use crate::sniff::{Protocol, classify};
use crate::tls::TlsConfig;

/// How long accepting pauses after it failed (out of file descriptors, say).
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// An opened connection, ready for its protocol.
pub struct Connection {
    /// Its bytes (inside TLS when `secure`), from the first one on.
    pub stream: BoxedIo,
    /// The client's address.
    pub peer: SocketAddr,
    /// Whether it arrived over TLS.
    pub secure: bool,
}

/// Where opened connections go: the binary joins the broker's AMQP driver and the admin server
/// here.
pub trait Dispatch: Send + Sync + 'static {
    /// Takes an AMQP connection over (returns once it is handed on, not when it ends).
    fn amqp(&self, connection: Connection) -> impl Future<Output = ()> + Send;

    /// Serves an HTTP connection to its end; `stopping` resolves when the server shuts down,
    /// and the connection should then finish the request in flight and close.
    fn http(&self, connection: Connection, stopping: Stopping) -> impl Future<Output = ()> + Send;
}

/// The bounds of a listener.
#[derive(Debug, Clone)]
pub struct Limits {
    /// How long a new connection has to send its first byte and, for TLS, complete the
    /// handshake and send its first byte inside (default 10 s, as RabbitMQ gives a handshake).
    pub opening_timeout: Duration,
    /// Connections that may be opening at once (default 256); one accepted beyond is closed.
    pub max_opening: usize,
    /// HTTP connections served at once (default 256); one opened beyond is closed.
    pub max_http: usize,
    /// How long a shutdown waits for HTTP requests in flight (default 5 s).
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            opening_timeout: Duration::from_secs(10),
            max_opening: 256,
            max_http: 256,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}

/// Resolves once the gateway is told to stop.
#[derive(Debug, Clone)]
pub struct Stopping(watch::Receiver<bool>);

impl Stopping {
    /// Stops when `receiver` reads `true` (or its sender is gone).
    pub fn new(receiver: watch::Receiver<bool>) -> Self {
        Self(receiver)
    }

    /// Waits for the stop.
    pub async fn wait(mut self) {
        // An error means the sender is gone, which is a stop too.
        let _ = self.0.wait_for(|stop| *stop).await;
    }
}

/// What every listener of one broker shares: where connections go, TLS, and the caps (the
/// caps count across all listeners).
pub struct Gateway<D> {
    dispatch: D,
    tls: Option<TlsConfig>,
    limits: Limits,
    opening: Arc<Semaphore>,
    http: Arc<Semaphore>,
}

impl<D: Dispatch> Gateway<D> {
    /// A gateway handing connections to `dispatch`; without `tls`, TLS clients are refused.
    pub fn new(dispatch: D, tls: Option<TlsConfig>, limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            dispatch,
            tls,
            opening: Arc::new(Semaphore::new(limits.max_opening.max(1))),
            http: Arc::new(Semaphore::new(limits.max_http.max(1))),
            limits,
        })
    }

    /// Opens `stream` and hands it on; a connection that fails to open is dropped, and only it.
    async fn take(self: Arc<Self>, stream: TcpStream, peer: SocketAddr, stopping: Stopping) {
        let Ok(opening) = Arc::clone(&self.opening).try_acquire_owned() else {
            debug!(%peer, limit = self.limits.max_opening, "too many connections opening: closed at once");
            return;
        };
        let opened = tokio::select! {
            opened = tokio::time::timeout(self.limits.opening_timeout, self.open(stream, peer)) => opened,
            () = stopping.clone().wait() => return,
        };
        drop(opening);
        let Ok(Some((protocol, connection))) = opened else {
            debug!(%peer, "connection did not open in time; closed");
            return;
        };
        match protocol {
            Protocol::Amqp => self.dispatch.amqp(connection).await,
            Protocol::Http => {
                let Ok(_slot) = Arc::clone(&self.http).try_acquire_owned() else {
                    debug!(%peer, limit = self.limits.max_http, "too many HTTP connections: closed at once");
                    return;
                };
                self.dispatch.http(connection, stopping).await;
            }
            // `open` unwraps TLS once and never returns it.
            Protocol::Tls => {}
        }
    }

    /// Reads the first byte (and, for TLS, the handshake and the first byte inside): the
    /// protocol and the connection, or `None` when the client closed, failed or cannot be
    /// served (TLS without a certificate, TLS inside TLS).
    async fn open(&self, stream: TcpStream, peer: SocketAddr) -> Option<(Protocol, Connection)> {
        let mut first = [0u8; 1];
        match stream.peek(&mut first).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        // Small frames go out at once rather than waiting for Nagle.
        let _ = stream.set_nodelay(true);
        let stream = QuickAckStream(stream);
        let protocol = classify(first[0]);
        if protocol != Protocol::Tls {
            let stream: BoxedIo = Box::new(stream);
            return Some((
                protocol,
                Connection {
                    stream,
                    peer,
                    secure: false,
                },
            ));
        }
        let Some(tls) = &self.tls else {
            debug!(%peer, "a TLS client on a gateway without a certificate; closed");
            return None;
        };
        let mut stream = match tls.acceptor.accept(stream).await {
            Ok(stream) => stream,
            Err(error) => {
                debug!(%error, %peer, "TLS handshake failed");
                return None;
            }
        };
        let mut first = [0u8; 1];
        match stream.read(&mut first).await {
            Ok(0) | Err(_) => return None,
            Ok(_) => {}
        }
        let protocol = classify(first[0]);
        if protocol == Protocol::Tls {
            debug!(%peer, "TLS inside TLS; closed");
            return None;
        }
        let stream: BoxedIo = Box::new(Rewind::new(Bytes::copy_from_slice(&first), stream));
        Some((
            protocol,
            Connection {
                stream,
                peer,
                secure: true,
            },
        ))
    }
}

/// Serves `listener` through `gateway` until `stopping` resolves; then stops accepting, gives
/// HTTP connections [`Limits::shutdown_grace`] to finish the request in flight, and returns.
/// AMQP connections are the dispatch's from hand-over on. Accept errors are logged and
/// accepting goes on.
pub async fn serve<D: Dispatch>(
    listener: TcpListener,
    gateway: Arc<Gateway<D>>,
    stopping: Stopping,
) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stopping.clone().wait() => break,
        };
        match accepted {
            Ok((stream, peer)) => {
                let gateway = Arc::clone(&gateway);
                connections.spawn(gateway.take(stream, peer, stopping.clone()));
            }
            Err(error) => {
                warn!(%error, "accepting a connection failed");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
            }
        }
    }
    drop(listener);
    let grace = gateway.limits.shutdown_grace;
    let drained = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        warn!(
            open = connections.len(),
            "connections still open after the shutdown grace period; closing them"
        );
        connections.shutdown().await;
    }
}
