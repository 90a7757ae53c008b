//! The codec's errors: `DecodeError` for malformed values, `FrameError` for malformed framing, each
//! knowing the AMQP condition a peer should be closed with.

use crate::condition;

/// A value, composite or message section that could not be decoded (→ `amqp:decode-error`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input ended inside a value.
    #[error("input ended inside a value")]
    Truncated,
    /// A constructor byte that AMQP 1.0 does not define.
    #[error("unknown format code 0x{0:02x}")]
    UnknownFormatCode(u8),
    /// Compound values nested deeper than the decoder allows.
    #[error("values nested deeper than {0} levels")]
    TooDeep(usize),
    /// A `string` or `symbol` that is not valid UTF-8.
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    /// A `char` that is not a Unicode scalar value.
    #[error("0x{0:x} is not a Unicode scalar value")]
    InvalidChar(u32),
    /// A compound value whose size and count disagree with its content.
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// A value of the wrong type where a specific type is required.
    #[error("expected {expected}, found {found}")]
    UnexpectedType {
        /// The type required.
        expected: &'static str,
        /// The type found.
        found: &'static str,
    },
    /// A mandatory field was absent or null.
    #[error("{composite}: mandatory field `{field}` is missing")]
    MissingField {
        /// The composite type.
        composite: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field held a value outside its restricted range.
    #[error("{composite}: invalid value in field `{field}`")]
    InvalidField {
        /// The composite type.
        composite: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A described value whose descriptor is not the one expected here.
    #[error("unexpected descriptor {0}")]
    UnexpectedDescriptor(String),
}

impl DecodeError {
    /// The AMQP error condition to report for this error.
    pub fn condition(&self) -> &'static str {
        match self {
            Self::MissingField { .. } | Self::InvalidField { .. } => condition::INVALID_FIELD,
            _ => condition::DECODE_ERROR,
        }
    }
}

/// A frame that could not be decoded. Framing errors end the connection with
/// `amqp:connection:framing-error`; a frame whose body does not decode carries its [`DecodeError`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The size field is smaller than the 8-byte frame header.
    #[error("frame size {0} is smaller than the frame header")]
    SizeTooSmall(u32),
    /// The size field exceeds the negotiated maximum frame size.
    #[error("frame size {size} exceeds the maximum {max}")]
    SizeTooLarge {
        /// The size announced by the frame header.
        size: u32,
        /// The largest frame accepted.
        max: u32,
    },
    /// The data offset is below 2 or points past the end of the frame.
    #[error("data offset {0} is invalid for this frame")]
    InvalidDataOffset(u8),
    /// A frame type other than AMQP (0x00) or SASL (0x01).
    #[error("unknown frame type 0x{0:02x}")]
    UnknownFrameType(u8),
    /// The 8 bytes where a protocol header was expected are not one.
    #[error("invalid protocol header {0:02x?}")]
    InvalidProtocolHeader([u8; 8]),
    /// A SASL frame without a body, or a SASL frame body that is not a SASL performative.
    #[error("SASL frame without a SASL performative")]
    NotSasl,
    /// A performative cannot fit a frame of the peer's maximum size.
    #[error("max frame size {0} cannot hold the performative")]
    FrameSizeTooSmall(u32),
    /// The frame body is not a performative this frame type allows.
    #[error("frame body: {0}")]
    Body(#[from] DecodeError),
}

impl FrameError {
    /// The AMQP error condition to close the connection with.
    pub fn condition(&self) -> &'static str {
        match self {
            Self::Body(error) => error.condition(),
            Self::FrameSizeTooSmall(_) => condition::FRAME_SIZE_TOO_SMALL,
            _ => condition::FRAMING_ERROR,
        }
    }
}
