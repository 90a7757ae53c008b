//! Messages as the core sees them: what comes in (`NewMessage`), what goes out (`Delivery`), and
//! the stored form with its volatile stage.

use crate::codec::decode_body;
use crate::error::CoreError;
use crate::lock::LockToken;
use crate::time::{SequenceNumber, Timestamp};
use bytes::Bytes;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// A message to enqueue: the broker extracts what the core needs; the payload is never parsed here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NewMessage {
    /// The encoded AMQP message, stored and delivered verbatim.
    pub payload: Bytes,
    /// `properties.message-id` in any encoding the broker chooses; the duplicate-detection key.
    pub message_id: Option<Bytes>,
    /// `properties.group-id` (the Service Bus session id).
    pub session_id: Option<String>,
    /// `header.ttl`; capped by the entity's default time to live.
    pub time_to_live: Option<Duration>,
    /// `x-opt-scheduled-enqueue-time`: the message stays Scheduled until then.
    pub scheduled_enqueue_time: Option<Timestamp>,
    /// Set: the message goes straight into the dead-letter sub-queue with this reason (a topic
    /// copy whose subscription filter failed to evaluate); it is never scheduled there.
    pub dead_letter: Option<DeadLetterInfo>,
}

/// What enqueue did with one message of a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueOutcome {
    /// Stored under this sequence number.
    Enqueued(SequenceNumber),
    /// Its message-id was seen within the duplicate-detection window: acknowledged, not stored.
    Duplicate,
}

/// `x-opt-message-state`: where a message stands in its (sub-)queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MessageState {
    /// Receivable (or currently locked by a receiver).
    Active,
    /// Set aside by its receiver; only retrievable by sequence number.
    Deferred,
    /// Waiting for its scheduled enqueue time.
    Scheduled,
}

impl MessageState {
    /// The `int` value of the `x-opt-message-state` annotation.
    pub const fn annotation_value(self) -> i32 {
        match self {
            MessageState::Active => 0,
            MessageState::Deferred => 1,
            MessageState::Scheduled => 2,
        }
    }
}

/// Properties to modify (abandon, defer, dead-letter): keys with AMQP-encoded values, opaque to
/// the core. Shared behind an `Arc` so deliveries carry them without copying.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Properties(Arc<BTreeMap<String, Bytes>>);

impl Properties {
    /// No properties.
    pub fn new() -> Properties {
        Properties::default()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The property map.
    pub fn as_map(&self) -> &BTreeMap<String, Bytes> {
        &self.0
    }

    /// Adds `other`'s entries, replacing values of keys present in both.
    pub(crate) fn merge(&mut self, other: &Properties) {
        if other.is_empty() {
            return;
        }
        let map = Arc::make_mut(&mut self.0);
        for (key, value) in other.0.iter() {
            map.insert(key.clone(), value.clone());
        }
    }
}

impl From<BTreeMap<String, Bytes>> for Properties {
    fn from(map: BTreeMap<String, Bytes>) -> Properties {
        Properties(Arc::new(map))
    }
}

/// Why a message is in the dead-letter sub-queue (`DeadLetterReason` /
/// `DeadLetterErrorDescription`; either may be absent when the client gave none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeadLetterInfo {
    /// `DeadLetterReason`.
    pub reason: Option<String>,
    /// `DeadLetterErrorDescription`.
    pub description: Option<String>,
}

impl DeadLetterInfo {
    /// The reason the entity gives when MaxDeliveryCount is reached.
    pub fn max_delivery_count_exceeded(max_delivery_count: u32) -> DeadLetterInfo {
        DeadLetterInfo {
            reason: Some("MaxDeliveryCountExceeded".to_owned()),
            description: Some(format!(
                "Message could not be consumed after {max_delivery_count} delivery attempts."
            )),
        }
    }

    /// The reason the entity gives when a message expires with dead-lettering on expiration.
    pub fn ttl_expired() -> DeadLetterInfo {
        DeadLetterInfo {
            reason: Some("TTLExpiredException".to_owned()),
            description: Some("The message expired and was dead lettered.".to_owned()),
        }
    }
}

/// A peek-lock held on a delivered message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeliveryLock {
    /// The token that settles or renews the lock (also the delivery tag, byte-swapped by the broker).
    pub token: LockToken,
    /// `x-opt-locked-until`.
    pub locked_until: Timestamp,
}

