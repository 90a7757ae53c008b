//! Frame encoders: each frame is sized once from the performative's computed size, then the
//! header, performative and payload are written straight into the output buffer.

use bytes::{BufMut, BytesMut};

use super::{FRAME_HEADER_SIZE, FRAME_TYPE_AMQP, FRAME_TYPE_SASL};
use crate::error::FrameError;
use crate::performatives::{Performative, SaslFrame, Transfer};
use crate::types::Composite;

/// Writes an AMQP frame: header, performative, then `payload` (a transfer's message bytes).
pub fn encode_amqp_frame(
    channel: u16,
    performative: &Performative,
    payload: &[u8],
    out: &mut BytesMut,
) {
    encode_amqp_frame_parts(channel, performative, &[payload], out);
}

/// [`encode_amqp_frame`] with a payload in parts, written one after another (a delivery's new
/// sections, then the stored ones it passes on unchanged).
pub fn encode_amqp_frame_parts(
    channel: u16,
    performative: &Performative,
    payload: &[&[u8]],
    out: &mut BytesMut,
) {
    let len: usize = payload.iter().map(|part| part.len()).sum();
    let size = FRAME_HEADER_SIZE + performative.encoded_size() + len;
    put_header(out, size, FRAME_TYPE_AMQP, channel);
    performative.encode(out);
    for part in payload {
        out.put_slice(part);
    }
}

/// Writes a SASL frame (always on channel 0).
pub fn encode_sasl_frame(frame: &SaslFrame, out: &mut BytesMut) {
    let size = FRAME_HEADER_SIZE + frame.encoded_size();
    put_header(out, size, FRAME_TYPE_SASL, 0);
    frame.encode(out);
}

/// Writes an empty AMQP frame (a heartbeat).
pub fn encode_empty_frame(out: &mut BytesMut) {
    put_header(out, FRAME_HEADER_SIZE, FRAME_TYPE_AMQP, 0);
}

/// Writes a delivery as one or more transfer frames of at most `max_frame_size` bytes (the
/// peer's limit). The first frame carries `transfer` as given; continuation frames carry only the
/// handle, `settled` and `more`. Every frame but the last has `more = true`. Returns the number
/// of frames written.
pub fn encode_transfer(
    channel: u16,
    transfer: &Transfer,
    payload: &[u8],
    max_frame_size: u32,
    out: &mut BytesMut,
) -> Result<usize, FrameError> {
    let max = usize::try_from(max_frame_size).unwrap_or(usize::MAX);
    let first = FRAME_HEADER_SIZE + transfer.encoded_size();
    if first + payload.len() <= max {
        write_transfer(channel, transfer, payload, out);
        return Ok(1);
    }
    let mut continuation = Transfer::new(transfer.handle);
    continuation.settled = transfer.settled;
    continuation.more = true;
    // `more` is one byte whether true or false, so sizes do not change when it flips.
    let later = FRAME_HEADER_SIZE + continuation.encoded_size();
    if first >= max || later >= max {
        return Err(FrameError::FrameSizeTooSmall(max_frame_size));
    }
    let mut head = transfer.clone();
    head.more = true;
    let (chunk, mut rest) = payload.split_at(max - first);
    write_transfer(channel, &head, chunk, out);
    let mut frames = 1;
    while !rest.is_empty() {
        let (chunk, tail) = rest.split_at(rest.len().min(max - later));
        continuation.more = !tail.is_empty() || transfer.more;
        write_transfer(channel, &continuation, chunk, out);
        rest = tail;
        frames += 1;
    }
    Ok(frames)
}

fn write_transfer(channel: u16, transfer: &Transfer, payload: &[u8], out: &mut BytesMut) {
    let size = FRAME_HEADER_SIZE + transfer.encoded_size() + payload.len();
    put_header(out, size, FRAME_TYPE_AMQP, channel);
    transfer.encode(out);
    out.put_slice(payload);
}

fn put_header(out: &mut BytesMut, size: usize, frame_type: u8, channel: u16) {
    out.reserve(size);
    // Frames are bounded by a u32 max-frame-size; larger sizes cannot be negotiated.
    out.put_u32(u32::try_from(size).unwrap_or(u32::MAX));
    out.put_u8(2);
    out.put_u8(frame_type);
    out.put_u16(channel);
}
