//! Decoding AMQP values from `Bytes`: every length is checked against the remaining input before
//! anything is allocated, nesting is bounded, and `binary` values share the input buffer.

use bytes::{Buf, Bytes};

use super::format as fc;
use super::value::{Array, Descriptor, ElementType, Symbol, Timestamp, Uuid, Value};
use crate::error::DecodeError;

/// How deeply compound and described values may nest before decoding is refused.
pub const MAX_DEPTH: usize = 32;

/// Arrays of zero-width elements (`null`, `true`, `uint0` …) carry no bytes per element, so their
/// count cannot be checked against the input; this caps what such an array may claim.
const MAX_ZERO_WIDTH_ELEMENTS: usize = 1 << 16;

impl Value {
    /// Decodes one value from the front of `buf`, leaving the rest.
    pub fn decode(buf: &mut Bytes) -> Result<Self, DecodeError> {
        decode_value(buf, 0)
    }
}

/// Decodes one value at nesting level `depth`.
pub(crate) fn decode_value(buf: &mut Bytes, depth: usize) -> Result<Value, DecodeError> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::TooDeep(MAX_DEPTH));
    }
    let code = take_u8(buf)?;
    if code == fc::DESCRIBED {
        let descriptor = decode_descriptor(buf, depth)?;
        let value = decode_value(buf, depth + 1)?;
        return Ok(Value::described(descriptor, value));
    }
    decode_payload(code, buf, depth)
}

/// Skips one value without decoding it, checking only that its constructor is known and that its
/// bytes are present. Used to find message section boundaries in one cheap pass.
pub(crate) fn skip_value(buf: &mut Bytes, depth: usize) -> Result<(), DecodeError> {
    if depth > MAX_DEPTH {
        return Err(DecodeError::TooDeep(MAX_DEPTH));
    }
    let code = take_u8(buf)?;
    if code == fc::DESCRIBED {
        skip_value(buf, depth + 1)?;
        return skip_value(buf, depth + 1);
    }
    let len = match code >> 4 {
        0x4..=0x9 => fixed_width(code)?,
        0xa | 0xc | 0xe if known(code) => usize::from(take_u8(buf)?),
        0xb | 0xd | 0xf if known(code) => take_u32_len(buf)?,
        _ => return Err(DecodeError::UnknownFormatCode(code)),
    };
    take_bytes(buf, len).map(drop)
}

/// The fields of a described list, decoded one at a time as they are asked for: a composite is
/// built from its fields without first building the whole list as a `Value` tree.
pub(crate) struct ListFields {
    body: Bytes,
    remaining: usize,
}

impl ListFields {
    /// Reads a described list's descriptor (`code` or `name`) and list header from the front of
    /// `buf`, taking the list's bytes out of `buf`.
    pub(crate) fn described(buf: &mut Bytes, code: u64, name: &str) -> Result<Self, DecodeError> {
        let constructor = take_u8(buf)?;
        if constructor != fc::DESCRIBED {
            let found = decode_payload(constructor, buf, 0)?.type_name();
            return Err(DecodeError::UnexpectedType {
                expected: "described list",
                found,
            });
        }
        let descriptor = decode_descriptor(buf, 0)?;
        if !descriptor.matches(code, name) {
            return Err(DecodeError::UnexpectedDescriptor(format!("{descriptor:?}")));
        }
        let (body, remaining) = match take_u8(buf)? {
            fc::LIST0 => (Bytes::new(), 0),
            list @ (fc::LIST8 | fc::LIST32) => compound(list == fc::LIST32, buf)?,
            other => {
                let found = decode_payload(other, buf, 1)?.type_name();
                return Err(DecodeError::UnexpectedType {
                    expected: "list",
                    found,
                });
            }
        };
        Ok(Self { body, remaining })
    }

    /// Checks the fields nobody asked for (they must still be well-formed) and that the list
    /// holds nothing after its last field.
    pub(crate) fn finish(mut self) -> Result<(), DecodeError> {
        for _ in 0..self.remaining {
            skip_value(&mut self.body, LIST_FIELD_DEPTH)?;
        }
        finish(&self.body, "list")
    }
}

