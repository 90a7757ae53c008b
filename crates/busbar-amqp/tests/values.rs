//! Value codec tests: golden compact encodings, round trips of every type (including arbitrary
//! value trees from proptest), size computed without encoding, and truncation at every byte.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions unwrap too

mod common;

use busbar_amqp::DecodeError;
use busbar_amqp::types::{Array, Descriptor, ElementType, Symbol, Timestamp, Uuid, Value};
use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

fn encode(value: &Value) -> Vec<u8> {
    let mut out = BytesMut::new();
    value.encode(&mut out);
    assert_eq!(out.len(), value.encoded_size(), "encoded_size of {value:?}");
    out.to_vec()
}

/// Encodes, checks the size, decodes back, and checks that every strict prefix fails cleanly.
fn assert_round_trip(value: &Value) {
    let wire = encode(value);
    let mut input = Bytes::from(wire.clone());
    assert_eq!(&Value::decode(&mut input).unwrap(), value);
    assert!(input.is_empty());
    for cut in 0..wire.len() {
        let mut prefix = Bytes::copy_from_slice(&wire[..cut]);
        assert!(
            Value::decode(&mut prefix).is_err(),
            "prefix {cut} of {value:?}"
        );
    }
}

#[test]
fn compact_encodings_match_the_spec() {
    let long = |v: i64| Value::Long(v);
    let cases: Vec<(Value, &[u8])> = vec![
        (Value::Null, b"\x40"),
        (Value::Bool(true), b"\x41"),
        (Value::Bool(false), b"\x42"),
        (Value::Uint(0), b"\x43"),
        (Value::Uint(200), b"\x52\xc8"),
        (Value::Uint(70_000), b"\x70\x00\x01\x11\x70"),
        (Value::Ulong(0), b"\x44"),
        (Value::Ulong(255), b"\x53\xff"),
        (Value::Ulong(256), b"\x80\x00\x00\x00\x00\x00\x00\x01\x00"),
        (Value::Int(-128), b"\x54\x80"),
        (Value::Int(-129), b"\x71\xff\xff\xff\x7f"),
        (long(127), b"\x55\x7f"),
        (long(200), b"\x81\x00\x00\x00\x00\x00\x00\x00\xc8"),
        (Value::Ubyte(1), b"\x50\x01"),
        (Value::Ushort(2), b"\x60\x00\x02"),
        (Value::Byte(-1), b"\x51\xff"),
        (Value::Short(-2), b"\x61\xff\xfe"),
        (Value::Float(1.0), b"\x72\x3f\x80\x00\x00"),
        (Value::Double(1.0), b"\x82\x3f\xf0\x00\x00\x00\x00\x00\x00"),
        (Value::Char('a'), b"\x73\x00\x00\x00\x61"),
        (
            Value::Timestamp(Timestamp(1_795_307_569_000)),
            b"\x83\x00\x00\x01\xa2\x00\xab\x7f\x68",
        ),
        (
            Value::Uuid(Uuid([7; 16])),
            b"\x98\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07",
        ),
        (Value::Binary(Bytes::from_static(b"ab")), b"\xa0\x02ab"),
        (Value::from("ab"), b"\xa1\x02ab"),
        (Value::Symbol(Symbol::from("ab")), b"\xa3\x02ab"),
        (Value::List(vec![]), b"\x45"),
        (Value::List(vec![Value::Uint(1)]), b"\xc0\x03\x01\x52\x01"),
        (Value::Map(vec![]), b"\xc1\x01\x00"),
        (
            Value::Map(vec![(Value::from("k"), Value::Null)]),
            b"\xc1\x05\x02\xa1\x01k\x40",
        ),
        // From traces/mgmt_ops.txt: `sequence-numbers` as array<long>.
        (
            Value::Array(Array::new(ElementType::Long, vec![long(2)]).unwrap()),
            b"\xe0\x0a\x01\x81\x00\x00\x00\x00\x00\x00\x00\x02",
        ),
        (
            Value::Array(Array::of_symbols([Symbol::from("ANONYMOUS")])),
            b"\xe0\x0c\x01\xa3\x09ANONYMOUS",
        ),
        (
            Value::described(Descriptor::Code(0x77), Value::from("x")),
            b"\x00\x53\x77\xa1\x01x",
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(encode(&value), expected, "{value:?}");
        assert_round_trip(&value);
    }
}

#[test]
fn wide_forms_are_used_past_255_bytes() {
    let text = "y".repeat(256);
    let wire = encode(&Value::from(text.as_str()));
    assert_eq!(&wire[..5], b"\xb1\x00\x00\x01\x00");
    let list = Value::List((0..256).map(|_| Value::Null).collect());
    assert_eq!(&encode(&list)[..9], b"\xd0\x00\x00\x01\x04\x00\x00\x01\x00");
}

#[test]
fn every_sample_value_round_trips() {
    for value in common::sample_values() {
        assert_round_trip(&value);
    }
}

#[test]
fn decoders_accept_every_width_of_a_type() {
    let cases: Vec<(&[u8], Value)> = vec![
        (b"\x70\x00\x00\x00\x05", Value::Uint(5)),
        (b"\x52\x05", Value::Uint(5)),
        (b"\x80\x00\x00\x00\x00\x00\x00\x00\x00", Value::Ulong(0)),
        (b"\x71\x00\x00\x00\x01", Value::Int(1)),
        (b"\x81\xff\xff\xff\xff\xff\xff\xff\xff", Value::Long(-1)),
        (b"\x56\x01", Value::Bool(true)),
        (b"\x56\x00", Value::Bool(false)),
        (
            b"\xb0\x00\x00\x00\x01z",
            Value::Binary(Bytes::from_static(b"z")),
        ),
        (b"\xb3\x00\x00\x00\x01z", Value::Symbol(Symbol::from("z"))),
        (b"\xd0\x00\x00\x00\x04\x00\x00\x00\x00", Value::List(vec![])),
        (b"\xd1\x00\x00\x00\x04\x00\x00\x00\x00", Value::Map(vec![])),
        (
            b"\xf0\x00\x00\x00\x06\x00\x00\x00\x01\x52\x09",
            Value::Array(Array::new(ElementType::Uint, vec![Value::Uint(9)]).unwrap()),
        ),
        // Array whose element constructor carries a null descriptor (seen in mgmt_ops.txt).
        (
            b"\xf0\x00\x00\x00\x0f\x00\x00\x00\x01\x00\x40\x81\x00\x00\x00\x00\x00\x00\x00\x02",
            Value::Array(
                Array::new(ElementType::Long, vec![Value::Long(2)])
                    .unwrap()
                    .described(Descriptor::Other(Box::new(Value::Null))),
            ),
        ),
    ];
    for (wire, expected) in cases {
        let mut input = Bytes::from_static(wire);
        assert_eq!(Value::decode(&mut input).unwrap(), expected, "{wire:02x?}");
        assert!(input.is_empty());
    }
}

#[test]
fn arrays_reject_items_of_another_type() {
    assert!(Array::new(ElementType::Int, vec![Value::Long(1)]).is_err());
    assert!(
        Array::new(
            ElementType::Int,
            vec![Value::described(Descriptor::Code(1), Value::Int(1))]
        )
        .is_err()
    );
}

#[test]
fn hostile_values_fail_fast() {
    let cases: Vec<(&[u8], DecodeError)> = vec![
        (b"", DecodeError::Truncated),
        (b"\x01", DecodeError::UnknownFormatCode(0x01)),
        (b"\xff", DecodeError::UnknownFormatCode(0xff)),
        (b"\x56\x02", DecodeError::Malformed("boolean")),
        (b"\x73\x00\x11\x00\x00", DecodeError::InvalidChar(0x11_0000)),
        (b"\xa1\x02\xff\xfe", DecodeError::InvalidUtf8),
        // A list claiming 4 billion elements in 4 bytes: refused before allocating.
        (
            b"\xd0\x00\x00\x00\x04\xff\xff\xff\xff",
            DecodeError::Malformed("compound count exceeds its size"),
        ),
        (
            b"\xd0\xff\xff\xff\xff\x00\x00\x00\x01",
            DecodeError::Truncated,
        ),
        (
            b"\xf0\x00\x00\x00\x05\xff\xff\xff\xff\x40",
            DecodeError::Malformed("array count exceeds its size"),
        ),
        (
            b"\xf0\x00\x00\x00\x06\x00\x00\x00\x02\x81\x00",
            DecodeError::Malformed("array count exceeds its size"),
        ),
        (
            b"\xc1\x02\x01\x40",
            DecodeError::Malformed("map with an odd element count"),
        ),
        (b"\xc0\x03\x01\x40\x40", DecodeError::Malformed("list")),
        (b"\xe0\x02\x01\x00", DecodeError::Truncated),
        (b"\xe0\x02\x00\x99", DecodeError::UnknownFormatCode(0x99)),
    ];
    for (wire, expected) in cases {
        let mut input = Bytes::from_static(wire);
        assert_eq!(Value::decode(&mut input), Err(expected), "{wire:02x?}");
    }
}

#[test]
fn nesting_is_bounded() {
    let mut deep = Value::Null;
    for _ in 0..100 {
        deep = Value::List(vec![deep]);
    }
    let mut input = Bytes::from(encode(&deep));
    assert!(matches!(
        Value::decode(&mut input),
        Err(DecodeError::TooDeep(_))
    ));
    let mut described = vec![0x00u8; 200];
    described.push(0x40);
    let mut input = Bytes::from(described);
    assert!(matches!(
        Value::decode(&mut input),
        Err(DecodeError::TooDeep(_))
    ));
}

fn arbitrary_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u8>().prop_map(Value::Ubyte),
        any::<u16>().prop_map(Value::Ushort),
        any::<u32>().prop_map(Value::Uint),
        any::<u64>().prop_map(Value::Ulong),
        any::<i8>().prop_map(Value::Byte),
        any::<i16>().prop_map(Value::Short),
        any::<i32>().prop_map(Value::Int),
        any::<i64>().prop_map(Value::Long),
        // NaN never equals itself; every other float must round-trip bit for bit.
        any::<f32>()
            .prop_filter("nan", |f| !f.is_nan())
            .prop_map(Value::Float),
        any::<f64>()
            .prop_filter("nan", |f| !f.is_nan())
            .prop_map(Value::Double),
        any::<[u8; 4]>().prop_map(Value::Decimal32),
        any::<[u8; 8]>().prop_map(Value::Decimal64),
        any::<[u8; 16]>().prop_map(Value::Decimal128),
        any::<char>().prop_map(Value::Char),
        any::<i64>().prop_map(|t| Value::Timestamp(Timestamp(t))),
        any::<[u8; 16]>().prop_map(|u| Value::Uuid(Uuid(u))),
        proptest::collection::vec(any::<u8>(), 0..300).prop_map(|b| Value::Binary(b.into())),
        ".{0,40}".prop_map(Value::String),
        "[a-z:.-]{0,40}".prop_map(|s| Value::Symbol(Symbol::from(s))),
        proptest::collection::vec(any::<i64>(), 0..20).prop_map(|v| Value::Array(
            Array::new(ElementType::Long, v.into_iter().map(Value::Long).collect()).unwrap()
        )),
        proptest::collection::vec("[a-z]{0,300}", 0..4)
            .prop_map(|v| Value::Array(Array::of_symbols(v.into_iter().map(Symbol::from)))),
    ]
}

fn arbitrary_value() -> impl Strategy<Value = Value> {
    arbitrary_leaf().prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::List),
            proptest::collection::vec((inner.clone(), inner.clone()), 0..6).prop_map(Value::Map),
            (any::<u64>(), inner.clone())
                .prop_map(|(code, v)| Value::described(Descriptor::Code(code), v)),
            ("[a-z:]{1,20}", inner.clone())
                .prop_map(|(name, v)| Value::described(Descriptor::Symbol(Symbol::from(name)), v)),
            proptest::collection::vec(proptest::collection::vec(inner, 0..4), 0..4).prop_map(
                |lists| Value::Array(
                    Array::new(
                        ElementType::List,
                        lists.into_iter().map(Value::List).collect()
                    )
                    .unwrap()
                )
            ),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_values_round_trip(value in arbitrary_value()) {
        let wire = encode(&value);
        let mut input = Bytes::from(wire);
        prop_assert_eq!(Value::decode(&mut input).unwrap(), value);
        prop_assert!(input.is_empty());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let mut input = Bytes::from(bytes);
        let _ = Value::decode(&mut input);
    }
}
