//! The core's error type: one variant per way an entity operation can be refused.

use crate::time::SequenceNumber;

/// Why an entity operation was refused. An operation that returns an error changed nothing.
///
/// The broker maps these to AMQP conditions (`LockLost` → `com.microsoft:message-lock-lost`,
/// `MessageNotFound` → `com.microsoft:message-not-found`, `NotAllowed` → `amqp:not-allowed`,
/// `QuotaExceeded` and `MemoryBudgetExceeded` → `amqp:resource-limit-exceeded`, …).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// The lock token is unknown, stale (its lock already ended) or its lock has expired.
    #[error("the message lock is lost: the lock token is unknown, stale or expired")]
    LockLost,
    /// No message with this sequence number qualifies for the operation.
    #[error("message with sequence number {0} not found")]
    MessageNotFound(SequenceNumber),
    /// The entity configuration breaks a limit.
    #[error("invalid entity configuration: {0}")]
    InvalidConfig(&'static str),
    /// The operation is not allowed in the message's or entity's current state.
    #[error("operation not allowed: {0}")]
    NotAllowed(&'static str),
    /// The entity's stored messages have reached its size quota (`MaxSizeInMegabytes`); nothing
    /// more is enqueued until some are removed.
    #[error(
        "the maximum entity size has been reached or exceeded: {size} bytes stored, {max} allowed"
    )]
    QuotaExceeded {
        /// Bytes stored when the enqueue was refused.
        size: u64,
        /// The quota in bytes.
        max: u64,
    },
    /// The messages held by every entity sharing the broker's memory budget have reached its
    /// limit; nothing more is enqueued anywhere until receivers take some.
    #[error(
        "the broker's memory budget for messages is used up: {used} bytes held, {limit} allowed"
    )]
    MemoryBudgetExceeded {
        /// Bytes held when the enqueue was refused.
        used: u64,
        /// The budget in bytes.
        limit: u64,
    },
    /// Stored bytes given to [`Entity::restore`](crate::Entity::restore) are malformed.
    #[error("cannot decode stored entity data: {0}")]
    Decode(&'static str),
}