/// The nesting level of a described list's fields (described value, list, field).
const LIST_FIELD_DEPTH: usize = 2;

impl Iterator for ListFields {
    type Item = Result<Value, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.remaining = self.remaining.checked_sub(1)?;
        Some(decode_value(&mut self.body, LIST_FIELD_DEPTH))
    }
}

/// The descriptor of the described value at the front of `buf`, without consuming anything
/// (`None` when the value there is not described).
pub(crate) fn peek_descriptor(buf: &Bytes) -> Result<Option<Descriptor>, DecodeError> {
    let mut rest = buf.clone();
    if take_u8(&mut rest)? != fc::DESCRIBED {
        return Ok(None);
    }
    decode_descriptor(&mut rest, 0).map(Some)
}

fn decode_descriptor(buf: &mut Bytes, depth: usize) -> Result<Descriptor, DecodeError> {
    match decode_value(buf, depth + 1)? {
        Value::Ulong(code) => Ok(Descriptor::Code(code)),
        Value::Symbol(name) => Ok(Descriptor::Symbol(name)),
        other => Ok(Descriptor::Other(Box::new(other))),
    }
}

/// Decodes the bytes that follow constructor `code` (shared by single values and array elements).
fn decode_payload(code: u8, buf: &mut Bytes, depth: usize) -> Result<Value, DecodeError> {
    Ok(match code {
        fc::NULL => Value::Null,
        fc::TRUE => Value::Bool(true),
        fc::FALSE => Value::Bool(false),
        fc::BOOLEAN => match take_u8(buf)? {
            0 => Value::Bool(false),
            1 => Value::Bool(true),
            _ => return Err(DecodeError::Malformed("boolean")),
        },
        fc::UBYTE => Value::Ubyte(take_u8(buf)?),
        fc::USHORT => Value::Ushort(u16::from_be_bytes(take_array(buf)?)),
        fc::UINT0 => Value::Uint(0),
        fc::SMALLUINT => Value::Uint(u32::from(take_u8(buf)?)),
        fc::UINT => Value::Uint(u32::from_be_bytes(take_array(buf)?)),
        fc::ULONG0 => Value::Ulong(0),
        fc::SMALLULONG => Value::Ulong(u64::from(take_u8(buf)?)),
        fc::ULONG => Value::Ulong(u64::from_be_bytes(take_array(buf)?)),
        fc::BYTE => Value::Byte(i8::from_be_bytes(take_array(buf)?)),
        fc::SHORT => Value::Short(i16::from_be_bytes(take_array(buf)?)),
        fc::SMALLINT => Value::Int(i32::from(i8::from_be_bytes(take_array(buf)?))),
        fc::INT => Value::Int(i32::from_be_bytes(take_array(buf)?)),
        fc::SMALLLONG => Value::Long(i64::from(i8::from_be_bytes(take_array(buf)?))),
        fc::LONG => Value::Long(i64::from_be_bytes(take_array(buf)?)),
        fc::FLOAT => Value::Float(f32::from_be_bytes(take_array(buf)?)),
        fc::DOUBLE => Value::Double(f64::from_be_bytes(take_array(buf)?)),
        fc::DECIMAL32 => Value::Decimal32(take_array(buf)?),
        fc::DECIMAL64 => Value::Decimal64(take_array(buf)?),
        fc::DECIMAL128 => Value::Decimal128(take_array(buf)?),
        fc::CHAR => {
            let point = u32::from_be_bytes(take_array(buf)?);
            Value::Char(char::from_u32(point).ok_or(DecodeError::InvalidChar(point))?)
        }
        fc::TIMESTAMP => Value::Timestamp(Timestamp(i64::from_be_bytes(take_array(buf)?))),
        fc::UUID => Value::Uuid(Uuid(take_array(buf)?)),
        fc::VBIN8 => {
            let len = usize::from(take_u8(buf)?);
            Value::Binary(take_bytes(buf, len)?)
        }
        fc::VBIN32 => {
            let len = take_u32_len(buf)?;
            Value::Binary(take_bytes(buf, len)?)
        }
        fc::STR8 | fc::STR32 | fc::SYM8 | fc::SYM32 => {
            let len = if code & 0xf0 == 0xa0 {
                usize::from(take_u8(buf)?)
            } else {
                take_u32_len(buf)?
            };
            let text = utf8(take_bytes(buf, len)?)?;
            if code & 0x0f == 0x01 {
                Value::String(text)
            } else {
                Value::Symbol(Symbol::from(text))
            }
        }
        fc::LIST0 => Value::List(Vec::new()),
        fc::LIST8 | fc::LIST32 => {
            let (mut body, count) = compound(code == fc::LIST32, buf)?;
            let mut items = Vec::with_capacity(count);
            for _ in 0..count {
                items.push(decode_value(&mut body, depth + 1)?);
            }
            finish(&body, "list")?;
            Value::List(items)
        }
        fc::MAP8 | fc::MAP32 => {
            let (mut body, count) = compound(code == fc::MAP32, buf)?;
            if count % 2 != 0 {
                return Err(DecodeError::Malformed("map with an odd element count"));
            }
            let mut entries = Vec::with_capacity(count / 2);
            for _ in 0..count / 2 {
                let key = decode_value(&mut body, depth + 1)?;
                let value = decode_value(&mut body, depth + 1)?;
                entries.push((key, value));
            }
            finish(&body, "map")?;
            Value::Map(entries)
        }
        fc::ARRAY8 | fc::ARRAY32 => Value::Array(decode_array(code == fc::ARRAY32, buf, depth)?),
        _ => return Err(DecodeError::UnknownFormatCode(code)),
    })
}

