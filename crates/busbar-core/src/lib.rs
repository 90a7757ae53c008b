//! Sans-IO state machine of one Service Bus entity (a queue or a subscription).
//!
//! [`Entity`] owns one entity's messages and its dead-letter sub-queue: sequence numbers,
//! scheduling, duplicate detection, peek-lock with [`LockToken`]s, settlement, delivery counts
//! and MaxDeliveryCount, TTL expiry, deferral and peek. It reads no clock and does no IO:
//!
//! * time comes in as a [`Timestamp`] argument on every operation;
//! * results and [`Delivery`]s are returned directly (payloads are shared `Bytes`, never copied);
//! * changes to persist queue up as [`Record`]s, drained with [`Entity::drain_records`];
//! * the next deadline is [`Entity::poll_timeout`], answered with [`Entity::handle_timeout`];
//! * after a restart, [`Entity::restore`] rebuilds the entity from what the store kept;
//! * the bytes of stored messages are counted ([`Entity::size_bytes`], O(1)) and enqueues are
//!   refused once they reach the entity's quota (`MaxSizeInMegabytes`);
//! * the bytes of held messages (encoded, plus their bookkeeping) are charged to a
//!   [`MemoryBudget`] every entity of a broker shares ([`Entity::with_memory_budget`]), and
//!   enqueues are refused once it is used up;
//! * messages carrying a session id are also indexed by session, so a session layer
//!   (`busbar-sessions`) can take the next message of one session
//!   ([`Entity::receive_from_session`]) and learn which sessions just got available messages
//!   ([`Entity::take_newly_available_sessions`]).
//!
//! ```
//! use busbar_core::{
//!     Entity, EntityConfig, NewMessage, Outcome, ReceiveMode, SequenceNumber, SubQueue, Timestamp,
//! };
//! use bytes::Bytes;
//!
//! let mut queue = Entity::new(EntityConfig::default(), 42).unwrap();
//! let now = Timestamp(1_700_000_000_000);
//! let message = NewMessage { payload: Bytes::from_static(b"hello"), ..NewMessage::default() };
//! queue.enqueue(vec![message], now).unwrap();
//! // Nothing is handed out before the caller reports the insert durable.
//! assert!(queue.receive(SubQueue::Main, ReceiveMode::PeekLock, now).is_none());
//! queue.mark_durable(SequenceNumber(queue.high_water()));
//! let delivery = queue.receive(SubQueue::Main, ReceiveMode::PeekLock, now).unwrap();
//! assert_eq!(delivery.delivery_count, 0);
//! let token = delivery.lock.unwrap().token;
//! queue.settle(token, Outcome::Complete, now).unwrap();
//! assert!(queue.is_empty(SubQueue::Main));
//! assert_eq!(queue.drain_records().count(), 2); // insert, then remove
//! ```

#![forbid(unsafe_code)]

mod budget;
mod codec;
mod config;
mod dedup;
mod entity;
mod error;
mod lock;
mod message;
mod time;

pub use budget::MemoryBudget;
pub use codec::{Record, index_part};
pub use config::{
    DEFAULT_LOCK_DURATION, DEFAULT_MAX_DELIVERY_COUNT, DEFAULT_MAX_SIZE_BYTES, EntityConfig,
    MAX_LOCK_DURATION, MIN_LOCK_DURATION,
};
pub use entity::{
    Entity, EntitySnapshot, HeldCopies, MessageCounts, Outcome, ReceiveMode, SubQueue,
};
pub use error::CoreError;
pub use lock::LockToken;
pub use message::{
    DeadLetterInfo, Delivery, DeliveryLock, EnqueueOutcome, MessageState, NewMessage, Properties,
};
pub use time::{SequenceNumber, Timestamp};
