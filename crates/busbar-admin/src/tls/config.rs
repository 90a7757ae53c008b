//! The TLS settings of the administration server: rustls's configuration and the handshake
//! deadline.

use std::sync::Arc;
use std::time::Duration;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;

use super::identity::provider;
use super::{Identity, TlsError};

/// TLS on the administration port, next to plain HTTP (see [`crate::tls`]).
#[derive(Clone)]
pub struct TlsConfig {
    pub(crate) acceptor: TlsAcceptor,
    /// How long a client may take to complete the TLS handshake once it has sent its first
    /// byte (default 10 s); a slower or stalled one is disconnected.
    pub handshake_timeout: Duration,
}

impl TlsConfig {
    /// Serves `identity` with TLS 1.3 and 1.2 and rustls's default cipher suites from `ring`;
    /// ALPN offers HTTP/1.1 only (clients that offer `h2` offer `http/1.1` too).
    pub fn new(identity: Identity) -> Result<TlsConfig, TlsError> {
        let mut config = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(identity.chain, identity.key)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsConfig {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            handshake_timeout: Duration::from_secs(10),
        })
    }
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("handshake_timeout", &self.handshake_timeout)
            .finish_non_exhaustive()
    }
}
