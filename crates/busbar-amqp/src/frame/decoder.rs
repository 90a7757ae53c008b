//! `FrameDecoder`: cuts complete frames off a `BytesMut` under a hard size limit, without copying
//! transfer payloads (§2.3).

use bytes::{Buf, Bytes, BytesMut};

use super::{AmqpFrame, FRAME_HEADER_SIZE, FRAME_TYPE_AMQP, FRAME_TYPE_SASL, Frame};
use crate::error::FrameError;
use crate::performatives::{Performative, SaslFrame};

/// The smallest max-frame-size a peer may impose (§2.7.1, MIN-MAX-FRAME-SIZE).
pub const MIN_MAX_FRAME_SIZE: u32 = 512;

/// Decodes frames from a byte stream, refusing any frame larger than its maximum.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    max_frame_size: u32,
}

impl FrameDecoder {
    /// A decoder accepting frames up to `max_frame_size` bytes (at least [`MIN_MAX_FRAME_SIZE`]).
    pub fn new(max_frame_size: u32) -> Self {
        Self {
            max_frame_size: max_frame_size.max(MIN_MAX_FRAME_SIZE),
        }
    }

    /// The largest frame accepted.
    pub fn max_frame_size(&self) -> u32 {
        self.max_frame_size
    }

    /// Changes the limit (the one this side advertised in its `open`).
    pub fn set_max_frame_size(&mut self, max_frame_size: u32) {
        self.max_frame_size = max_frame_size.max(MIN_MAX_FRAME_SIZE);
    }

    /// Takes the next complete frame off the front of `buf`. Returns `Ok(None)` if the frame is
    /// not complete yet (reserving room for it), and an error for a frame that cannot be accepted;
    /// the header is checked as soon as its 8 bytes are there, so an oversize frame is refused
    /// before its body is buffered.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        let Some(header) = buf.first_chunk::<FRAME_HEADER_SIZE>() else {
            return Ok(None);
        };
        let size = u32::from_be_bytes([header[0], header[1], header[2], header[3]]);
        let (doff, frame_type) = (header[4], header[5]);
        let channel = u16::from_be_bytes([header[6], header[7]]);
        let frame_len = usize::try_from(size).map_err(|_| FrameError::SizeTooLarge {
            size,
            max: self.max_frame_size,
        })?;
        if frame_len < FRAME_HEADER_SIZE {
            return Err(FrameError::SizeTooSmall(size));
        }
        if size > self.max_frame_size {
            return Err(FrameError::SizeTooLarge {
                size,
                max: self.max_frame_size,
            });
        }
        let body_start = usize::from(doff) * 4;
        if doff < 2 || body_start > frame_len {
            return Err(FrameError::InvalidDataOffset(doff));
        }
        if frame_type != FRAME_TYPE_AMQP && frame_type != FRAME_TYPE_SASL {
            return Err(FrameError::UnknownFrameType(frame_type));
        }
        if buf.len() < frame_len {
            buf.reserve(frame_len - buf.len());
            return Ok(None);
        }
        let mut body: Bytes = buf.split_to(frame_len).freeze();
        body.advance(body_start);
        decode_body(frame_type, channel, body).map(Some)
    }
}

fn decode_body(frame_type: u8, channel: u16, mut body: Bytes) -> Result<Frame, FrameError> {
    if frame_type == FRAME_TYPE_SASL {
        if body.is_empty() {
            return Err(FrameError::NotSasl);
        }
        let frame = SaslFrame::decode(&mut body)?;
        return Ok(Frame::Sasl(frame));
    }
    if body.is_empty() {
        return Ok(Frame::Empty { channel });
    }
    let performative = Performative::decode(&mut body)?;
    Ok(Frame::Amqp(AmqpFrame {
        channel,
        performative,
        payload: body,
    }))
}
