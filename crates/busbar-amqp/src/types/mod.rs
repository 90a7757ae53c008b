//! The AMQP 1.0 type system: values, their decoder and encoder, and typed composite fields.

mod composite;
mod decode;
mod encode;
mod field;
pub(crate) mod format;
mod scalar;
mod value;

pub use composite::Composite;
pub(crate) use composite::{composite, fields_of, uint_newtype};
pub use decode::MAX_DEPTH;
pub(crate) use decode::{peek_descriptor, skip_value, take_map, take_u8};
pub(crate) use encode::{
    compound_size, described_size, encode_compound_header, encode_described, encode_ulong,
    encode_variable, ulong_size, variable_size,
};
pub use field::{Annotations, Fields};
pub(crate) use field::{Field, encode_map_field, map_field_size};
pub use value::{Array, Described, Descriptor, ElementType, Symbol, Timestamp, Uuid, Value};
