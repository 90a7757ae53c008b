//! Typed fields of composite types: conversion from decoded values and direct encoding, plus the
//! map newtypes (`Fields`, `Annotations`) that performatives and message sections carry.

use bytes::{BufMut, Bytes};

use super::encode::{compound_size, encode_compound_header, encode_variable, variable_size};
use super::format as fc;
use super::scalar::Scalar;
use super::value::{Array, ElementType, Symbol, Timestamp, Uuid, Value};
use crate::error::DecodeError;

/// A field of a composite type: decoded from a (non-null) [`Value`], encoded without building one.
pub(crate) trait Field: Sized {
    /// Converts a decoded, non-null value.
    fn from_value(value: Value) -> Result<Self, DecodeError>;
    /// Bytes written by [`Field::encode_field`].
    fn field_size(&self) -> usize;
    /// Writes the field.
    fn encode_field<B: BufMut>(&self, buf: &mut B);
}

fn mismatch(expected: &'static str, found: &Value) -> DecodeError {
    DecodeError::UnexpectedType {
        expected,
        found: found.type_name(),
    }
}

impl<T: Field> Field for Option<T> {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        T::from_value(value).map(Some)
    }
    fn field_size(&self) -> usize {
        self.as_ref().map_or(1, Field::field_size)
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        match self {
            Some(value) => value.encode_field(buf),
            None => buf.put_u8(fc::NULL),
        }
    }
}

/// Large composites (link termini) are boxed to keep performatives small.
impl<T: Field> Field for Box<T> {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        T::from_value(value).map(Box::new)
    }
    fn field_size(&self) -> usize {
        (**self).field_size()
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        (**self).encode_field(buf);
    }
}

/// Implements `Field` for a [`Scalar`] that maps onto one `Value` variant. Listed
/// narrower variants of the same signedness are widened on decode (lenient peers send a `uint`
/// where a `ulong` is due); encoding always uses the field's own type.
macro_rules! scalar_field {
    ($ty:ty, $variant:ident, $name:literal $(, $narrower:ident)*) => {
        impl Field for $ty {
            fn from_value(value: Value) -> Result<Self, DecodeError> {
                match value {
                    Value::$variant(v) => Ok(v),
                    $( Value::$narrower(v) => Ok(<$ty>::from(v)), )*
                    other => Err(mismatch($name, &other)),
                }
            }
            fn field_size(&self) -> usize {
                self.scalar_size()
            }
            fn encode_field<B: BufMut>(&self, buf: &mut B) {
                self.encode_scalar(buf)
            }
        }
    };
}

scalar_field!(bool, Bool, "boolean");
scalar_field!(u8, Ubyte, "ubyte");
scalar_field!(u16, Ushort, "ushort");
scalar_field!(u32, Uint, "uint", Ubyte, Ushort);
scalar_field!(u64, Ulong, "ulong", Ubyte, Ushort, Uint);
scalar_field!(i32, Int, "int");
scalar_field!(i64, Long, "long", Byte, Short, Int);
scalar_field!(Timestamp, Timestamp, "timestamp");
scalar_field!(Uuid, Uuid, "uuid");

impl Field for String {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::String(s) => Ok(s),
            other => Err(mismatch("string", &other)),
        }
    }
    fn field_size(&self) -> usize {
        variable_size(self.len())
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        encode_variable(fc::STR8, fc::STR32, self.as_bytes(), buf);
    }
}

impl Field for Symbol {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::Symbol(s) => Ok(s),
            other => Err(mismatch("symbol", &other)),
        }
    }
    fn field_size(&self) -> usize {
        variable_size(self.as_str().len())
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        encode_variable(fc::SYM8, fc::SYM32, self.as_str().as_bytes(), buf);
    }
}

impl Field for Bytes {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::Binary(b) => Ok(b),
            other => Err(mismatch("binary", &other)),
        }
    }
    fn field_size(&self) -> usize {
        variable_size(self.len())
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        encode_variable(fc::VBIN8, fc::VBIN32, self, buf);
    }
}

/// A field of type `*` (any value).
impl Field for Value {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        Ok(value)
    }
    fn field_size(&self) -> usize {
        self.encoded_size()
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        self.encode(buf);
    }
}

/// A `multiple="true"` symbol field: one symbol or an array of them on the wire; always written as
/// an array.
impl Field for Vec<Symbol> {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::Symbol(s) => Ok(vec![s]),
            Value::Array(array) if array.element_type() == ElementType::Symbol => array
                .into_items()
                .into_iter()
                .map(Symbol::from_value)
                .collect(),
            other => Err(mismatch("symbol array", &other)),
        }
    }
    fn field_size(&self) -> usize {
        Value::Array(Array::of_symbols(self.iter().cloned())).encoded_size()
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        Value::Array(Array::of_symbols(self.iter().cloned())).encode(buf);
    }
}

