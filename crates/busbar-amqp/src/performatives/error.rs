//! The AMQP `error` composite (§2.8.14) carried by detach, end, close and the rejected outcome.

use crate::types::{Fields, Symbol, composite};

composite! {
    /// Details of an error (§2.8.14).
    AmqpError = 0x1d, "amqp:error:list" {
        /// A symbolic condition, e.g. [`crate::condition::DECODE_ERROR`].
        condition: Symbol = required,
        /// Descriptive text for a person.
        description: Option<String> = optional,
        /// Map carrying information about the error condition.
        info: Option<Fields> = optional,
    }
}

impl AmqpError {
    /// An error with a condition and a description.
    pub fn new(condition: &str, description: impl Into<String>) -> Self {
        Self {
            condition: Symbol::from(condition),
            description: Some(description.into()),
            info: None,
        }
    }
}
