//! What the shared store suite needs of a backend (the `Backend` trait), record builders, and an
//! independent model of the replay rules. Also compiled into busbar-store-postgres's tests,
//! which run the same suite against PostgreSQL.

use std::collections::BTreeMap;

use busbar_store::{
    EntityId, MessageKey, MessagePart, MessageReader, MetaKey, Record, Recovered, Storage,
    StoredMessage,
};
use bytes::Bytes;

/// A backend the shared suite runs against: how to make one and how to restart it.
pub(crate) trait Backend {
    type Store: Storage;
    /// A fresh, empty store (`small` asks for tiny segments so rotation and compaction happen).
    fn create(small: bool) -> Self;
    fn store(&mut self) -> &mut Self::Store;
    /// What a process restart finds (call after a sync: unsynced records may or may not
    /// survive, depending on the backend).
    fn restart(&mut self);
    /// What the store was opened to keep of a message in a recovery that reads no bodies
    /// ([`Storage::recover_keeping`] with it is then checked too).
    fn index_part() -> Option<MessagePart> {
        None
    }
}

pub(crate) const ENTITY: EntityId = EntityId(1);

pub(crate) fn key(sequence: i64) -> MessageKey {
    MessageKey {
        entity: ENTITY,
        sequence,
    }
}

pub(crate) fn insert(sequence: i64, message: &str, state: &str) -> Record {
    Record::Insert {
        key: key(sequence),
        message: Bytes::copy_from_slice(message.as_bytes()),
        state: Bytes::copy_from_slice(state.as_bytes()),
    }
}

pub(crate) fn update(sequence: i64, state: &str) -> Record {
    Record::Update {
        key: key(sequence),
        state: Bytes::copy_from_slice(state.as_bytes()),
    }
}

pub(crate) fn remove(sequence: i64) -> Record {
    Record::Remove { key: key(sequence) }
}

pub(crate) fn meta(key: &str, value: Option<&str>) -> Record {
    Record::Meta {
        entity: ENTITY,
        key: Bytes::copy_from_slice(key.as_bytes()),
        value: value.map(|v| Bytes::copy_from_slice(v.as_bytes())),
    }
}

/// Runs `compact` until it reports nothing more to do (bounded, so a bug cannot loop forever).
pub(crate) fn compact_fully<S: Storage>(store: &mut S) {
    for _ in 0..10_000 {
        if !store.compact().unwrap().more {
            return;
        }
    }
    panic!("compaction never finished");
}

/// What a correct store holds after a sequence of records, written independently of the
/// crate's own replay code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Model {
    pub(crate) messages: BTreeMap<MessageKey, StoredMessage>,
    pub(crate) meta: BTreeMap<MetaKey, Bytes>,
    pub(crate) high_water: BTreeMap<EntityId, i64>,
}

impl Model {
    pub(crate) fn apply(&mut self, record: &Record) {
        match record.clone() {
            Record::Insert {
                key,
                message,
                state,
            } => {
                let mark = self.high_water.entry(key.entity).or_insert(key.sequence);
                *mark = (*mark).max(key.sequence);
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

    /// Whether `reader` finds exactly this state's messages: by key (over `keys`, absent ones
    /// included) and by scans of each entity from every start, whole and one at a time.
    pub(crate) fn reads_match(&self, reader: &dyn MessageReader, keys: &[MessageKey]) -> bool {
        let expected: Vec<Option<Bytes>> = keys
            .iter()
            .map(|key| self.messages.get(key).map(|stored| stored.message.clone()))
            .collect();
        if reader.read(keys).unwrap() != expected {
            return false;
        }
        let entities: std::collections::BTreeSet<EntityId> =
            keys.iter().map(|key| key.entity).collect();
        entities.into_iter().all(|entity| {
            let of_entity: Vec<(i64, Bytes)> = self
                .messages
                .iter()
                .filter(|(key, _)| key.entity == entity)
                .map(|(key, stored)| (key.sequence, stored.message.clone()))
                .collect();
            (0..=of_entity.len()).all(|skip| {
                let from = of_entity
                    .get(skip)
                    .map_or(i64::MAX, |(sequence, _)| *sequence);
                let rest = of_entity.get(skip..).unwrap_or_default();
                reader.scan(entity, from, usize::MAX).unwrap() == rest
                    && reader.scan(entity, from, 1).unwrap() == rest.get(..1).unwrap_or(rest)
            })
        })
    }

    /// Whether `recovered` holds exactly this state.
    pub(crate) fn matches(&self, recovered: &Recovered) -> bool {
        self.messages == recovered.messages
            && self.meta == recovered.meta
            && self.high_water == recovered.high_water
    }

    /// [`matches`](Model::matches) for a recovery that kept `part` of each message.
    pub(crate) fn matches_kept(&self, recovered: &Recovered, part: MessagePart) -> bool {
        let mut kept = self.clone();
        for stored in kept.messages.values_mut() {
            stored.message = part(&stored.message);
        }
        kept.matches(recovered)
    }
}
