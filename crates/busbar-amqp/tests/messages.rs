//! Message tests: golden vectors from the captured SDK traces (CBS put-token, management
//! requests and responses, batches, sessions), the builder, the zero-copy rewrite of header and
//! message annotations, and hostile section input.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions unwrap too

mod common;

use busbar_amqp::message::*;
use busbar_amqp::types::{Annotations, Symbol, Timestamp, Uuid, Value};
use bytes::Bytes;
use common::trace_transfers;

const SEND_ONE: &str = include_str!("traces/send_one.txt");
const MGMT_OPS: &str = include_str!("traces/mgmt_ops.txt");
const SEND_BATCH: &str = include_str!("traces/send_batch.txt");
const PEEKLOCK: &str = include_str!("traces/peeklock.txt");
const SESSION: &str = include_str!("traces/session.txt");

fn text(value: Option<&Value>) -> &str {
    value.and_then(Value::as_str).unwrap()
}

#[test]
fn every_complete_trace_payload_decodes_and_round_trips_through_the_builder() {
    let mut decoded = 0;
    for trace in [SEND_ONE, MGMT_OPS, SEND_BATCH, PEEKLOCK, SESSION] {
        for (_, performative, payload) in trace_transfers(trace) {
            let message = Message::parse(payload.clone()).unwrap();
            // Rebuilding from the decoded sections: the same sections come back.
            let mut builder = MessageBuilder::new();
            if let Some(header) = message.header().unwrap() {
                builder = builder.header(header);
            }
            if let Some(a) = message.delivery_annotations().unwrap() {
                builder = builder.delivery_annotations(a);
            }
            if let Some(a) = message.message_annotations().unwrap() {
                builder = builder.message_annotations(a);
            }
            if let Some(p) = message.properties().unwrap() {
                builder = builder.properties(p);
            }
            if let Some(p) = message.application_properties().unwrap() {
                builder = builder.application_properties(p);
            }
            let rebuilt = builder.body(message.body().unwrap()).build();
            assert_eq!(rebuilt.properties().unwrap(), message.properties().unwrap());
            assert_eq!(
                rebuilt.body().unwrap(),
                message.body().unwrap(),
                "{performative}"
            );
            if performative.contains("message-format=0x80013700") {
                for inner in message.batch().unwrap() {
                    inner.properties().unwrap();
                    inner.body().unwrap();
                }
            }
            decoded += 1;
        }
    }
    assert!(decoded >= 40, "only {decoded} complete payloads");
}

#[test]
fn cbs_put_token_from_send_one() {
    let transfers = trace_transfers(SEND_ONE);
    let (from_client, _, payload) = &transfers[0];
    assert!(from_client);
    let message = Message::from_bytes(payload.clone());
    let properties = message.properties().unwrap().unwrap();
    let expected_id = Uuid([
        0x7e, 0xba, 0x70, 0x6f, 0x51, 0x1a, 0x4b, 0xc1, 0x92, 0x9c, 0xfe, 0x87, 0xbf, 0x19, 0x2b,
        0x78,
    ]);
    assert_eq!(properties.message_id, Some(MessageId::Uuid(expected_id)));
    assert_eq!(properties.reply_to, None);
    let app = message.application_properties().unwrap().unwrap();
    assert_eq!(text(app.get("operation")), "put-token");
    assert_eq!(text(app.get("type")), "jwt");
    assert_eq!(text(app.get("name")), "sb://localhost:5673/q-basic");
    assert_eq!(
        app.get("expiration"),
        Some(&Value::Timestamp(Timestamp(1_795_307_569_000)))
    );
    assert_eq!(message.body_kind().unwrap(), BodyKind::Value);
    let Body::Value(Value::String(token)) = message.body().unwrap() else {
        panic!("token body is not a string");
    };
    assert!(token.starts_with("SharedAccessSignature sr=sb%3A%2F%2Flocalhost%3A5673%2Fq-basic"));

    // The broker's reply: correlation-id echoes the uuid, status-code is an int.
    let (from_client, _, reply) = &transfers[1];
    assert!(!from_client);
    let reply = Message::from_bytes(reply.clone());
    assert_eq!(reply.header().unwrap(), Some(Header::default()));
    let properties = reply.properties().unwrap().unwrap();
    assert_eq!(
        properties.correlation_id,
        Some(MessageId::Uuid(expected_id))
    );
    let app = reply.application_properties().unwrap().unwrap();
    assert_eq!(app.get("status-code"), Some(&Value::Long(200)));
    assert_eq!(text(app.get("status-description")), "OK");
    assert_eq!(reply.body_kind().unwrap(), BodyKind::Empty);
}

