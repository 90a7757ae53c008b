//! Committing on the submitter's own thread, for a storage that keeps nothing
//! ([`Storage::is_volatile`]): its appends and syncs cost next to nothing, so handing each
//! submission to a writer thread and the completion back would only add two thread wake-ups to
//! every send.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use super::Completion;
use super::health::Health;
use super::stats::CommitStats;
use crate::error::StoreError;
use crate::record::Record;
use crate::storage::Storage;

/// What a [`GroupCommitHandle`](super::GroupCommitHandle) of an inline store calls, without
/// knowing the storage's type.
pub(super) trait CommitNow: Send + Sync {
    /// Appends and syncs `records`, then calls `completion` (on this thread).
    fn commit(&self, records: Vec<Record>, completion: Completion);
}

/// A volatile storage shared by the submitters; `None` once shut down.
pub(super) struct InlineStore<S> {
    storage: Mutex<Option<S>>,
    stats: Arc<CommitStats>,
    health: Arc<Health>,
}

impl<S> InlineStore<S> {
    pub(super) fn new(storage: S, stats: Arc<CommitStats>, health: Arc<Health>) -> Self {
        InlineStore {
            storage: Mutex::new(Some(storage)),
            stats,
            health,
        }
    }

    /// Takes the storage out: later commits complete with [`StoreError::Closed`].
    pub(super) fn close(&self) -> Option<S> {
        self.lock().take()
    }

    fn lock(&self) -> MutexGuard<'_, Option<S>> {
        // Nothing panics while holding it half-way through an update worth protecting.
        self.storage.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<S: Storage> CommitNow for InlineStore<S> {
    fn commit(&self, records: Vec<Record>, completion: Completion) {
        let outcome = match self.lock().as_mut() {
            None => Err(StoreError::Closed),
            Some(storage) => storage.append(&records).and_then(|last| {
                let started = Instant::now();
                storage.sync()?;
                // A group of one: each submission is committed on its own.
                self.stats.synced(1, started.elapsed());
                Ok(last)
            }),
        };
        if let Err(error) = &outcome {
            self.health.record_failure(error);
        }
        // Called after the lock is released: a completion may submit again.
        completion(outcome);
    }
}
