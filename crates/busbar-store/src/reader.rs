//! Reading stored messages back while the writer goes on: the `MessageReader` every backend
//! hands out, so a broker can keep message bodies in the store instead of in memory.

use bytes::Bytes;

use crate::error::StoreError;
use crate::record::{EntityId, MessageKey};

/// Reads the immutable parts of live messages, from any thread, concurrently with the one
/// writer that appends, syncs and compacts.
///
/// **What a read sees.** Every message made durable by a sync that returned before the read
/// began, and not removed by one; it may also see records appended later (never part of a
/// message: an immutable part is read whole or not at all). A message being moved by compaction
/// is read from one copy or the other. A read of a message whose insert was never synced, or
/// whose removal was, may find it or not.
///
/// A failed read changes nothing and does not poison the store: reads never write.
pub trait MessageReader: Send + Sync {
    /// The immutable parts of `keys`, in the order asked; `None` for a key that is not live.
    fn read(&self, keys: &[MessageKey]) -> Result<Vec<Option<Bytes>>, StoreError>;

    /// Up to `limit` live messages of `entity` whose sequence number is `from` or more, in
    /// sequence order, with their immutable parts: what a deep queue's read-ahead asks for.
    fn scan(
        &self,
        entity: EntityId,
        from: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Bytes)>, StoreError>;
}
