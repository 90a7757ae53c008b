//! A sync's buffered records folded into their net effect per key, in columns ready for
//! multi-row statements (`unnest` of arrays): each key is written once however often the batch
//! touched it, with the replay rules of `Recovered` (an update or remove of an unknown key is
//! ignored; inserting a stored key replaces it).

use std::collections::BTreeMap;

use busbar_store::{EntityId, MessageKey, Record};
use bytes::Bytes;

/// What a batch does to one message, given what the database may already hold.
enum MessageChange<'a> {
    /// Inserted in this batch (perhaps updated after): write the whole row.
    Put {
        message: &'a Bytes,
        state: &'a Bytes,
    },
    /// Only updated: replace the state if the row exists.
    SetState(&'a Bytes),
    /// Removed (anything after it but an insert is ignored).
    Delete,
}

/// The net changes of a batch, as parallel columns.
#[derive(Default)]
pub(crate) struct Changes<'a> {
    pub(crate) puts: Puts<'a>,
    pub(crate) set_states: Keyed<&'a [u8]>,
    pub(crate) deletes: Keyed<()>,
    pub(crate) meta_puts: MetaColumns<'a>,
    pub(crate) meta_deletes: MetaColumns<'a>,
    pub(crate) high_water: Keyed<()>,
}

/// Rows of whole messages to write.
#[derive(Default)]
pub(crate) struct Puts<'a> {
    pub(crate) entities: Vec<i64>,
    pub(crate) sequences: Vec<i64>,
    pub(crate) messages: Vec<&'a [u8]>,
    pub(crate) states: Vec<&'a [u8]>,
}

/// `(entity, sequence)` keys, each with a value (the state, or nothing).
#[derive(Default)]
pub(crate) struct Keyed<V> {
    pub(crate) entities: Vec<i64>,
    pub(crate) sequences: Vec<i64>,
    pub(crate) values: Vec<V>,
}

/// Metadata keys, with their values for puts (empty for deletes).
#[derive(Default)]
pub(crate) struct MetaColumns<'a> {
    pub(crate) entities: Vec<i64>,
    pub(crate) keys: Vec<&'a [u8]>,
    pub(crate) values: Vec<&'a [u8]>,
}

impl<'a> Changes<'a> {
    /// Folds `records`, in order, into their net effect.
    pub(crate) fn fold(records: &'a [Record]) -> Changes<'a> {
        let mut messages: BTreeMap<MessageKey, MessageChange<'a>> = BTreeMap::new();
        let mut meta: BTreeMap<(EntityId, &'a [u8]), Option<&'a [u8]>> = BTreeMap::new();
        let mut high_water: BTreeMap<EntityId, i64> = BTreeMap::new();
        for record in records {
            match record {
                Record::Insert {
                    key,
                    message,
                    state,
                } => {
                    let mark = high_water.entry(key.entity).or_insert(key.sequence);
                    *mark = (*mark).max(key.sequence);
                    messages.insert(*key, MessageChange::Put { message, state });
                }
                Record::Update { key, state } => {
                    let change = messages
                        .entry(*key)
                        .or_insert(MessageChange::SetState(state));
                    match change {
                        MessageChange::Put { state: current, .. } => *current = state,
                        MessageChange::SetState(current) => *current = state,
                        MessageChange::Delete => {}
                    }
                }
                Record::Remove { key } => {
                    messages.insert(*key, MessageChange::Delete);
                }
                Record::Meta { entity, key, value } => {
                    meta.insert((*entity, key), value.as_deref());
                }
            }
        }
        let mut changes = Changes::default();
        for (key, change) in messages {
            let (entity, sequence) = (i64::from(key.entity.0), key.sequence);
            match change {
                MessageChange::Put { message, state } => {
                    changes.puts.entities.push(entity);
                    changes.puts.sequences.push(sequence);
                    changes.puts.messages.push(message);
                    changes.puts.states.push(state);
                }
                MessageChange::SetState(state) => changes.set_states.push(entity, sequence, state),
                MessageChange::Delete => changes.deletes.push(entity, sequence, ()),
            }
        }
        for ((entity, key), value) in meta {
            let entity = i64::from(entity.0);
            match value {
                Some(value) => changes.meta_puts.push(entity, key, value),
                None => changes.meta_deletes.push(entity, key, &[]),
            }
        }
        for (entity, sequence) in high_water {
            changes.high_water.push(i64::from(entity.0), sequence, ());
        }
        changes
    }
}

impl<V> Keyed<V> {
    fn push(&mut self, entity: i64, sequence: i64, value: V) {
        self.entities.push(entity);
        self.sequences.push(sequence);
        self.values.push(value);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }
}

impl<'a> MetaColumns<'a> {
    fn push(&mut self, entity: i64, key: &'a [u8], value: &'a [u8]) {
        self.entities.push(entity);
        self.keys.push(key);
        self.values.push(value);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }
}

impl Puts<'_> {
    /// Splits the rows into runs of at most `max_bytes` of payload (at least one row each), so
    /// that no statement's arrays come near PostgreSQL's 1 GiB limit on a value.
    pub(crate) fn runs(&self, max_bytes: usize) -> Vec<std::ops::Range<usize>> {
        let mut runs = Vec::new();
        let (mut start, mut bytes) = (0, 0);
        for (index, (message, state)) in self.messages.iter().zip(&self.states).enumerate() {
            let size = message.len() + state.len();
            if index > start && bytes + size > max_bytes {
                runs.push(start..index);
                (start, bytes) = (index, 0);
            }
            bytes += size;
        }
        if start < self.entities.len() {
            runs.push(start..self.entities.len());
        }
        runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(sequence: i64) -> MessageKey {
        MessageKey {
            entity: EntityId(7),
            sequence,
        }
    }

    fn bytes(text: &'static str) -> Bytes {
        Bytes::from_static(text.as_bytes())
    }

    #[test]
    fn each_key_gets_its_net_effect() {
        let records = [
            Record::Insert {
                key: key(1),
                message: bytes("m1"),
                state: bytes("s1"),
            },
            Record::Update {
                key: key(1),
                state: bytes("s1b"),
            },
            Record::Update {
                key: key(2),
                state: bytes("s2"),
            },
            Record::Remove { key: key(3) },
            Record::Update {
                key: key(3),
                state: bytes("ignored"),
            },
            Record::Insert {
                key: key(4),
                message: bytes("m4"),
                state: bytes("s4"),
            },
            Record::Remove { key: key(4) },
        ];
        let changes = Changes::fold(&records);
        assert_eq!(changes.puts.sequences, [1]);
        assert_eq!(changes.puts.states, [b"s1b".as_slice()]);
        assert_eq!(changes.set_states.sequences, [2]);
        assert_eq!(changes.deletes.sequences, [3, 4]);
        assert_eq!(changes.high_water.entities, [7]);
        assert_eq!(changes.high_water.sequences, [4]);
    }

    #[test]
    fn runs_stay_under_the_byte_cap() {
        let message = Bytes::from(vec![0u8; 10]);
        let records: Vec<Record> = (0..5)
            .map(|sequence| Record::Insert {
                key: key(sequence),
                message: message.clone(),
                state: Bytes::new(),
            })
            .collect();
        let changes = Changes::fold(&records);
        assert_eq!(changes.puts.runs(25), [0..2, 2..4, 4..5]);
        assert_eq!(changes.puts.runs(5), [0..1, 1..2, 2..3, 3..4, 4..5]);
    }
}
