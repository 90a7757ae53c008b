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
/// the core. Shared behind an `Arc` so deliveries carry them without copying; none allocated
/// while there are none (most messages of a backlog).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Properties(Option<Arc<BTreeMap<String, Bytes>>>);

/// What `as_map` shows for no properties.
static NO_PROPERTIES: BTreeMap<String, Bytes> = BTreeMap::new();

impl Properties {
    /// No properties.
    pub fn new() -> Properties {
        Properties::default()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|map| map.is_empty())
    }

    /// The property map.
    pub fn as_map(&self) -> &BTreeMap<String, Bytes> {
        self.0.as_deref().unwrap_or(&NO_PROPERTIES)
    }

    /// Adds `other`'s entries, replacing values of keys present in both.
    pub(crate) fn merge(&mut self, other: &Properties) {
        if other.is_empty() {
            return;
        }
        let map = Arc::make_mut(self.0.get_or_insert_default());
        for (key, value) in other.as_map() {
            map.insert(key.clone(), value.clone());
        }
    }
}

impl From<BTreeMap<String, Bytes>> for Properties {
    fn from(map: BTreeMap<String, Bytes>) -> Properties {
        Properties((!map.is_empty()).then(|| Arc::new(map)))
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
    /// (`(entity, sequence)`) and hands them to [`fill_from_store`](Delivery::fill_from_store).
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

impl Delivery {
    /// Completes a delivery whose payload is in the store with the message part read from there
    /// (`(entity, sequence)`): its payload and message-id become slices of `stored`. Refused,
    /// nothing changed, when `stored` does not decode.
    pub fn fill_from_store(&mut self, stored: Bytes) -> Result<(), CoreError> {
        let body = decode_body(stored)?;
        self.payload = body.payload();
        self.message_id = body.message_id().cloned();
        self.payload_in_store = false;
        Ok(())
    }
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

/// The immutable part of a stored message, written once by the insert record: its bytes while
/// in memory, and what the state machine needs of it (ids, times, sizes), packed small because a
/// deep backlog holds one per message.
///
/// Its bytes may be *evicted*: dropped from memory once durable, and read back from the store
/// when the message is delivered or peeked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MessageBody {
    /// `None` while evicted.
    resident: Option<Box<ResidentBytes>>,
    /// Shared with the session index and the other messages of the session.
    session_id: Option<SessionName>,
    /// When enqueue was called (the duplicate-detection clock).
    accepted_time: Timestamp,
    /// The time to live in milliseconds (the precision the store keeps); [`NO_TTL`]: none.
    ttl_millis: u64,
    /// `x-opt-scheduled-enqueue-time` in milliseconds; [`NOT_SCHEDULED`]: none.
    scheduled_millis: i64,
    /// The lengths of the encoded immutable part and of the AMQP message in it.
    encoded_len: u32,
    payload_len: u32,
}

const NO_TTL: u64 = u64::MAX;
const NOT_SCHEDULED: i64 = i64::MIN;

/// The bytes of an immutable part in memory: the payload and message-id are slices of them.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ResidentBytes {
    encoded: Bytes,
    payload: Bytes,
    message_id: Option<Bytes>,
}

/// A session id, one allocation shared by every message of the session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SessionName(pub(crate) Arc<String>);

/// What an immutable part says besides its bytes.
pub(crate) struct BodyMeta {
    pub(crate) session_id: Option<String>,
    pub(crate) accepted_time: Timestamp,
    pub(crate) time_to_live: Option<Duration>,
    pub(crate) scheduled_enqueue_time: Option<Timestamp>,
}

fn length(len: impl TryInto<u32>) -> u32 {
    // Messages are capped far below 4 GiB before they reach the core.
    len.try_into().unwrap_or(u32::MAX)
}

impl MessageBody {
    /// A body in memory: `payload` and `message_id` are slices of `encoded`.
    pub(crate) fn resident(
        encoded: Bytes,
        payload: Bytes,
        message_id: Option<Bytes>,
        meta: BodyMeta,
    ) -> MessageBody {
        let (encoded_len, payload_len) = (length(encoded.len()), length(payload.len()));
        let resident = ResidentBytes {
            encoded,
            payload,
            message_id,
        };
        MessageBody::with_meta(Some(Box::new(resident)), meta, encoded_len, payload_len)
    }

    /// A body whose bytes are only in the store, of the given lengths.
    pub(crate) fn in_store(meta: BodyMeta, encoded_len: u64, payload_len: u64) -> MessageBody {
        MessageBody::with_meta(None, meta, length(encoded_len), length(payload_len))
    }

    fn with_meta(
        resident: Option<Box<ResidentBytes>>,
        meta: BodyMeta,
        encoded_len: u32,
        payload_len: u32,
    ) -> MessageBody {
        MessageBody {
            resident,
            session_id: meta.session_id.map(|id| SessionName(Arc::new(id))),
            accepted_time: meta.accepted_time,
            // Durations past u64::MAX - 1 ms (585 million years) are as good as none.
            ttl_millis: meta.time_to_live.map_or(NO_TTL, |ttl| {
                u64::try_from(ttl.as_millis()).map_or(NO_TTL - 1, |ms| ms.min(NO_TTL - 1))
            }),
            // The one time that cannot be told from none moves a millisecond later.
            scheduled_millis: meta
                .scheduled_enqueue_time
                .map_or(NOT_SCHEDULED, |at| at.0.max(NOT_SCHEDULED + 1)),
            encoded_len,
            payload_len,
        }
    }

