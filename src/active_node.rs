//! `--storage postgres://…`: active/passive failover. A node waits for the lease as a standby
//! (listening on nothing), takes it, opens the storage fenced by the lease's epoch, and stops
//! serving at once if it loses the lease or its storage fails; it then gives the lease up and
//! goes back to waiting for it, reconnecting with backoff while the database is unreachable.

use std::io::Write as _;
use std::time::{Duration, Instant};

use busbar_store::StoreError;
use busbar_store_postgres::{DatabaseUrl, Lease, LeaseWatch, PostgresStorage};
use tokio::sync::mpsc;

use crate::serve::ServeError;

/// How often the active node checks that its lease session is alive.
const LEASE_CHECK_PERIOD: Duration = Duration::from_secs(1);
/// The first and the longest wait before reconnecting to a database that could not be reached.
const FIRST_RETRY: Duration = Duration::from_secs(1);
const LONGEST_RETRY: Duration = Duration::from_secs(30);

/// The storage of the node that holds the lease, and word of its end.
pub(crate) struct ActiveNode {
    pub(crate) storage: PostgresStorage,
    /// Receives the error that poisons the storage or loses the lease: the node must stop
    /// serving, since only a recovery from the database can go on.
    pub(crate) failed: mpsc::UnboundedReceiver<StoreError>,
    /// The lease, given up when this is dropped.
    pub(crate) lease: LeaseWatch,
}

/// Waits until this node holds the lease, then opens its storage. Blocks the calling thread.
pub(crate) fn take_over(url: &DatabaseUrl) -> Result<ActiveNode, ServeError> {
    let asked = Instant::now();
    let mut waited = false;
    let lease = Lease::acquire(url, || {
        waited = true;
        // Tests and scripts read this line: keep its shape. No listening line comes before
        // the lease is taken.
        println!("standby: waiting for the lease on {url}");
        let _ = std::io::stdout().flush();
    })?;
    let epoch = lease.epoch();
    let (failure, failed) = mpsc::unbounded_channel();
    let storage_failure = failure.clone();
    let storage = PostgresStorage::open(url, Some(epoch))?.on_failure(move |error| {
        let _ = storage_failure.send(error.clone());
    });
    let lease = lease
        .watch(LEASE_CHECK_PERIOD, move |error| {
            // Another node serves (or may): not one more answer from this one. Its commits are
            // fenced by the epoch meanwhile.
            let _ = failure.send(error);
        })
        .map_err(ServeError::Runtime)?;
    if waited {
        tracing::info!(
            epoch = epoch.value(),
            waited_ms = asked.elapsed().as_millis(),
            "took over as the active node"
        );
    }
    println!("active: holding the lease (epoch {})", epoch.value());
    let _ = std::io::stdout().flush();
    Ok(ActiveNode {
        storage,
        failed,
        lease,
    })
}

/// The waits between attempts to reach the database: doubling from one second to thirty.
#[derive(Debug)]
pub(crate) struct Backoff {
    next: Duration,
}

impl Backoff {
    pub(crate) fn new() -> Backoff {
        Backoff { next: FIRST_RETRY }
    }

    /// The wait before the next attempt.
    pub(crate) fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(LONGEST_RETRY);
        wait
    }

    /// After a success: the next failure waits the shortest time again.
    pub(crate) fn reset(&mut self) {
        self.next = FIRST_RETRY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_thirty_seconds_and_start_again_after_a_success() {
        let mut backoff = Backoff::new();
        let waits: Vec<u64> = (0..7).map(|_| backoff.next_wait().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30]);
        backoff.reset();
        assert_eq!(backoff.next_wait(), FIRST_RETRY);
    }
}
