//! Delivery states and outcomes (§2.7.6 received, §3.4 accepted/rejected/released/modified) and
//! the `DeliveryState` sum type that transfer, disposition and source fields carry.

use bytes::BufMut;

use super::AmqpError;
use super::transaction::{Declared, TransactionalState};
use crate::error::DecodeError;
use crate::types::{
    Annotations, Composite, Described, Field, Value, composite, described_size, encode_described,
    fields_of,
};

composite! {
    /// Partial message data seen by the receiver (§3.4.1).
    Received = 0x23, "amqp:received:list" {
        /// The lowest section number of the message that has not been completely received.
        section_number: u32 = required,
        /// The lowest offset within that section that has not been received.
        section_offset: u64 = required,
    }
}

composite! {
    /// The accepted outcome (§3.4.2).
    Accepted = 0x24, "amqp:accepted:list" {}
}

composite! {
    /// The rejected outcome (§3.4.3).
    Rejected = 0x25, "amqp:rejected:list" {
        /// The error that caused the message to be rejected.
        error: Option<AmqpError> = optional,
    }
}

composite! {
    /// The released outcome (§3.4.4).
    Released = 0x26, "amqp:released:list" {}
}

composite! {
    /// The modified outcome (§3.4.5).
    Modified = 0x27, "amqp:modified:list" {
        /// Count the transfer as an unsuccessful delivery attempt.
        delivery_failed: Option<bool> = optional,
        /// Prevent redelivery to this link.
        undeliverable_here: Option<bool> = optional,
        /// Message attributes to combine with the existing message-annotations.
        message_annotations: Option<Annotations> = optional,
    }
}

/// The state of a delivery: a terminal outcome, `received`, a transaction's states, or a state
/// this codec does not model, kept as its described value.
#[derive(Debug, Clone, PartialEq)]
pub enum DeliveryState {
    /// §3.4.1.
    Received(Received),
    /// §3.4.2.
    Accepted(Accepted),
    /// §3.4.3.
    Rejected(Rejected),
    /// §3.4.4.
    Released(Released),
    /// §3.4.5.
    Modified(Modified),
    /// §4.5.4: a coordinator's answer to a declare.
    Declared(Declared),
    /// §4.5.5: work inside a transaction.
    Transactional(Box<TransactionalState>),
    /// Any other described state, undecoded.
    Other(Box<Described>),
}

impl Field for DeliveryState {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Described(described) = value else {
            return Err(DecodeError::UnexpectedType {
                expected: "delivery-state",
                found: value.type_name(),
            });
        };
        let is = |code: u64, name: &str| described.descriptor.matches(code, name);
        Ok(if is(Received::CODE, Received::NAME) {
            Self::Received(Received::from_fields(fields_of(*described)?)?)
        } else if is(Accepted::CODE, Accepted::NAME) {
            Self::Accepted(Accepted::from_fields(fields_of(*described)?)?)
        } else if is(Rejected::CODE, Rejected::NAME) {
            Self::Rejected(Rejected::from_fields(fields_of(*described)?)?)
        } else if is(Released::CODE, Released::NAME) {
            Self::Released(Released::from_fields(fields_of(*described)?)?)
        } else if is(Modified::CODE, Modified::NAME) {
            Self::Modified(Modified::from_fields(fields_of(*described)?)?)
        } else if is(Declared::CODE, Declared::NAME) {
            Self::Declared(Declared::from_fields(fields_of(*described)?)?)
        } else if is(TransactionalState::CODE, TransactionalState::NAME) {
            Self::Transactional(Box::new(TransactionalState::from_fields(fields_of(
                *described,
            )?)?))
        } else {
            Self::Other(described)
        })
    }

    fn field_size(&self) -> usize {
        match self {
            Self::Received(v) => v.encoded_size(),
            Self::Accepted(v) => v.encoded_size(),
            Self::Rejected(v) => v.encoded_size(),
            Self::Released(v) => v.encoded_size(),
            Self::Modified(v) => v.encoded_size(),
            Self::Declared(v) => v.encoded_size(),
            Self::Transactional(v) => v.encoded_size(),
            Self::Other(v) => described_size(v),
        }
    }

    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        match self {
            Self::Received(v) => v.encode(buf),
            Self::Accepted(v) => v.encode(buf),
            Self::Rejected(v) => v.encode(buf),
            Self::Released(v) => v.encode(buf),
            Self::Modified(v) => v.encode(buf),
            Self::Declared(v) => v.encode(buf),
            Self::Transactional(v) => v.encode(buf),
            Self::Other(v) => encode_described(v, buf),
        }
    }
}
