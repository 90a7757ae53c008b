//! Hostile input at the codec boundary: truncated, oversize and garbage frames, bad types and
//! random or mutated bytes give errors with the right AMQP condition, never panics.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions unwrap too

mod common;

use busbar_amqp::condition::{DECODE_ERROR, FRAMING_ERROR, INVALID_FIELD};
use busbar_amqp::frame::*;
use busbar_amqp::message::Message;
use busbar_amqp::{DecodeError, FrameError};
use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

fn decode_one(wire: &[u8], max: u32) -> Result<Option<Frame>, FrameError> {
    FrameDecoder::new(max).decode(&mut BytesMut::from(wire))
}

fn valid_wire() -> Vec<u8> {
    let mut wire = BytesMut::new();
    for performative in common::sample_performatives() {
        encode_amqp_frame(1, &performative, b"\x00Sw\x40", &mut wire);
    }
    for frame in common::sample_sasl_frames() {
        encode_sasl_frame(&frame, &mut wire);
    }
    wire.to_vec()
}

#[test]
fn truncated_frames_wait_for_more_and_never_misparse() {
    let wire = valid_wire();
    let first_len = u32::from_be_bytes([wire[0], wire[1], wire[2], wire[3]]) as usize;
    for cut in 0..first_len {
        let mut buf = BytesMut::from(&wire[..cut]);
        assert_eq!(
            FrameDecoder::new(1 << 20).decode(&mut buf),
            Ok(None),
            "cut {cut}"
        );
        assert_eq!(buf.len(), cut, "nothing consumed from an incomplete frame");
    }
}

#[test]
fn oversize_frames_are_refused_from_the_header_alone() {
    // 8 bytes announcing 1 GiB: refused before any body arrives.
    let header = [0x40, 0, 0, 0, 2, 0, 0, 0];
    let err = decode_one(&header, 65_536).unwrap_err();
    assert_eq!(
        err,
        FrameError::SizeTooLarge {
            size: 0x4000_0000,
            max: 65_536
        }
    );
    assert_eq!(err.condition(), FRAMING_ERROR);
    let mut decoder = FrameDecoder::new(512);
    let mut wire = BytesMut::new();
    encode_transfer(
        0,
        &busbar_amqp::performatives::Transfer::new(busbar_amqp::performatives::Handle(0)),
        &[0; 600],
        1 << 20,
        &mut wire,
    )
    .unwrap();
    assert!(matches!(
        decoder.decode(&mut wire),
        Err(FrameError::SizeTooLarge { max: 512, .. })
    ));
}

#[test]
fn garbage_headers_are_framing_errors() {
    let cases: Vec<(&[u8], FrameError)> = vec![
        (&[0, 0, 0, 7, 2, 0, 0, 0], FrameError::SizeTooSmall(7)),
        (&[0, 0, 0, 0, 2, 0, 0, 0], FrameError::SizeTooSmall(0)),
        (&[0, 0, 0, 8, 1, 0, 0, 0], FrameError::InvalidDataOffset(1)),
        (&[0, 0, 0, 8, 3, 0, 0, 0], FrameError::InvalidDataOffset(3)),
        (&[0, 0, 0, 8, 2, 7, 0, 0], FrameError::UnknownFrameType(7)),
        (
            b"GET / HTTP/1.1\r\n",
            FrameError::SizeTooLarge {
                size: 0x4745_5420,
                max: 1 << 20,
            },
        ),
    ];
    for (wire, expected) in cases {
        let err = decode_one(wire, 1 << 20).unwrap_err();
        assert_eq!(err, expected, "{wire:02x?}");
        assert_eq!(err.condition(), FRAMING_ERROR);
    }
    for wire in [
        &b"HTTP/1.1"[..],
        b"AMQP\x01\x01\x00\x00",
        b"AMQP\x00\x02\x00\x00",
        b"AMQX",
    ] {
        let err = ProtocolHeader::decode(&mut BytesMut::from(wire)).unwrap_err();
        assert!(
            matches!(err, FrameError::InvalidProtocolHeader(_)),
            "{wire:02x?}"
        );
    }
    // The first bytes already rule out a header: no need to wait for all eight.
    assert!(ProtocolHeader::decode(&mut BytesMut::from(&b"G"[..])).is_err());
}

