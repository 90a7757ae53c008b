//! Shared test helpers: feeding frames to the decoder split at every byte boundary, sample
//! performatives with every field set, and reading payloads out of PN_TRACE_FRM traces.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use busbar_amqp::frame::{Frame, FrameDecoder};
use busbar_amqp::performatives::*;
use busbar_amqp::types::{Array, Descriptor, ElementType, Fields, Symbol, Value};
use bytes::{Bytes, BytesMut};

/// Decodes every frame in `wire`, first in one piece, then split in two at every byte boundary,
/// then fed one byte at a time; asserts all ways give the same frames and consume everything.
pub fn decode_at_every_split(wire: &[u8], max_frame_size: u32) -> Vec<Frame> {
    let whole = decode_chunks(&[wire], max_frame_size);
    for split in 0..=wire.len() {
        let (a, b) = wire.split_at(split);
        assert_eq!(
            decode_chunks(&[a, b], max_frame_size),
            whole,
            "split at {split}"
        );
    }
    let bytes: Vec<&[u8]> = wire.chunks(1).collect();
    assert_eq!(decode_chunks(&bytes, max_frame_size), whole, "byte by byte");
    whole
}

fn decode_chunks(chunks: &[&[u8]], max_frame_size: u32) -> Vec<Frame> {
    let mut decoder = FrameDecoder::new(max_frame_size);
    let mut buf = BytesMut::new();
    let mut frames = Vec::new();
    for chunk in chunks {
        buf.extend_from_slice(chunk);
        while let Some(frame) = decoder.decode(&mut buf).unwrap() {
            frames.push(frame);
        }
    }
    assert!(buf.is_empty(), "bytes left over");
    frames
}

fn symbols(names: &[&str]) -> Option<Vec<Symbol>> {
    Some(names.iter().map(|n| Symbol::from(*n)).collect())
}

fn fields() -> Option<Fields> {
    let mut fields = Fields::default();
    fields.push("product", "busbar");
    fields.push("com.microsoft:timeout", Value::Uint(60_000));
    Some(fields)
}

fn error() -> Option<AmqpError> {
    Some(AmqpError {
        condition: Symbol::from(busbar_amqp::condition::NOT_FOUND),
        description: Some("no such entity".into()),
        info: fields(),
    })
}

/// A source with every field set, including a session filter.
pub fn full_source() -> Source {
    let mut filter = Fields::default();
    filter.push("com.microsoft:session-filter", "session-A");
    filter.push(
        "apache.org:selector-filter:string",
        Value::described(
            Descriptor::Code(0x0000_4f8c_0000_0004),
            Value::from("color = 'red'"),
        ),
    );
    Source {
        address: Some(Value::from("q-basic")),
        durable: TerminusDurability::UnsettledState,
        expiry_policy: Symbol::from("never"),
        timeout: Seconds(30),
        dynamic: true,
        dynamic_node_properties: fields(),
        distribution_mode: Some(Symbol::from("move")),
        filter: Some(filter),
        default_outcome: Some(DeliveryState::Modified(Modified {
            delivery_failed: Some(true),
            undeliverable_here: Some(false),
            message_annotations: None,
        })),
        outcomes: symbols(&["amqp:accepted:list", "amqp:rejected:list"]),
        capabilities: symbols(&["queue"]),
    }
}

