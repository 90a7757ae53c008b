//! Encoding AMQP values with the most compact constructor, and computing the encoded size without
//! encoding so that a frame is sized once and then written straight into its buffer.

use bytes::BufMut;

use super::format as fc;
use super::value::{Array, Described, Descriptor, ElementType, Value};

impl Value {
    /// The number of bytes [`Value::encode`] writes.
    pub fn encoded_size(&self) -> usize {
        match self {
            Self::Described(described) => described_size(described),
            value => 1 + payload_size(constructor(value), value),
        }
    }

    /// Writes the value, choosing compact encodings (`uint0`, `smalluint`, `list8` …) where they fit.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        match self {
            Self::Described(described) => encode_described(described, buf),
            value => {
                let code = constructor(value);
                buf.put_u8(code);
                encode_payload(code, value, buf);
            }
        }
    }
}

/// The encoded size of a described value.
pub(crate) fn described_size(described: &Described) -> usize {
    1 + descriptor_size(&described.descriptor) + described.value.encoded_size()
}

/// Writes a described value: 0x00, descriptor, value.
pub(crate) fn encode_described<B: BufMut>(described: &Described, buf: &mut B) {
    buf.put_u8(fc::DESCRIBED);
    encode_descriptor(&described.descriptor, buf);
    described.value.encode(buf);
}

/// The size of a descriptor as written after the 0x00 constructor.
pub(crate) fn descriptor_size(descriptor: &Descriptor) -> usize {
    match descriptor {
        Descriptor::Code(code) => ulong_size(*code),
        Descriptor::Symbol(name) => variable_size(name.as_str().len()),
    }
}

/// Writes a descriptor (without the 0x00 constructor that precedes it).
pub(crate) fn encode_descriptor<B: BufMut>(descriptor: &Descriptor, buf: &mut B) {
    match descriptor {
        Descriptor::Code(code) => encode_ulong(*code, buf),
        Descriptor::Symbol(name) => {
            encode_variable(fc::SYM8, fc::SYM32, name.as_str().as_bytes(), buf);
        }
    }
}

pub(crate) fn ulong_size(value: u64) -> usize {
    match value {
        0 => 1,
        1..=255 => 2,
        _ => 9,
    }
}

pub(crate) fn encode_ulong<B: BufMut>(value: u64, buf: &mut B) {
    match u8::try_from(value) {
        Ok(0) => buf.put_u8(fc::ULONG0),
        Ok(small) => {
            buf.put_u8(fc::SMALLULONG);
            buf.put_u8(small);
        }
        Err(_) => {
            buf.put_u8(fc::ULONG);
            buf.put_u64(value);
        }
    }
}

/// Size of a `binary`, `string` or `symbol` of `len` bytes including its constructor.
pub(crate) fn variable_size(len: usize) -> usize {
    if len <= 255 { 2 + len } else { 5 + len }
}

/// Writes a `binary`, `string` or `symbol` with its 8- or 32-bit size constructor.
pub(crate) fn encode_variable<B: BufMut>(short: u8, long: u8, bytes: &[u8], buf: &mut B) {
    match u8::try_from(bytes.len()) {
        Ok(len) => {
            buf.put_u8(short);
            buf.put_u8(len);
        }
        Err(_) => {
            buf.put_u8(long);
            buf.put_u32(wire_len(bytes.len()));
        }
    }
    buf.put_slice(bytes);
}

/// Size of a list, map or described-list body: header plus `body` bytes for `count` elements.
pub(crate) fn compound_size(count: usize, body: usize) -> usize {
    if count == 0 {
        1
    } else if fits8(count, body) {
        3 + body
    } else {
        9 + body
    }
}

/// Writes a list or map header for `count` elements taking `body` bytes (`list0` when empty).
pub(crate) fn encode_compound_header<B: BufMut>(map: bool, count: usize, body: usize, buf: &mut B) {
    let (short, long) = if map {
        (fc::MAP8, fc::MAP32)
    } else {
        (fc::LIST8, fc::LIST32)
    };
    if count == 0 && !map {
        buf.put_u8(fc::LIST0);
    } else if fits8(count, body) {
        buf.put_u8(short);
        buf.put_u8(small_len(body + 1));
        buf.put_u8(small_len(count));
    } else {
        buf.put_u8(long);
        buf.put_u32(wire_len(body + 4));
        buf.put_u32(wire_len(count));
    }
}

fn fits8(count: usize, body: usize) -> bool {
    count <= 255 && body < 255
}

fn small_len(len: usize) -> u8 {
    u8::try_from(len).unwrap_or(u8::MAX)
}

