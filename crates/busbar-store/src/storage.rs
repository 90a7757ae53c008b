//! The `Storage` trait every backend implements.

use std::sync::Arc;

use bytes::Bytes;

use crate::error::StoreError;
use crate::reader::MessageReader;
use crate::record::{Lsn, Record};
use crate::recovered::Recovered;

/// What recovery keeps of a message's immutable part (see [`Storage::recover_keeping`]).
pub type MessagePart = fn(&Bytes) -> Bytes;

/// A durable, batch-oriented log of [`Record`]s.
///
/// The broker drives one storage from one writer thread (see
/// [`GroupCommit`](crate::GroupCommit)): many appends, then one sync, then it acknowledges
/// everything up to the position the sync returned.
///
/// **Poisoning.** When a write or a sync fails, the backend cannot know what reached the disk, so
/// it never retries: that call returns the error and every later call returns
/// [`StoreError::Poisoned`]. Only a restart (reopening the storage and recovering) clears it.
pub trait Storage: Send {
    /// Buffers `records` in order and returns the position of the last one (the current
    /// position if `records` is empty).
    ///
    /// On return the records are ordered after everything appended before, but **not durable**:
    /// a crash may lose them, but only all together: recovery never keeps part of one append
    /// (which is how a topic send stores all its copies or none). A record too large to store is refused before anything is written
    /// ([`StoreError::RecordTooLarge`]), and an append the disk has no room for is refused
    /// with nothing of it kept ([`StoreError::Full`]); neither poisons the store, any other
    /// error does.
    fn append(&mut self, records: &[Record]) -> Result<Lsn, StoreError>;

    /// Makes everything appended so far durable and returns the position of the last record.
    ///
    /// On `Ok(lsn)` every record up to `lsn` survives any crash. On `Err` nothing more may be
    /// acknowledged: the store is poisoned.
    fn sync(&mut self) -> Result<Lsn, StoreError>;

    /// The live state as of the last successful sync (what a restart right now would see).
    ///
    /// Call it once at start-up. Records appended but not synced are not included.
    fn recover(&mut self) -> Result<Recovered, StoreError>;

    /// [`recover`](Storage::recover), keeping of each message's immutable part only what
    /// `keep` makes of it (for a broker whose message bytes stay in the store, their index), so
    /// that a backlog larger than memory is never held whole. The default trims after a whole
    /// recovery; backends that read message by message trim as they go.
    fn recover_keeping(&mut self, keep: MessagePart) -> Result<Recovered, StoreError> {
        let mut recovered = self.recover()?;
        for stored in recovered.messages.values_mut() {
            stored.message = keep(&stored.message);
        }
        Ok(recovered)
    }

    /// A handle that reads live messages back from any thread while this storage goes on
    /// writing (see [`MessageReader`] for what a read sees). Ask for it before the storage
    /// moves to its writer thread. A handle may outlive the storage; its reads may then fail.
    fn reader(&self) -> Result<Arc<dyn MessageReader>, StoreError>;

    /// Drops what settled records no longer need, one bounded step per call so appends are not
    /// held up for long. Call it between syncs while it reports work done.
    ///
    /// A step may sync (which makes earlier appends durable too) before it deletes anything, so
    /// it is crash-safe at every point. IO failures poison the store.
    fn compact(&mut self) -> Result<CompactionReport, StoreError>;

    /// Prepares room for later appends so that syncing them is cheaper; the writer calls it
    /// when it has nothing queued. Writes nothing a recovery would read as a record. A failure
    /// does not poison the store (appends still work without it). Does nothing by default.
    fn preallocate(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Whether there is room for new messages: [`StoreError::Full`] once the storage's disk has
    /// less free space than it keeps for settlements and compaction (which free space). The
    /// writer asks after every commit and, while full, at short intervals. `Ok` by default.
    fn check_room(&mut self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Whether this storage keeps nothing across a restart, so that appending and syncing cost
    /// next to nothing. [`GroupCommit`](crate::GroupCommit) then commits on the submitter's own
    /// thread instead of handing every submission to a writer thread and back. `false` by
    /// default.
    fn is_volatile(&self) -> bool {
        false
    }
}

/// What one compaction step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactionReport {
    /// Records copied forward because they were still live.
    pub records_rewritten: u64,
    /// Records dropped because nothing live depends on them any more.
    pub records_dropped: u64,
    /// Bytes of storage released.
    pub bytes_released: u64,
    /// Whether another step would find more to do now.
    pub more: bool,
}

impl CompactionReport {
    /// Whether this step changed anything.
    pub fn did_work(&self) -> bool {
        self.records_rewritten > 0 || self.records_dropped > 0 || self.bytes_released > 0
    }
}