/// A `list` of any values (an `amqp-sequence` body section).
impl Field for Vec<Value> {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::List(items) => Ok(items),
            other => Err(mismatch("list", &other)),
        }
    }
    fn field_size(&self) -> usize {
        compound_size(self.len(), self.iter().map(Value::encoded_size).sum())
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        let body = self.iter().map(Value::encoded_size).sum();
        encode_compound_header(false, self.len(), body, buf);
        self.iter().for_each(|item| item.encode(buf));
    }
}

/// A map whose keys are of any type (e.g. `attach.unsettled`).
impl Field for Vec<(Value, Value)> {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        match value {
            Value::Map(entries) => Ok(entries),
            other => Err(mismatch("map", &other)),
        }
    }
    fn field_size(&self) -> usize {
        map_field_size(self)
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        encode_map_field(self, buf);
    }
}

fn map_body<K: Field>(entries: &[(K, Value)]) -> usize {
    entries
        .iter()
        .map(|(k, v)| k.field_size() + v.encoded_size())
        .sum()
}

/// Encoded size of a map given as typed keys and values (an empty map still takes 3 bytes).
pub(crate) fn map_field_size<K: Field>(entries: &[(K, Value)]) -> usize {
    compound_size(entries.len() * 2, map_body(entries)).max(3)
}

/// Writes a map given as typed keys and values, without building a `Value`.
pub(crate) fn encode_map_field<K: Field, B: BufMut>(entries: &[(K, Value)], buf: &mut B) {
    encode_compound_header(true, entries.len() * 2, map_body(entries), buf);
    for (key, value) in entries {
        key.encode_field(buf);
        value.encode(buf);
    }
}

/// A symbol-keyed map (`fields` in the spec): connection, session and link properties, filters,
/// error info. Wire order is kept; string keys from lenient peers are read as symbols.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Fields(pub Vec<(Symbol, Value)>);

impl Fields {
    /// The value of the first entry with this key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0
            .iter()
            .find(|(k, _)| k.as_str() == key)
            .map(|(_, v)| v)
    }

    /// Appends an entry.
    pub fn push(&mut self, key: impl Into<Symbol>, value: impl Into<Value>) {
        self.0.push((key.into(), value.into()));
    }
}

impl Field for Fields {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        let Value::Map(entries) = value else {
            return Err(mismatch("map", &value));
        };
        // Keys should be symbols, but the JS SDK sends `rejected.error.info` with string keys
        // (sdk-wire.md §settlement); refusing them would close the connection over a settlement.
        entries
            .into_iter()
            .map(|(key, value)| match key {
                Value::String(text) => Ok((Symbol::from(text), value)),
                key => Ok((Symbol::from_value(key)?, value)),
            })
            .collect::<Result<_, _>>()
            .map(Fields)
    }
    fn field_size(&self) -> usize {
        map_field_size(&self.0)
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        encode_map_field(&self.0, buf);
    }
}

/// An annotations map (keys are symbols or ulongs; string keys, which some SDKs send in a
/// `modified` outcome's annotations, are accepted and kept as strings): message and delivery
/// annotations, and the `message-annotations` of a `modified` outcome. Wire order is kept.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Annotations(pub Vec<(Value, Value)>);

impl Annotations {
    /// The value of the first entry whose symbol (or string) key is `key`.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k.is_key(key)).map(|(_, v)| v)
    }

    /// Sets `key` to `value`, replacing an existing entry in place or appending one with a
    /// symbol key.
    pub fn set(&mut self, key: &str, value: Value) {
        match self.0.iter_mut().find(|(k, _)| k.is_key(key)) {
            Some(entry) => entry.1 = value,
            None => self.0.push((Value::Symbol(Symbol::from(key)), value)),
        }
    }
}

impl Field for Annotations {
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        let entries = Vec::<(Value, Value)>::from_value(value)?;
        match entries
            .iter()
            .find(|(k, _)| !matches!(k, Value::Symbol(_) | Value::Ulong(_) | Value::String(_)))
        {
            Some((key, _)) => Err(mismatch("symbol, ulong or string key", key)),
            None => Ok(Self(entries)),
        }
    }
    fn field_size(&self) -> usize {
        self.0.field_size()
    }
    fn encode_field<B: BufMut>(&self, buf: &mut B) {
        self.0.encode_field(buf);
    }
}