/// Everything the broker needs to write a message's header and annotations, with no further lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    /// `x-opt-sequence-number`.
    pub sequence: SequenceNumber,
    /// The encoded AMQP message as enqueued (a cheap clone of the stored bytes); empty when
    /// `payload_in_store`.
    pub payload: Bytes,
    /// The message's bytes were evicted from memory: the caller reads them from the store
    /// (`(entity, sequence)`) and takes the payload out with [`payload_of`](crate::payload_of).
    pub payload_in_store: bool,
    /// The message-id given at enqueue.
    pub message_id: Option<Bytes>,
    /// The session id given at enqueue.
    pub session_id: Option<String>,
    /// `header.delivery-count`: previous failed delivery attempts (0 on first delivery).
    pub delivery_count: u32,
    /// `x-opt-enqueued-time` (for a scheduled message, its activation time).
    pub enqueued_time: Timestamp,
    /// The effective time to live (`header.ttl`); `None` = never expires.
    pub time_to_live: Option<Duration>,
    /// `properties.absolute-expiry-time`; `None` = never expires.
    pub expires_at: Option<Timestamp>,
    /// `x-opt-message-state`.
    pub state: MessageState,
    /// `x-opt-scheduled-enqueue-time`, for messages sent scheduled.
    pub scheduled_enqueue_time: Option<Timestamp>,
    /// The lock, on peek-lock deliveries (none on peek or receive-and-delete).
    pub lock: Option<DeliveryLock>,
    /// Dead-letter reason and description, on messages of the dead-letter sub-queue.
    pub dead_letter: Option<DeadLetterInfo>,
    /// The accumulated properties to modify.
    pub properties: Properties,
}

/// Where a stored message is in its life; each stage belongs to exactly one index of its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Just enqueued, its insert record not yet durable: in the pending index, handed out by
    /// nothing until [`Entity::mark_durable`](crate::Entity::mark_durable) moves it on
    /// (`scheduled` says whether to the schedule index or the available one).
    Pending { scheduled: bool },
    /// One copy of a send to several entities, its insert record handed to the caller instead
    /// of queued: in no index, handed out by nothing (not even [`Entity::mark_durable`]) until
    /// [`Entity::release_held`](crate::Entity::release_held) moves it on, or
    /// [`Entity::discard_held`](crate::Entity::discard_held) drops it.
    Held { scheduled: bool },
    /// Waiting in the schedule index for its enqueued time.
    Scheduled,
    /// In the available index, ready for receive.
    Available,
    /// Deferred: reachable by sequence number only.
    Deferred,
    /// Held by lock `slot` until `until`; `deferred` says where it returns when the lock ends.
    Locked {
        slot: u32,
        until: Timestamp,
        deferred: bool,
    },
}

impl Stage {
    /// The persisted state this stage reports (a lock is volatile and not a state of its own).
    pub(crate) fn message_state(self) -> MessageState {
        match self {
            Stage::Scheduled
            | Stage::Pending { scheduled: true }
            | Stage::Held { scheduled: true } => MessageState::Scheduled,
            Stage::Deferred | Stage::Locked { deferred: true, .. } => MessageState::Deferred,
            Stage::Available
            | Stage::Pending { scheduled: false }
            | Stage::Held { scheduled: false }
            | Stage::Locked {
                deferred: false, ..
            } => MessageState::Active,
        }
    }
}

/// The immutable part of a stored message, written once by the insert record.
///
/// Its bytes may be *evicted*: dropped from memory once durable, and read back from the store
/// when the message is delivered or peeked. What the state machine needs (ids, times, sizes)
/// stays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MessageBody {
    /// The encoded immutable part as persisted; `payload` is a slice of it. Both are empty
    /// while `evicted`.
    pub(crate) encoded: Bytes,
    pub(crate) payload: Bytes,
    /// The lengths of `encoded` and `payload`, kept while they are evicted.
    pub(crate) encoded_len: u64,
    pub(crate) payload_len: u64,
    /// Whether the bytes are only in the store now.
    pub(crate) evicted: bool,
    pub(crate) message_id: Option<Bytes>,
    pub(crate) session_id: Option<String>,
    /// When enqueue was called (the duplicate-detection clock).
    pub(crate) accepted_time: Timestamp,
    pub(crate) time_to_live: Option<Duration>,
    pub(crate) scheduled_enqueue_time: Option<Timestamp>,
}

impl MessageBody {
    /// The enqueued time the client sees: activation time for scheduled messages.
    pub(crate) fn enqueued_time(&self) -> Timestamp {
        match self.scheduled_enqueue_time {
            Some(at) => at.max(self.accepted_time),
            None => self.accepted_time,
        }
    }

    pub(crate) fn expires_at(&self) -> Option<Timestamp> {
        Some(self.enqueued_time().saturating_add(self.time_to_live?))
    }

    /// Drops the encoded bytes (the caller makes sure the store has them). The message-id is
    /// copied out first: as a slice it would keep the whole encoded message alive.
    pub(crate) fn evict(&mut self) {
        if self.evicted {
            return;
        }
        self.message_id = self.message_id.as_deref().map(Bytes::copy_from_slice);
        self.encoded = Bytes::new();
        self.payload = Bytes::new();
        self.evicted = true;
    }