fn decode_array(wide: bool, buf: &mut Bytes, depth: usize) -> Result<Array, DecodeError> {
    if depth >= MAX_DEPTH {
        return Err(DecodeError::TooDeep(MAX_DEPTH));
    }
    let (mut body, count) = compound_header(wide, buf)?;
    let mut code = take_u8(&mut body)?;
    let descriptor = if code == fc::DESCRIBED {
        let descriptor = decode_descriptor(&mut body, depth)?;
        code = take_u8(&mut body)?;
        Some(descriptor)
    } else {
        None
    };
    let element = element_type_of(code).ok_or(DecodeError::UnknownFormatCode(code))?;
    let limit = if fixed_width(code) == Ok(0) {
        MAX_ZERO_WIDTH_ELEMENTS
    } else {
        body.remaining()
    };
    if count > limit {
        return Err(DecodeError::Malformed("array count exceeds its size"));
    }
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        items.push(decode_payload(code, &mut body, depth + 1)?);
    }
    finish(&body, "array")?;
    Ok(Array::from_parts(descriptor, element, items))
}

/// Reads a list or map header and splits off its body; the count is checked against the body
/// (every element takes at least one byte) so a lying header cannot cause a large allocation.
/// Reads a map's constructor and header from the front of `buf`: its entries' bytes (taken out
/// of `buf`) and the number of entries, for walking a map without decoding it.
pub(crate) fn take_map(buf: &mut Bytes) -> Result<(Bytes, usize), DecodeError> {
    let (body, count) = match take_u8(buf)? {
        map @ (fc::MAP8 | fc::MAP32) => compound(map == fc::MAP32, buf)?,
        _ => return Err(DecodeError::Malformed("annotations (not a map)")),
    };
    if count % 2 != 0 {
        return Err(DecodeError::Malformed("map with an odd element count"));
    }
    Ok((body, count / 2))
}

fn compound(wide: bool, buf: &mut Bytes) -> Result<(Bytes, usize), DecodeError> {
    let (body, count) = compound_header(wide, buf)?;
    if count > body.remaining() {
        return Err(DecodeError::Malformed("compound count exceeds its size"));
    }
    Ok((body, count))
}

