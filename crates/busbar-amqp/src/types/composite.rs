//! Described-list composite types (§1.4): the `Composite` trait and the `composite!` macro that
//! generates a typed struct, its tolerant decoder and its every-field encoder.

use bytes::{BufMut, Bytes};

use super::decode::ListFields;
use super::encode::{compound_size, encode_compound_header, encode_ulong, ulong_size};
use super::format as fc;
use super::value::{Described, Value};
use crate::error::DecodeError;

/// A composite type: a list of fields described by a numeric code and a symbolic name.
///
/// Decoding accepts either descriptor form and omitted trailing fields; encoding writes every field
/// up to the last one the spec defines, with explicit nulls for absent optional fields and real
/// values for defaulted ones (older pyamqp clients read a null as `None`, servicebus-amqp.md §1.4).
pub trait Composite: Sized {
    /// The numeric descriptor.
    const CODE: u64;
    /// The symbolic descriptor.
    const NAME: &'static str;

    /// Number of fields and the bytes they take, without the list header.
    #[doc(hidden)]
    fn fields_size(&self) -> (usize, usize);

    /// Writes the fields, without the list header.
    #[doc(hidden)]
    fn encode_fields<B: BufMut>(&self, buf: &mut B);

    /// Builds the type from its (possibly shortened) fields, decoded as they are taken; fields
    /// past the ones the type defines are not taken.
    #[doc(hidden)]
    fn from_field_values<I>(fields: I) -> Result<Self, DecodeError>
    where
        I: Iterator<Item = Result<Value, DecodeError>>;

    /// Builds the type from its decoded (possibly shortened) field list.
    #[doc(hidden)]
    fn from_fields(fields: Vec<Value>) -> Result<Self, DecodeError> {
        Self::from_field_values(fields.into_iter().map(Ok))
    }

    /// The number of bytes [`Composite::encode`] writes.
    fn encoded_size(&self) -> usize {
        let (count, body) = self.fields_size();
        1 + ulong_size(Self::CODE) + compound_size(count, body)
    }

    /// Writes the described list.
    fn encode<B: BufMut>(&self, buf: &mut B) {
        let (count, body) = self.fields_size();
        buf.put_u8(fc::DESCRIBED);
        encode_ulong(Self::CODE, buf);
        encode_compound_header(false, count, body, buf);
        self.encode_fields(buf);
    }

    /// Converts a decoded described value.
    fn from_value(value: Value) -> Result<Self, DecodeError> {
        Self::from_fields(described_list(value, Self::CODE, Self::NAME)?)
    }

    /// Decodes one value of this type from the front of `buf`, field by field (no `Value` tree
    /// of the whole list is built).
    fn decode(buf: &mut Bytes) -> Result<Self, DecodeError> {
        let mut fields = ListFields::described(buf, Self::CODE, Self::NAME)?;
        let composite = Self::from_field_values(&mut fields)?;
        fields.finish()?;
        Ok(composite)
    }
}

/// The field list of a described value, if its descriptor is `code` or `name`.
fn described_list(value: Value, code: u64, name: &str) -> Result<Vec<Value>, DecodeError> {
    match value {
        Value::Described(described) if described.descriptor.matches(code, name) => {
            fields_of(*described)
        }
        Value::Described(described) => Err(DecodeError::UnexpectedDescriptor(format!(
            "{:?}",
            described.descriptor
        ))),
        other => Err(DecodeError::UnexpectedType {
            expected: "described list",
            found: other.type_name(),
        }),
    }
}

/// The field list of a described list.
pub(crate) fn fields_of(described: Described) -> Result<Vec<Value>, DecodeError> {
    match described.value {
        Value::List(fields) => Ok(fields),
        other => Err(DecodeError::UnexpectedType {
            expected: "list",
            found: other.type_name(),
        }),
    }
}

/// Generates a composite struct. Field kinds: `required` (absent or null is an error),
/// `optional` (an `Option`, absent means `None`) and `default(expr)` (absent means `expr`).
macro_rules! composite {
    (@absent required, $composite:expr, $field:expr) => {
        return Err($crate::error::DecodeError::MissingField {
            composite: $composite,
            field: $field,
        })
    };
    (@absent optional, $composite:expr, $field:expr) => {
        None
    };
    (@absent default($default:expr), $composite:expr, $field:expr) => {
        $default
    };
    (
        $(#[$meta:meta])*
        $name:ident = $code:literal, $symbol:literal {
            $(
                $(#[$field_meta:meta])*
                $field:ident : $ty:ty = $kind:ident $(($default:expr))?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl $crate::types::Composite for $name {
            const CODE: u64 = $code;
            const NAME: &'static str = $symbol;

            fn fields_size(&self) -> (usize, usize) {
                let sizes: &[usize] = &[$( $crate::types::Field::field_size(&self.$field) ),*];
                (sizes.len(), sizes.iter().sum())
            }

            fn encode_fields<B: ::bytes::BufMut>(&self, _buf: &mut B) {
                $( $crate::types::Field::encode_field(&self.$field, _buf); )*
            }

            fn from_field_values<I>(mut _fields: I) -> Result<Self, $crate::error::DecodeError>
            where
                I: Iterator<Item = Result<$crate::types::Value, $crate::error::DecodeError>>,
            {
                Ok(Self {
                    $( $field: match _fields.next().transpose()? {
                        None | Some($crate::types::Value::Null) => {
                            composite!(@absent $kind $(($default))?, $symbol, stringify!($field))
                        }
                        Some(value) => <$ty as $crate::types::Field>::from_value(value).map_err(
                            |_| $crate::error::DecodeError::InvalidField {
                                composite: $symbol,
                                field: stringify!($field),
                            },
                        )?,
                    }, )*
                })
            }
        }

        impl $crate::types::Field for $name {
            fn from_value(value: $crate::types::Value) -> Result<Self, $crate::error::DecodeError> {
                <Self as $crate::types::Composite>::from_value(value)
            }
            fn field_size(&self) -> usize {
                <Self as $crate::types::Composite>::encoded_size(self)
            }
            fn encode_field<B: ::bytes::BufMut>(&self, buf: &mut B) {
                <Self as $crate::types::Composite>::encode(self, buf)
            }
        }
    };
}

pub(crate) use composite;

/// Generates a `u32`-backed newtype that travels as an AMQP `uint` field.
macro_rules! uint_newtype {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub u32);

        impl $crate::types::Field for $name {
            fn from_value(value: $crate::types::Value) -> Result<Self, $crate::error::DecodeError> {
                <u32 as $crate::types::Field>::from_value(value).map(Self)
            }
            fn field_size(&self) -> usize {
                $crate::types::Field::field_size(&self.0)
            }
            fn encode_field<B: ::bytes::BufMut>(&self, buf: &mut B) {
                $crate::types::Field::encode_field(&self.0, buf)
            }
        }
    };
}

pub(crate) use uint_newtype;
