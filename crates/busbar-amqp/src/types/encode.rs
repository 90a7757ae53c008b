//! Encoding AMQP values with the most compact constructor, and computing the encoded size without
//! encoding so that a frame is sized once and then written straight into its buffer.

use bytes::BufMut;

use super::format as fc;
use super::scalar::Scalar;
use super::value::{Array, Described, Descriptor, ElementType, Value};

impl Value {
    /// The number of bytes [`Value::encode`] writes.
    pub fn encoded_size(&self) -> usize {
        match self {
            Self::Described(described) => described_size(described),
            Self::List(items) if items.is_empty() => 1,
            Self::List(_) | Self::Map(_) | Self::Array(_) => {
                let (count, body) = content(self);
                1 + compound_header_size(fits8(count, body)) + body
            }
            Self::Bool(v) => v.scalar_size(),
            Self::Ubyte(v) => v.scalar_size(),
            Self::Ushort(v) => v.scalar_size(),
            Self::Uint(v) => v.scalar_size(),
            Self::Ulong(v) => v.scalar_size(),
            Self::Int(v) => v.scalar_size(),
            Self::Long(v) => v.scalar_size(),
            Self::Timestamp(v) => v.scalar_size(),
            Self::Uuid(v) => v.scalar_size(),
            value => 1 + payload_size(scalar_constructor(value), value),
        }
    }

