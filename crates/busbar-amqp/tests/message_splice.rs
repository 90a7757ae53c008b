//! Splicing a new properties section into a message (`Message::with_properties`): every other
//! section comes out byte for byte as it went in, for every combination of sections and body
//! kinds; and the field-by-field composite decoder agrees with the `Value`-tree one.

use busbar_amqp::DecodeError;
use busbar_amqp::message::*;
use busbar_amqp::types::{Annotations, Composite, Symbol, Value};
use bytes::{Bytes, BytesMut};

/// The optional sections of a message, each as its own encoded bytes (the builder encodes
/// sections independently, so a message is the concatenation of its sections).
struct Parts {
    header: Option<Bytes>,
    delivery_annotations: Option<Bytes>,
    message_annotations: Option<Bytes>,
    properties: Option<Bytes>,
    application_properties: Option<Bytes>,
    body: Bytes,
    footer: Option<Bytes>,
}

fn section(builder: MessageBuilder) -> Bytes {
    builder.build().into_bytes()
}

fn annotations(key: &str, value: Value) -> Annotations {
    let mut annotations = Annotations::default();
    annotations.set(key, value);
    annotations
}

fn bodies() -> Vec<Body> {
    vec![
        Body::Data(vec![Bytes::from_static(b"payload")]),
        Body::Data(vec![Bytes::from_static(b"one"), Bytes::from_static(b"two")]),
        Body::Sequence(vec![vec![Value::Int(1)], vec![Value::from("two")]]),
        Body::Value(Value::from("a value")),
        Body::Empty,
    ]
}

/// Every subset of the six optional sections (bit i set: section i present), with `body`.
fn parts(mask: u8, body: &Body) -> Parts {
    let present = |bit: u8| mask & (1 << bit) != 0;
    let mut app = ApplicationProperties::default();
    app.push("color", "red");
    Parts {
        header: present(0).then(|| {
            section(MessageBuilder::new().header(Header {
                durable: true,
                priority: 7,
                ttl: Some(busbar_amqp::performatives::Milliseconds(60_000)),
                first_acquirer: true,
                delivery_count: 2,
            }))
        }),
        delivery_annotations: present(1).then(|| {
            section(
                MessageBuilder::new().delivery_annotations(annotations("x-opt-hop", Value::Int(1))),
            )
        }),
        message_annotations: present(2).then(|| {
            section(
                MessageBuilder::new()
                    .message_annotations(annotations("x-opt-partition-key", "pk".into())),
            )
        }),
        properties: present(3).then(|| {
            section(MessageBuilder::new().properties(Properties {
                group_id: Some("session-A".into()),
                content_type: Some(Symbol::from("text/plain")),
                ..Properties::default()
            }))
        }),
        application_properties: present(4)
            .then(|| section(MessageBuilder::new().application_properties(app))),
        body: section(MessageBuilder::new().body(body.clone())),
        footer: present(5).then(|| {
            section(MessageBuilder::new().footer(annotations("checksum", Value::Uint(7))))
        }),
    }
}

fn concat<'a>(sections: impl IntoIterator<Item = Option<&'a Bytes>>) -> Vec<u8> {
    sections.into_iter().flatten().flatten().copied().collect()
}

#[test]
fn with_properties_copies_every_other_section_byte_for_byte() {
    let new_properties = Properties {
        message_id: Some(MessageId::String("0123456789abcdef".into())),
        group_id: Some("session-B".into()),
        ..Properties::default()
    };
    let encoded_properties = section(MessageBuilder::new().properties(new_properties.clone()));
    for body in bodies() {
        for mask in 0..64 {
            let p = parts(mask, &body);
            let before = [
                p.header.as_ref(),
                p.delivery_annotations.as_ref(),
                p.message_annotations.as_ref(),
            ];
            let after = [
                p.application_properties.as_ref(),
                Some(&p.body),
                p.footer.as_ref(),
            ];
            let original = concat(
                before
                    .into_iter()
                    .chain([p.properties.as_ref()])
                    .chain(after),
            );
            let message = Message::parse(Bytes::from(original)).unwrap();

            let spliced = message.with_properties(&new_properties).unwrap();

            let expected = concat(
                before
                    .into_iter()
                    .chain([Some(&encoded_properties)])
                    .chain(after),
            );
            assert_eq!(
                spliced.as_bytes().as_ref(),
                &expected[..],
                "mask {mask:06b}, body {body:?}"
            );
            let reparsed = Message::parse(spliced.into_bytes()).unwrap();
            assert_eq!(reparsed.properties().unwrap(), Some(new_properties.clone()));
            assert_eq!(reparsed.header().unwrap(), message.header().unwrap());
            assert_eq!(reparsed.body().unwrap(), message.body().unwrap());
            assert_eq!(reparsed.footer().unwrap(), message.footer().unwrap());
        }
    }
}

