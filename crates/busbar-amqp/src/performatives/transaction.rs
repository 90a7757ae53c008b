//! Transactions (§4): what a controller sends the coordinator (`declare`, `discharge`), what
//! the coordinator answers a declare with (`declared`), and the `transactional-state` a
//! transfer or disposition carries to do its work inside a transaction.

use bytes::Bytes;

use super::DeliveryState;
use crate::error::DecodeError;
use crate::types::{Composite, Value, composite, fields_of};

composite! {
    /// Asks the coordinator for a new transaction (§4.5.2).
    Declare = 0x31, "amqp:declare:list" {
        /// A global transaction to join (distributed transactions; not supported here).
        global_id: Option<Value> = optional,
    }
}

composite! {
    /// Ends a transaction: commits it, or with `fail` rolls it back (§4.5.3).
    Discharge = 0x32, "amqp:discharge:list" {
        /// The transaction.
        txn_id: Bytes = required,
        /// Roll back instead of committing.
        fail: Option<bool> = optional,
    }
}

composite! {
    /// The outcome of a declare: the new transaction's id (§4.5.4).
    Declared = 0x33, "amqp:declared:list" {
        /// The transaction's id.
        txn_id: Bytes = required,
    }
}

composite! {
    /// Work done inside a transaction, and its provisional outcome (§4.5.5).
    TransactionalState = 0x34, "amqp:transactional-state:list" {
        /// The transaction.
        txn_id: Bytes = required,
        /// The outcome the work will have when the transaction commits.
        outcome: Option<DeliveryState> = optional,
    }
}

/// What a controller asks of the coordinator: the `amqp-value` body of a transfer on a link
/// attached to it.
#[derive(Debug, Clone, PartialEq)]
pub enum CoordinatorRequest {
    /// A new transaction.
    Declare(Declare),
    /// The end of one.
    Discharge(Discharge),
}

impl CoordinatorRequest {
    /// Reads a request from a message body's value.
    pub fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Described(described) = value else {
            return Err(DecodeError::UnexpectedType {
                expected: "declare or discharge",
                found: value.type_name(),
            });
        };
        if described.descriptor.matches(Declare::CODE, Declare::NAME) {
            Ok(Self::Declare(Declare::from_fields(fields_of(*described)?)?))
        } else if described
            .descriptor
            .matches(Discharge::CODE, Discharge::NAME)
        {
            Ok(Self::Discharge(Discharge::from_fields(fields_of(
                *described,
            )?)?))
        } else {
            Err(DecodeError::UnexpectedType {
                expected: "declare or discharge",
                found: "another described type",
            })
        }
    }
}
