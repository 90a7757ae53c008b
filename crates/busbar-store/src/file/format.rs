//! The on-disk format: segment header and checksummed record frames.
//!
//! A segment starts with a 24-byte header: magic `BUSBARJ\0`, format version (u32), the log
//! position of its first record (u64) and a CRC32C of those 20 bytes (u32). Frames follow:
//! payload length (u32), CRC32C of kind byte + payload (u32), kind byte, payload. Integers are
//! little-endian.
//!
//! Version 2 adds the group frame: an append of two or more frames starts with one whose payload
//! is the byte length of the frames that follow it in that append. They count only all
//! together: recovery drops the whole group when any of it is torn, so one append is recovered
//! all or nothing. Version 1 segments (no group frames) read the same way.

use bytes::{Buf, Bytes};

use crate::record::{EntityId, Lsn, MessageKey, MetaKey, Record};

pub(crate) const MAGIC: [u8; 8] = *b"BUSBARJ\0";
/// The version this build writes.
pub(crate) const FORMAT_VERSION: u32 = 2;
/// The oldest version this build reads.
const OLDEST_READABLE_VERSION: u32 = 1;
pub(crate) const HEADER_LEN: usize = 24;
pub(crate) const FRAME_HEADER_LEN: usize = 9;
/// Largest payload one frame carries; keeps a corrupt length from asking for gigabytes.
pub(crate) const MAX_PAYLOAD: usize = 1 << 30;

const KIND_INSERT: u8 = 1;
const KIND_UPDATE: u8 = 2;
const KIND_REMOVE: u8 = 3;
const KIND_META_PUT: u8 = 4;
const KIND_META_DELETE: u8 = 5;
const KIND_HIGH_WATER: u8 = 6;
const KIND_GROUP: u8 = 7;

const KEY_LEN: usize = 12;

/// What one frame holds: a caller's record, or a mark the store keeps for itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    Record(Record),
    /// Carries an entity's sequence high-water mark past the compaction of its inserts.
    HighWater {
        entity: EntityId,
        sequence: i64,
    },
}

/// What one frame holds: a log entry, or the start of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Frame {
    Entry(Entry),
    /// The frames in the next `len` bytes were written by one append and count only together.
    Group {
        len: u64,
    },
}

/// Why a segment header is unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeaderError {
    /// Shorter than a header, wrong magic or wrong checksum: never completely written.
    Invalid,
    /// Written by another format version.
    Version(u32),
}

/// Why the bytes at an offset are not a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameError {
    Truncated,
    Checksum,
    Malformed,
}

impl FrameError {
    pub(crate) fn reason(self) -> &'static str {
        match self {
            FrameError::Truncated => "frame extends past the end of the segment",
            FrameError::Checksum => "frame checksum mismatch",
            FrameError::Malformed => "frame payload does not decode",
        }
    }
}

pub(crate) fn encode_header(first_lsn: Lsn) -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    header[..8].copy_from_slice(&MAGIC);
    header[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    header[12..20].copy_from_slice(&first_lsn.0.to_le_bytes());
    let crc = crc32c::crc32c(&header[..20]);
    header[20..].copy_from_slice(&crc.to_le_bytes());
    header
}

/// The first log position recorded in a segment header.
pub(crate) fn decode_header(mut bytes: &[u8]) -> Result<Lsn, HeaderError> {
    if bytes.len() < HEADER_LEN || bytes[..8] != MAGIC {
        return Err(HeaderError::Invalid);
    }
    let crc = crc32c::crc32c(&bytes[..20]);
    bytes.advance(8);
    let version = bytes.get_u32_le();
    let first_lsn = bytes.get_u64_le();
    if bytes.get_u32_le() != crc {
        return Err(HeaderError::Invalid);
    }
    if !(OLDEST_READABLE_VERSION..=FORMAT_VERSION).contains(&version) {
        return Err(HeaderError::Version(version));
    }
    Ok(Lsn(first_lsn))
}

/// The payload size `record` encodes to (frame header excluded).
pub(crate) fn payload_len(record: &Record) -> usize {
    match record {
        Record::Insert { message, state, .. } => KEY_LEN + 4 + message.len() + state.len(),
        Record::Update { state, .. } => KEY_LEN + state.len(),
        Record::Remove { .. } => KEY_LEN,
        Record::Meta { key, value, .. } => 8 + key.len() + value.as_ref().map_or(0, Bytes::len),
    }
}

