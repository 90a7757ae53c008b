//! The state rebuilt at start-up, and the one replay rule every backend applies to build it.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::record::{EntityId, Lsn, MetaKey, Record};

mod messages;

pub use messages::RecoveredMessages;

/// One live message as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// The immutable part, as inserted.
    pub message: Bytes,
    /// The latest mutable state.
    pub state: Bytes,
}

/// Everything that was durable at the last successful sync, as a restart sees it.
///
/// With `FileStorage` the byte fields may share the segment buffers they were read from, so
/// keeping a few of them alive keeps the whole buffer alive; copy them if that matters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovered {
    /// The live messages, ordered by key.
    pub messages: RecoveredMessages,
    /// The entity-scoped metadata entries, ordered by key.
    pub meta: BTreeMap<MetaKey, Bytes>,
    /// The highest sequence number ever inserted per entity, even if that message is gone, so
    /// that sequence numbers keep increasing across restarts.
    pub high_water: BTreeMap<EntityId, i64>,
    /// The position of the last durable record; new appends get higher positions.
    pub durable: Lsn,
}

impl Recovered {
    /// `entity`'s live messages in sequence order.
    pub fn messages_of(&self, entity: EntityId) -> impl Iterator<Item = (i64, &StoredMessage)> {
        self.messages.of(entity)
    }

    /// Applies one record in log order, keeping its bytes (no copy). Updates and removes of
    /// unknown keys are ignored: the message they refer to was removed earlier, or compacted
    /// away with its removal.
    pub(crate) fn apply(&mut self, record: Record) {
        match record {
            Record::Insert {
                key,
                message,
                state,
            } => {
                self.raise_high_water(key.entity, key.sequence);
                self.messages.insert(key, StoredMessage { message, state });
            }
            Record::Update { key, state } => {
                if let Some(stored) = self.messages.get_mut(&key) {
                    stored.state = state;
                }
            }
            Record::Remove { key } => {
                self.messages.remove(&key);
            }
            Record::Meta { entity, key, value } => {
                let meta_key = MetaKey { entity, key };
                match value {
                    Some(value) => self.meta.insert(meta_key, value),
                    None => self.meta.remove(&meta_key),
                };
            }
        }
    }

    /// Notes that `sequence` was used in `entity`.
    pub(crate) fn raise_high_water(&mut self, entity: EntityId, sequence: i64) {
        let mark = self.high_water.entry(entity).or_insert(sequence);
        *mark = (*mark).max(sequence);
    }
}
