//! Records the core emits for the store, and the versioned, length-checked binary encoding of a
//! message's immutable part and its mutable state.
//!
//! Message part, version 1: `u8 version, i64 accepted_time, u8 flags (1 scheduled, 2 ttl,
//! 4 message-id, 8 session-id), [i64 scheduled], [u64 ttl_ms], [u32 len, message-id],
//! [u32 len, session-id utf-8], u32 len, payload`.
//!
//! Index form of a message part (what a restart keeps of a message whose bytes stay in the
//! store): `u8 0x81, u64 encoded_len, u64 payload_len`, then the version 1 part with an empty
//! payload.
//!
//! State part, version 1: `u8 version, u8 queue (0 main, 1 dead-letter), u8 state (0 active,
//! 1 deferred, 2 scheduled), u32 delivery_count, u8 flags (1 dead-letter info, 2 reason,
//! 4 description), [u32 len, reason], [u32 len, description], u32 count, count × (u32 len, key
//! utf-8, u32 len, value)`. All integers big-endian; trailing bytes are an error.

use crate::entity::SubQueue;
use crate::error::CoreError;
use crate::message::{BodyMeta, DeadLetterInfo, MessageBody, MessageState, Properties};
use crate::time::{SequenceNumber, Timestamp, millis};
use bytes::{BufMut, Bytes, BytesMut};
use std::collections::BTreeMap;
use std::time::Duration;

const VERSION: u8 = 1;
/// Marks a message part's index form (see [`index_part`]).
const INDEX_FORM: u8 = 0x81;

/// A change to persist, drained by the caller with [`Entity::drain_records`](crate::Entity::drain_records).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A new message: its immutable part and its initial state.
    Insert {
        /// The message's sequence number (also the entity's new high-water mark).
        sequence: SequenceNumber,
        /// The encoded immutable part (payload included); never changes.
        message: Bytes,
        /// The encoded initial mutable state.
        state: Bytes,
    },
    /// The message's whole mutable state replaced.
    Update {
        /// The message's sequence number.
        sequence: SequenceNumber,
        /// The encoded mutable state.
        state: Bytes,
    },
    /// The message is gone for good.
    Remove {
        /// The message's sequence number.
        sequence: SequenceNumber,
    },
}

/// The mutable, persisted part of a message (locks are volatile and not part of it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PersistedState {
    pub(crate) queue: SubQueue,
    pub(crate) state: MessageState,
    pub(crate) delivery_count: u32,
    pub(crate) dead_letter: Option<DeadLetterInfo>,
    pub(crate) properties: Properties,
}

/// The fields of a message's immutable part, before encoding.
pub(crate) struct BodyFields<'a> {
    pub(crate) payload: &'a [u8],
    pub(crate) message_id: Option<Bytes>,
    pub(crate) session_id: Option<String>,
    pub(crate) accepted_time: Timestamp,
    pub(crate) time_to_live: Option<Duration>,
    pub(crate) scheduled_enqueue_time: Option<Timestamp>,
}