    /// Takes the encoded bytes back, as read from the store; refused (nothing changed) when
    /// they do not decode to a message of the same sizes.
    pub(crate) fn restore(&mut self, encoded: Bytes) -> Result<(), CoreError> {
        let read = decode_body(encoded)?;
        if read.encoded_len != self.encoded_len || read.payload_len != self.payload_len {
            return Err(CoreError::Decode(
                "the stored message is not the one indexed",
            ));
        }
        self.encoded = read.encoded;
        self.payload = read.payload;
        self.evicted = false;
        Ok(())
    }
}

/// What holding a message costs beyond its encoded bytes: its entries in the sub-queue's
/// indices, its state and the allocator's rounding. A backlog of 128 B messages grew the
/// broker's RSS by about 450 bytes per message, of which some 200 were the encoded message.
const MESSAGE_OVERHEAD_BYTES: u64 = 256;

/// One stored message: its immutable body, its persisted mutable state and its volatile stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredMessage {
    pub(crate) body: MessageBody,
    pub(crate) delivery_count: u32,
    /// `Some` exactly for messages of the dead-letter sub-queue.
    pub(crate) dead_letter: Option<DeadLetterInfo>,
    pub(crate) properties: Properties,
    pub(crate) stage: Stage,
}

impl StoredMessage {
    /// What the message counts toward the entity's size quota: its encoded AMQP message, the
    /// size Service Bus reports for it (the immutable part never changes, so neither does this).
    pub(crate) fn size_bytes(&self) -> u64 {
        self.body.payload_len
    }

    /// What the message charges to the memory budget: its encoded immutable part, which holds
    /// the whole AMQP message (the payload is a slice of it), unless evicted, and what holding
    /// it costs besides (its ids among them once evicted).
    pub(crate) fn memory_bytes(&self) -> u64 {
        let body = &self.body;
        let held = if body.evicted {
            let id = body.message_id.as_ref().map_or(0, Bytes::len);
            let session = body.session_id.as_ref().map_or(0, String::len);
            u64::try_from(id + session).unwrap_or(u64::MAX)
        } else {
            body.encoded_len
        };
        held.saturating_add(MESSAGE_OVERHEAD_BYTES)
    }

    pub(crate) fn delivery(
        &self,
        sequence: SequenceNumber,
        lock: Option<DeliveryLock>,
    ) -> Delivery {
        Delivery {
            sequence,
            payload: self.body.payload.clone(),
            payload_in_store: self.body.evicted,
            message_id: self.body.message_id.clone(),
            session_id: self.body.session_id.clone(),
            delivery_count: self.delivery_count,
            enqueued_time: self.body.enqueued_time(),
            time_to_live: self.body.time_to_live,
            expires_at: self.body.expires_at(),
            state: self.stage.message_state(),
            scheduled_enqueue_time: self.body.scheduled_enqueue_time,
            lock,
            dead_letter: self.dead_letter.clone(),
            properties: self.properties.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_properties_replaces_and_adds_without_touching_shared_copies() {
        let mut first = BTreeMap::new();
        first.insert("a".to_owned(), Bytes::from_static(b"1"));
        first.insert("b".to_owned(), Bytes::from_static(b"2"));
        let mut props = Properties::from(first);
        let shared = props.clone();
        let mut second = BTreeMap::new();
        second.insert("b".to_owned(), Bytes::from_static(b"3"));
        second.insert("c".to_owned(), Bytes::from_static(b"4"));
        props.merge(&Properties::from(second));
        let values: Vec<_> = props.as_map().values().cloned().collect();
        assert_eq!(values, [&b"1"[..], b"3", b"4"]);
        assert_eq!(shared.as_map().len(), 2);
    }

    #[test]
    fn message_state_annotation_values_follow_service_bus() {
        assert_eq!(MessageState::Active.annotation_value(), 0);
        assert_eq!(MessageState::Deferred.annotation_value(), 1);
        assert_eq!(MessageState::Scheduled.annotation_value(), 2);
    }

    #[test]
    fn dead_letter_reasons_use_the_service_bus_wording() {
        let info = DeadLetterInfo::max_delivery_count_exceeded(3);
        assert_eq!(info.reason.as_deref(), Some("MaxDeliveryCountExceeded"));
        assert_eq!(
            info.description.as_deref(),
            Some("Message could not be consumed after 3 delivery attempts.")
        );
        assert_eq!(
            DeadLetterInfo::ttl_expired().reason.as_deref(),
            Some("TTLExpiredException")
        );
    }
}
