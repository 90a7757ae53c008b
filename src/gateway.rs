//! Where the gateway's opened connections go: AMQP ones (plain, inside TLS, or carried by a
//! WebSocket) to the broker's AMQP driver through one channel, HTTP ones to the administration
//! API's server, which hands its WebSocket upgrades back here as AMQP.

use std::net::SocketAddr;
use std::sync::Arc;

use busbar_admin::http::{AdminServer, Scheme, Upgrade};
use busbar_gateway::{BoxedIo, Connection, Dispatch, Stopping, websocket};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use tokio::sync::mpsc;

use crate::admin::BrokerNamespace;

/// An AMQP connection on its way to the broker's driver.
pub(crate) type AmqpConnection = (BoxedIo, SocketAddr);

/// The channel to the broker's AMQP driver: its capacity is how many opened connections may
/// wait for the driver to take them (it takes them as fast as it spawns tasks).
pub(crate) fn amqp_channel() -> (mpsc::Sender<AmqpConnection>, mpsc::Receiver<AmqpConnection>) {
    mpsc::channel(64)
}

/// The binary's [`Dispatch`].
pub(crate) struct BrokerDispatch {
    amqp: mpsc::Sender<AmqpConnection>,
    admin: AdminServer<BrokerNamespace>,
}

impl BrokerDispatch {
    pub(crate) fn new(
        amqp: mpsc::Sender<AmqpConnection>,
        admin: AdminServer<BrokerNamespace>,
    ) -> Self {
        Self { amqp, admin }
    }
}

impl Dispatch for BrokerDispatch {
    async fn amqp(&self, connection: Connection) {
        // Fails only once the broker has stopped: the connection is then dropped.
        let _ = self.amqp.send((connection.stream, connection.peer)).await;
    }

    async fn http(&self, connection: Connection, stopping: Stopping) {
        let scheme = if connection.secure {
            Scheme::Https
        } else {
            Scheme::Http
        };
        self.admin
            .serve_connection(connection.stream, connection.peer, scheme, stopping.wait())
            .await;
    }
}

/// The admin server's [`Upgrade`] for `GET /$servicebus/websocket`: AMQP over WebSockets.
pub(crate) struct WebSocketAmqp {
    amqp: mpsc::Sender<AmqpConnection>,
}

impl WebSocketAmqp {
    pub(crate) fn new(amqp: mpsc::Sender<AmqpConnection>) -> Arc<Self> {
        Arc::new(Self { amqp })
    }
}

impl Upgrade for WebSocketAmqp {
    fn claims(&self, request: &Request<Incoming>) -> bool {
        websocket::is_upgrade(request)
    }

    fn upgrade(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Full<Bytes>> {
        let amqp = self.amqp.clone();
        websocket::upgrade(request, move |stream| async move {
            let _ = amqp.send((stream, peer)).await;
        })
    }
}
