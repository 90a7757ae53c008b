//! Message bodies kept in the store, not in memory: what an entity task evicts when the memory
//! budget is used up, reads ahead from the head of its queues, and reads back for a delivery
//! whose bytes were evicted. Plain data and calls on the store's reader: no task depends on it.

use std::sync::Arc;

use busbar_core::{Delivery, Entity, SequenceNumber, SubQueue};
use busbar_store::{EntityId, MessageKey, MessageReader, StoreError};

use super::metrics::CacheCounters;
use crate::errors::BrokerError;

/// How many messages at the head of a sub-queue are kept in memory ahead of its receivers:
/// one batched read brings them back, in sequence order.
pub(crate) const READ_AHEAD: usize = 256;

/// The store's reader and the cache counters, shared by every entity task of a broker whose
/// storage keeps what it is given (never with `--memory`, which has nowhere to evict to).
pub(crate) struct MessageBodies {
    reader: Arc<dyn MessageReader>,
    counters: Arc<CacheCounters>,
}

impl MessageBodies {
    pub(crate) fn new(reader: Arc<dyn MessageReader>, counters: Arc<CacheCounters>) -> Self {
        Self { reader, counters }
    }

    /// Evicts this entity's bytes, from its tail, while the budget all entities share is used
    /// up: the bytes held stay within the budget, whatever the backlog.
    pub(crate) fn evict_over_budget(&self, entity: &mut Entity) {
        let budget = entity.memory_budget();
        let over = budget.used().saturating_sub(budget.limit());
        if over == 0 {
            return;
        }
        let (_, evicted) = entity.evict_bodies(over);
        self.counters.evicted(evicted);
    }

    /// Brings back the evicted bytes of the next `READ_AHEAD` messages a receive of `queue`
    /// would hand out, in one read.
    pub(crate) fn read_ahead(
        &self,
        entity: &mut Entity,
        id: EntityId,
        queue: SubQueue,
    ) -> Result<(), StoreError> {
        // An eighth of the budget at most, so the read-ahead never evicts itself.
        let max_bytes = entity.memory_budget().limit() / 8;
        let missing = entity.evicted_at_head(queue, READ_AHEAD, max_bytes);
        if missing.is_empty() {
            return Ok(());
        }
        let read = self.read(id, &missing)?;
        let found = missing
            .into_iter()
            .zip(read)
            .filter_map(|(sequence, bytes)| Some((sequence, bytes?)));
        if let Err(error) = entity.restore_bodies(found) {
            tracing::error!(entity = id.0, %error, "a message read back from the store does not match its index");
        }
        Ok(())
    }

    /// Fills in the payload of each delivery whose bytes were evicted, in one read. A message
    /// the store no longer has (it cannot be: it is live) fails the whole call.
    pub(crate) fn hydrate(
        &self,
        id: EntityId,
        deliveries: &mut [Delivery],
    ) -> Result<(), BrokerError> {
        let missing: Vec<SequenceNumber> = deliveries
            .iter()
            .filter(|delivery| delivery.payload_in_store)
            .map(|delivery| delivery.sequence)
            .collect();
        let hits = deliveries.len() - missing.len();
        self.counters.hit(hits);
        if missing.is_empty() {
            return Ok(());
        }
        self.counters.missed(missing.len());
        let mut read = self
            .read(id, &missing)
            .map_err(|error| BrokerError::StoreUnavailable {
                reason: error.to_string(),
            })?
            .into_iter();
        for delivery in deliveries.iter_mut().filter(|d| d.payload_in_store) {
            let stored = read
                .next()
                .flatten()
                .ok_or_else(|| lost(id, delivery.sequence))?;
            delivery
                .fill_from_store(stored)
                .map_err(|_| lost(id, delivery.sequence))?;
        }
        Ok(())
    }

    fn read(
        &self,
        id: EntityId,
        sequences: &[SequenceNumber],
    ) -> Result<Vec<Option<bytes::Bytes>>, StoreError> {
        let keys: Vec<MessageKey> = sequences
            .iter()
            .map(|sequence| MessageKey {
                entity: id,
                sequence: sequence.value(),
            })
            .collect();
        let read = self.reader.read(&keys)?;
        let bytes: usize = read.iter().flatten().map(bytes::Bytes::len).sum();
        self.counters.read(bytes);
        Ok(read)
    }
}

/// A live message the store could not give back (it cannot happen: its removal would have
/// come through this entity).
fn lost(id: EntityId, sequence: SequenceNumber) -> BrokerError {
    BrokerError::Internal(format!(
        "message {} of entity {} is indexed but the store does not give it back",
        sequence.value(),
        id.0
    ))
}