/// Encodes the immutable part; the returned body's payload is a slice of the encoded bytes, so
/// memory holds one copy that serves both delivery and the insert record.
pub(crate) fn encode_body(fields: BodyFields<'_>) -> MessageBody {
    let mut buf = BytesMut::with_capacity(fields.payload.len() + 64);
    buf.put_u8(VERSION);
    buf.put_i64(fields.accepted_time.0);
    let flags = u8::from(fields.scheduled_enqueue_time.is_some())
        | u8::from(fields.time_to_live.is_some()) << 1
        | u8::from(fields.message_id.is_some()) << 2
        | u8::from(fields.session_id.is_some()) << 3;
    buf.put_u8(flags);
    if let Some(at) = fields.scheduled_enqueue_time {
        buf.put_i64(at.0);
    }
    if let Some(ttl) = fields.time_to_live {
        // Saturates at i64::MAX ms, i.e. unbounded for every practical purpose.
        buf.put_u64(millis(ttl).unsigned_abs());
    }
    let mut message_id_at = None;
    if let Some(id) = &fields.message_id {
        put_len(&mut buf, id.len());
        message_id_at = Some(buf.len()..buf.len() + id.len());
        buf.put_slice(id);
    }
    if let Some(session) = &fields.session_id {
        put_bytes(&mut buf, session.as_bytes());
    }
    put_bytes(&mut buf, fields.payload);
    let encoded = buf.freeze();
    let payload = encoded.slice(encoded.len() - fields.payload.len()..);
    // The id as a slice of the encoded part, not of the caller's buffer (which it would pin).
    let message_id = message_id_at.map(|at| encoded.slice(at));
    let meta = BodyMeta {
        session_id: fields.session_id,
        accepted_time: fields.accepted_time,
        time_to_live: fields
            .time_to_live
            .map(|ttl| Duration::from_millis(millis(ttl).unsigned_abs())),
        scheduled_enqueue_time: fields.scheduled_enqueue_time,
    };
    MessageBody::resident(encoded, payload, message_id, meta)
}

/// What a restart needs to keep of a stored message part when its bytes stay in the store: the
/// ids, times and sizes without the AMQP message, a copy that shares nothing with `stored` (so
/// the store's read buffer can go). A part that does not decode is returned unchanged, for
/// the restore to report.
pub fn index_part(stored: &Bytes) -> Bytes {
    let Ok(body) = decode_body(stored.clone()) else {
        return stored.clone();
    };
    let fields = BodyFields {
        payload: &[],
        message_id: body.message_id().map(|id| Bytes::copy_from_slice(id)),
        session_id: body.session_id().map(str::to_owned),
        accepted_time: body.accepted_time(),
        time_to_live: body.time_to_live(),
        scheduled_enqueue_time: body.scheduled_enqueue_time(),
    };
    let header = encode_body(fields).encoded().cloned().unwrap_or_default();
    let mut buf = BytesMut::with_capacity(17 + header.len());
    buf.put_u8(INDEX_FORM);
    buf.put_u64(body.encoded_len());
    buf.put_u64(body.payload_len());
    buf.put_slice(&header);
    buf.freeze()
}

/// Decodes an immutable part (or its index form, as an evicted body); the payload and
/// message-id are slices of `encoded`.
pub(crate) fn decode_body(encoded: Bytes) -> Result<MessageBody, CoreError> {
    if encoded.first() == Some(&INDEX_FORM) {
        let mut reader = Reader::new(&encoded);
        reader.u8()?;
        let (encoded_len, payload_len) = (reader.u64()?, reader.u64()?);
        if encoded.get(17) == Some(&INDEX_FORM) {
            return Err(CoreError::Decode("an index form inside an index form"));
        }
        let (meta, _, payload) = decode_fields(&encoded.slice(17..))?;
        if !payload.is_empty() {
            return Err(CoreError::Decode("an index form carries no payload"));
        }
        return Ok(MessageBody::in_store(meta, encoded_len, payload_len));
    }
    let (meta, message_id, payload) = decode_fields(&encoded)?;
    Ok(MessageBody::resident(encoded, payload, message_id, meta))
}

/// The fields of an encoded immutable part: what it says, its message-id and its payload (both
/// slices of `encoded`).
fn decode_fields(encoded: &Bytes) -> Result<(BodyMeta, Option<Bytes>, Bytes), CoreError> {
    let mut reader = Reader::new(encoded);
    if reader.u8()? != VERSION {
        return Err(CoreError::Decode("unknown message format version"));
    }
    let accepted_time = Timestamp(reader.i64()?);
    let flags = reader.u8()?;
    if flags & !0b1111 != 0 {
        return Err(CoreError::Decode("unknown message flags"));
    }
    let scheduled_enqueue_time = if flags & 1 != 0 {
        Some(Timestamp(reader.i64()?))
    } else {
        None
    };
    let time_to_live = if flags & 2 != 0 {
        Some(Duration::from_millis(reader.u64()?))
    } else {
        None
    };
    let message_id = if flags & 4 != 0 {
        Some(reader.slice(encoded)?)
    } else {
        None
    };
    let session_id = if flags & 8 != 0 {
        Some(reader.string()?)
    } else {
        None
    };
    let payload = reader.slice(encoded)?;
    reader.finish()?;
    let meta = BodyMeta {
        session_id,
        accepted_time,
        time_to_live,
        scheduled_enqueue_time,
    };
    Ok((meta, message_id, payload))
}

