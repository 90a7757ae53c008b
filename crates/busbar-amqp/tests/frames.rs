//! Frame-level tests: every performative and SASL frame round-trips through the frame encoder and
//! the `FrameDecoder` fed at every byte boundary; encoders emit every field; decoders accept
//! symbolic descriptors and omitted trailing fields; transfers split to the peer's frame size.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions unwrap too

mod common;

use busbar_amqp::frame::*;
use busbar_amqp::performatives::*;
use busbar_amqp::types::{Composite, Descriptor, Symbol, Value};
use bytes::{Bytes, BytesMut};
use common::{decode_at_every_split, sample_performatives, sample_sasl_frames};

#[test]
fn every_performative_round_trips_at_every_split() {
    for (channel, performative) in sample_performatives().into_iter().enumerate() {
        let channel = u16::try_from(channel).unwrap() * 1000;
        let payload: &[u8] = if matches!(performative, Performative::Transfer(_)) {
            b"\x00Sw\xa1\x05hello"
        } else {
            b""
        };
        let mut wire = BytesMut::new();
        encode_amqp_frame(channel, &performative, payload, &mut wire);
        assert_eq!(
            wire.len(),
            8 + performative.encoded_size() + payload.len(),
            "{}",
            performative.name()
        );
        let frames = decode_at_every_split(&wire, 1 << 20);
        assert_eq!(
            frames,
            vec![Frame::Amqp(AmqpFrame {
                channel,
                performative,
                payload: Bytes::copy_from_slice(payload),
            })]
        );
    }
}

#[test]
fn every_sasl_frame_round_trips_at_every_split() {
    let mut wire = BytesMut::new();
    for frame in sample_sasl_frames() {
        encode_sasl_frame(&frame, &mut wire);
    }
    let frames = decode_at_every_split(&wire, 512);
    let expected: Vec<Frame> = sample_sasl_frames().into_iter().map(Frame::Sasl).collect();
    assert_eq!(frames, expected);
}

#[test]
fn several_frames_and_heartbeats_in_one_buffer() {
    let mut wire = BytesMut::new();
    encode_empty_frame(&mut wire);
    for performative in sample_performatives() {
        encode_amqp_frame(7, &performative, b"", &mut wire);
        encode_empty_frame(&mut wire);
    }
    let frames = decode_at_every_split(&wire, 4096);
    assert_eq!(frames.len(), 1 + 2 * sample_performatives().len());
    assert_eq!(frames[0], Frame::Empty { channel: 0 });
}

#[test]
fn heartbeat_is_the_eight_byte_empty_frame() {
    let mut wire = BytesMut::new();
    encode_empty_frame(&mut wire);
    assert_eq!(&wire[..], &[0, 0, 0, 8, 2, 0, 0, 0]);
}

/// The list count of an encoded composite: encoders must write every field up to the last one
/// (servicebus-amqp.md §1.4), so the count equals the number of fields the spec defines.
fn field_count(encoded: &[u8]) -> usize {
    let mut bytes = Bytes::copy_from_slice(encoded);
    match Value::decode(&mut bytes).unwrap() {
        Value::Described(described) => match described.value {
            Value::List(fields) => fields.len(),
            other => panic!("not a list: {other:?}"),
        },
        other => panic!("not described: {other:?}"),
    }
}