#[test]
fn with_properties_on_a_malformed_message_is_an_error() {
    let message = Message::from_bytes(Bytes::from_static(b"\x00\x53\x73\xc0\xff"));
    assert!(message.with_properties(&Properties::default()).is_err());
}

fn encoded<C: Composite>(composite: &C) -> Bytes {
    let mut out = BytesMut::new();
    composite.encode(&mut out);
    out.freeze()
}

/// Both decoders, which must agree on the value or on failing.
fn decode_both<C: Composite + std::fmt::Debug + PartialEq>(wire: &[u8]) -> Result<C, DecodeError> {
    let streamed = C::decode(&mut Bytes::copy_from_slice(wire));
    let via_tree = Value::decode(&mut Bytes::copy_from_slice(wire)).and_then(C::from_value);
    assert_eq!(streamed.is_ok(), via_tree.is_ok(), "{wire:02x?}");
    if let (Ok(streamed), Ok(via_tree)) = (&streamed, &via_tree) {
        assert_eq!(streamed, via_tree);
    }
    streamed
}

#[test]
fn field_by_field_decoding_agrees_with_the_value_tree() {
    let header = Header {
        durable: true,
        priority: 9,
        ttl: Some(busbar_amqp::performatives::Milliseconds(1_500)),
        first_acquirer: false,
        delivery_count: 4,
    };
    assert_eq!(decode_both::<Header>(&encoded(&header)).unwrap(), header);
    let properties = Properties {
        message_id: Some(MessageId::Ulong(7)),
        reply_to: Some("replies".into()),
        group_id: Some("g".into()),
        ..Properties::default()
    };
    assert_eq!(
        decode_both::<Properties>(&encoded(&properties)).unwrap(),
        properties
    );
    // Symbolic descriptor, empty list, shortened list, extra trailing fields.
    let symbolic = b"\xa3\x10amqp:header:list\x45";
    assert_eq!(
        decode_both::<Header>(&[&b"\x00"[..], symbolic].concat()).unwrap(),
        Header::default()
    );
    assert_eq!(
        decode_both::<Header>(b"\x00\x53\x70\xc0\x02\x01\x41").unwrap(),
        Header {
            durable: true,
            ..Header::default()
        }
    );
    let extra = decode_both::<Header>(b"\x00\x53\x70\xc0\x0a\x06\x41\x50\x01\x40\x42\x43\xa1\x01x")
        .unwrap();
    assert_eq!(extra.priority, 1);
}

#[test]
fn field_by_field_decoding_refuses_what_the_value_tree_refuses() {
    let cases: &[&[u8]] = &[
        b"\x40",                                 // not described
        b"\x00\x53\x73\x45",                     // another descriptor
        b"\x00\x53\x70\xa1\x01x",                // described, but not a list
        b"\x00\x53\x70\xc0\x03\x01\x41",         // list size larger than its content
        b"\x00\x53\x70\xc0\x02\x02\x41",         // count larger than the content
        b"\x00\x53\x70\xc0\x03\x01\x41\x41",     // bytes after the last field
        b"\x00\x53\x70\xc0\x02\x01\xa1",         // a field cut short
        b"\x00\x53\x70\xc0\x03\x02\x41\xff",     // an unknown constructor
        b"\x00\x53\x70\xc0\x03\x02\x41\x56\x05", // a bad boolean
        b"\x00\x53\x70\xc0\x03\x01\x50\x01",     // durable given as a ubyte
    ];
    for wire in cases {
        assert!(decode_both::<Header>(wire).is_err(), "{wire:02x?}");
    }
}