#[test]
fn bad_bodies_are_decode_errors() {
    let frame = |body: &[u8], frame_type: u8| {
        let mut wire = vec![0, 0, 0, 0, 2, frame_type, 0, 0];
        wire.extend_from_slice(body);
        let size = u32::try_from(wire.len()).unwrap().to_be_bytes();
        wire[..4].copy_from_slice(&size);
        wire
    };
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (frame(b"\x40", 0), DECODE_ERROR), // not a described value
        (frame(b"\x00\x53\x99\x45", 0), DECODE_ERROR), // unknown performative
        (frame(b"\x00\x53\x40\xc0\x01\x00", 0), DECODE_ERROR), // SASL body in an AMQP frame
        (frame(b"\x00\x53\x10\x45", 1), DECODE_ERROR), // open in a SASL frame
        (frame(b"", 1), FRAMING_ERROR),    // empty SASL frame
        (frame(b"\x00\x53\x10\xc0\x02\x01\xff", 0), DECODE_ERROR), // bad format code
        (frame(b"\x00\x53\x10\xc0\x05\x01", 0), DECODE_ERROR), // list overruns the frame
        (frame(b"\x00\x53\x10\x45", 0), INVALID_FIELD), // open without container-id
        (frame(b"\x00\x53\x10\xc0\x03\x01\x52\x01", 0), INVALID_FIELD), // container-id as uint
        (
            frame(b"\x00\x53\x12\xc0\x07\x03\xa1\x01n\x43\x56\x02", 0),
            DECODE_ERROR,
        ), // bad bool
        (frame(b"\x00\x53\x16\xc0\x03\x01\x70", 0), DECODE_ERROR), // truncated uint
    ];
    for (wire, condition) in cases {
        let err = decode_one(&wire, 1 << 20).unwrap_err();
        assert_eq!(err.condition(), condition, "{wire:02x?}: {err}");
    }
}

#[test]
fn a_list_claiming_four_billion_fields_fails_fast() {
    let mut wire = vec![0, 0, 0, 0, 2, 0, 0, 0, 0x00, 0x53, 0x10, 0xd0];
    wire.extend_from_slice(&[0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff]);
    let size = u32::try_from(wire.len()).unwrap().to_be_bytes();
    wire[..4].copy_from_slice(&size);
    let err = decode_one(&wire, 1 << 20).unwrap_err();
    assert_eq!(
        err,
        FrameError::Body(DecodeError::Malformed("compound count exceeds its size"))
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_bytes_never_panic_the_frame_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut decoder = FrameDecoder::new(1024);
        let mut buf = BytesMut::from(&bytes[..]);
        while let Ok(Some(_)) = decoder.decode(&mut buf) {}
        let _ = ProtocolHeader::decode(&mut BytesMut::from(&bytes[..]));
    }

    #[test]
    fn mutated_frames_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut wire = valid_wire();
        for (index, byte) in flips {
            let at = index.index(wire.len());
            wire[at] = byte;
        }
        let mut decoder = FrameDecoder::new(1 << 20);
        let mut buf = BytesMut::from(&wire[..]);
        while let Ok(Some(frame)) = decoder.decode(&mut buf) {
            if let Frame::Amqp(AmqpFrame { payload, .. }) = frame {
                let message = Message::from_bytes(payload);
                let _ = (message.header(), message.properties(), message.body());
            }
        }
    }

    #[test]
    fn mutated_messages_never_panic(
        pick in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let transfers = common::trace_transfers(include_str!("traces/mgmt_ops.txt"));
        let mut bytes = transfers[pick.index(transfers.len())].2.to_vec();
        for (index, byte) in flips {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        exercise(Message::from_bytes(Bytes::from(bytes)));
    }

    #[test]
    fn random_bytes_never_panic_the_message_parser(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        exercise(Message::from_bytes(Bytes::from(bytes)));
    }
}

/// Calls every accessor of a message; only panics matter here, errors are expected.
fn exercise(message: Message) {
    let _ = message.header();
    let _ = message.delivery_annotations();
    let _ = message.message_annotations();
    let _ = message.properties();
    let _ = message.application_properties();
    let _ = message.body();
    let _ = message.footer();
    let _ = message
        .batch()
        .map(|batch| batch.for_each(|m| drop(m.properties())));
    let _ = message.rewrite(None, None);
}
