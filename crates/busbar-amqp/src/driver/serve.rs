//! The accept loop: one task per accepted connection, until shutdown.

use std::net::SocketAddr;

use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::acceptor::Acceptor;
use super::handshakes::Handshakes;
use super::{ConnectionHandler, DriverConfig, ShutdownSignal, drive};

/// Accepts connections from `acceptor` (a [`TcpListener`](tokio::net::TcpListener), or a
/// channel of streams opened elsewhere) and runs each in its own task with a handler from
/// `make_handler(peer address, sender of the connection's command channel)`.
///
/// At most `config.max_connections` are served at once; later clients wait in the listen
/// backlog until one ends. At most `config.max_handshaking` of them may be in their handshake: a
/// connection accepted beyond that is closed at once, so clients that never finish theirs cannot
/// hold the accept loop (each is cut off by the engine's `handshake_timeout`). When `shutdown` fires, stops accepting, closes every connection with
/// `amqp:connection:forced` and returns once all of them have ended.
pub async fn serve<A, H, F>(
    mut acceptor: A,
    config: DriverConfig,
    mut make_handler: F,
    mut shutdown: ShutdownSignal,
) -> std::io::Result<()>
where
    A: Acceptor,
    H: ConnectionHandler,
    F: FnMut(SocketAddr, mpsc::Sender<H::Command>) -> H,
{
    let mut connections = JoinSet::new();
    let handshakes = Handshakes::new(config.max_handshaking);
    let mut open = true;
    loop {
        tokio::select! {
            accepted = acceptor.accept(), if open && connections.len() < config.max_connections => {
                let (stream, peer) = match accepted {
                    Some(Ok(accepted)) => accepted,
                    // No more will come; the connections served go on until shutdown.
                    None => {
                        open = false;
                        continue;
                    }
                    // Per-connection failures (reset before accept, fd exhaustion) must not end
                    // the server; the next accept may succeed.
                    Some(Err(error)) => {
                        tracing::warn!(%error, "accept failed");
                        continue;
                    }
                };
                let Some(slot) = handshakes.try_enter() else {
                    tracing::warn!(%peer, limit = config.max_handshaking, "too many connections handshaking: closed at once");
                    continue;
                };
                let (sender, receiver) = mpsc::channel(config.command_capacity.max(1));
                let handler = make_handler(peer, sender);
                let engine = config.engine.clone();
                let signal = shutdown.clone();
                connections.spawn(async move {
                    if let Err(error) = drive(stream, handler, receiver, engine, signal, slot).await {
                        tracing::debug!(%peer, %error, "connection ended with an error");
                    }
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            () = shutdown.triggered() => break,
        }
    }
    drop(acceptor);
    while connections.join_next().await.is_some() {}
    Ok(())
}
