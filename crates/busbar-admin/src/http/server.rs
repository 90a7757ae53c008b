//! Connections: HTTP/1.1 on any accepted byte stream ([`AdminServer::serve_connection`]), and
//! the accept loop over a TCP listener ([`serve`], plain HTTP) with its connection limit and
//! graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tracing::{debug, warn};

use super::answer::answer;
use super::config::{Scheme, ServerConfig};
use crate::control::NamespaceControl;

/// The most bytes of request line and headers buffered (hyper's minimum is 8 KiB; the SDKs'
/// headers are about 1 KiB, SAS tokens included).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The most header fields a request may have.
const MAX_HEADERS: usize = 64;
/// How long accepting pauses after it failed.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_millis(100);

/// The administration API over one [`NamespaceControl`]. Cheap to clone: clones share the
/// control and the configuration.
pub struct AdminServer<C> {
    shared: Arc<Shared<C>>,
}

struct Shared<C> {
    control: Arc<C>,
    config: ServerConfig,
    /// Set when the server shuts down, so requests that wait (data-plane receives) end.
    closing: watch::Sender<bool>,
}

impl<C> Clone for AdminServer<C> {
    fn clone(&self) -> Self {
        AdminServer {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<C: NamespaceControl> AdminServer<C> {
    /// A server answering from `control` under `config`.
    pub fn new(control: Arc<C>, config: ServerConfig) -> AdminServer<C> {
        AdminServer {
            shared: Arc::new(Shared {
                control,
                config,
                closing: watch::Sender::new(false),
            }),
        }
    }

    /// Serves HTTP/1.1 on `stream`, an accepted connection from `peer` that arrived over
    /// `scheme`, until the client closes it, a timeout closes it (headers not complete within
    /// [`ServerConfig::header_read_timeout`], including while idle between requests), a
    /// [`ServerConfig::upgrade`] takes it over, or `shutdown` resolves, whereupon the request in
    /// flight is answered and the connection closed.
    pub async fn serve_connection<S>(
        &self,
        stream: S,
        peer: SocketAddr,
        scheme: Scheme,
        shutdown: impl Future<Output = ()>,
    ) where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let server = self.clone();
        let service = service_fn(move |request: Request<Incoming>| {
            let server = server.clone();
            async move {
                let shared = &server.shared;
                if let Some(upgrade) = shared.config.upgrade.claiming(&request) {
                    return Ok::<_, Infallible>(upgrade.upgrade(request, peer));
                }
                let closing = shared.closing.subscribe();
                let control = &*shared.control;
                let response = answer(control, &shared.config, scheme, &closing, request).await;
                Ok::<_, Infallible>(response)
            }
        });
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(self.shared.config.header_read_timeout)
            .max_buf_size(MAX_HEAD_BYTES)
            .max_headers(MAX_HEADERS)
            .serve_connection(TokioIo::new(stream), service)
            .with_upgrades();
        tokio::pin!(connection, shutdown);
        let result = tokio::select! {
            result = connection.as_mut() => result,
            () = &mut shutdown => {
                connection.as_mut().graceful_shutdown();
                connection.await
            }
        };
        if let Err(error) = result {
            debug!(%error, "admin connection ended with an error");
        }
    }
}

/// Serves the administration API on `listener` from `control` until `shutdown` resolves; then
/// stops accepting, lets each connection finish the request it is answering (for at most
/// [`ServerConfig::shutdown_grace`]), and returns once all are closed.
///
/// At most [`ServerConfig::max_connections`] connections are served at once; the rest wait
/// in the listen backlog. Accept errors (out of file
/// descriptors, a connection reset before it was accepted) are logged and accepting goes on.
pub async fn serve<C: NamespaceControl>(
    listener: TcpListener,
    control: Arc<C>,
    config: ServerConfig,
    shutdown: impl Future<Output = ()>,
) {
    let grace = config.shutdown_grace;
    let slots = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let server = AdminServer::new(control, config);
    let (stop, stopping) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => slot,
            () = &mut shutdown => break,
        };
        let Ok(slot) = slot else { break };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                warn!(%error, "accepting an admin connection failed");
                // Out of file descriptors, say: let connections close rather than spin.
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        // Responses are written whole; waiting for more to coalesce only adds latency.
        if let Err(error) = stream.set_nodelay(true) {
            debug!(%error, %peer, "cannot disable Nagle's algorithm");
        }
        let server = server.clone();
        let mut stopping = stopping.clone();
        connections.spawn(async move {
            let stopped = async move {
                // An error means the sender is gone, which happens only once serve returns.
                let _ = stopping.wait_for(|&stop| stop).await;
            };
            server
                .serve_connection(stream, peer, Scheme::Http, stopped)
                .await;
            drop(slot);
        });
    }
    drop(listener);
    server.shared.closing.send_replace(true);
    let _ = stop.send(true);
    let drained = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        warn!(
            open = connections.len(),
            "admin connections still open after the shutdown grace period; closing them"
        );
        connections.shutdown().await;
    }
}
