//! Frames (§2.3): protocol headers, the 8-byte frame header, the size-limited decoder and the
//! encoders that size a frame once and write its performative straight into the output buffer.

mod decoder;
mod encoder;
mod header;

use bytes::Bytes;

pub use decoder::{FrameDecoder, MIN_MAX_FRAME_SIZE};
pub use encoder::{
    encode_amqp_frame, encode_amqp_frame_parts, encode_empty_frame, encode_sasl_frame,
    encode_transfer,
};
pub use header::ProtocolHeader;

use crate::performatives::{Performative, SaslFrame};

/// Size of the fixed frame header: size (4), doff (1), type (1), channel (2).
pub const FRAME_HEADER_SIZE: usize = 8;
/// Frame type of AMQP frames.
pub const FRAME_TYPE_AMQP: u8 = 0x00;
/// Frame type of SASL frames.
pub const FRAME_TYPE_SASL: u8 = 0x01;

/// One decoded frame.
// Frames are short-lived values moved once from decoder to engine; boxing would cost an
// allocation per frame for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// An AMQP frame with no body: a heartbeat (§2.4.5).
    Empty {
        /// The channel in the frame header (meaningless for heartbeats).
        channel: u16,
    },
    /// An AMQP frame carrying a performative.
    Amqp(AmqpFrame),
    /// A SASL frame (§5.3.3).
    Sasl(SaslFrame),
}

/// An AMQP frame: channel, performative, and the bytes after the performative (a transfer's part
/// of the message, shared with the receive buffer; empty for other performatives).
#[derive(Debug, Clone, PartialEq)]
pub struct AmqpFrame {
    /// The session channel.
    pub channel: u16,
    /// The performative.
    pub performative: Performative,
    /// The payload after the performative.
    pub payload: Bytes,
}