/// Lengths on the wire are 32-bit; no encodable value comes near 4 GiB (frames are far smaller).
fn wire_len(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

fn list_body(items: &[Value]) -> usize {
    items.iter().map(Value::encoded_size).sum()
}

fn map_body(entries: &[(Value, Value)]) -> usize {
    entries
        .iter()
        .map(|(k, v)| k.encoded_size() + v.encoded_size())
        .sum()
}

/// The most compact constructor for a (non-described) value.
fn constructor(value: &Value) -> u8 {
    match value {
        Value::Null | Value::Described(_) => fc::NULL,
        Value::Bool(true) => fc::TRUE,
        Value::Bool(false) => fc::FALSE,
        Value::Uint(0) => fc::UINT0,
        Value::Uint(v) if *v <= 255 => fc::SMALLUINT,
        Value::Ulong(0) => fc::ULONG0,
        Value::Ulong(v) if *v <= 255 => fc::SMALLULONG,
        Value::Int(v) if i8::try_from(*v).is_ok() => fc::SMALLINT,
        Value::Long(v) if i8::try_from(*v).is_ok() => fc::SMALLLONG,
        Value::List(items) if items.is_empty() => fc::LIST0,
        Value::List(items) => pick(fits8(items.len(), list_body(items)), fc::LIST8, fc::LIST32),
        Value::Map(entries) => pick(
            fits8(entries.len() * 2, map_body(entries)),
            fc::MAP8,
            fc::MAP32,
        ),
        Value::Array(array) => pick(
            fits8(array.items().len(), array_body(array)),
            fc::ARRAY8,
            fc::ARRAY32,
        ),
        other => wide_constructor(other),
    }
}

fn pick(short: bool, code8: u8, code32: u8) -> u8 {
    if short { code8 } else { code32 }
}

/// The constructor every element of an array shares: full-width for fixed-size types, and the
/// 8-bit size form for variable and compound types only when every element fits it.
fn array_constructor(array: &Array) -> u8 {
    let items = array.items();
    let all = |short: fn(&Value) -> bool, code8: u8, code32: u8| {
        pick(items.iter().all(short), code8, code32)
    };
    match array.element_type() {
        ElementType::Null => fc::NULL,
        ElementType::Bool => fc::BOOLEAN,
        ElementType::Ubyte => fc::UBYTE,
        ElementType::Ushort => fc::USHORT,
        ElementType::Uint => fc::UINT,
        ElementType::Ulong => fc::ULONG,
        ElementType::Byte => fc::BYTE,
        ElementType::Short => fc::SHORT,
        ElementType::Int => fc::INT,
        ElementType::Long => fc::LONG,
        ElementType::Float => fc::FLOAT,
        ElementType::Double => fc::DOUBLE,
        ElementType::Decimal32 => fc::DECIMAL32,
        ElementType::Decimal64 => fc::DECIMAL64,
        ElementType::Decimal128 => fc::DECIMAL128,
        ElementType::Char => fc::CHAR,
        ElementType::Timestamp => fc::TIMESTAMP,
        ElementType::Uuid => fc::UUID,
        ElementType::Binary | ElementType::String | ElementType::Symbol => all(
            |v| variable_len(v) <= 255,
            short_variable(array.element_type()),
            short_variable(array.element_type()) + 0x10,
        ),
        ElementType::List => all(
            |v| matches!(v, Value::List(items) if fits8(items.len(), list_body(items))),
            fc::LIST8,
            fc::LIST32,
        ),
        ElementType::Map => all(
            |v| matches!(v, Value::Map(e) if fits8(e.len() * 2, map_body(e))),
            fc::MAP8,
            fc::MAP32,
        ),
        ElementType::Array => all(
            |v| matches!(v, Value::Array(a) if fits8(a.items().len(), array_body(a))),
            fc::ARRAY8,
            fc::ARRAY32,
        ),
    }
}

fn short_variable(element: ElementType) -> u8 {
    match element {
        ElementType::Binary => fc::VBIN8,
        ElementType::String => fc::STR8,
        _ => fc::SYM8,
    }
}

/// The full-width constructor of a fixed or variable-size value.
fn wide_constructor(value: &Value) -> u8 {
    match value {
        Value::Ubyte(_) => fc::UBYTE,
        Value::Ushort(_) => fc::USHORT,
        Value::Uint(_) => fc::UINT,
        Value::Ulong(_) => fc::ULONG,
        Value::Byte(_) => fc::BYTE,
        Value::Short(_) => fc::SHORT,
        Value::Int(_) => fc::INT,
        Value::Long(_) => fc::LONG,
        Value::Float(_) => fc::FLOAT,
        Value::Double(_) => fc::DOUBLE,
        Value::Decimal32(_) => fc::DECIMAL32,
        Value::Decimal64(_) => fc::DECIMAL64,
        Value::Decimal128(_) => fc::DECIMAL128,
        Value::Char(_) => fc::CHAR,
        Value::Timestamp(_) => fc::TIMESTAMP,
        Value::Uuid(_) => fc::UUID,
        Value::Binary(b) => pick(b.len() <= 255, fc::VBIN8, fc::VBIN32),
        Value::String(s) => pick(s.len() <= 255, fc::STR8, fc::STR32),
        Value::Symbol(s) => pick(s.as_str().len() <= 255, fc::SYM8, fc::SYM32),
        _ => fc::NULL,
    }
}

fn variable_len(value: &Value) -> usize {
    match value {
        Value::Binary(b) => b.len(),
        Value::String(s) => s.len(),
        Value::Symbol(s) => s.as_str().len(),
        _ => 0,
    }
}

/// Bytes of an array after its size field: count, element constructor, element payloads.
fn array_body(array: &Array) -> usize {
    let code = array_constructor(array);
    let ctor = 1 + array.descriptor().map_or(0, |d| 1 + descriptor_size(d));
    ctor + array
        .items()
        .iter()
        .map(|item| payload_size(code, item))
        .sum::<usize>()
}

/// Bytes written after constructor `code` for `value`.
fn payload_size(code: u8, value: &Value) -> usize {
    match code {
        fc::LIST8 | fc::LIST32 | fc::MAP8 | fc::MAP32 | fc::ARRAY8 | fc::ARRAY32 => {
            let header = if code & 0xf0 == 0xc0 || code == fc::ARRAY8 {
                2
            } else {
                8
            };
            header
                + match value {
                    Value::List(items) => list_body(items),
                    Value::Map(entries) => map_body(entries),
                    Value::Array(array) => array_body(array),
                    _ => 0,
                }
        }
        fc::VBIN8 | fc::STR8 | fc::SYM8 => 1 + variable_len(value),
        fc::VBIN32 | fc::STR32 | fc::SYM32 => 4 + variable_len(value),
        _ => match code >> 4 {
            0x5 => 1,
            0x6 => 2,
            0x7 => 4,
            0x8 => 8,
            0x9 => 16,
            _ => 0,
        },
    }
}

/// Writes what follows constructor `code` for `value` (the value must be of the code's type).
fn encode_payload<B: BufMut>(code: u8, value: &Value, buf: &mut B) {
    match value {
        Value::Null | Value::Described(_) => {}
        Value::Bool(v) => {
            if code == fc::BOOLEAN {
                buf.put_u8(u8::from(*v));
            }
        }
        Value::Ubyte(v) => buf.put_u8(*v),
        Value::Ushort(v) => buf.put_u16(*v),
        Value::Uint(v) => match code {
            fc::UINT0 => {}
            fc::SMALLUINT => buf.put_u8(u8::try_from(*v).unwrap_or(u8::MAX)),
            _ => buf.put_u32(*v),
        },
        Value::Ulong(v) => match code {
            fc::ULONG0 => {}
            fc::SMALLULONG => buf.put_u8(u8::try_from(*v).unwrap_or(u8::MAX)),
            _ => buf.put_u64(*v),
        },
        Value::Byte(v) => buf.put_i8(*v),
        Value::Short(v) => buf.put_i16(*v),
        Value::Int(v) => match code {
            fc::SMALLINT => buf.put_i8(i8::try_from(*v).unwrap_or_default()),
            _ => buf.put_i32(*v),
        },
        Value::Long(v) => match code {
            fc::SMALLLONG => buf.put_i8(i8::try_from(*v).unwrap_or_default()),
            _ => buf.put_i64(*v),
        },
        Value::Float(v) => buf.put_f32(*v),
        Value::Double(v) => buf.put_f64(*v),
        Value::Decimal32(v) => buf.put_slice(v),
        Value::Decimal64(v) => buf.put_slice(v),
        Value::Decimal128(v) => buf.put_slice(v),
        Value::Char(v) => buf.put_u32(u32::from(*v)),
        Value::Timestamp(v) => buf.put_i64(v.0),
        Value::Uuid(v) => buf.put_slice(&v.0),
        Value::Binary(_) | Value::String(_) | Value::Symbol(_) => {
            let bytes: &[u8] = match value {
                Value::Binary(b) => b,
                Value::String(s) => s.as_bytes(),
                Value::Symbol(s) => s.as_str().as_bytes(),
                _ => &[],
            };
            if code & 0xf0 == 0xa0 {
                buf.put_u8(small_len(bytes.len()));
            } else {
                buf.put_u32(wire_len(bytes.len()));
            }
            buf.put_slice(bytes);
        }
        Value::List(items) => {
            if code != fc::LIST0 {
                write_sizes(code == fc::LIST8, list_body(items), items.len(), buf);
                items.iter().for_each(|item| item.encode(buf));
            }
        }
        Value::Map(entries) => {
            write_sizes(code == fc::MAP8, map_body(entries), entries.len() * 2, buf);
            for (key, value) in entries {
                key.encode(buf);
                value.encode(buf);
            }
        }
        Value::Array(array) => {
            let element = array_constructor(array);
            let body = array_body(array);
            // `body` already counts the element constructor; the count field comes first.
            write_sizes(code == fc::ARRAY8, body, array.items().len(), buf);
            if let Some(descriptor) = array.descriptor() {
                buf.put_u8(fc::DESCRIBED);
                encode_descriptor(descriptor, buf);
            }
            buf.put_u8(element);
            for item in array.items() {
                encode_payload(element, item, buf);
            }
        }
    }
}

/// Writes the size and count fields of a compound value whose elements take `body` bytes.
fn write_sizes<B: BufMut>(short: bool, body: usize, count: usize, buf: &mut B) {
    if short {
        buf.put_u8(small_len(body + 1));
        buf.put_u8(small_len(count));
    } else {
        buf.put_u32(wire_len(body + 4));
        buf.put_u32(wire_len(count));
    }
}
