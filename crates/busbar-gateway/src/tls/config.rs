//! rustls's server configuration for every TLS connection the gateway accepts (AMQPS, HTTPS,
//! WebSockets over TLS).

use std::sync::Arc;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

use super::identity::provider;
use super::{Identity, TlsError};

/// TLS next to the plain protocols on every port (see [`crate::tls`]).
#[derive(Clone)]
pub struct TlsConfig {
    pub(crate) acceptor: TlsAcceptor,
}

impl TlsConfig {
    /// Serves `identity` with TLS 1.3 and 1.2 and rustls's default cipher suites from `ring`.
    /// ALPN is answered only with HTTP/1.1 (clients that offer `h2` offer `http/1.1` too); the
    /// AMQP clients offer none, and then none is chosen.
    pub fn new(identity: Identity) -> Result<TlsConfig, TlsError> {
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(identity.chain, identity.key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsConfig {
            acceptor: TlsAcceptor::from(Arc::new(config)),
        })
    }
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig").finish_non_exhaustive()
    }
}