/// Every performative with every field set, and each with only its mandatory fields.
pub fn sample_performatives() -> Vec<Performative> {
    let tag = Bytes::from_static(&[0x01, 0x02, 0x03, 0x04, 0xff]);
    vec![
        Performative::Open(Open {
            container_id: "busbar".into(),
            hostname: Some("localhost".into()),
            max_frame_size: 65_536,
            channel_max: 255,
            idle_time_out: Some(Milliseconds(240_000)),
            outgoing_locales: symbols(&["en-US"]),
            incoming_locales: symbols(&["en-US", "de-DE"]),
            offered_capabilities: symbols(&["ANONYMOUS-RELAY"]),
            desired_capabilities: symbols(&[]),
            properties: fields(),
        }),
        Performative::Open(Open {
            container_id: "c".into(),
            hostname: None,
            max_frame_size: u32::MAX,
            channel_max: u16::MAX,
            idle_time_out: None,
            outgoing_locales: None,
            incoming_locales: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        }),
        Performative::Begin(Begin {
            remote_channel: Some(1),
            next_outgoing_id: TransferNumber(7),
            incoming_window: 65_536,
            outgoing_window: u32::MAX,
            handle_max: Handle(1023),
            offered_capabilities: symbols(&["a"]),
            desired_capabilities: symbols(&["b"]),
            properties: fields(),
        }),
        Performative::Attach(Attach {
            name: "sender-link-1".into(),
            handle: Handle(3),
            role: Role::Receiver,
            snd_settle_mode: SenderSettleMode::Unsettled,
            rcv_settle_mode: ReceiverSettleMode::Second,
            source: Some(Box::new(full_source())),
            target: Some(Box::new(
                Target {
                    address: Some(Value::from("amqps://localhost/q")),
                    durable: TerminusDurability::Configuration,
                    expiry_policy: Symbol::from("link-detach"),
                    timeout: Seconds(5),
                    dynamic: false,
                    dynamic_node_properties: fields(),
                    capabilities: symbols(&["topic"]),
                }
                .into(),
            )),
            unsettled: Some(vec![(
                Value::Binary(tag.clone()),
                Value::described(Descriptor::Code(0x24), Value::List(vec![])),
            )]),
            incomplete_unsettled: true,
            initial_delivery_count: Some(SequenceNo(0)),
            max_message_size: Some(262_144),
            offered_capabilities: symbols(&["x"]),
            desired_capabilities: symbols(&["y"]),
            properties: fields(),
        }),
        Performative::Attach(Attach {
            name: "$cbs".into(),
            handle: Handle(0),
            role: Role::Sender,
            snd_settle_mode: SenderSettleMode::Mixed,
            rcv_settle_mode: ReceiverSettleMode::First,
            source: Some(Box::new(Source::with_address("$cbs"))),
            target: None,
            unsettled: None,
            incomplete_unsettled: false,
            initial_delivery_count: None,
            max_message_size: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        }),
        Performative::Flow(Flow {
            next_incoming_id: Some(TransferNumber(1)),
            incoming_window: 2_147_483_647,
            next_outgoing_id: TransferNumber(0),
            outgoing_window: 2_147_483_647,
            handle: Some(Handle(1)),
            delivery_count: Some(SequenceNo(10)),
            link_credit: Some(100),
            available: Some(3),
            drain: true,
            echo: true,
            properties: fields(),
        }),
        Performative::Transfer(Transfer {
            handle: Handle(1),
            delivery_id: Some(DeliveryNumber(42)),
            delivery_tag: Some(tag),
            message_format: Some(MessageFormat::BATCH),
            settled: Some(false),
            more: true,
            rcv_settle_mode: Some(ReceiverSettleMode::Second),
            state: Some(DeliveryState::Received(Received {
                section_number: 2,
                section_offset: 1 << 40,
            })),
            resume: true,
            aborted: true,
            batchable: true,
        }),
        Performative::Transfer(Transfer::new(Handle(0))),
        Performative::Disposition(Disposition {
            role: Role::Sender,
            first: DeliveryNumber(1),
            last: Some(DeliveryNumber(9)),
            settled: true,
            state: Some(DeliveryState::Rejected(Rejected { error: error() })),
            batchable: true,
        }),
        Performative::Disposition(Disposition {
            role: Role::Receiver,
            first: DeliveryNumber(0),
            last: None,
            settled: false,
            state: Some(DeliveryState::Released(Released {})),
            batchable: false,
        }),
        Performative::Disposition(Disposition {
            role: Role::Receiver,
            first: DeliveryNumber(0),
            last: None,
            settled: true,
            state: Some(DeliveryState::Accepted(Accepted {})),
            batchable: false,
        }),
        Performative::Detach(Detach {
            handle: Handle(2),
            closed: true,
            error: error(),
        }),
        Performative::End(End { error: error() }),
        Performative::End(End { error: None }),
        Performative::Close(Close { error: error() }),
        Performative::Close(Close { error: None }),
    ]
}

/// Every SASL frame.
pub fn sample_sasl_frames() -> Vec<SaslFrame> {
    vec![
        SaslFrame::SaslMechanisms(SaslMechanisms {
            sasl_server_mechanisms: vec![Symbol::from(MSSBCBS), Symbol::from(ANONYMOUS)],
        }),
        SaslFrame::SaslInit(SaslInit {
            mechanism: Symbol::from(ANONYMOUS),
            initial_response: Some(Bytes::from_static(b"\0RootManageSharedAccessKey")),
            hostname: Some("localhost".into()),
        }),
        SaslFrame::SaslInit(SaslInit {
            mechanism: Symbol::from(MSSBCBS),
            initial_response: None,
            hostname: None,
        }),
        SaslFrame::SaslChallenge(SaslChallenge {
            challenge: Bytes::from_static(b"challenge"),
        }),
        SaslFrame::SaslResponse(SaslResponse {
            response: Bytes::new(),
        }),
        SaslFrame::SaslOutcome(SaslOutcome {
            code: SaslCode::Ok,
            additional_data: Some(Bytes::from_static(b"welcome")),
        }),
        SaslFrame::SaslOutcome(SaslOutcome {
            code: SaslCode::SysTemp,
            additional_data: None,
        }),
    ]
}