fn compound_header(wide: bool, buf: &mut Bytes) -> Result<(Bytes, usize), DecodeError> {
    let size = if wide {
        take_u32_len(buf)?
    } else {
        usize::from(take_u8(buf)?)
    };
    let mut body = take_bytes(buf, size)?;
    let count = if wide {
        take_u32_len(&mut body)?
    } else {
        usize::from(take_u8(&mut body)?)
    };
    Ok((body, count))
}

fn finish(body: &Bytes, what: &'static str) -> Result<(), DecodeError> {
    if body.is_empty() {
        Ok(())
    } else {
        Err(DecodeError::Malformed(what))
    }
}

/// The width in bytes of a fixed-width encoding (0 for the empty encodings 0x40–0x45).
fn fixed_width(code: u8) -> Result<usize, DecodeError> {
    if !known(code) {
        return Err(DecodeError::UnknownFormatCode(code));
    }
    match code >> 4 {
        0x4 => Ok(0),
        0x5 => Ok(1),
        0x6 => Ok(2),
        0x7 => Ok(4),
        0x8 => Ok(8),
        0x9 => Ok(16),
        _ => Err(DecodeError::UnknownFormatCode(code)),
    }
}

fn known(code: u8) -> bool {
    element_type_of(code).is_some()
}

/// The element type a constructor produces, or `None` for an unknown code.
fn element_type_of(code: u8) -> Option<ElementType> {
    Some(match code {
        fc::NULL => ElementType::Null,
        fc::TRUE | fc::FALSE | fc::BOOLEAN => ElementType::Bool,
        fc::UBYTE => ElementType::Ubyte,
        fc::USHORT => ElementType::Ushort,
        fc::UINT0 | fc::SMALLUINT | fc::UINT => ElementType::Uint,
        fc::ULONG0 | fc::SMALLULONG | fc::ULONG => ElementType::Ulong,
        fc::BYTE => ElementType::Byte,
        fc::SHORT => ElementType::Short,
        fc::SMALLINT | fc::INT => ElementType::Int,
        fc::SMALLLONG | fc::LONG => ElementType::Long,
        fc::FLOAT => ElementType::Float,
        fc::DOUBLE => ElementType::Double,
        fc::DECIMAL32 => ElementType::Decimal32,
        fc::DECIMAL64 => ElementType::Decimal64,
        fc::DECIMAL128 => ElementType::Decimal128,
        fc::CHAR => ElementType::Char,
        fc::TIMESTAMP => ElementType::Timestamp,
        fc::UUID => ElementType::Uuid,
        fc::VBIN8 | fc::VBIN32 => ElementType::Binary,
        fc::STR8 | fc::STR32 => ElementType::String,
        fc::SYM8 | fc::SYM32 => ElementType::Symbol,
        fc::LIST0 | fc::LIST8 | fc::LIST32 => ElementType::List,
        fc::MAP8 | fc::MAP32 => ElementType::Map,
        fc::ARRAY8 | fc::ARRAY32 => ElementType::Array,
        _ => return None,
    })
}

fn utf8(bytes: Bytes) -> Result<String, DecodeError> {
    String::from_utf8(bytes.into()).map_err(|_| DecodeError::InvalidUtf8)
}

pub(crate) fn take_u8(buf: &mut Bytes) -> Result<u8, DecodeError> {
    if buf.is_empty() {
        return Err(DecodeError::Truncated);
    }
    Ok(buf.get_u8())
}

fn take_array<const N: usize>(buf: &mut Bytes) -> Result<[u8; N], DecodeError> {
    let mut out = [0; N];
    if buf.remaining() < N {
        return Err(DecodeError::Truncated);
    }
    buf.copy_to_slice(&mut out);
    Ok(out)
}

fn take_u32_len(buf: &mut Bytes) -> Result<usize, DecodeError> {
    let len = u32::from_be_bytes(take_array(buf)?);
    usize::try_from(len).map_err(|_| DecodeError::Truncated)
}

fn take_bytes(buf: &mut Bytes, len: usize) -> Result<Bytes, DecodeError> {
    if buf.remaining() < len {
        return Err(DecodeError::Truncated);
    }
    Ok(buf.split_to(len))
}