    pub(crate) fn is_evicted(&self) -> bool {
        self.resident.is_none()
    }

    /// The encoded immutable part, while in memory.
    pub(crate) fn encoded(&self) -> Option<&Bytes> {
        self.resident.as_ref().map(|bytes| &bytes.encoded)
    }

    /// The AMQP message; empty while evicted.
    pub(crate) fn payload(&self) -> Bytes {
        self.resident
            .as_ref()
            .map_or_else(Bytes::new, |bytes| bytes.payload.clone())
    }

    /// The message-id; unknown (`None`) while evicted.
    pub(crate) fn message_id(&self) -> Option<&Bytes> {
        self.resident.as_ref()?.message_id.as_ref()
    }

    pub(crate) fn session_id(&self) -> Option<&str> {
        self.session_id.as_ref().map(|name| name.0.as_str())
    }

    pub(crate) fn session_name(&self) -> Option<&SessionName> {
        self.session_id.as_ref()
    }

    /// Shares `name` (the same session id) instead of this body's own copy.
    pub(crate) fn share_session_name(&mut self, name: SessionName) {
        self.session_id = Some(name);
    }

    pub(crate) fn accepted_time(&self) -> Timestamp {
        self.accepted_time
    }

    pub(crate) fn time_to_live(&self) -> Option<Duration> {
        (self.ttl_millis != NO_TTL).then(|| Duration::from_millis(self.ttl_millis))
    }

    pub(crate) fn scheduled_enqueue_time(&self) -> Option<Timestamp> {
        (self.scheduled_millis != NOT_SCHEDULED).then_some(Timestamp(self.scheduled_millis))
    }

    pub(crate) fn encoded_len(&self) -> u64 {
        u64::from(self.encoded_len)
    }

    pub(crate) fn payload_len(&self) -> u64 {
        u64::from(self.payload_len)
    }

    /// The enqueued time the client sees: activation time for scheduled messages.
    pub(crate) fn enqueued_time(&self) -> Timestamp {
        match self.scheduled_enqueue_time() {
            Some(at) => at.max(self.accepted_time),
            None => self.accepted_time,
        }
    }

    pub(crate) fn expires_at(&self) -> Option<Timestamp> {
        Some(self.enqueued_time().saturating_add(self.time_to_live()?))
    }

    /// Drops the bytes (the caller makes sure the store has them).
    pub(crate) fn evict(&mut self) {
        self.resident = None;
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
        self.resident = read.resident;
        Ok(())
    }
}

/// What a message costs in memory whatever becomes of its bytes: its entry in the sub-queue's
/// message map and indices (`tests/index_cost.rs` measures it).
const INDEX_BYTES: u64 = 100;

/// What a message's bytes cost in memory beyond themselves while resident: the boxed slices
/// over them, their entry in the resident index, the allocator's rounding.
const RESIDENT_OVERHEAD_BYTES: u64 = 160;

/// One stored message: its immutable body, its persisted mutable state and its volatile stage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StoredMessage {
    pub(crate) body: MessageBody,
    pub(crate) delivery_count: u32,
    /// `Some` exactly for messages of the dead-letter sub-queue (boxed: most messages have none).
    pub(crate) dead_letter: Option<Box<DeadLetterInfo>>,
    pub(crate) properties: Properties,
    pub(crate) stage: Stage,
}

impl StoredMessage {
    /// What the message counts toward the entity's size quota: its encoded AMQP message, the
    /// size Service Bus reports for it (the immutable part never changes, so neither does this).
    pub(crate) fn size_bytes(&self) -> u64 {
        self.body.payload_len()
    }

    /// What the message charges to the memory budget: its index entry, and its encoded
    /// immutable part (which holds the whole AMQP message) unless evicted.
    pub(crate) fn memory_bytes(&self) -> u64 {
        let held = if self.body.is_evicted() {
            0
        } else {
            self.body
                .encoded_len()
                .saturating_add(RESIDENT_OVERHEAD_BYTES)
        };
        held.saturating_add(INDEX_BYTES)
    }

    pub(crate) fn delivery(
        &self,
        sequence: SequenceNumber,
        lock: Option<DeliveryLock>,
    ) -> Delivery {
        Delivery {
            sequence,
            payload: self.body.payload(),
            payload_in_store: self.body.is_evicted(),
            message_id: self.body.message_id().cloned(),
            session_id: self.body.session_id().map(str::to_owned),
            delivery_count: self.delivery_count,
            enqueued_time: self.body.enqueued_time(),
            time_to_live: self.body.time_to_live(),
            expires_at: self.body.expires_at(),
            state: self.stage.message_state(),
            scheduled_enqueue_time: self.body.scheduled_enqueue_time(),
            lock,
            dead_letter: self.dead_letter.as_deref().cloned(),
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