/// One value of every primitive type plus compound and described ones.
pub fn sample_values() -> Vec<Value> {
    use busbar_amqp::types::{Timestamp, Uuid};
    let long_text = "x".repeat(300);
    vec![
        Value::Null,
        Value::Bool(true),
        Value::Bool(false),
        Value::Ubyte(200),
        Value::Ushort(65_000),
        Value::Uint(0),
        Value::Uint(200),
        Value::Uint(70_000),
        Value::Ulong(0),
        Value::Ulong(255),
        Value::Ulong(u64::MAX),
        Value::Byte(-5),
        Value::Short(-300),
        Value::Int(-128),
        Value::Int(-129),
        Value::Int(i32::MAX),
        Value::Long(127),
        Value::Long(i64::MIN),
        Value::Float(1.5),
        Value::Double(-2.25),
        Value::Decimal32([1, 2, 3, 4]),
        Value::Decimal64([1, 2, 3, 4, 5, 6, 7, 8]),
        Value::Decimal128([9; 16]),
        Value::Char('€'),
        Value::Timestamp(Timestamp(1_795_307_569_000)),
        Value::Timestamp(Timestamp(-1)),
        Value::Uuid(Uuid([0xab; 16])),
        Value::Binary(Bytes::from_static(b"\x00\x01")),
        Value::Binary(Bytes::from(vec![7; 256])),
        Value::String("héllo".into()),
        Value::String(long_text.clone()),
        Value::Symbol(Symbol::from("amqp:accepted:list")),
        Value::Symbol(Symbol::from(long_text.as_str())),
        Value::List(vec![]),
        Value::List(vec![Value::Uint(1), Value::from("two"), Value::Null]),
        Value::List((0..300).map(Value::Int).collect()),
        Value::Map(vec![]),
        Value::Map(vec![
            (Value::from("k"), Value::Long(1)),
            (Value::from("k"), Value::Long(2)),
        ]),
        Value::Array(Array::new(ElementType::Long, vec![Value::Long(1), Value::Long(-1)]).unwrap()),
        Value::Array(Array::new(ElementType::Timestamp, vec![]).unwrap()),
        Value::Array(Array::of_symbols([
            Symbol::from("a"),
            Symbol::from(long_text.as_str()),
        ])),
        Value::Array(
            Array::new(
                ElementType::Bool,
                vec![Value::Bool(true), Value::Bool(false)],
            )
            .unwrap(),
        ),
        Value::Array(
            Array::new(
                ElementType::List,
                vec![Value::List(vec![]), Value::List(vec![Value::Null])],
            )
            .unwrap()
            .described(Descriptor::Symbol(Symbol::from("x:y"))),
        ),
        Value::Array(
            Array::new(
                ElementType::Array,
                vec![Value::Array(
                    Array::new(ElementType::Uuid, vec![Value::Uuid(Uuid([1; 16]))]).unwrap(),
                )],
            )
            .unwrap(),
        ),
        Value::described(Descriptor::Code(0x77), Value::from("body")),
        Value::described(
            Descriptor::Symbol(Symbol::from("com.microsoft:datetime-offset")),
            Value::Long(638_000_000_000_000_000),
        ),
    ]
}

/// The transfer payloads of a PN_TRACE_FRM trace whose escaped text is complete (the tracer
/// truncates long payloads), unescaped, with the direction (`true` = sent by the client) and the
/// transfer performative's text.
pub fn trace_transfers(trace: &str) -> Vec<(bool, String, Bytes)> {
    let mut out = Vec::new();
    for line in trace.lines() {
        let Some(at) = line.find("@transfer(20) [") else {
            continue;
        };
        let from_client = line[..at].contains("<-");
        let rest = &line[at..];
        let Some(close) = rest.find("] (") else {
            continue;
        };
        let performative = rest[..=close].to_owned();
        let after = &rest[close + 3..];
        let Some(paren) = after.find(") ") else {
            continue;
        };
        let declared: usize = after[..paren].parse().unwrap();
        let payload = unescape(&after[paren + 2..]);
        if payload.len() == declared {
            out.push((from_client, performative, Bytes::from(payload)));
        }
    }
    out
}

fn unescape(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && bytes.get(i + 1) == Some(&b'x') && i + 3 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 2..i + 4]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}