pub(crate) fn encode_state(state: &PersistedState) -> Bytes {
    let mut buf = BytesMut::with_capacity(32);
    buf.put_u8(VERSION);
    buf.put_u8(match state.queue {
        SubQueue::Main => 0,
        SubQueue::DeadLetter => 1,
    });
    buf.put_u8(match state.state {
        MessageState::Active => 0,
        MessageState::Deferred => 1,
        MessageState::Scheduled => 2,
    });
    buf.put_u32(state.delivery_count);
    let info = state.dead_letter.as_ref();
    let reason = info.and_then(|info| info.reason.as_deref());
    let description = info.and_then(|info| info.description.as_deref());
    buf.put_u8(
        u8::from(info.is_some())
            | u8::from(reason.is_some()) << 1
            | u8::from(description.is_some()) << 2,
    );
    for text in [reason, description].into_iter().flatten() {
        put_bytes(&mut buf, text.as_bytes());
    }
    let map = state.properties.as_map();
    put_len(&mut buf, map.len());
    for (key, value) in map {
        put_bytes(&mut buf, key.as_bytes());
        put_bytes(&mut buf, value);
    }
    buf.freeze()
}

pub(crate) fn decode_state(encoded: &Bytes) -> Result<PersistedState, CoreError> {
    let mut reader = Reader::new(encoded);
    if reader.u8()? != VERSION {
        return Err(CoreError::Decode("unknown state format version"));
    }
    let queue = match reader.u8()? {
        0 => SubQueue::Main,
        1 => SubQueue::DeadLetter,
        _ => return Err(CoreError::Decode("unknown sub-queue")),
    };
    let state = match reader.u8()? {
        0 => MessageState::Active,
        1 => MessageState::Deferred,
        2 => MessageState::Scheduled,
        _ => return Err(CoreError::Decode("unknown message state")),
    };
    let delivery_count = reader.u32()?;
    let flags = reader.u8()?;
    if flags & !0b111 != 0 || (flags & 1 == 0 && flags != 0) {
        return Err(CoreError::Decode("bad dead-letter flags"));
    }
    let reason = if flags & 2 != 0 {
        Some(reader.string()?)
    } else {
        None
    };
    let description = if flags & 4 != 0 {
        Some(reader.string()?)
    } else {
        None
    };
    let dead_letter = (flags & 1 != 0).then_some(DeadLetterInfo {
        reason,
        description,
    });
    let count = reader.u32()?;
    let mut map = BTreeMap::new();
    for _ in 0..count {
        let key = reader.string()?;
        let value = reader.slice(encoded)?;
        if map.insert(key, value).is_some() {
            return Err(CoreError::Decode("duplicate property key"));
        }
    }
    reader.finish()?;
    if dead_letter.is_some() != (queue == SubQueue::DeadLetter) {
        return Err(CoreError::Decode(
            "dead-letter info must be present exactly on dead-lettered messages",
        ));
    }
    if queue == SubQueue::DeadLetter && state == MessageState::Scheduled {
        return Err(CoreError::Decode(
            "a dead-lettered message cannot be scheduled",
        ));
    }
    Ok(PersistedState {
        queue,
        state,
        delivery_count,
        dead_letter,
        properties: Properties::from(map),
    })
}

