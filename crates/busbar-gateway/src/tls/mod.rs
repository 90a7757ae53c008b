//! TLS on Busbar's ports: AMQPS (5671 by default), HTTPS for the administration API (whose
//! Python, JS 7.9.5 and Go clients speak only https) and WebSockets over TLS, all with one
//! certificate. A connection whose first byte opens a TLS handshake is served over TLS, on any
//! port.
//!
//! - [`Identity`]: the server's certificate chain and private key, read from PEM files.
//! - [`DevelopmentCa`]: a local certificate authority and a certificate for `localhost`,
//!   `127.0.0.1` and `::1` that it signs, created once in a directory and reused, so that a
//!   developer trusts the CA once.
//! - [`TlsConfig`]: the rustls configuration (crypto from `ring`) that
//!   [`Gateway::new`](crate::Gateway::new) takes.

mod config;
mod development;
mod error;
mod identity;

pub use config::TlsConfig;
pub use development::DevelopmentCa;
pub use error::TlsError;
pub use identity::Identity;
