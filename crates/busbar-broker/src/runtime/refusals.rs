//! What the core's and the store's refusals are to a client: the one mapping of each onto
//! broker errors, shared by the entity tasks and the sends to several entities.

use busbar_core::CoreError;
use busbar_store::StoreError;

use crate::errors::BrokerError;

/// The one mapping of core refusals onto broker errors.
pub(crate) fn core_error(error: CoreError) -> BrokerError {
    match error {
        CoreError::LockLost => BrokerError::MessageLockLost,
        CoreError::MessageNotFound(sequence) => BrokerError::MessageNotFound {
            sequence_number: sequence.value(),
        },
        CoreError::NotAllowed(reason) => BrokerError::NotAllowed(reason.to_owned()),
        CoreError::InvalidConfig(reason) => BrokerError::Argument(reason.to_owned()),
        CoreError::QuotaExceeded { size, max } => BrokerError::EntityQuotaExceeded { size, max },
        CoreError::MemoryBudgetExceeded { used, limit } => {
            BrokerError::ResourceLimitExceeded(format!(
                "The broker's memory budget for messages is used up: {used} bytes held, {limit} \
                 allowed (busbar --memory-budget). Sends are accepted again once receivers take \
                 messages."
            ))
        }
        CoreError::Decode(reason) => BrokerError::Internal(reason.to_owned()),
    }
}

/// A store failure as the client hears it: a full disk is a quota the client cannot retry
/// past (as the service's namespace quota), anything else a busy server.
pub(crate) fn store_error(error: StoreError) -> BrokerError {
    match error {
        StoreError::Full { detail } => {
            BrokerError::ResourceLimitExceeded(format!("The store is full: {detail}."))
        }
        error => BrokerError::StoreUnavailable {
            reason: error.to_string(),
        },
    }
}
