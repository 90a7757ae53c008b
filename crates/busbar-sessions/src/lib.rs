//! Service Bus message sessions as a sans-IO layer over `busbar-core`.
//!
//! A [`SessionEntity`] wraps one session-enabled queue or subscription (`RequiresSession`): the
//! core [`Entity`](busbar_core::Entity) keeps the messages (indexed by session id), this layer
//! decides who may receive them. Each session is a FIFO group: a receiver locks a whole session
//! (named, or the next available one), gets its messages strictly in sequence order, and is the
//! only one that can settle them; the session lock has the entity's lock duration, can be
//! renewed, ends on close (in-flight messages come back uncounted) or on expiry (in-flight
//! messages come back with one more delivery counted). Session state is an opaque blob per
//! session, persisted as key/value records, kept until cleared.
//!
//! Like the core it reads no clock and does no IO: `now` is an argument, deadlines leave through
//! [`SessionEntity::poll_timeout`], events for receivers through [`SessionEntity::poll_event`],
//! records through [`SessionEntity::drain_records`] and [`SessionEntity::drain_state_records`].
//!
//! ```
//! use busbar_core::{Entity, EntityConfig, NewMessage, Outcome, ReceiveMode, SequenceNumber, Timestamp};
//! use busbar_sessions::{AcceptNext, ReceiverId, SessionEntity, SessionLimits};
//! use bytes::Bytes;
//!
//! let core = Entity::new(EntityConfig::default(), 7).unwrap();
//! let mut entity = SessionEntity::new(core, SessionLimits::default(), []);
//! let now = Timestamp(1_700_000_000_000);
//! let message = NewMessage {
//!     payload: Bytes::from_static(b"hello"),
//!     session_id: Some("order-1".to_owned()),
//!     ..NewMessage::default()
//! };
//! entity.enqueue(vec![message], now).unwrap();
//! // Receivable once the store reports the insert durable.
//! entity.mark_durable(SequenceNumber(entity.core().high_water()), now);
//! let receiver = ReceiverId(1);
//! let AcceptNext::Accepted(lock) = entity.accept_next(receiver, Timestamp(now.0 + 60_000), now).unwrap()
//! else { unreachable!() };
//! assert_eq!(lock.session.as_str(), "order-1");
//! let delivery = entity.receive(receiver, &lock.session, ReceiveMode::PeekLock, now).unwrap().unwrap();
//! let token = delivery.lock.unwrap().token;
//! entity.settle(receiver, &lock.session, token, Outcome::Complete, now).unwrap();
//! entity.close_receiver(receiver, now);
//! ```
//!
//! # How the broker drives it
//!
//! The entity task owns the `SessionEntity` (instead of a bare `Entity`) for every entity with
//! `RequiresSession`; connection tasks talk to it through the entity inbox as for plain
//! entities. The broker assigns a fresh [`ReceiverId`] to every session receive link.
//!
//! * **Send.** [`check_session_message`] on each transfer (no `group-id` ⇒ reject with
//!   `amqp:not-allowed`), then [`SessionEntity::enqueue`] (it checks again, all or nothing).
//! * **Attach a receiver.** [`check_receiver_kind`] first (plain receiver on a session entity,
//!   or a session filter on a plain entity ⇒ refuse with `amqp:not-allowed`, §6.3). Then:
//!   * `com.microsoft:session-filter` = a string ⇒ [`SessionEntity::accept_named`]; `Ok(lock)` ⇒
//!     answer the attach as §6.2 (filter echo = `lock.session`, `com.microsoft:locked-until-utc`
//!     = `lock.locked_until` in .NET ticks); [`SessionError::CannotBeLocked`] ⇒ refuse with
//!     `com.microsoft:session-cannot-be-locked`.
//!   * session filter = null ⇒ [`SessionEntity::accept_next`] with
//!     `wait_until = now + com.microsoft:timeout` (65 s when absent). `Accepted(lock)` ⇒ answer
//!     at once. `Waiting` ⇒ hold the attach; the answer comes later as
//!     [`SessionEvent::Accepted`] (answer the attach) or [`SessionEvent::AcceptTimedOut`]
//!     (refuse with `com.microsoft:timeout`, §6.3). To hand the lock across to the connection
//!     task, use an [`AcceptSlot`]: if [`AcceptSlot::fill`] returns the lock (the link already
//!     left), call [`SessionEntity::close_receiver`] at once.
//! * **Deliver.** For each unit of link credit, [`SessionEntity::receive`]; a message's
//!   `x-opt-locked-until` is the session's locked-until. Receive-and-delete works the same way.
//! * **Settle** (disposition or `update-disposition` with `session-id`):
//!   [`SessionEntity::settle`]; [`SessionError::LockLost`] ⇒ `com.microsoft:session-lock-lost`
//!   (rejected / 410), [`SessionError::MessageLockLost`] ⇒ `com.microsoft:message-lock-lost`.
//!   `receive-by-sequence-number` with `session-id` ⇒ [`SessionEntity::receive_deferred`];
//!   `peek-message` with `session-id` ⇒ [`SessionEntity::peek`].
//! * **`$management`** (find the receiver by `associated-link-name`):
//!   `renew-session-lock` ⇒ [`SessionEntity::renew`] (`expiration` = the returned time);
//!   `get-session-state` / `set-session-state` ⇒ [`SessionEntity::session_state`] /
//!   [`SessionEntity::set_session_state`] (`null` clears); `get-message-sessions` ⇒
//!   [`SessionEntity::list_sessions`] with [`SessionListing::from_request`] (answer `skip` =
//!   `next_skip`, `sessions-ids`; 204 when empty). No lock held by that link ⇒
//!   [`SessionError::LockLost`] ⇒ 410 `com.microsoft:session-lock-lost`.
//! * **Detach / close / connection loss** of a session link (also while still waiting):
//!   [`SessionEntity::close_receiver`] — always safe, unknown receivers are ignored.
//! * **Timers.** After every batch of commands arm one timer at
//!   [`SessionEntity::poll_timeout`] and call [`SessionEntity::handle_timeout`] when it fires.
//!   Then drain [`SessionEntity::poll_event`]: [`SessionEvent::LockLost`] ⇒ detach that
//!   receiver's link with `com.microsoft:session-lock-lost` (§6.4). [`SessionLease`] lets the
//!   connection task see that outcome without a round trip.
//! * **Persist.** [`SessionEntity::drain_records`] (message records, as for plain entities) and
//!   [`SessionEntity::drain_state_records`]: each [`StateRecord`] becomes the store's
//!   `Meta { entity, key, value }` (`value: None` deletes). Answer `set-session-state` only once
//!   its record is durable.
//! * **Restart.** Rebuild the core with `Entity::restore`, decode the entity's recovered
//!   key/value entries with [`StateRecord::decode`] (it skips keys that are not session state)
//!   and pass them to [`SessionEntity::new`]. Session locks are volatile: every session starts
//!   free.
//! * **Dead-letter sub-queue**, peek, scheduling: through [`SessionEntity::core`] /
//!   [`SessionEntity::core_mut`] (dead-letter receivers are plain receivers).

#![forbid(unsafe_code)]

mod entity;
mod error;
mod handoff;
mod id;
mod record;
mod sync;

pub use entity::{
    AcceptNext, LISTING_SENTINEL, ListedSessions, SessionEntity, SessionEvent, SessionLimits,
    SessionListing, SessionLock,
};
pub use error::SessionError;
pub use handoff::{AcceptSlot, LeaseState, SessionLease};
pub use id::{
    MAX_SESSION_ID_LEN, ReceiverId, SessionId, check_receiver_kind, check_session_message,
};
pub use record::{STATE_KEY_PREFIX, StateRecord, StoredState};
