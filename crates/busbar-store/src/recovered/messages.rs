//! The recovered live messages, each entity's packed by sequence number: a restart of a deep
//! backlog builds this map for every message, and a [`SequenceMap`] takes appends (what a log
//! replay mostly is) at a fraction of a B-tree's time and memory.

use std::collections::BTreeMap;
use std::ops::Index;

use busbar_seqmap::SequenceMap;

use super::StoredMessage;
use crate::record::{EntityId, MessageKey};

/// The live messages a restart sees, ordered by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveredMessages {
    /// No entity's map is empty (so that equal contents compare equal).
    entities: BTreeMap<EntityId, SequenceMap<StoredMessage>>,
}

impl RecoveredMessages {
    /// How many messages there are.
    pub fn len(&self) -> usize {
        self.entities.values().map(SequenceMap::len).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }

    /// The message of `key`.
    pub fn get(&self, key: &MessageKey) -> Option<&StoredMessage> {
        self.entities.get(&key.entity)?.get(key.sequence)
    }

    /// The message of `key`, mutably.
    pub fn get_mut(&mut self, key: &MessageKey) -> Option<&mut StoredMessage> {
        self.entities.get_mut(&key.entity)?.get_mut(key.sequence)
    }

    /// Whether `key` is live.
    pub fn contains_key(&self, key: &MessageKey) -> bool {
        self.get(key).is_some()
    }

    /// Sets the message of `key`, returning the one it replaces.
    pub fn insert(&mut self, key: MessageKey, stored: StoredMessage) -> Option<StoredMessage> {
        self.entities
            .entry(key.entity)
            .or_default()
            .insert(key.sequence, stored)
    }

    /// Takes the message of `key` out.
    pub fn remove(&mut self, key: &MessageKey) -> Option<StoredMessage> {
        let messages = self.entities.get_mut(&key.entity)?;
        let removed = messages.remove(key.sequence);
        if messages.is_empty() {
            self.entities.remove(&key.entity);
        }
        removed
    }

    /// `entity`'s messages in sequence order.
    pub fn of(&self, entity: EntityId) -> impl Iterator<Item = (i64, &StoredMessage)> {
        self.entities
            .get(&entity)
            .into_iter()
            .flat_map(|m| m.iter())
    }

    /// Every message in key order.
    pub fn iter(&self) -> impl Iterator<Item = (MessageKey, &StoredMessage)> {
        self.entities.iter().flat_map(|(&entity, messages)| {
            messages
                .iter()
                .map(move |(sequence, stored)| (MessageKey { entity, sequence }, stored))
        })
    }

    /// Every key in order.
    pub fn keys(&self) -> impl Iterator<Item = MessageKey> {
        self.iter().map(|(key, _)| key)
    }

    /// Every message in key order, mutably.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut StoredMessage> {
        self.entities.values_mut().flat_map(SequenceMap::values_mut)
    }
}

impl Index<&MessageKey> for RecoveredMessages {
    type Output = StoredMessage;

    fn index(&self, key: &MessageKey) -> &StoredMessage {
        self.get(key).expect("no recovered message with this key")
    }
}

impl FromIterator<(MessageKey, StoredMessage)> for RecoveredMessages {
    fn from_iter<I: IntoIterator<Item = (MessageKey, StoredMessage)>>(entries: I) -> Self {
        let mut messages = RecoveredMessages::default();
        for (key, stored) in entries {
            messages.insert(key, stored);
        }
        messages
    }
}

/// Comparing with a model kept in an ordered map (the stores' tests do).
impl PartialEq<BTreeMap<MessageKey, StoredMessage>> for RecoveredMessages {
    fn eq(&self, other: &BTreeMap<MessageKey, StoredMessage>) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .eq(other.iter().map(|(&key, stored)| (key, stored)))
    }
}

impl PartialEq<RecoveredMessages> for BTreeMap<MessageKey, StoredMessage> {
    fn eq(&self, other: &RecoveredMessages) -> bool {
        other == self
    }
}