#[test]
fn trace_messages_survive_transfer_framing_split_at_every_byte() {
    use busbar_amqp::frame::{AmqpFrame, Frame, encode_transfer};
    use busbar_amqp::performatives::{Handle, Performative, Transfer};
    for (_, _, payload) in trace_transfers(SEND_ONE).into_iter().take(2) {
        let mut wire = bytes::BytesMut::new();
        // 128-byte frames: the message spans several transfer frames.
        encode_transfer(1, &Transfer::new(Handle(0)), &payload, 128, &mut wire).unwrap();
        let frames = common::decode_at_every_split(&wire, 512);
        let mut reassembled = Vec::new();
        for frame in frames {
            let Frame::Amqp(AmqpFrame {
                performative: Performative::Transfer(_),
                payload,
                ..
            }) = frame
            else {
                panic!("not a transfer: {frame:?}");
            };
            reassembled.extend_from_slice(&payload);
        }
        let message = Message::parse(Bytes::from(reassembled)).unwrap();
        assert_eq!(message.as_bytes(), &payload);
        assert_eq!(
            message.application_properties().unwrap(),
            Message::from_bytes(payload)
                .application_properties()
                .unwrap()
        );
    }
}

#[test]
fn management_messages_from_mgmt_ops() {
    let transfers = trace_transfers(MGMT_OPS);
    let requests: Vec<Message> = transfers
        .iter()
        .filter(|(from_client, _, _)| *from_client)
        .map(|(_, _, payload)| Message::from_bytes(payload.clone()))
        .collect();
    let operations: Vec<String> = requests
        .iter()
        .filter_map(|m| m.application_properties().unwrap())
        .filter_map(|app| {
            app.get("operation")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .collect();
    assert!(operations.contains(&"com.microsoft:cancel-scheduled-message".to_owned()));
    assert!(operations.contains(&"com.microsoft:peek-message".to_owned()));

    let cancel = requests
        .iter()
        .find(|m| {
            m.application_properties().unwrap().is_some_and(|app| {
                app.get("operation").and_then(Value::as_str)
                    == Some("com.microsoft:cancel-scheduled-message")
            })
        })
        .unwrap();
    let properties = cancel.properties().unwrap().unwrap();
    assert_eq!(properties.reply_to.as_deref(), Some("q-basic/$management"));
    let app = cancel.application_properties().unwrap().unwrap();
    assert_eq!(
        app.get("com.microsoft:server-timeout"),
        Some(&Value::Uint(8999))
    );
    let Body::Value(Value::Map(body)) = cancel.body().unwrap() else {
        panic!("request body is not a map");
    };
    let (key, Value::Array(numbers)) = &body[0] else {
        panic!("sequence-numbers is not an array");
    };
    assert!(key.is_key("sequence-numbers"));
    assert_eq!(numbers.items(), &[Value::Long(2)]);

    let peek = requests
        .iter()
        .find(|m| {
            m.application_properties().unwrap().is_some_and(|app| {
                app.get("operation").and_then(Value::as_str) == Some("com.microsoft:peek-message")
            })
        })
        .unwrap();
    let Body::Value(Value::Map(body)) = peek.body().unwrap() else {
        panic!("peek body is not a map");
    };
    assert_eq!(
        body[0],
        (Value::from("from-sequence-number"), Value::Long(1))
    );
    assert_eq!(body[1], (Value::from("message-count"), Value::Int(5)));

    // The broker's responses carry camelCase statusCode as a long in this fake broker.
    let responses = transfers.iter().filter(|(from_client, _, _)| !*from_client);
    let status: Vec<Value> = responses
        .filter_map(|(_, _, p)| {
            Message::from_bytes(p.clone())
                .application_properties()
                .unwrap()
        })
        .filter_map(|app| app.get("statusCode").cloned())
        .collect();
    assert!(status.contains(&Value::Long(200)));
}

#[test]
fn batch_from_send_batch_unpacks_into_messages() {
    let (_, performative, payload) = trace_transfers(SEND_BATCH)
        .into_iter()
        .find(|(_, p, _)| p.contains("message-format=0x80013700"))
        .unwrap();
    assert!(performative.contains("more=false"));
    let batch = Message::from_bytes(payload);
    assert_eq!(batch.body_kind().unwrap(), BodyKind::Data);
    let inner: Vec<Message> = batch.batch().unwrap().collect();
    assert_eq!(inner.len(), 3);
    for (i, message) in inner.iter().enumerate() {
        let id = message.properties().unwrap().unwrap().message_id;
        assert_eq!(id, Some(MessageId::String(format!("b-{i}"))));
        assert_eq!(
            message.body().unwrap(),
            Body::Data(vec![Bytes::from(format!("batch-{i}"))])
        );
    }
}

#[test]
fn session_messages_carry_group_id() {
    let group_ids: Vec<String> = trace_transfers(SESSION)
        .iter()
        .filter_map(|(_, _, payload)| {
            let message = Message::from_bytes(payload.clone());
            message
                .batch()
                .ok()?
                .find_map(|m| m.properties().ok()??.group_id)
        })
        .collect();
    assert!(group_ids.iter().any(|g| g == "session-A"), "{group_ids:?}");
}

fn sample_message() -> Message {
    let mut annotations = Annotations::default();
    annotations.set("x-opt-partition-key", Value::from("pk"));
    let mut delivery = Annotations::default();
    delivery.set("x-opt-hop", Value::Int(1));
    let mut app = ApplicationProperties::default();
    app.push("color", "red");
    let mut footer = Annotations::default();
    footer.set("checksum", Value::Uint(7));
    MessageBuilder::new()
        .header(Header {
            durable: true,
            priority: 4,
            ttl: None,
            first_acquirer: false,
            delivery_count: 0,
        })
        .delivery_annotations(delivery)
        .message_annotations(annotations)
        .properties(Properties {
            message_id: Some(MessageId::Ulong(9)),
            group_id: Some("session-A".into()),
            reply_to: Some("replies".into()),
            reply_to_group_id: Some("g".into()),
            content_type: Some(Symbol::from("text/plain")),
            ..Properties::default()
        })
        .application_properties(app)
        .body(Body::Sequence(vec![
            vec![Value::Int(1)],
            vec![Value::from("two")],
        ]))
        .footer(footer)
        .build()
}

#[test]
fn rewrite_replaces_header_and_annotations_and_copies_the_rest() {
    let message = sample_message();
    let properties_bytes = {
        let bytes = message.as_bytes();
        // Everything from the properties section on is what must survive byte for byte.
        let at = bytes
            .windows(3)
            .position(|w| w == [0x00, 0x53, 0x73])
            .unwrap();
        bytes.slice(at..)
    };
    let mut annotations = message.message_annotations().unwrap().unwrap();
    annotations.set("x-opt-sequence-number", Value::Long(42));
    annotations.set("x-opt-locked-until", Value::Timestamp(Timestamp(1_000)));
    let header = Header {
        delivery_count: 3,
        ..message.header().unwrap().unwrap()
    };
    let rewritten = message.rewrite(Some(&header), Some(&annotations)).unwrap();
    assert!(rewritten.as_bytes().ends_with(&properties_bytes));
    assert_eq!(rewritten.header().unwrap(), Some(header));
    assert_eq!(rewritten.message_annotations().unwrap(), Some(annotations));
    assert_eq!(
        rewritten.delivery_annotations().unwrap(),
        message.delivery_annotations().unwrap()
    );
    assert_eq!(
        rewritten.properties().unwrap(),
        message.properties().unwrap()
    );
    assert_eq!(rewritten.body().unwrap(), message.body().unwrap());
    assert_eq!(rewritten.footer().unwrap(), message.footer().unwrap());

    // Dropping both sections, and adding them to a message that had none.
    let bare = message.rewrite(None, None).unwrap();
    assert_eq!(bare.header().unwrap(), None);
    assert_eq!(bare.message_annotations().unwrap(), None);
    let plain = MessageBuilder::new()
        .data(Bytes::from_static(b"hi"))
        .build();
    let annotated = plain
        .rewrite(Some(&Header::default()), Some(&Annotations::default()))
        .unwrap();
    assert_eq!(annotated.header().unwrap(), Some(Header::default()));
    assert_eq!(
        annotated.data_sections().unwrap(),
        vec![Bytes::from_static(b"hi")]
    );
}

#[test]
fn builder_output_decodes_to_what_was_built() {
    let message = sample_message();
    let reparsed = Message::parse(message.as_bytes().clone()).unwrap();
    let properties = reparsed.properties().unwrap().unwrap();
    assert_eq!(properties.group_id.as_deref(), Some("session-A"));
    assert_eq!(properties.reply_to_group_id.as_deref(), Some("g"));
    assert_eq!(
        text(
            reparsed
                .application_properties()
                .unwrap()
                .unwrap()
                .get("color")
        ),
        "red"
    );
    assert_eq!(reparsed.body_kind().unwrap(), BodyKind::Sequence);
    assert_eq!(
        reparsed.footer().unwrap().unwrap().get("checksum"),
        Some(&Value::Uint(7))
    );
    assert_eq!(
        MessageBuilder::new().encoded_size(),
        MessageBuilder::new().build().as_bytes().len()
    );
}

#[test]
fn hostile_sections_are_errors() {
    let cases: Vec<&[u8]> = vec![
        b"\x40",                                  // not a described section
        b"\x00\x53\x99\x45",                      // unknown section code
        b"\x00\x53\x73\x45\x00\x53\x70\x45",      // properties before header
        b"\x00\x53\x70\x45\x00\x53\x70\x45",      // header twice
        b"\x00\x53\x77\x40\x00\x53\x77\x40",      // two amqp-value bodies
        b"\x00\x53\x75\xa0\x01x\x00\x53\x77\x40", // data then amqp-value
        b"\x00\x53\x73\xc0\xff",                  // truncated properties
        b"\x00\x53",                              // truncated descriptor
        b"\x00\x53\x74\xc1\x03\x02\x43\x40",      // application-properties with a non-string key
    ];
    for wire in cases {
        let message = Message::from_bytes(Bytes::from_static(wire));
        let failed = message.header().is_err()
            || message.properties().is_err()
            || message.application_properties().is_err()
            || message.body().is_err();
        assert!(failed, "{wire:02x?} was accepted");
    }
    // A properties section whose message-id has a type no message-id may have.
    let wire = b"\x00\x53\x73\xc0\x02\x01\x41";
    let message = Message::parse(Bytes::from_static(wire)).unwrap();
    assert!(message.properties().is_err());
}
