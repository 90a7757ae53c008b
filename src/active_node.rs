//! `--storage postgres://…`: active/passive failover. A node waits for the lease as a standby
//! (listening on nothing), takes it, opens the storage fenced by the lease's epoch, and stops
//! serving at once if it ever loses the lease.

use std::io::Write as _;
use std::time::{Duration, Instant};

use busbar_store::StoreError;
use busbar_store_postgres::{DatabaseUrl, Lease, PostgresStorage};
use tokio::sync::oneshot;

use crate::EXIT_FAILED;
use crate::serve::ServeError;

/// How often the active node checks that its lease session is alive.
const LEASE_CHECK_PERIOD: Duration = Duration::from_secs(1);

/// The storage of the node that holds the lease, and word of its failure.
pub(crate) struct ActiveNode {
    pub(crate) storage: PostgresStorage,
    /// Resolves with the error that poisons the storage: the node must stop serving, since
    /// only a recovery from the database (a restart, or the standby taking over) can go on.
    pub(crate) failed: oneshot::Receiver<StoreError>,
}

/// Waits until this node holds the lease, then opens its storage. Blocks the calling thread.
pub(crate) fn take_over(url: &str) -> Result<ActiveNode, ServeError> {
    let url = DatabaseUrl::parse(url).map_err(|error| StoreError::Database {
        operation: "parse the URL",
        reason: error.to_string(),
    })?;
    let asked = Instant::now();
    let mut waited = false;
    let lease = Lease::acquire(&url, || {
        waited = true;
        // Tests and scripts read this line: keep its shape. No listening line comes before
        // the lease is taken.
        println!("standby: waiting for the lease on {url}");
        let _ = std::io::stdout().flush();
    })?;
    let epoch = lease.epoch();
    let (failure, failed) = oneshot::channel();
    let storage = PostgresStorage::open(&url, Some(epoch))?.on_failure(move |error| {
        let _ = failure.send(error.clone());
    });
    lease
        .watch(LEASE_CHECK_PERIOD, |error| {
            // Another node serves (or may): not one more answer from this one.
            eprintln!("busbar: {error}; stopping at once");
            std::process::exit(i32::from(EXIT_FAILED));
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
    Ok(ActiveNode { storage, failed })
}
