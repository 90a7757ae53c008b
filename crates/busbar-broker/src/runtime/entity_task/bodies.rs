//! Message bodies kept in the store, as an entity task uses them: everything it starts with
//! evicted, the heads of credited sub-queues read ahead, and every delivery's payload read back
//! where it was evicted (`message_bodies.rs` holds the store's side).

use std::sync::Arc;

use busbar_core::SubQueue;
use busbar_store::EntityId;

use super::EntityTask;
use crate::errors::BrokerError;
use crate::runtime::management::OperationResult;
use crate::runtime::message_bodies::MessageBodies;

impl EntityTask {
    /// Keeps message bytes in the store: what the entity starts with is evicted at once (a
    /// restart rebuilds the index, not the cache), later messages once the memory budget is
    /// used up, and the head of each sub-queue with receivers is read ahead.
    pub(crate) fn keeping_bodies_in_store(mut self, bodies: Arc<MessageBodies>) -> Self {
        let core = self.entity.core_mut();
        core.keep_bodies_in_store();
        core.evict_bodies(u64::MAX);
        self.bodies = Some(bodies);
        self
    }

    /// Reads back the evicted bytes at the head of each sub-queue a receiver has credit for.
    pub(super) fn read_ahead(&mut self) {
        let Some(bodies) = &self.bodies else {
            return;
        };
        for sub_queue in [SubQueue::Main, SubQueue::DeadLetter] {
            let wanted = self
                .receivers
                .iter()
                .any(|r| r.sub_queue == sub_queue && !r.session_link && r.credit() > 0);
            if wanted
                && let Err(error) = bodies.read_ahead(self.entity.core_mut(), self.id, sub_queue)
            {
                tracing::warn!(%error, "read-ahead from the store failed");
            }
        }
    }

    /// An operation's result with the payloads of its messages read back where evicted.
    pub(super) fn with_payloads(
        &self,
        result: Result<OperationResult, BrokerError>,
    ) -> Result<OperationResult, BrokerError> {
        match (result, &self.bodies) {
            (Ok(OperationResult::Messages(mut deliveries)), Some(bodies)) => {
                bodies.hydrate(self.id, &mut deliveries)?;
                Ok(OperationResult::Messages(deliveries))
            }
            (result, _) => result,
        }
    }
}

/// Reads one delivery's payload back from the store when it was evicted.
pub(super) fn hydrate(
    bodies: Option<&MessageBodies>,
    id: EntityId,
    delivery: &mut busbar_core::Delivery,
) -> Result<(), BrokerError> {
    match bodies {
        Some(bodies) => bodies.hydrate(id, std::slice::from_mut(delivery)),
        None => Ok(()),
    }
}