#[test]
fn encoders_write_every_field_with_defaults_as_real_values() {
    let expected = [
        ("amqp:open:list", 10),
        ("amqp:begin:list", 8),
        ("amqp:attach:list", 14),
        ("amqp:flow:list", 11),
        ("amqp:transfer:list", 11),
        ("amqp:disposition:list", 6),
        ("amqp:detach:list", 3),
        ("amqp:end:list", 1),
        ("amqp:close:list", 1),
    ];
    for performative in sample_performatives() {
        let mut out = BytesMut::new();
        performative.encode(&mut out);
        let count = expected
            .iter()
            .find(|(name, _)| *name == performative.name())
            .unwrap()
            .1;
        assert_eq!(field_count(&out), count, "{}", performative.name());
    }
    // A minimal open still carries max-frame-size and channel-max as values, not nulls.
    let open = Open {
        container_id: "c".into(),
        hostname: None,
        max_frame_size: 65_536,
        channel_max: 9,
        idle_time_out: None,
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    let mut out = BytesMut::new();
    open.encode(&mut out);
    assert_eq!(
        &out[..],
        b"\x00\x53\x10\xc0\x13\x0a\xa1\x01c\x40\x70\x00\x01\x00\x00\x60\x00\x09\x40\x40\x40\x40\x40\x40"
    );
}

#[test]
fn decoders_accept_symbolic_descriptors_and_omitted_trailing_fields() {
    // begin with only its three mandatory fields, named by symbol.
    let begin = Value::described(
        Descriptor::Symbol(Symbol::from("amqp:begin:list")),
        Value::List(vec![
            Value::Null,
            Value::Uint(0),
            Value::Uint(100),
            Value::Uint(100),
        ]),
    );
    let decoded = Performative::from_value(begin).unwrap();
    let Performative::Begin(begin) = decoded else {
        panic!("not a begin: {decoded:?}");
    };
    assert_eq!(begin.handle_max, Handle(u32::MAX), "default applied");
    assert_eq!(begin.remote_channel, None);

    // accepted as list0, disposition with omitted tail.
    let mut wire = Bytes::from_static(b"\x00\x53\x15\xc0\x03\x02\x41\x43");
    let disposition = Disposition::decode(&mut wire).unwrap();
    assert_eq!(disposition.role, Role::Receiver);
    assert_eq!(disposition.first, DeliveryNumber(0));
    assert!(!disposition.settled);

    // Source with a symbol address and omitted trailing fields.
    let mut wire = Bytes::from_static(b"\x00\x53\x28\xc0\x06\x01\xa3\x03q-1");
    let source = Source::decode(&mut wire).unwrap();
    assert_eq!(source.address_str(), Some("q-1"));
    assert_eq!(source.expiry_policy, Symbol::from(SESSION_END));
}

#[test]
fn missing_mandatory_fields_are_invalid_field_errors() {
    let attach = Value::described(Descriptor::Code(0x12), Value::List(vec![Value::from("n")]));
    let err = Performative::from_value(attach).unwrap_err();
    assert_eq!(err.condition(), busbar_amqp::condition::INVALID_FIELD);
    let wrong_type = Value::described(Descriptor::Code(0x16), Value::List(vec![Value::from("1")]));
    assert!(Performative::from_value(wrong_type).is_err());
    let unknown = Value::described(Descriptor::Code(0x99), Value::List(vec![]));
    assert!(Performative::from_value(unknown).is_err());
}

#[test]
fn unknown_delivery_states_are_kept_undecoded() {
    // A state no part of AMQP 1.0 defines (a vendor's).
    let declared = Value::described(
        Descriptor::Code(0x0000_0137_0000_0001),
        Value::List(vec![Value::Binary(Bytes::from_static(b"txn"))]),
    );
    let disposition = Value::described(
        Descriptor::Code(0x15),
        Value::List(vec![
            Value::Bool(true),
            Value::Uint(0),
            Value::Null,
            Value::Bool(true),
            declared,
        ]),
    );
    let Performative::Disposition(d) = Performative::from_value(disposition).unwrap() else {
        panic!("not a disposition");
    };
    let Some(DeliveryState::Other(state)) = &d.state else {
        panic!("state not kept: {:?}", d.state);
    };
    assert_eq!(state.descriptor, Descriptor::Code(0x0000_0137_0000_0001));
    let mut out = BytesMut::new();
    d.encode(&mut out);
    assert_eq!(Disposition::decode(&mut out.freeze()).unwrap(), d);
}

#[test]
fn transactional_states_decode_and_encode_round_trip() {
    let declared = DeliveryState::Declared(Declared {
        txn_id: Bytes::from_static(b"txn-1"),
    });
    let transactional = DeliveryState::Transactional(Box::new(TransactionalState {
        txn_id: Bytes::from_static(b"txn-1"),
        outcome: Some(DeliveryState::Accepted(Accepted {})),
    }));
    for state in [declared, transactional] {
        let disposition = Disposition {
            role: Role::Receiver,
            first: DeliveryNumber(4),
            last: None,
            settled: true,
            state: Some(state),
            batchable: false,
        };
        let mut out = BytesMut::new();
        disposition.encode(&mut out);
        assert_eq!(Disposition::decode(&mut out.freeze()).unwrap(), disposition);
    }
    let discharge = Value::described(
        Descriptor::Code(0x32),
        Value::List(vec![
            Value::Binary(Bytes::from_static(b"txn-1")),
            Value::Bool(true),
        ]),
    );
    assert_eq!(
        CoordinatorRequest::from_value(discharge).unwrap(),
        CoordinatorRequest::Discharge(Discharge {
            txn_id: Bytes::from_static(b"txn-1"),
            fail: Some(true),
        })
    );
    assert!(CoordinatorRequest::from_value(Value::Null).is_err());
}

#[test]
fn transfers_split_to_the_peer_frame_size_and_reassemble() {
    let payload: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    let mut transfer = Transfer::new(Handle(5));
    transfer.delivery_id = Some(DeliveryNumber(1));
    transfer.delivery_tag = Some(Bytes::from_static(&[1; 16]));
    transfer.message_format = Some(MessageFormat::AMQP);
    transfer.settled = Some(false);
    let mut wire = BytesMut::new();
    let frames = encode_transfer(3, &transfer, &payload, 1024, &mut wire).unwrap();
    assert!(frames >= 10);
    let decoded = decode_at_every_split(&wire, 1024);
    assert_eq!(decoded.len(), frames);
    let mut reassembled = Vec::new();
    for (i, frame) in decoded.iter().enumerate() {
        let Frame::Amqp(AmqpFrame {
            channel: 3,
            performative: Performative::Transfer(t),
            payload,
        }) = frame
        else {
            panic!("not a transfer frame: {frame:?}");
        };
        assert_eq!(t.more, i + 1 < frames, "more flag of frame {i}");
        assert_eq!(t.handle, Handle(5));
        if i == 0 {
            assert_eq!(t.delivery_tag, transfer.delivery_tag);
        }
        reassembled.extend_from_slice(payload);
    }
    assert_eq!(reassembled, payload);

    let mut single = BytesMut::new();
    assert_eq!(
        encode_transfer(0, &transfer, b"small", 1024, &mut single),
        Ok(1)
    );
    let err = encode_transfer(0, &transfer, &payload, 20, &mut BytesMut::new()).unwrap_err();
    assert_eq!(
        err.condition(),
        busbar_amqp::condition::FRAME_SIZE_TOO_SMALL
    );
}

#[test]
fn transfer_payload_shares_the_receive_buffer() {
    let mut wire = BytesMut::new();
    let payload = vec![0xab; 4096];
    encode_transfer(0, &Transfer::new(Handle(0)), &payload, 65_536, &mut wire).unwrap();
    let buffer = wire.as_ptr() as usize..wire.as_ptr() as usize + wire.len();
    let mut decoder = FrameDecoder::new(65_536);
    let Some(Frame::Amqp(frame)) = decoder.decode(&mut wire).unwrap() else {
        panic!("no frame");
    };
    assert_eq!(frame.payload.len(), 4096);
    // The payload is a view into the receive buffer's allocation, not a copy.
    assert!(buffer.contains(&(frame.payload.as_ptr() as usize)));
}

#[test]
fn protocol_headers_parse_as_their_own_step() {
    for header in [
        ProtocolHeader::Amqp,
        ProtocolHeader::Sasl,
        ProtocolHeader::Tls,
    ] {
        let bytes = header.to_bytes();
        for split in 0..8 {
            let mut buf = BytesMut::from(&bytes[..split]);
            assert_eq!(ProtocolHeader::decode(&mut buf), Ok(None));
            buf.extend_from_slice(&bytes[split..]);
            buf.extend_from_slice(&[0, 0, 0, 8, 2, 0, 0, 0]);
            assert_eq!(ProtocolHeader::decode(&mut buf), Ok(Some(header)));
            assert_eq!(buf.len(), 8, "only the header is consumed");
        }
    }
    assert_eq!(&ProtocolHeader::Sasl.to_bytes(), b"AMQP\x03\x01\x00\x00");
    assert_eq!(&ProtocolHeader::Amqp.to_bytes(), b"AMQP\x00\x01\x00\x00");
}

#[test]
fn lenient_peers_string_keys_and_narrow_integers_are_accepted() {
    // JS dead-letters with `rejected.error.info` keyed by strings (sdk-wire.md).
    let info = Value::Map(vec![
        (Value::from("DeadLetterReason"), Value::from("why")),
        (Value::from("DeadLetterErrorDescription"), Value::Null),
    ]);
    let error = Value::described(
        Descriptor::Code(0x1d),
        Value::List(vec![
            Value::Symbol(Symbol::from("com.microsoft:dead-letter")),
            Value::Null,
            info,
        ]),
    );
    let rejected = Value::described(Descriptor::Code(0x25), Value::List(vec![error]));
    let annotations = Value::Map(vec![(Value::from("retry"), Value::Int(1))]);
    let modified = Value::described(
        Descriptor::Code(0x27),
        Value::List(vec![Value::Null, Value::Bool(false), annotations]),
    );
    for (state, check) in [(rejected, 0), (modified, 1)] {
        let disposition = Value::described(
            Descriptor::Code(0x15),
            Value::List(vec![
                Value::Bool(true),
                Value::Uint(3),
                Value::Null,
                Value::Bool(false),
                state,
            ]),
        );
        let Performative::Disposition(d) = Performative::from_value(disposition).unwrap() else {
            panic!("not a disposition");
        };
        match (check, d.state) {
            (0, Some(DeliveryState::Rejected(r))) => {
                let info = r.error.unwrap().info.unwrap();
                assert_eq!(info.get("DeadLetterReason"), Some(&Value::from("why")));
            }
            (1, Some(DeliveryState::Modified(m))) => {
                assert_eq!(
                    m.message_annotations.unwrap().get("retry"),
                    Some(&Value::Int(1))
                );
            }
            (_, state) => panic!("unexpected state {state:?}"),
        }
    }
    // max-message-size is a ulong; a uint is widened.
    let attach = Value::described(
        Descriptor::Code(0x12),
        Value::List(vec![
            Value::from("l"),
            Value::Uint(0),
            Value::Bool(false),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Uint(262_144),
        ]),
    );
    let Performative::Attach(attach) = Performative::from_value(attach).unwrap() else {
        panic!("not an attach");
    };
    assert_eq!(attach.max_message_size, Some(262_144));
}

#[test]
fn extended_frame_headers_are_skipped() {
    // doff = 3: four bytes of extended header (ignored) before the body.
    let mut body = BytesMut::new();
    Performative::End(End { error: None }).encode(&mut body);
    let mut wire = vec![0, 0, 0, 0, 3, 0, 0, 9, 0xde, 0xad, 0xbe, 0xef];
    wire.extend_from_slice(&body);
    let size = u32::try_from(wire.len()).unwrap().to_be_bytes();
    wire[..4].copy_from_slice(&size);
    let frames = decode_at_every_split(&wire, 512);
    assert_eq!(
        frames,
        vec![Frame::Amqp(AmqpFrame {
            channel: 9,
            performative: Performative::End(End { error: None }),
            payload: Bytes::new(),
        })]
    );
}

fn arbitrary_state() -> impl proptest::strategy::Strategy<Value = Option<DeliveryState>> {
    use proptest::prelude::*;
    prop_oneof![
        Just(None),
        Just(Some(DeliveryState::Accepted(Accepted {}))),
        Just(Some(DeliveryState::Released(Released {}))),
        (any::<u32>(), any::<u64>()).prop_map(|(n, o)| Some(DeliveryState::Received(Received {
            section_number: n,
            section_offset: o,
        }))),
        (any::<Option<bool>>(), any::<Option<bool>>()).prop_map(|(f, u)| Some(
            DeliveryState::Modified(Modified {
                delivery_failed: f,
                undeliverable_here: u,
                message_annotations: None,
            })
        )),
        "[a-z:-]{1,30}".prop_map(|c| Some(DeliveryState::Rejected(Rejected {
            error: Some(AmqpError::new(&c, "d")),
        }))),
    ]
}

proptest::proptest! {
    #[test]
    fn arbitrary_transfers_flows_and_dispositions_round_trip(
        (handle, id, tag, format, settled, more, state) in (
            proptest::prelude::any::<u32>(),
            proptest::prelude::any::<Option<u32>>(),
            proptest::option::of(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..32)),
            proptest::prelude::any::<Option<u32>>(),
            proptest::prelude::any::<Option<bool>>(),
            proptest::prelude::any::<bool>(),
            arbitrary_state(),
        ),
        (credit, count, window, drain, split) in (
            proptest::prelude::any::<Option<u32>>(),
            proptest::prelude::any::<Option<u32>>(),
            proptest::prelude::any::<u32>(),
            proptest::prelude::any::<bool>(),
            proptest::prelude::any::<proptest::sample::Index>(),
        ),
    ) {
        let transfer = Transfer {
            handle: Handle(handle),
            delivery_id: id.map(DeliveryNumber),
            delivery_tag: tag.map(Bytes::from),
            message_format: format.map(MessageFormat),
            settled,
            more,
            state: state.clone(),
            ..Transfer::new(Handle(0))
        };
        let flow = Flow {
            next_incoming_id: id.map(TransferNumber),
            incoming_window: window,
            next_outgoing_id: TransferNumber(handle),
            outgoing_window: window,
            handle: Some(Handle(handle)),
            delivery_count: count.map(SequenceNo),
            link_credit: credit,
            available: None,
            drain,
            echo: !drain,
            properties: None,
        };
        let disposition = Disposition {
            role: if more { Role::Sender } else { Role::Receiver },
            first: DeliveryNumber(handle),
            last: id.map(DeliveryNumber),
            settled: drain,
            state,
            batchable: more,
        };
        let performatives =
            vec![Performative::from(transfer), flow.into(), disposition.into()];
        let mut wire = BytesMut::new();
        for p in &performatives {
            encode_amqp_frame(1, p, b"", &mut wire);
        }
        let at = split.index(wire.len() + 1);
        let mut decoder = FrameDecoder::new(1 << 16);
        let mut buf = BytesMut::from(&wire[..at]);
        let mut frames = Vec::new();
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
        buf.extend_from_slice(&wire[at..]);
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
        let decoded: Vec<Performative> = frames
            .into_iter()
            .map(|f| match f {
                Frame::Amqp(frame) => frame.performative,
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        proptest::prop_assert_eq!(decoded, performatives);
    }
}

#[test]
fn performatives_decoded_field_by_field_equal_the_value_tree_decoding() {
    for performative in sample_performatives() {
        let mut encoded = BytesMut::new();
        performative.encode(&mut encoded);
        let encoded = encoded.freeze();
        let streamed = Performative::decode(&mut encoded.clone()).unwrap();
        let via_tree = Performative::from_value(Value::decode(&mut encoded.clone()).unwrap());
        assert_eq!(streamed, via_tree.unwrap());
    }
    // Not described, and an unknown descriptor, are refused by both.
    for wire in [&b"\x40"[..], b"\x00\x53\x7f\x45"] {
        assert!(Performative::decode(&mut Bytes::from_static(wire)).is_err());
        let via_tree = Value::decode(&mut Bytes::from_static(wire)).unwrap();
        assert!(Performative::from_value(via_tree).is_err());
    }
}