/// Appends the frame of `record` to `out` and returns the frame's length.
pub(crate) fn encode_record(out: &mut Vec<u8>, record: &Record) -> usize {
    match record {
        Record::Insert {
            key,
            message,
            state,
        } => frame(out, KIND_INSERT, |out| {
            put_key(out, key);
            put_len(out, message.len());
            out.extend_from_slice(message);
            out.extend_from_slice(state);
        }),
        Record::Update { key, state } => frame(out, KIND_UPDATE, |out| {
            put_key(out, key);
            out.extend_from_slice(state);
        }),
        Record::Remove { key } => frame(out, KIND_REMOVE, |out| put_key(out, key)),
        Record::Meta { entity, key, value } => {
            let kind = if value.is_some() {
                KIND_META_PUT
            } else {
                KIND_META_DELETE
            };
            frame(out, kind, |out| {
                out.extend_from_slice(&entity.0.to_le_bytes());
                put_len(out, key.len());
                out.extend_from_slice(key);
                if let Some(value) = value {
                    out.extend_from_slice(value);
                }
            })
        }
    }
}

/// Bytes of `record` that [`encode_record_sharing`] leaves to be written from the message's
/// own bytes: an insert's message of at least `min_shared` bytes, else none.
pub(crate) fn shared_len(record: &Record, min_shared: usize) -> usize {
    match record {
        Record::Insert { message, .. } if message.len() >= min_shared => message.len(),
        _ => 0,
    }
}

/// [`encode_record`], except that an insert whose message has at least `min_shared` bytes does
/// not copy it: the frame is `out`'s new bytes up to the returned split, then the message, then
/// the rest of `out`'s new bytes (the state), and the message is returned with that split, for
/// the caller to write in between. Returns the frame's length either way.
pub(crate) fn encode_record_sharing(
    out: &mut Vec<u8>,
    record: &Record,
    min_shared: usize,
) -> (usize, Option<(usize, Bytes)>) {
    let Record::Insert {
        key,
        message,
        state,
    } = record
    else {
        return (encode_record(out, record), None);
    };
    if shared_len(record, min_shared) == 0 {
        return (encode_record(out, record), None);
    }
    let start = out.len();
    out.extend_from_slice(&[0u8; 8]);
    out.push(KIND_INSERT);
    put_key(out, key);
    put_len(out, message.len());
    let split = out.len();
    out.extend_from_slice(state);
    let crc = crc32c::crc32c(&out[start + 8..split]);
    let crc = crc32c::crc32c_append(crc32c::crc32c_append(crc, message), &out[split..]);
    let frame_len = out.len() - start + message.len();
    let payload_len = u32::try_from(frame_len - FRAME_HEADER_LEN).unwrap_or(u32::MAX);
    out[start..start + 4].copy_from_slice(&payload_len.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    (frame_len, Some((split, message.clone())))
}

/// The length of a group frame (written before the frames it announces).
pub(crate) const GROUP_FRAME_LEN: usize = FRAME_HEADER_LEN + 8;

/// A group frame announcing `len` bytes of frames to follow.
pub(crate) fn group_frame(len: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(GROUP_FRAME_LEN);
    frame(&mut out, KIND_GROUP, |out| {
        out.extend_from_slice(&len.to_le_bytes())
    });
    out
}

/// The length of a high-water frame.
pub(crate) const HIGH_WATER_FRAME_LEN: usize = FRAME_HEADER_LEN + KEY_LEN;

/// Appends a high-water frame to `out` and returns the frame's length.
pub(crate) fn encode_high_water(out: &mut Vec<u8>, entity: EntityId, sequence: i64) -> usize {
    frame(out, KIND_HIGH_WATER, |out| {
        put_key(out, &MessageKey { entity, sequence });
    })
}

fn frame(out: &mut Vec<u8>, kind: u8, payload: impl FnOnce(&mut Vec<u8>)) -> usize {
    let start = out.len();
    out.extend_from_slice(&[0u8; 8]);
    out.push(kind);
    payload(out);
    let checked = &out[start + 8..];
    let crc = crc32c::crc32c(checked);
    let payload_len = u32::try_from(checked.len() - 1).unwrap_or(u32::MAX);
    out[start..start + 4].copy_from_slice(&payload_len.to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&crc.to_le_bytes());
    out.len() - start
}

fn put_key(out: &mut Vec<u8>, key: &MessageKey) {
    out.extend_from_slice(&key.entity.0.to_le_bytes());
    out.extend_from_slice(&key.sequence.to_le_bytes());
}

fn put_len(out: &mut Vec<u8>, len: usize) {
    out.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes());
}

