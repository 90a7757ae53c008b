//! What a server is told at start: who may call it, how much it reads, how long it waits, and
//! where its time comes from.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::upgrade::Upgrades;
use crate::atom::{MAX_DOCUMENT_BYTES, Timestamp};
use crate::auth::Authorization;
use crate::explorer::Sessions;

/// The server's settings. [`ServerConfig::new`] fills in the defaults.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Which requests are served.
    pub authorization: Authorization,
    /// The largest request body taken; a larger one gets 413, read on and dropped for a few MiB
    /// so that the client sees the answer, or unread if announced larger still (default and
    /// at most [`MAX_DOCUMENT_BYTES`], the codec's limit, 1 MiB: descriptions are a few kB).
    pub body_limit: usize,
    /// How long a client may take to send a request's headers, and how long a kept-alive
    /// connection may sit idle before its next request (default 30 s). Slow or silent clients
    /// are disconnected.
    pub header_read_timeout: Duration,
    /// How long a request may take from its headers to its response: reading the body (408 when
    /// it is late, and the connection closes) and the broker's answer (503) (default 30 s).
    pub request_timeout: Duration,
    /// Connections served at once; further clients wait in the listen backlog (default 256).
    pub max_connections: usize,
    /// How long a shutdown waits for requests in flight before closing their connections
    /// (default 5 s).
    pub shutdown_grace: Duration,
    /// The time used for token expiry and response timestamps.
    pub clock: Clock,
    /// Who takes over requests that leave HTTP, such as a WebSocket upgrade (default none).
    pub upgrade: Upgrades,
    /// The web explorer's sign-in sessions (kept for the server's life; clones share them).
    pub explorer_sessions: Arc<Sessions>,
}

impl ServerConfig {
    /// The defaults, with `authorization`.
    pub fn new(authorization: Authorization) -> ServerConfig {
        ServerConfig {
            authorization,
            body_limit: MAX_DOCUMENT_BYTES,
            header_read_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(30),
            max_connections: 256,
            shutdown_grace: Duration::from_secs(5),
            clock: Clock::system(),
            upgrade: Upgrades::default(),
            explorer_sessions: Arc::default(),
        }
    }
}

/// Where the server reads the wall-clock time.
#[derive(Clone)]
pub struct Clock(Arc<dyn Fn() -> Timestamp + Send + Sync>);

impl Clock {
    /// The system's clock.
    pub fn system() -> Clock {
        Clock(Arc::new(|| {
            let since_epoch = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO);
            Timestamp::from_unix_millis(i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX))
        }))
    }

    /// A clock that always reads `moment` (for replaying captured requests, whose tokens
    /// expired long ago).
    pub fn fixed(moment: Timestamp) -> Clock {
        Clock(Arc::new(move || moment))
    }

    /// The time now.
    pub fn now(&self) -> Timestamp {
        (self.0)()
    }
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Clock({:?})", self.now())
    }
}

/// The scheme the client reached the server with, written into the URLs of responses
/// (`<id>`, links).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Plain HTTP.
    Http,
    /// HTTP inside TLS.
    Https,
}

impl Scheme {
    /// `http` or `https`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}
