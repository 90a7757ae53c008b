//! `Message::for_delivery` (header and message-annotations spliced for a delivery) against the
//! path it replaced — decode the annotations, drop keys, append, re-encode with
//! `Message::rewrite` — on SDK trace payloads and built messages; the sender's own entries are
//! copied byte for byte; malformed annotations are refused.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions unwrap too

mod common;

use busbar_amqp::DecodeError;
use busbar_amqp::message::*;
use busbar_amqp::types::{Annotations, Symbol, Timestamp, Uuid, Value};
use bytes::Bytes;
use common::trace_transfers;

const TRACES: [&str; 5] = [
    include_str!("traces/send_one.txt"),
    include_str!("traces/mgmt_ops.txt"),
    include_str!("traces/send_batch.txt"),
    include_str!("traces/peeklock.txt"),
    include_str!("traces/session.txt"),
];

const DROPPED: [&str; 3] = [
    "x-opt-sequence-number",
    "x-opt-locked-until",
    "x-opt-lock-token",
];

fn added() -> Vec<(&'static str, Value)> {
    vec![
        ("x-opt-sequence-number", Value::Long(1 << 40)),
        ("x-opt-enqueued-time", Value::Timestamp(Timestamp(1_700))),
        ("x-opt-message-state", Value::Int(0)),
        ("x-opt-lock-token", Value::Uuid(Uuid([7; 16]))),
    ]
}

fn header_of(message: &Message) -> Header {
    Header {
        delivery_count: 3,
        ..message.header().unwrap().unwrap_or_default()
    }
}

/// What the broker did before `for_delivery`: the annotations decoded into `Value`s, filtered,
/// extended and the whole section re-encoded.
fn rewritten(message: &Message, header: &Header, added: &[(&str, Value)]) -> Message {
    let mut annotations = message.message_annotations().unwrap().unwrap_or_default();
    annotations
        .0
        .retain(|(key, _)| !DROPPED.iter().any(|dropped| key.is_key(dropped)));
    for (key, value) in added {
        annotations
            .0
            .push((Value::Symbol(Symbol::from(*key)), value.clone()));
    }
    message.rewrite(Some(header), Some(&annotations)).unwrap()
}

fn assert_same_as_rewrite(message: &Message, added: &[(&str, Value)]) {
    let header = header_of(message);
    let old = rewritten(message, &header, added);
    let new = message.for_delivery(&header, &DROPPED, added).unwrap();
    assert_eq!(new.header().unwrap(), old.header().unwrap());
    assert_eq!(
        new.message_annotations().unwrap(),
        old.message_annotations().unwrap()
    );
    assert_eq!(
        new.delivery_annotations().unwrap(),
        old.delivery_annotations().unwrap()
    );
    // Builders and SDKs encode compactly, so even the bytes agree.
    assert_eq!(new.as_bytes(), old.as_bytes());
}

#[test]
fn trace_payloads_come_out_as_the_old_rewrite_made_them() {
    let mut checked = 0;
    for trace in TRACES {
        for (_, _, payload) in trace_transfers(trace) {
            let message = Message::parse(payload).unwrap();
            assert_same_as_rewrite(&message, &added());
            assert_same_as_rewrite(&message, &[]);
            checked += 1;
        }
    }
    assert!(checked > 10, "only {checked} trace payloads");
}

fn with_annotations(annotations: Annotations) -> MessageBuilder {
    let mut delivery = Annotations::default();
    delivery.set("x-opt-hop", Value::Int(1));
    MessageBuilder::new()
        .delivery_annotations(delivery)
        .message_annotations(annotations)
        .properties(Properties {
            subject: Some("s".into()),
            ..Properties::default()
        })
        .data(Bytes::from_static(b"body"))
}

#[test]
fn built_messages_come_out_as_the_old_rewrite_made_them() {
    let mut mixed = Annotations::default();
    mixed.set("user", Value::from("kept"));
    mixed.set("x-opt-sequence-number", Value::Long(5));
    // String and non-text keys: a string key naming a broker-owned annotation is dropped too.
    mixed
        .0
        .push((Value::from("x-opt-locked-until"), Value::Long(5)));
    mixed.0.push((Value::Ulong(9), Value::from("numeric key")));
    mixed.set(&"k".repeat(300), Value::Int(1));
    let mut large = Annotations::default();
    for i in 0..40 {
        large.set(&format!("key-{i}"), Value::Long(i));
    }
    for annotations in [Annotations::default(), mixed, large] {
        let message = with_annotations(annotations.clone()).build();
        assert_same_as_rewrite(&message, &added());
        let headed = with_annotations(annotations)
            .header(Header {
                durable: true,
                ttl: None,
                ..Header::default()
            })
            .build();
        assert_same_as_rewrite(&headed, &added());
    }
    let bare = MessageBuilder::new()
        .data(Bytes::from_static(b"hi"))
        .build();
    assert_same_as_rewrite(&bare, &added());
    assert_same_as_rewrite(&bare, &[]);
}

/// A message whose annotations are a `map32` holding one `sym32`-keyed entry.
fn wide_annotations_message() -> (Bytes, Vec<u8>) {
    let entry: Vec<u8> = [&[0xb3, 0, 0, 0, 4][..], b"user", &[0x71, 0, 0, 0, 7]].concat();
    let mut bytes = vec![0x00, 0x53, 0x72, 0xd1];
    bytes.extend_from_slice(&u32::try_from(entry.len() + 4).unwrap().to_be_bytes());
    bytes.extend_from_slice(&2u32.to_be_bytes());
    bytes.extend_from_slice(&entry);
    bytes.extend_from_slice(&[0x00, 0x53, 0x75, 0xa0, 2, b'h', b'i']);
    (Bytes::from(bytes), entry)
}

#[test]
fn the_senders_own_entries_are_copied_byte_for_byte() {
    let (bytes, entry) = wide_annotations_message();
    let message = Message::parse(bytes).unwrap();
    let out = message
        .for_delivery(&Header::default(), &DROPPED, &added())
        .unwrap();
    assert!(out.as_bytes().windows(entry.len()).any(|w| w == entry));
    let annotations = out.message_annotations().unwrap().unwrap();
    assert_eq!(annotations.get("user"), Some(&Value::Int(7)));
    assert_eq!(
        annotations.get("x-opt-sequence-number"),
        Some(&Value::Long(1 << 40))
    );
    assert_eq!(annotations.0.len(), 5);
    assert_eq!(
        out.data_sections().unwrap(),
        vec![Bytes::from_static(b"hi")]
    );
}

#[test]
fn malformed_annotations_are_refused() {
    // A list where the map belongs, a map with an odd count, and an entry cut short.
    for annotations in [
        &[0xc0, 0x01, 0x00][..],
        &[0xc1, 0x03, 0x01, 0x53, 0x01],
        &[0xc1, 0x04, 0x02, 0xa3, 0x05, b'x'],
    ] {
        let mut bytes = vec![0x00, 0x53, 0x72];
        bytes.extend_from_slice(annotations);
        let message = Message::from_bytes(Bytes::from(bytes));
        let result = message.for_delivery(&Header::default(), &DROPPED, &added());
        assert!(
            matches!(
                result,
                Err(DecodeError::Malformed(_) | DecodeError::Truncated)
            ),
            "{annotations:?}: {result:?}"
        );
    }
}