fn put_len(buf: &mut BytesMut, len: usize) {
    // Lengths above u32::MAX cannot occur: AMQP frames and messages are far smaller.
    buf.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
}

fn put_bytes(buf: &mut BytesMut, bytes: &[u8]) {
    put_len(buf, bytes.len());
    buf.put_slice(bytes);
}

/// A bounds-checked cursor: every read fails with `Decode` instead of panicking.
struct Reader<'a> {
    input: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    fn new(input: &'a [u8]) -> Reader<'a> {
        Reader { input, position: 0 }
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], CoreError> {
        let end = self
            .position
            .checked_add(len)
            .filter(|end| *end <= self.input.len())
            .ok_or(CoreError::Decode("truncated input"))?;
        let bytes = self
            .input
            .get(self.position..end)
            .ok_or(CoreError::Decode("truncated input"))?;
        self.position = end;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CoreError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, CoreError> {
        Ok(u8::from_be_bytes(self.array()?))
    }

    fn u32(&mut self) -> Result<u32, CoreError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, CoreError> {
        Ok(u64::from_be_bytes(self.array()?))
    }

    fn i64(&mut self) -> Result<i64, CoreError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// A length-prefixed field as a zero-copy slice of `source` (the bytes this reader reads).
    fn slice(&mut self, source: &Bytes) -> Result<Bytes, CoreError> {
        let len = self.u32()? as usize;
        let start = self.position;
        self.take(len)?;
        Ok(source.slice(start..start + len))
    }

    fn string(&mut self) -> Result<String, CoreError> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| CoreError::Decode("invalid utf-8"))
    }

    fn finish(&self) -> Result<(), CoreError> {
        if self.position == self.input.len() {
            Ok(())
        } else {
            Err(CoreError::Decode("trailing bytes"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_body() -> MessageBody {
        encode_body(BodyFields {
            payload: b"hello",
            message_id: Some(Bytes::from_static(b"id-1")),
            session_id: Some("s".to_owned()),
            accepted_time: Timestamp(1_000),
            time_to_live: Some(Duration::from_secs(30)),
            scheduled_enqueue_time: Some(Timestamp(2_000)),
        })
    }

    fn sample_state() -> PersistedState {
        let mut map = BTreeMap::new();
        map.insert("k".to_owned(), Bytes::from_static(b"\xa1\x01v"));
        PersistedState {
            queue: SubQueue::DeadLetter,
            state: MessageState::Deferred,
            delivery_count: 7,
            dead_letter: Some(DeadLetterInfo {
                reason: Some("r".to_owned()),
                description: None,
            }),
            properties: Properties::from(map),
        }
    }

    #[test]
    fn body_round_trips_with_zero_copy_payload() {
        let body = sample_body();
        assert_eq!(&body.payload()[..], b"hello");
        let decoded = decode_body(body.encoded().unwrap().clone()).unwrap();
        assert_eq!(decoded, body);
        assert_eq!(
            decoded.payload().as_ptr(),
            body.encoded().unwrap()[body.encoded_len() as usize - 5..].as_ptr()
        );
    }

    #[test]
    fn minimal_body_round_trips() {
        let body = encode_body(BodyFields {
            payload: b"",
            message_id: None,
            session_id: None,
            accepted_time: Timestamp(-5),
            time_to_live: None,
            scheduled_enqueue_time: None,
        });
        assert_eq!(decode_body(body.encoded().unwrap().clone()).unwrap(), body);
    }

    #[test]
    fn state_round_trips() {
        let state = sample_state();
        assert_eq!(decode_state(&encode_state(&state)).unwrap(), state);
        let plain = PersistedState {
            queue: SubQueue::Main,
            state: MessageState::Scheduled,
            delivery_count: 0,
            dead_letter: None,
            properties: Properties::new(),
        };
        assert_eq!(decode_state(&encode_state(&plain)).unwrap(), plain);
    }

    #[test]
    fn every_truncation_and_extension_is_an_error_not_a_panic() {
        let body = sample_body().encoded().unwrap().clone();
        let state = encode_state(&sample_state());
        for cut in 0..body.len() {
            assert!(decode_body(body.slice(..cut)).is_err(), "body cut at {cut}");
        }
        for cut in 0..state.len() {
            assert!(
                decode_state(&state.slice(..cut)).is_err(),
                "state cut at {cut}"
            );
        }
        let mut longer = body.to_vec();
        longer.push(0);
        assert!(decode_body(Bytes::from(longer)).is_err());
        let mut longer = state.to_vec();
        longer.push(0);
        assert!(decode_state(&Bytes::from(longer)).is_err());
    }

    #[test]
    fn inconsistent_or_unknown_fields_are_refused() {
        let mut bad_version = encode_state(&sample_state()).to_vec();
        bad_version[0] = 9;
        assert!(decode_state(&Bytes::from(bad_version)).is_err());
        // A main-queue message claiming dead-letter info.
        let mut state = sample_state();
        state.queue = SubQueue::Main;
        assert!(decode_state(&encode_state(&state)).is_err());
        let mut huge_len = sample_body().encoded().unwrap().to_vec();
        let payload_len_at = huge_len.len() - 5 - 4;
        huge_len[payload_len_at..payload_len_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(decode_body(Bytes::from(huge_len)).is_err());
    }

    mod properties {
        use super::super::*;
        use proptest::prelude::*;

        fn text() -> impl Strategy<Value = String> {
            proptest::collection::vec(any::<char>(), 0..12).prop_map(|c| c.into_iter().collect())
        }

        fn bytes() -> impl Strategy<Value = Bytes> {
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from)
        }

        proptest! {
            #[test]
            fn any_body_round_trips(
                payload in bytes(),
                message_id in proptest::option::of(bytes()),
                session_id in proptest::option::of(text()),
                accepted in any::<i64>(),
                ttl_ms in proptest::option::of(any::<u32>()),
                scheduled in proptest::option::of(any::<i64>()),
            ) {
                let body = encode_body(BodyFields {
                    payload: &payload,
                    message_id,
                    session_id,
                    accepted_time: Timestamp(accepted),
                    time_to_live: ttl_ms.map(|ms| Duration::from_millis(u64::from(ms))),
                    scheduled_enqueue_time: scheduled.map(Timestamp),
                });
                prop_assert_eq!(&body.payload(), &payload);
                prop_assert_eq!(decode_body(body.encoded().unwrap().clone()).unwrap(), body);
            }

            #[test]
            fn any_state_round_trips(
                dead_letter in proptest::option::of((proptest::option::of(text()), proptest::option::of(text()))),
                state in 0..3u8,
                delivery_count in any::<u32>(),
                properties in proptest::collection::btree_map(text(), bytes(), 0..4),
            ) {
                let queue = if dead_letter.is_some() { SubQueue::DeadLetter } else { SubQueue::Main };
                let state = match (state, queue) {
                    (0, _) | (2, SubQueue::DeadLetter) => MessageState::Active,
                    (1, _) => MessageState::Deferred,
                    _ => MessageState::Scheduled,
                };
                let persisted = PersistedState {
                    queue,
                    state,
                    delivery_count,
                    dead_letter: dead_letter.map(|(reason, description)| DeadLetterInfo { reason, description }),
                    properties: Properties::from(properties),
                };
                prop_assert_eq!(decode_state(&encode_state(&persisted)).unwrap(), persisted);
            }

            #[test]
            fn arbitrary_input_is_refused_or_decoded_never_a_panic(
                versioned in any::<bool>(),
                mut input in proptest::collection::vec(any::<u8>(), 0..64),
            ) {
                // Half the inputs get past the version check to reach the field decoders.
                if versioned {
                    input.insert(0, VERSION);
                }
                let input = Bytes::from(input);
                let _ = decode_body(input.clone());
                let _ = decode_state(&input);
            }
        }
    }
}
