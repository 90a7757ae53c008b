//! The store's error type.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong in the store.
///
/// Cloneable so that one failed sync can be reported to every waiting submitter.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// An operating-system call failed. Writes and syncs that fail poison the store.
    #[error("{operation} {path}: {source}")]
    Io {
        /// What was being done ("write", "sync", "open", ...).
        operation: &'static str,
        /// The file or directory concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: Arc<io::Error>,
    },
    /// A file holds bytes that cannot have been written by a successful sync.
    #[error("corrupt journal {file} at offset {offset}: {reason}")]
    Corrupt {
        /// The segment file.
        file: PathBuf,
        /// The byte offset in that file where the bad data starts.
        offset: u64,
        /// What is wrong there.
        reason: &'static str,
    },
    /// A segment was written by a format version this build does not read.
    #[error(
        "segment {file} has format version {version}, this build reads versions 1 to {supported}"
    )]
    UnsupportedVersion {
        /// The segment file.
        file: PathBuf,
        /// The version found in its header.
        version: u32,
        /// The newest version this build reads (the one it writes).
        supported: u32,
    },
    /// A record is larger than the journal can frame. Nothing was appended.
    #[error("record of {size} bytes exceeds the limit of {limit} bytes")]
    RecordTooLarge {
        /// The encoded size of the record.
        size: usize,
        /// The largest encoded size accepted.
        limit: usize,
    },
    /// The disk holding the store has no room for what was asked: nothing of it was written and
    /// the store is not poisoned. Appends are taken again once space is freed.
    #[error("the store is full: {detail}")]
    Full {
        /// Where and how much room is missing.
        detail: String,
    },
    /// An earlier write or sync failed: the store acknowledges nothing more until restarted.
    #[error("storage is poisoned by an earlier failure and accepts nothing more: {cause}")]
    Poisoned {
        /// The failure that poisoned the store.
        cause: Arc<StoreError>,
    },
    /// Another `FileStorage` (in this or another process) has the directory open.
    #[error("journal directory {dir} is already in use by another store")]
    InUse {
        /// The journal directory.
        dir: PathBuf,
    },
    /// A database backend failed: connecting, a statement or the commit. Nothing of the
    /// transaction is acknowledged; whether it committed is unknown when the commit itself
    /// failed, so the store is poisoned.
    #[error("database {operation} failed: {reason}")]
    Database {
        /// What was being done ("connect", "commit", "recover", ...).
        operation: &'static str,
        /// The database's or driver's error, as text.
        reason: String,
    },
    /// Another node took over the storage: this one must never write again.
    #[error(
        "lease lost: this node held fencing epoch {held}, the database is at epoch {current}; \
         another node serves now"
    )]
    LeaseLost {
        /// The epoch this node acquired.
        held: i64,
        /// The epoch the database holds now.
        current: i64,
    },
    /// A failure injected through `MemoryStorage`'s fault switches.
    #[error("injected fault: {0}")]
    InjectedFault(&'static str),
    /// The group-commit writer has shut down and takes no more submissions.
    #[error("the storage writer has shut down")]
    Closed,
}

impl StoreError {
    /// Wraps an IO error with what was being done and where.
    pub(crate) fn io(operation: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        StoreError::Io {
            operation,
            path: path.into(),
            source: Arc::new(source),
        }
    }
}

/// Remembers the first write or sync failure; once set, every call is refused.
#[derive(Debug, Default)]
pub(crate) struct Poison {
    cause: Option<Arc<StoreError>>,
}

impl Poison {
    /// `Err(Poisoned)` once a failure was recorded.
    pub(crate) fn check(&self) -> Result<(), StoreError> {
        match &self.cause {
            Some(cause) => Err(StoreError::Poisoned {
                cause: Arc::clone(cause),
            }),
            None => Ok(()),
        }
    }

    /// Records `error` as the cause (the first one wins) and returns it for propagation.
    pub(crate) fn set(&mut self, error: StoreError) -> StoreError {
        if self.cause.is_none() {
            self.cause = Some(Arc::new(error.clone()));
        }
        error
    }
}