    /// Writes the value, choosing compact encodings (`uint0`, `smalluint`, `list8` …) where they fit.
    pub fn encode<B: BufMut>(&self, buf: &mut B) {
        match self {
            Self::Described(described) => encode_described(described, buf),
            Self::List(items) if items.is_empty() => buf.put_u8(fc::LIST0),
            Self::List(_) | Self::Map(_) | Self::Array(_) => encode_compound(None, self, buf),
            Self::Bool(v) => v.encode_scalar(buf),
            Self::Ubyte(v) => v.encode_scalar(buf),
            Self::Ushort(v) => v.encode_scalar(buf),
            Self::Uint(v) => v.encode_scalar(buf),
            Self::Ulong(v) => v.encode_scalar(buf),
            Self::Int(v) => v.encode_scalar(buf),
            Self::Long(v) => v.encode_scalar(buf),
            Self::Timestamp(v) => v.encode_scalar(buf),
            Self::Uuid(v) => v.encode_scalar(buf),
            value => {
                let code = scalar_constructor(value);
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
        Descriptor::Other(value) => value.encoded_size(),
    }
}

/// Writes a descriptor (without the 0x00 constructor that precedes it).
pub(crate) fn encode_descriptor<B: BufMut>(descriptor: &Descriptor, buf: &mut B) {
    match descriptor {
        Descriptor::Code(code) => encode_ulong(*code, buf),
        Descriptor::Symbol(name) => {
            encode_variable(fc::SYM8, fc::SYM32, name.as_str().as_bytes(), buf);
        }
        Descriptor::Other(value) => value.encode(buf),
    }
}

/// Size of a `ulong` (descriptor codes, fields) in its most compact form.
pub(crate) fn ulong_size(value: u64) -> usize {
    value.scalar_size()
}

/// Writes a `ulong` in its most compact form.
pub(crate) fn encode_ulong<B: BufMut>(value: u64, buf: &mut B) {
    value.encode_scalar(buf);
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

/// Bytes of the size and count fields of a list, map or array.
fn compound_header_size(short: bool) -> usize {
    if short { 2 } else { 8 }
}

fn small_len(len: usize) -> u8 {
    u8::try_from(len).unwrap_or(u8::MAX)
}

/// Lengths on the wire are 32-bit; no encodable value comes near 4 GiB (frames are far smaller).
fn wire_len(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

fn pick(short: bool, code8: u8, code32: u8) -> u8 {
    if short { code8 } else { code32 }
}

/// Element count and content bytes (after the size and count fields) of a list, map or array.
/// Each element's size is computed once, so sizing is linear in the value's size.
fn content(value: &Value) -> (usize, usize) {
    match value {
        Value::List(items) => (items.len(), items.iter().map(Value::encoded_size).sum()),
        Value::Map(entries) => (
            entries.len() * 2,
            entries
                .iter()
                .map(|(k, v)| k.encoded_size() + v.encoded_size())
                .sum(),
        ),
        Value::Array(array) => (array.items().len(), array_layout(array).1),
        _ => (0, 0),
    }
}

/// The element constructor of an array and its content bytes (element constructor and element
/// payloads). Fixed-size types use their full width; variable and compound types use the 8-bit
/// size form only when every element fits it.
fn array_layout(array: &Array) -> (u8, usize) {
    let items = array.items();
    let ctor = 1 + array.descriptor().map_or(0, |d| 1 + descriptor_size(d));
    let fixed = |code: u8, width: usize| (code, ctor + items.len() * width);
    match array.element_type() {
        ElementType::Null => fixed(fc::NULL, 0),
        ElementType::Bool => fixed(fc::BOOLEAN, 1),
        ElementType::Ubyte => fixed(fc::UBYTE, 1),
        ElementType::Byte => fixed(fc::BYTE, 1),
        ElementType::Ushort => fixed(fc::USHORT, 2),
        ElementType::Short => fixed(fc::SHORT, 2),
        ElementType::Uint => fixed(fc::UINT, 4),
        ElementType::Int => fixed(fc::INT, 4),
        ElementType::Float => fixed(fc::FLOAT, 4),
        ElementType::Char => fixed(fc::CHAR, 4),
        ElementType::Decimal32 => fixed(fc::DECIMAL32, 4),
        ElementType::Ulong => fixed(fc::ULONG, 8),
        ElementType::Long => fixed(fc::LONG, 8),
        ElementType::Double => fixed(fc::DOUBLE, 8),
        ElementType::Timestamp => fixed(fc::TIMESTAMP, 8),
        ElementType::Decimal64 => fixed(fc::DECIMAL64, 8),
        ElementType::Decimal128 => fixed(fc::DECIMAL128, 16),
        ElementType::Uuid => fixed(fc::UUID, 16),
        element @ (ElementType::Binary | ElementType::String | ElementType::Symbol) => {
            let short = items.iter().all(|v| variable_len(v) <= 255);
            let lens: usize = items.iter().map(variable_len).sum();
            let code8 = match element {
                ElementType::Binary => fc::VBIN8,
                ElementType::String => fc::STR8,
                _ => fc::SYM8,
            };
            let width = if short { 1 } else { 4 };
            (
                pick(short, code8, code8 + 0x10),
                ctor + items.len() * width + lens,
            )
        }
        element @ (ElementType::List | ElementType::Map | ElementType::Array) => {
            let (short, bodies) = items.iter().fold((true, 0), |(short, sum), item| {
                let (count, body) = content(item);
                (short && fits8(count, body), sum + body)
            });
            let (code8, code32) = match element {
                ElementType::List => (fc::LIST8, fc::LIST32),
                ElementType::Map => (fc::MAP8, fc::MAP32),
                _ => (fc::ARRAY8, fc::ARRAY32),
            };
            let header = compound_header_size(short) * items.len();
            (pick(short, code8, code32), ctor + header + bodies)
        }
    }
}

/// The most compact constructor for a value that is neither compound, described nor a
/// [`Scalar`] (those write their own constructor).
fn scalar_constructor(value: &Value) -> u8 {
    match value {
        Value::Byte(_) => fc::BYTE,
        Value::Short(_) => fc::SHORT,
        Value::Float(_) => fc::FLOAT,
        Value::Double(_) => fc::DOUBLE,
        Value::Decimal32(_) => fc::DECIMAL32,
        Value::Decimal64(_) => fc::DECIMAL64,
        Value::Decimal128(_) => fc::DECIMAL128,
        Value::Char(_) => fc::CHAR,
        Value::Binary(b) => pick(b.len() <= 255, fc::VBIN8, fc::VBIN32),
        Value::String(s) => pick(s.len() <= 255, fc::STR8, fc::STR32),
        Value::Symbol(s) => pick(s.as_str().len() <= 255, fc::SYM8, fc::SYM32),
        Value::Null
        | Value::Bool(_)
        | Value::Ubyte(_)
        | Value::Ushort(_)
        | Value::Uint(_)
        | Value::Ulong(_)
        | Value::Int(_)
        | Value::Long(_)
        | Value::Timestamp(_)
        | Value::Uuid(_)
        | Value::List(_)
        | Value::Map(_)
        | Value::Array(_)
        | Value::Described(_) => fc::NULL,
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

/// Bytes written after constructor `code` for a scalar `value` (or a compound array element).
fn payload_size(code: u8, value: &Value) -> usize {
    match code {
        fc::LIST8 | fc::MAP8 | fc::ARRAY8 => 2 + content(value).1,
        fc::LIST32 | fc::MAP32 | fc::ARRAY32 => 8 + content(value).1,
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

/// Writes a list, map or array: with its constructor when `element_code` is `None` (a value on
/// its own), or without it as an array element encoded with `element_code`.
fn encode_compound<B: BufMut>(element_code: Option<u8>, value: &Value, buf: &mut B) {
    let (count, body, array_element) = match value {
        Value::Array(array) => {
            let (code, body) = array_layout(array);
            (array.items().len(), body, Some(code))
        }
        other => {
            let (count, body) = content(other);
            (count, body, None)
        }
    };
    let short = match element_code {
        Some(code) => code & 0x10 == 0,
        None => {
            let short = fits8(count, body);
            buf.put_u8(match value {
                Value::List(_) => pick(short, fc::LIST8, fc::LIST32),
                Value::Map(_) => pick(short, fc::MAP8, fc::MAP32),
                _ => pick(short, fc::ARRAY8, fc::ARRAY32),
            });
            short
        }
    };
    if short {
        buf.put_u8(small_len(body + 1));
        buf.put_u8(small_len(count));
    } else {
        buf.put_u32(wire_len(body + 4));
        buf.put_u32(wire_len(count));
    }
    match value {
        Value::List(items) => items.iter().for_each(|item| item.encode(buf)),
        Value::Map(entries) => {
            for (key, value) in entries {
                key.encode(buf);
                value.encode(buf);
            }
        }
        Value::Array(array) => {
            if let Some(descriptor) = array.descriptor() {
                buf.put_u8(fc::DESCRIBED);
                encode_descriptor(descriptor, buf);
            }
            let code = array_element.unwrap_or(fc::NULL);
            buf.put_u8(code);
            for item in array.items() {
                encode_payload(code, item, buf);
            }
        }
        _ => {}
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
        Value::Binary(b) => put_variable(code, b, buf),
        Value::String(s) => put_variable(code, s.as_bytes(), buf),
        Value::Symbol(s) => put_variable(code, s.as_str().as_bytes(), buf),
        Value::List(_) | Value::Map(_) | Value::Array(_) => {
            encode_compound(Some(code), value, buf);
        }
    }
}

fn put_variable<B: BufMut>(code: u8, bytes: &[u8], buf: &mut B) {
    if code & 0xf0 == 0xa0 {
        buf.put_u8(small_len(bytes.len()));
    } else {
        buf.put_u32(wire_len(bytes.len()));
    }
    buf.put_slice(bytes);
}
