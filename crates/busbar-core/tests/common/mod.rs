//! Shared test helpers: entity construction, message builders and a simulated store that applies
//! records the way `busbar-store` keeps them.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use busbar_core::{
    Delivery, EnqueueOutcome, Entity, EntityConfig, NewMessage, Record, SequenceNumber, Timestamp,
};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::time::Duration;

pub const SEED: u128 = 0x5eed_0000_0000_0000_0000_0000_0000_0001;
pub const T0: Timestamp = Timestamp(1_700_000_000_000);

pub fn at(offset_ms: i64) -> Timestamp {
    Timestamp(T0.0 + offset_ms)
}

pub fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

pub fn entity(config: EntityConfig) -> Entity {
    Entity::new(config, SEED).unwrap()
}

pub fn message(payload: &'static str) -> NewMessage {
    NewMessage {
        payload: Bytes::from_static(payload.as_bytes()),
        ..NewMessage::default()
    }
}

pub fn with_id(payload: &'static str, id: &'static str) -> NewMessage {
    NewMessage {
        message_id: Some(Bytes::from_static(id.as_bytes())),
        ..message(payload)
    }
}

/// Enqueues one message, reports its insert durable (as the broker does once the store synced)
/// and returns its sequence number.
pub fn send(entity: &mut Entity, message: NewMessage, now: Timestamp) -> SequenceNumber {
    match entity.enqueue(vec![message], now).unwrap()[..] {
        [EnqueueOutcome::Enqueued(sequence)] => {
            entity.mark_durable(sequence);
            sequence
        }
        ref other => panic!("expected one enqueued message, got {other:?}"),
    }
}

/// Enqueues `messages` at `now`, reports each insert durable, and returns the inserts as the
/// store keeps them: `(sequence, message bytes, state bytes)`.
pub fn enqueue_durably(
    entity: &mut Entity,
    messages: Vec<NewMessage>,
    now: Timestamp,
) -> Vec<(i64, Bytes, Bytes)> {
    entity.enqueue(messages, now).unwrap();
    let records: Vec<Record> = entity.drain_records().collect();
    let mut inserts = Vec::new();
    for record in records {
        if let Record::Insert {
            sequence,
            message,
            state,
        } = record
        {
            entity.mark_durable(sequence);
            inserts.push((sequence.0, message, state));
        }
    }
    inserts
}

pub fn payload(delivery: &Delivery) -> &[u8] {
    &delivery.payload
}

/// What the store keeps per entity: `(message, latest state)` per sequence, and the high water.
#[derive(Default, Debug, Clone)]
pub struct SimulatedStore {
    pub messages: BTreeMap<i64, (Bytes, Bytes)>,
    pub high_water: i64,
}

impl SimulatedStore {
    pub fn apply(&mut self, records: impl IntoIterator<Item = Record>) {
        for record in records {
            match record {
                Record::Insert {
                    sequence,
                    message,
                    state,
                } => {
                    assert!(
                        self.messages.insert(sequence.0, (message, state)).is_none(),
                        "insert of an existing sequence {sequence}"
                    );
                    self.high_water = self.high_water.max(sequence.0);
                }
                Record::Update { sequence, state } => {
                    let entry = self
                        .messages
                        .get_mut(&sequence.0)
                        .unwrap_or_else(|| panic!("update of unknown sequence {sequence}"));
                    entry.1 = state;
                }
                Record::Remove { sequence } => {
                    assert!(
                        self.messages.remove(&sequence.0).is_some(),
                        "remove of unknown sequence {sequence}"
                    );
                }
            }
        }
    }

    pub fn restore(&self, config: EntityConfig, now: Timestamp) -> Entity {
        self.restore_with_seed(config, SEED ^ 1, now)
    }

    /// Restores with a given lock-token seed (a real restart draws a fresh one).
    pub fn restore_with_seed(&self, config: EntityConfig, seed: u128, now: Timestamp) -> Entity {
        let messages = self
            .messages
            .iter()
            .map(|(sequence, (message, state))| (*sequence, message.clone(), state.clone()));
        Entity::restore(config, seed, self.high_water, messages, now).unwrap()
    }
}
