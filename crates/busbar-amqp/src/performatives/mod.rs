//! AMQP 1.0 performatives (§2.7), SASL frames (§5.3.3), delivery states, termini and the
//! restricted types they use.

mod connection;
mod delivery_state;
mod error;
mod link;
mod sasl;
mod terminus;
mod transaction;

use bytes::BufMut;

pub use connection::{Begin, Close, End, Open};
pub use delivery_state::{Accepted, DeliveryState, Modified, Received, Rejected, Released};
pub use error::AmqpError;
pub use link::{Attach, Detach, Disposition, Flow, Transfer};
pub use sasl::{
    ANONYMOUS, MSSBCBS, SaslChallenge, SaslInit, SaslMechanisms, SaslOutcome, SaslResponse,
};
pub use terminus::{Coordinator, LinkTarget, SESSION_END, Source, Target};
pub use transaction::{CoordinatorRequest, Declare, Declared, Discharge, TransactionalState};

use crate::error::DecodeError;
use crate::types::{Composite, Field, Value, fields_of, peek_descriptor, uint_newtype};

uint_newtype!(
    /// A link handle (§2.8.8).
    Handle
);
uint_newtype!(
    /// A delivery-id (§2.8.9, a serial number).
    DeliveryNumber
);
uint_newtype!(
    /// A transfer-id (§2.8.10, a serial number).
    TransferNumber
);
uint_newtype!(
    /// A sequence number such as a link's delivery-count (§2.8.11, a serial number).
    SequenceNo
);
uint_newtype!(
    /// A duration in milliseconds (§2.8.12).
    Milliseconds
);
uint_newtype!(
    /// A duration in seconds (§2.8.13), as in a terminus `timeout`.
    Seconds
);
uint_newtype!(
    /// The format of a transferred message (§2.8.11 message-format).
    MessageFormat
);

impl MessageFormat {
    /// Standard AMQP message format.
    pub const AMQP: Self = Self(0);
    /// Service Bus batch: the body is a sequence of `data` sections, each an encoded message.
    pub const BATCH: Self = Self(0x8001_3700);
}

