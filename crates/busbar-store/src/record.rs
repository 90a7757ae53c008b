//! The record contract between the core and the store: keys, records and log positions.

use bytes::Bytes;

/// Identifies one entity (queue or subscription); assigned by the broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntityId(pub u32);

/// Identifies one stored message: its entity and the sequence number the core assigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MessageKey {
    /// The entity the message belongs to.
    pub entity: EntityId,
    /// The message's sequence number, unique within the entity.
    pub sequence: i64,
}

impl MessageKey {
    /// The keys of `entity` from sequence number `from` on, in order: what a scan covers.
    pub(crate) fn from_on(entity: EntityId, from: i64) -> std::ops::RangeInclusive<MessageKey> {
        MessageKey {
            entity,
            sequence: from,
        }..=MessageKey {
            entity,
            sequence: i64::MAX,
        }
    }
}

/// Identifies one entry of the entity-scoped key/value metadata map.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MetaKey {
    /// The entity the entry belongs to.
    pub entity: EntityId,
    /// The entry's key (opaque bytes chosen by the caller).
    pub key: Bytes,
}

/// A position in the log: every appended record gets the next one.
///
/// Positions only grow, across restarts too. `Lsn(0)` means "nothing".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Lsn(pub u64);

impl Lsn {
    /// The position following this one.
    pub(crate) fn next(self) -> Lsn {
        Lsn(self.0 + 1)
    }
}

/// One change to what must survive a restart.
///
/// The store knows nothing of what the bytes mean: the core encodes both parts of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// A new message: immutable part and initial state (both opaque bytes encoded by the core).
    ///
    /// Inserting a key that is already stored replaces it.
    Insert {
        /// The message's key.
        key: MessageKey,
        /// The immutable part.
        message: Bytes,
        /// The initial mutable state.
        state: Bytes,
    },
    /// Replaces the whole mutable state of a stored message.
    ///
    /// An update of an unknown key is ignored (it may refer to a message removed earlier).
    Update {
        /// The message's key.
        key: MessageKey,
        /// The new mutable state.
        state: Bytes,
    },
    /// The message is gone for good (completed, received-and-deleted, expired, cancelled).
    ///
    /// Removing an unknown key is ignored.
    Remove {
        /// The message's key.
        key: MessageKey,
    },
    /// Entity-scoped key/value; `None` deletes the key.
    Meta {
        /// The entity the entry belongs to.
        entity: EntityId,
        /// The entry's key.
        key: Bytes,
        /// The new value, or `None` to delete the entry.
        value: Option<Bytes>,
    },
}
