//! What a connection speaks, from its first byte: an AMQP protocol header starts with `A`
//! (`AMQP` then the protocol id: 0 for AMQP, 3 for SASL); a TLS client opens with a handshake
//! record, whose first byte is its content type, 22 (RFC 8446 §5.1); an HTTP request opens with
//! a method's letter, and no method starts with `A`.

/// The protocol a connection opens with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// An AMQP or SASL protocol header.
    Amqp,
    /// A TLS handshake.
    Tls,
    /// Anything else is taken for HTTP (garbage gets HTTP's 400 from the server).
    Http,
}

/// The content type of a TLS handshake record (`handshake(22)`).
const TLS_HANDSHAKE: u8 = 0x16;

/// Tells the protocol from the first byte a client sent.
pub(crate) fn classify(first: u8) -> Protocol {
    match first {
        b'A' => Protocol::Amqp,
        TLS_HANDSHAKE => Protocol::Tls,
        _ => Protocol::Http,
    }
}

#[cfg(test)]
mod tests {
    use super::{Protocol, classify};

    #[test]
    fn each_protocol_is_told_by_its_first_byte() {
        assert_eq!(classify(b"AMQP\x00\x01\x00\x00"[0]), Protocol::Amqp);
        assert_eq!(classify(b"AMQP\x03\x01\x00\x00"[0]), Protocol::Amqp);
        assert_eq!(classify(0x16), Protocol::Tls);
        for method in ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"] {
            assert_eq!(classify(method.as_bytes()[0]), Protocol::Http, "{method}");
        }
    }
}
