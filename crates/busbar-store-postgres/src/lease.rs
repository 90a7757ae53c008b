//! The lease that makes one busbar process the active node of a database: a session-level
//! advisory lock on a connection of its own (released by PostgreSQL when that session ends, so a
//! killed node's lease frees itself), and a fencing epoch bumped by every takeover, which each
//! commit of the holder's storage checks.

use std::sync::mpsc;
use std::time::Duration;

use busbar_store::StoreError;
use postgres::Client;

use crate::schema::migrate;
use crate::url::{DatabaseUrl, database_error};

/// The advisory lock's key: one per schema, so deployments in different schemas do not meet.
const LOCK_KEY: &str = "hashtext('busbar-lease:' || current_schema())::bigint";
/// How long the lease's session may sit idle before PostgreSQL ends it. The active node checks
/// its session every second; a node that stops doing so — paused (SIGSTOP, a frozen virtual
/// machine), its socket still open — loses the lock after this, so a standby takes over, and
/// the paused node's commits fail the epoch check when it resumes.
const LEASE_IDLE_TIMEOUT: &str = "10s";
/// How long a node keeps trying to reach the database again after losing its connection.
const RECONNECT_PATIENCE: Duration = Duration::from_secs(30);

/// The fencing epoch of one tenure: it grows by one at every takeover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Epoch(i64);

impl Epoch {
    /// The epoch as the database stores it.
    pub fn value(self) -> i64 {
        self.0
    }
}

/// The right to serve from one database, held until this value (and its connection) is dropped.
pub struct Lease {
    url: DatabaseUrl,
    client: Client,
    epoch: Epoch,
}

impl Lease {
    /// Takes the lease, waiting as long as another node holds it; `on_wait` is called first
    /// when it must wait. Applies the schema migrations (the lease row is part of the schema).
    ///
    /// The first connection is tried once (a wrong URL or a database that is down is reported
    /// at once); a connection lost while waiting or taking the lease is made again with backoff,
    /// and the lease taken from the start (the lock died with the old session).
    pub fn acquire(url: &DatabaseUrl, on_wait: impl FnOnce()) -> Result<Lease, StoreError> {
        let mut client = lease_session(url.connect()?)?;
        migrate(&mut client)?;
        let mut on_wait = Some(on_wait);
        loop {
            match take(&mut client, &mut on_wait) {
                Ok(epoch) => {
                    tracing::info!(epoch, "took the lease");
                    return Ok(Lease {
                        url: url.clone(),
                        client,
                        epoch: Epoch(epoch),
                    });
                }
                Err(error) if client.is_closed() => {
                    tracing::warn!(%error, "lost the database connection while taking the lease");
                    client = lease_session(url.reconnect(RECONNECT_PATIENCE)?)?;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// This tenure's fencing epoch.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    /// Checks the lease every `period` on a thread of its own, until the returned watch is
    /// dropped (which gives the lease up). If its session is gone, the lease is taken again on a
    /// new connection only if no other node took it meanwhile (same epoch); otherwise `on_lost`
    /// is called once and the thread ends.
    pub fn watch(
        mut self,
        period: Duration,
        on_lost: impl FnOnce(StoreError) + Send + 'static,
    ) -> std::io::Result<LeaseWatch> {
        let (stop, stopped) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("busbar-lease".to_owned())
            .spawn(move || {
                // Ends (dropping the session, so the lock) once the watch's sender is dropped.
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(period) {
                    if self.client.is_valid(period).is_ok() {
                        continue;
                    }
                    tracing::warn!("the lease's database session is gone; taking it again");
                    if let Err(error) = self.regain() {
                        on_lost(error);
                        return;
                    }
                }
            })?;
        Ok(LeaseWatch { _stop: stop })
    }

    /// Takes the lock again on a new session, provided the epoch is still ours.
    fn regain(&mut self) -> Result<(), StoreError> {
        let mut client = lease_session(self.url.reconnect(RECONNECT_PATIENCE)?)?;
        let current = current_epoch(&mut client)?;
        if current != self.epoch.0 || !try_lock(&mut client)? {
            return Err(StoreError::LeaseLost {
                held: self.epoch.0,
                current,
            });
        }
        // Checked again under the lock: a takeover may have finished in between.
        let current = current_epoch(&mut client)?;
        if current != self.epoch.0 {
            return Err(StoreError::LeaseLost {
                held: self.epoch.0,
                current,
            });
        }
        self.client = client;
        tracing::info!(epoch = current, "took the lease again");
        Ok(())
    }
}

/// `client` made a lease session: ended by PostgreSQL once idle for [`LEASE_IDLE_TIMEOUT`].
fn lease_session(mut client: Client) -> Result<Client, StoreError> {
    client
        .batch_execute(&format!(
            "SET idle_session_timeout = '{LEASE_IDLE_TIMEOUT}'"
        ))
        .map_err(|error| database_error("configure the lease session", &error))?;
    Ok(client)
}

/// A lease being watched ([`Lease::watch`]). Dropping it gives the lease up: the watcher ends
/// at once, or after a reconnection in progress, and its session ends with it, which releases
/// the lock (a new `acquire` meanwhile waits as a standby would).
pub struct LeaseWatch {
    _stop: mpsc::Sender<()>,
}

/// Takes the lock (waiting, after calling `on_wait` the first time, while another session holds
/// it) and bumps the epoch; returns the new epoch.
fn take(client: &mut Client, on_wait: &mut Option<impl FnOnce()>) -> Result<i64, StoreError> {
    if !try_lock(client)? {
        if let Some(on_wait) = on_wait.take() {
            on_wait();
        }
        client
            .execute(&format!("SELECT pg_advisory_lock({LOCK_KEY})"), &[])
            .map_err(|error| database_error("wait for the lease", &error))?;
    }
    let holder = format!("busbar pid {}", std::process::id());
    client
        .query_one(
            "UPDATE busbar_lease SET epoch = epoch + 1, holder = $1, acquired_at = now()
             RETURNING epoch",
            &[&holder],
        )
        .map(|row| row.get(0))
        .map_err(|error| database_error("take the lease", &error))
}

fn try_lock(client: &mut Client) -> Result<bool, StoreError> {
    client
        .query_one(&format!("SELECT pg_try_advisory_lock({LOCK_KEY})"), &[])
        .map(|row| row.get(0))
        .map_err(|error| database_error("take the lease", &error))
}

fn current_epoch(client: &mut Client) -> Result<i64, StoreError> {
    client
        .query_one("SELECT epoch FROM busbar_lease", &[])
        .map(|row| row.get(0))
        .map_err(|error| database_error("read the lease", &error))
}