/// Generates a restricted enum over a primitive type (§1.3 restricted types).
macro_rules! restricted {
    (
        $(#[$meta:meta])* $name:ident : $repr:ty {
            $( $(#[$variant_meta:meta])* $variant:ident = $raw:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$variant_meta])* $variant, )*
        }

        impl $name {
            /// The value on the wire.
            pub fn raw(self) -> $repr {
                match self {
                    $( Self::$variant => $raw, )*
                }
            }
        }

        impl Field for $name {
            fn from_value(value: Value) -> Result<Self, DecodeError> {
                match <$repr as Field>::from_value(value)? {
                    $( $raw => Ok(Self::$variant), )*
                    // Unreachable for `bool`, whose two values are both variants.
                    #[allow(unreachable_patterns)]
                    _ => Err(DecodeError::Malformed(stringify!($name))),
                }
            }
            fn field_size(&self) -> usize {
                self.raw().field_size()
            }
            fn encode_field<B: BufMut>(&self, buf: &mut B) {
                self.raw().encode_field(buf)
            }
        }
    };
}

restricted! {
    /// Link endpoint role (§2.8.1).
    Role: bool {
        /// The endpoint sends messages.
        Sender = false,
        /// The endpoint receives messages.
        Receiver = true,
    }
}

restricted! {
    /// Settlement policy for a sender (§2.8.2).
    SenderSettleMode: u8 {
        /// The sender sends all deliveries unsettled.
        Unsettled = 0,
        /// The sender sends all deliveries settled.
        Settled = 1,
        /// The sender may send a mixture.
        Mixed = 2,
    }
}

restricted! {
    /// Settlement policy for a receiver (§2.8.3).
    ReceiverSettleMode: u8 {
        /// The receiver settles spontaneously.
        First = 0,
        /// The receiver settles only after the sender has settled.
        Second = 1,
    }
}

restricted! {
    /// Durability policy for a terminus (§3.5.5).
    TerminusDurability: u32 {
        /// No terminus state is retained durably.
        None = 0,
        /// Only the existence and configuration of the terminus is retained.
        Configuration = 1,
        /// Unsettled state is retained durably as well.
        UnsettledState = 2,
    }
}

restricted! {
    /// Codes to indicate the outcome of the SASL dialog (§5.3.3.6).
    SaslCode: u8 {
        /// Connection authentication succeeded.
        Ok = 0,
        /// Authentication failed due to an issue with the supplied credentials.
        Auth = 1,
        /// A system error occurred.
        Sys = 2,
        /// A permanent system error.
        SysPerm = 3,
        /// A transient system error.
        SysTemp = 4,
    }
}

/// Generates a sum type over composites, dispatching on the descriptor code or name.
macro_rules! composite_enum {
    ($(#[$meta:meta])* $name:ident { $( $(#[$variant_meta:meta])* $variant:ident ),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$variant_meta])* $variant($variant), )*
        }

        impl $name {
            /// Converts a decoded described value, choosing the variant by its descriptor.
            pub fn from_value(value: Value) -> Result<Self, DecodeError> {
                let Value::Described(described) = value else {
                    return Err(DecodeError::UnexpectedType {
                        expected: stringify!($name),
                        found: value.type_name(),
                    });
                };
                $(
                    if described.descriptor.matches($variant::CODE, $variant::NAME) {
                        return Ok(Self::$variant($variant::from_fields(fields_of(*described)?)?));
                    }
                )*
                Err(DecodeError::UnexpectedDescriptor(format!("{:?}", described.descriptor)))
            }

            /// Decodes one value from the front of `buf`, choosing the variant by its descriptor
            /// and reading its fields one at a time (no `Value` tree of the whole list).
            pub fn decode(buf: &mut ::bytes::Bytes) -> Result<Self, DecodeError> {
                let Some(descriptor) = peek_descriptor(buf)? else {
                    // Not described: the error `from_value` gives.
                    return Self::from_value(Value::decode(buf)?);
                };
                $(
                    if descriptor.matches($variant::CODE, $variant::NAME) {
                        return Ok(Self::$variant($variant::decode(buf)?));
                    }
                )*
                Err(DecodeError::UnexpectedDescriptor(format!("{descriptor:?}")))
            }

            /// The number of bytes [`Self::encode`] writes.
            pub fn encoded_size(&self) -> usize {
                match self {
                    $( Self::$variant(inner) => inner.encoded_size(), )*
                }
            }

            /// Writes the described list.
            pub fn encode<B: BufMut>(&self, buf: &mut B) {
                match self {
                    $( Self::$variant(inner) => inner.encode(buf), )*
                }
            }

            /// The symbolic descriptor of the variant (for logs).
            pub fn name(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => $variant::NAME, )*
                }
            }
        }

        $(
            impl From<$variant> for $name {
                fn from(inner: $variant) -> Self {
                    Self::$variant(inner)
                }
            }
        )*
    };
}

composite_enum! {
    /// A performative of an AMQP frame (§2.7).
    Performative {
        /// §2.7.1.
        Open,
        /// §2.7.2.
        Begin,
        /// §2.7.3.
        Attach,
        /// §2.7.4.
        Flow,
        /// §2.7.5.
        Transfer,
        /// §2.7.6.
        Disposition,
        /// §2.7.7.
        Detach,
        /// §2.7.8.
        End,
        /// §2.7.9.
        Close,
    }
}

composite_enum! {
    /// The body of a SASL frame (§5.3.3).
    SaslFrame {
        /// §5.3.3.1.
        SaslMechanisms,
        /// §5.3.3.2.
        SaslInit,
        /// §5.3.3.3.
        SaslChallenge,
        /// §5.3.3.4.
        SaslResponse,
        /// §5.3.3.5.
        SaslOutcome,
    }
}