/// Decodes the frame starting at `offset` of `segment`; returns it and its length.
///
/// Payload bytes are slices of `segment`, not copies.
pub(crate) fn decode_frame(segment: &Bytes, offset: usize) -> Result<(Frame, usize), FrameError> {
    decode_frame_checking(segment, offset, true)
}

/// [`decode_frame`], checking the frame's CRC only with `check_crc` (a summary's frames are
/// covered by the CRC of its whole body, checked once when it is read).
fn decode_frame_checking(
    segment: &Bytes,
    offset: usize,
    check_crc: bool,
) -> Result<(Frame, usize), FrameError> {
    let available = segment.len().saturating_sub(offset);
    if available < FRAME_HEADER_LEN {
        return Err(FrameError::Truncated);
    }
    let mut header = &segment[offset..offset + 8];
    let payload_len = header.get_u32_le() as usize;
    let crc = header.get_u32_le();
    if payload_len > MAX_PAYLOAD {
        return Err(FrameError::Malformed);
    }
    let frame_len = FRAME_HEADER_LEN + payload_len;
    if available < frame_len {
        return Err(FrameError::Truncated);
    }
    let checked = &segment[offset + 8..offset + frame_len];
    if check_crc && crc32c::crc32c(checked) != crc {
        return Err(FrameError::Checksum);
    }
    let kind = checked[0];
    let payload = segment.slice(offset + FRAME_HEADER_LEN..offset + frame_len);
    let frame = if kind == KIND_GROUP {
        let len: [u8; 8] = payload[..].try_into().map_err(|_| FrameError::Malformed)?;
        Frame::Group {
            len: u64::from_le_bytes(len),
        }
    } else {
        Frame::Entry(decode_payload(kind, payload).ok_or(FrameError::Malformed)?)
    };
    Ok((frame, frame_len))
}

/// Decodes the frame at `offset` that must be an entry (not a group).
pub(crate) fn decode_entry(segment: &Bytes, offset: usize) -> Result<(Entry, usize), FrameError> {
    entry_of(decode_frame(segment, offset)?)
}

/// [`decode_entry`] without checking the frame's CRC, for bytes already checked as a whole.
pub(crate) fn decode_checked_entry(
    bytes: &Bytes,
    offset: usize,
) -> Result<(Entry, usize), FrameError> {
    entry_of(decode_frame_checking(bytes, offset, false)?)
}

fn entry_of(frame: (Frame, usize)) -> Result<(Entry, usize), FrameError> {
    match frame {
        (Frame::Entry(entry), len) => Ok((entry, len)),
        (Frame::Group { .. }, _) => Err(FrameError::Malformed),
    }
}

fn decode_payload(kind: u8, mut payload: Bytes) -> Option<Entry> {
    let record = match kind {
        KIND_INSERT => {
            let key = take_key(&mut payload)?;
            let message_len = take_u32(&mut payload)? as usize;
            if payload.len() < message_len {
                return None;
            }
            let message = payload.split_to(message_len);
            Record::Insert {
                key,
                message,
                state: payload,
            }
        }
        KIND_UPDATE => Record::Update {
            key: take_key(&mut payload)?,
            state: payload,
        },
        KIND_REMOVE => Record::Remove {
            key: take_exact_key(payload)?,
        },
        KIND_META_PUT | KIND_META_DELETE => {
            let entity = EntityId(take_u32(&mut payload)?);
            let key_len = take_u32(&mut payload)? as usize;
            if payload.len() < key_len {
                return None;
            }
            let key = payload.split_to(key_len);
            let value = if kind == KIND_META_PUT {
                Some(payload)
            } else if payload.is_empty() {
                None
            } else {
                return None;
            };
            Record::Meta { entity, key, value }
        }
        KIND_HIGH_WATER => {
            let key = take_exact_key(payload)?;
            return Some(Entry::HighWater {
                entity: key.entity,
                sequence: key.sequence,
            });
        }
        _ => return None,
    };
    Some(Entry::Record(record))
}

