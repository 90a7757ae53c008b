//! TLS on the administration port. The admin clients of Python 7.15, JS 7.9.5 and Go 1.11 speak
//! only https, the newer .NET and JS ones plain HTTP with `UseDevelopmentEmulator=true`, and all
//! of them dial the port of the connection string (admin-api.md §0, §1.6): so one port serves
//! both, told apart by the first byte a client sends.
//!
//! - [`Identity`]: the server's certificate chain and private key, read from PEM files.
//! - [`DevelopmentCa`]: a local certificate authority and a certificate for `localhost`,
//!   `127.0.0.1` and `::1` that it signs, created once in a directory and reused, so that a
//!   developer trusts the CA once.
//! - [`TlsConfig`]: the rustls configuration (crypto from `ring`) that
//!   [`ServerConfig::tls`](crate::http::ServerConfig::tls) turns on.
//!
//! The accept loop of [`serve`](crate::http::serve) peeks at each connection's first byte:
//! `0x16` (a TLS handshake record) starts TLS, anything else is plain HTTP.

mod accept;
mod config;
mod development;
mod error;
mod identity;

pub(crate) use accept::Opened;
pub use config::TlsConfig;
pub use development::DevelopmentCa;
pub use error::TlsError;
pub use identity::Identity;
