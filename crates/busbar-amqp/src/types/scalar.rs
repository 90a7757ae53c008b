//! Fixed-size scalars encoded straight from their Rust type with the most compact constructor:
//! what `Value::encode` writes for them, and what composite fields write without first
//! building a `Value`.

use bytes::BufMut;

use super::format as fc;
use super::value::{Timestamp, Uuid};

/// A scalar that encodes itself without a `Value`.
pub(crate) trait Scalar: Copy {
    /// Bytes [`Scalar::encode_scalar`] writes, constructor included.
    fn scalar_size(self) -> usize;
    /// Writes the constructor and the payload.
    fn encode_scalar<B: BufMut>(self, buf: &mut B);
}

impl Scalar for bool {
    fn scalar_size(self) -> usize {
        1
    }
    fn encode_scalar<B: BufMut>(self, buf: &mut B) {
        buf.put_u8(if self { fc::TRUE } else { fc::FALSE });
    }
}

impl Scalar for u8 {
    fn scalar_size(self) -> usize {
        2
    }
    fn encode_scalar<B: BufMut>(self, buf: &mut B) {
        buf.put_u8(fc::UBYTE);
        buf.put_u8(self);
    }
}

impl Scalar for u16 {
    fn scalar_size(self) -> usize {
        3
    }
    fn encode_scalar<B: BufMut>(self, buf: &mut B) {
        buf.put_u8(fc::USHORT);
        buf.put_u16(self);
    }
}

/// Unsigned integers: a zero-width form for 0, a one-byte form up to 255, then full width.
macro_rules! unsigned_scalar {
    ($ty:ty, $zero:ident, $small:ident, $full:ident, $put:ident) => {
        impl Scalar for $ty {
            fn scalar_size(self) -> usize {
                match self {
                    0 => 1,
                    1..=255 => 2,
                    _ => 1 + size_of::<$ty>(),
                }
            }
            fn encode_scalar<B: BufMut>(self, buf: &mut B) {
                match u8::try_from(self) {
                    Ok(0) => buf.put_u8(fc::$zero),
                    Ok(small) => {
                        buf.put_u8(fc::$small);
                        buf.put_u8(small);
                    }
                    Err(_) => {
                        buf.put_u8(fc::$full);
                        buf.$put(self);
                    }
                }
            }
        }
    };
}

unsigned_scalar!(u32, UINT0, SMALLUINT, UINT, put_u32);
unsigned_scalar!(u64, ULONG0, SMALLULONG, ULONG, put_u64);

/// Signed integers: a one-byte form from -128 to 127, then full width.
macro_rules! signed_scalar {
    ($ty:ty, $small:ident, $full:ident, $put:ident) => {
        impl Scalar for $ty {
            fn scalar_size(self) -> usize {
                if i8::try_from(self).is_ok() {
                    2
                } else {
                    1 + size_of::<$ty>()
                }
            }
            fn encode_scalar<B: BufMut>(self, buf: &mut B) {
                match i8::try_from(self) {
                    Ok(small) => {
                        buf.put_u8(fc::$small);
                        buf.put_i8(small);
                    }
                    Err(_) => {
                        buf.put_u8(fc::$full);
                        buf.$put(self);
                    }
                }
            }
        }
    };
}

signed_scalar!(i32, SMALLINT, INT, put_i32);
signed_scalar!(i64, SMALLLONG, LONG, put_i64);

impl Scalar for Timestamp {
    fn scalar_size(self) -> usize {
        9
    }
    fn encode_scalar<B: BufMut>(self, buf: &mut B) {
        buf.put_u8(fc::TIMESTAMP);
        buf.put_i64(self.0);
    }
}

impl Scalar for Uuid {
    fn scalar_size(self) -> usize {
        17
    }
    fn encode_scalar<B: BufMut>(self, buf: &mut B) {
        buf.put_u8(fc::UUID);
        buf.put_slice(&self.0);
    }
}