fn take_u32(payload: &mut Bytes) -> Option<u32> {
    (payload.len() >= 4).then(|| payload.get_u32_le())
}

fn take_key(payload: &mut Bytes) -> Option<MessageKey> {
    if payload.len() < KEY_LEN {
        return None;
    }
    let entity = EntityId(payload.get_u32_le());
    let sequence = payload.get_i64_le();
    Some(MessageKey { entity, sequence })
}

fn take_exact_key(mut payload: Bytes) -> Option<MessageKey> {
    let key = take_key(&mut payload)?;
    payload.is_empty().then_some(key)
}

impl Entry {
    /// The metadata key this entry sets or deletes, if it is a metadata entry.
    pub(crate) fn meta_key(&self) -> Option<MetaKey> {
        match self {
            Entry::Record(Record::Meta { entity, key, .. }) => Some(MetaKey {
                entity: *entity,
                key: key.clone(),
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(sequence: i64) -> MessageKey {
        MessageKey {
            entity: EntityId(7),
            sequence,
        }
    }

    #[test]
    fn every_kind_round_trips() {
        let records = [
            Record::Insert {
                key: key(1),
                message: Bytes::from_static(b"body"),
                state: Bytes::from_static(b"st"),
            },
            Record::Insert {
                key: key(-2),
                message: Bytes::new(),
                state: Bytes::new(),
            },
            Record::Update {
                key: key(1),
                state: Bytes::from_static(b"s2"),
            },
            Record::Remove { key: key(1) },
            Record::Meta {
                entity: EntityId(3),
                key: Bytes::from_static(b"k"),
                value: Some(Bytes::from_static(b"v")),
            },
            Record::Meta {
                entity: EntityId(3),
                key: Bytes::from_static(b"k"),
                value: None,
            },
        ];
        let mut out = Vec::new();
        for record in &records {
            let len = encode_record(&mut out, record);
            assert_eq!(len, FRAME_HEADER_LEN + payload_len(record));
        }
        assert_eq!(
            encode_high_water(&mut out, EntityId(3), 99),
            HIGH_WATER_FRAME_LEN
        );
        let group = group_frame(1234);
        assert_eq!(group.len(), GROUP_FRAME_LEN);
        out.extend_from_slice(&group);
        let bytes = Bytes::from(out);
        let mut offset = 0;
        let mut decoded = Vec::new();
        while offset < bytes.len() {
            let (frame, len) = decode_frame(&bytes, offset).unwrap();
            decoded.push(frame);
            offset += len;
        }
        let expected: Vec<Frame> = records
            .iter()
            .cloned()
            .map(|record| Frame::Entry(Entry::Record(record)))
            .chain([
                Frame::Entry(Entry::HighWater {
                    entity: EntityId(3),
                    sequence: 99,
                }),
                Frame::Group { len: 1234 },
            ])
            .collect();
        assert_eq!(decoded, expected);
    }

    #[test]
    fn any_flipped_bit_is_detected() {
        let mut out = Vec::new();
        encode_record(
            &mut out,
            &Record::Update {
                key: key(5),
                state: Bytes::from_static(b"state"),
            },
        );
        for byte in 0..out.len() {
            for bit in 0..8 {
                let mut damaged = out.clone();
                damaged[byte] ^= 1 << bit;
                assert!(decode_frame(&Bytes::from(damaged), 0).is_err());
            }
        }
    }

    #[test]
    fn header_round_trips_and_rejects_damage() {
        let header = encode_header(Lsn(42));
        assert_eq!(decode_header(&header), Ok(Lsn(42)));
        assert_eq!(decode_header(&header[..10]), Err(HeaderError::Invalid));
        let mut damaged = header;
        damaged[14] ^= 1;
        assert_eq!(decode_header(&damaged), Err(HeaderError::Invalid));
        let with_version = |version: u32| {
            let mut other = header;
            other[8..12].copy_from_slice(&version.to_le_bytes());
            let crc = crc32c::crc32c(&other[..20]);
            other[20..].copy_from_slice(&crc.to_le_bytes());
            decode_header(&other)
        };
        assert_eq!(
            with_version(1),
            Ok(Lsn(42)),
            "version 1 has no groups, reads the same"
        );
        assert_eq!(with_version(3), Err(HeaderError::Version(3)));
        assert_eq!(with_version(0), Err(HeaderError::Version(0)));
    }
}
