//! The `postgres://` URL the operator gives, and the connections made from it: password from the
//! URL or `PGPASSWORD`, `synchronous_commit` on, reconnection with backoff.

use std::fmt;
use std::time::{Duration, Instant};

use busbar_store::StoreError;
use postgres::config::Host;
use postgres::{Client, NoTls};

/// How long a connection attempt may take before it counts as failed.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// TCP keepalive idle time, so a dead peer is noticed in seconds rather than hours.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
/// The first pause between reconnection attempts, doubled after each failure up to the cap.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// A parsed `postgres://USER[:PASSWORD]@HOST[:PORT]/DB` URL.
#[derive(Clone)]
pub struct DatabaseUrl {
    config: postgres::Config,
}

/// Why a `--storage` URL cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// The text does not start with `postgres://` or `postgresql://`.
    #[error("not a postgres:// URL")]
    NotPostgres,
    /// The driver could not parse it.
    #[error("not a valid PostgreSQL URL: {0}")]
    Invalid(String),
    /// No user is named (the driver has no default user).
    #[error("the URL names no user: write postgres://USER@HOST:PORT/DB")]
    NoUser,
}

impl DatabaseUrl {
    /// Parses `text`; without a password in it, `PGPASSWORD` is used when set.
    pub fn parse(text: &str) -> Result<DatabaseUrl, UrlError> {
        if !(text.starts_with("postgres://") || text.starts_with("postgresql://")) {
            return Err(UrlError::NotPostgres);
        }
        let mut config: postgres::Config = text
            .parse()
            .map_err(|error: postgres::Error| UrlError::Invalid(error.to_string()))?;
        if config.get_user().is_none() {
            return Err(UrlError::NoUser);
        }
        if config.get_password().is_none()
            && let Ok(password) = std::env::var("PGPASSWORD")
        {
            config.password(password);
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("busbar");
        }
        config.keepalives_idle(KEEPALIVE_IDLE);
        Ok(DatabaseUrl { config })
    }

    /// One connection attempt, with `synchronous_commit` on whatever the server's default.
    pub(crate) fn connect(&self) -> Result<Client, StoreError> {
        let mut client = self
            .config
            .connect(NoTls)
            .map_err(|error| database_error("connect", &error))?;
        client
            .batch_execute("SET synchronous_commit = on")
            .map_err(|error| database_error("connect", &error))?;
        Ok(client)
    }

    /// Connects, retrying with backoff for up to `patience` while the database is unreachable.
    pub(crate) fn reconnect(&self, patience: Duration) -> Result<Client, StoreError> {
        let deadline = Instant::now() + patience;
        let mut backoff = FIRST_BACKOFF;
        loop {
            match self.connect() {
                Ok(client) => return Ok(client),
                Err(error) if Instant::now() + backoff < deadline => {
                    tracing::warn!(database = %self, %error, ?backoff, "reconnecting");
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
                Err(error) => return Err(error),
            }
        }
    }
}

/// The URL without its password: `USER@HOST:PORT/DB`.
impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let user = self.config.get_user().unwrap_or("");
        let host = match self.config.get_hosts().first() {
            Some(Host::Tcp(name)) => name.clone(),
            Some(Host::Unix(path)) => path.display().to_string(),
            None => "localhost".to_owned(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        let database = self.config.get_dbname().unwrap_or(user);
        write!(f, "postgres://{user}@{host}:{port}/{database}")
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DatabaseUrl({self})")
    }
}

/// A driver error as the store reports it.
pub(crate) fn database_error(operation: &'static str, error: &postgres::Error) -> StoreError {
    // The driver shows a server's refusal only as "db error"; its severity and message say why
    // (a terminated session, a database not accepting connections, a failed constraint).
    let reason = match error.as_db_error() {
        Some(refusal) => format!("{}: {}", refusal.severity(), refusal.message()),
        None => error.to_string(),
    };
    StoreError::Database { operation, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_shown_without_password() {
        let url = DatabaseUrl::parse("postgres://busbar:secret@db.example:6543/broker").unwrap();
        assert_eq!(url.to_string(), "postgres://busbar@db.example:6543/broker");
        assert_eq!(
            DatabaseUrl::parse("mysql://a@b/c").unwrap_err(),
            UrlError::NotPostgres
        );
        assert_eq!(
            DatabaseUrl::parse("postgres://db.example/broker").unwrap_err(),
            UrlError::NoUser
        );
        assert!(matches!(
            DatabaseUrl::parse("postgres://u@h:notaport/d"),
            Err(UrlError::Invalid(_))
        ));
    }
}
