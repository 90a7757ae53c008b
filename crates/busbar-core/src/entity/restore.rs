//! Replay: rebuilding an entity from the messages the store kept (locks are volatile and start
//! empty; duplicate detection is re-seeded from the message-ids of the surviving messages).

use super::queue::RestoredKeys;
use super::{Entity, SubQueue};
use crate::codec::{decode_body, decode_state};
use crate::config::EntityConfig;
use crate::error::CoreError;
use crate::message::{MessageState, Stage, StoredMessage};
use crate::time::{SequenceNumber, Timestamp};
use bytes::Bytes;

impl Entity {
    /// Rebuilds an entity from the store's view: the highest sequence number it ever inserted
    /// (`high_water`) and every live message as `(sequence, message bytes, latest state bytes)`.
    ///
    /// Messages come back in the state they were persisted in, all unlocked; deadlines already
    /// past (activations, expiries) are reported by [`poll_timeout`](Entity::poll_timeout) at
    /// once. Ids of completed messages are not persisted, so after a restart duplicate detection
    /// only knows the ids of messages still stored. Malformed input fails with
    /// [`CoreError::Decode`]; it never panics.
    pub fn restore(
        config: EntityConfig,
        seed: u128,
        high_water: i64,
        messages: impl IntoIterator<Item = (i64, Bytes, Bytes)>,
        now: Timestamp,
    ) -> Result<Entity, CoreError> {
        config.validate()?;
        let mut entity = Entity::empty(config, seed);
        let mut highest = high_water.max(0);
        let mut ids = Vec::new();
        // The highest sequence number restored so far: the stores give messages in ascending
        // order, and one above it needs no lookup to rule out a duplicate.
        let mut last = 0;
        let (mut main_keys, mut dead_letter_keys) =
            (RestoredKeys::default(), RestoredKeys::default());
        for (raw, message, state) in messages {
            let sequence = SequenceNumber(raw);
            if sequence < SequenceNumber::FIRST {
                return Err(CoreError::Decode("sequence numbers start at 1"));
            }
            if raw <= last
                && (entity.main.get(sequence).is_some()
                    || entity.dead_letter.get(sequence).is_some())
            {
                return Err(CoreError::Decode("duplicate sequence number"));
            }
            last = last.max(raw);
            let body = decode_body(message)?;
            let persisted = decode_state(&state)?;
            // Only ids the duplicate window still covers: a deep backlog's others cost a copy
            // each for nothing.
            if let Some(id) = body.message_id()
                && entity.duplicates.covers(body.accepted_time(), now)
            {
                // A copy: a slice would keep the store's whole read buffer alive.
                ids.push((body.accepted_time(), Bytes::copy_from_slice(id)));
            }
            let stage = match persisted.state {
                MessageState::Active => Stage::Available,
                MessageState::Deferred => Stage::Deferred,
                MessageState::Scheduled => Stage::Scheduled,
            };
            highest = highest.max(raw);
            let stored = StoredMessage {
                body,
                delivery_count: persisted.delivery_count,
                dead_letter: persisted.dead_letter.map(Box::new),
                properties: persisted.properties,
                stage,
            };
            let (queue, keys) = match persisted.queue {
                SubQueue::Main => (&mut entity.main, &mut main_keys),
                SubQueue::DeadLetter => (&mut entity.dead_letter, &mut dead_letter_keys),
            };
            queue.insert_restored(sequence, stored, keys);
        }
        entity.main.index_restored(main_keys);
        entity.dead_letter.index_restored(dead_letter_keys);
        entity.next_sequence = highest.checked_add(1).ok_or(CoreError::Decode(
            "high-water mark at the sequence-number limit",
        ))?;
        // The window forgets in arrival order, so remember ids oldest first.
        ids.sort_by_key(|(at, _)| *at);
        for (at, id) in ids {
            entity.duplicates.remember(id, at);
        }
        Ok(entity)
    }
}
