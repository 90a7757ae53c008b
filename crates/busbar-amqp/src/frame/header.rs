//! Protocol headers (§2.2, §5.2.1): the 8 bytes `AMQP id major minor revision` that open a
//! connection and each protocol layer, parsed as their own step before framing starts.

use bytes::{Buf, BytesMut};

use crate::error::FrameError;

const PREFIX: &[u8; 4] = b"AMQP";
const VERSION: [u8; 3] = [1, 0, 0];

/// The protocol a header announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolHeader {
    /// `AMQP\x00\x01\x00\x00`: plain AMQP 1.0 framing follows.
    Amqp,
    /// `AMQP\x02\x01\x00\x00`: a TLS handshake follows.
    Tls,
    /// `AMQP\x03\x01\x00\x00`: SASL negotiation follows.
    Sasl,
}

impl ProtocolHeader {
    /// Length of a protocol header on the wire.
    pub const SIZE: usize = 8;

    /// The header's bytes.
    pub fn to_bytes(self) -> [u8; 8] {
        let id = match self {
            Self::Amqp => 0,
            Self::Tls => 2,
            Self::Sasl => 3,
        };
        [
            b'A', b'M', b'Q', b'P', id, VERSION[0], VERSION[1], VERSION[2],
        ]
    }

    /// Takes a protocol header from the front of `buf`. Returns `Ok(None)` while fewer than 8
    /// bytes have arrived (unless what has arrived already cannot start a header), and an error
    /// for anything that is not an AMQP 1.0.0 header; the caller then answers with the header it
    /// supports and closes (§2.2).
    pub fn decode(buf: &mut BytesMut) -> Result<Option<Self>, FrameError> {
        let seen = buf.len().min(PREFIX.len());
        if buf[..seen] != PREFIX[..seen] {
            return Err(FrameError::InvalidProtocolHeader(first_eight(buf)));
        }
        if buf.len() < Self::SIZE {
            return Ok(None);
        }
        let header = first_eight(buf);
        let protocol = match (header[4], [header[5], header[6], header[7]]) {
            (0, VERSION) => Self::Amqp,
            (2, VERSION) => Self::Tls,
            (3, VERSION) => Self::Sasl,
            _ => return Err(FrameError::InvalidProtocolHeader(header)),
        };
        buf.advance(Self::SIZE);
        Ok(Some(protocol))
    }
}

fn first_eight(buf: &[u8]) -> [u8; 8] {
    let mut out = [0; 8];
    let n = buf.len().min(8);
    out[..n].copy_from_slice(&buf[..n]);
    out
}
