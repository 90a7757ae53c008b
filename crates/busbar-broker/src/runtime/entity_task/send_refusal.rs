//! Why a send is refused before it touches the entity: the entity is overloaded or a test
//! injected server-busy (see `throttle`), or the store takes no new messages (its disk is full,
//! or it failed).

use busbar_store::{StoreCondition, StoreError};

use super::EntityTask;
use crate::errors::BrokerError;
use crate::runtime::refusals::store_error;

impl EntityTask {
    /// The refusal of the next send, if it is to be refused.
    pub(super) fn send_refusal(&mut self) -> Option<BrokerError> {
        if self.refuses_send() {
            return Some(BrokerError::ServerBusy);
        }
        if !self.store.refuses_new_messages() {
            return None;
        }
        match self.store.condition() {
            StoreCondition::Healthy => None,
            StoreCondition::Full(detail) => Some(store_error(StoreError::Full { detail })),
            StoreCondition::Failed(reason) => Some(BrokerError::StoreUnavailable { reason }),
        }
    }
}
