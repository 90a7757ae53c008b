//! Requests that leave HTTP: a WebSocket upgrade on the admin port carries AMQP, which this
//! crate does not speak. The binary supplies an [`Upgrade`] that claims such requests before
//! they are routed and answers them itself (`101 Switching Protocols`, then the connection is
//! its own).

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};

/// Takes over the requests it claims, before authorisation and routing.
pub trait Upgrade: Send + Sync + 'static {
    /// Whether `request` is one to take over.
    fn claims(&self, request: &Request<Incoming>) -> bool;

    /// Answers a claimed request from `peer`; the connection is handed over after a `101`.
    fn upgrade(&self, request: Request<Incoming>, peer: SocketAddr) -> Response<Full<Bytes>>;
}

/// The [`Upgrade`] of a server, if any.
#[derive(Clone, Default)]
pub struct Upgrades(Option<Arc<dyn Upgrade>>);

impl Upgrades {
    /// Requests `upgrade` claims go to it.
    pub fn to(upgrade: Arc<dyn Upgrade>) -> Self {
        Self(Some(upgrade))
    }

    /// The upgrade that claims `request`, if one does.
    pub(crate) fn claiming(&self, request: &Request<Incoming>) -> Option<&dyn Upgrade> {
        self.0.as_deref().filter(|upgrade| upgrade.claims(request))
    }
}

impl std::fmt::Debug for Upgrades {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Upgrades(set)"
        } else {
            "Upgrades(none)"
        })
    }
}
