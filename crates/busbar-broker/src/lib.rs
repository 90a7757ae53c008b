//! The Azure Service Bus dialect over AMQP 1.0: the transport-independent foundations.
//!
//! - [`config`]: the Service Bus emulator's `Config.json`, read as-is and validated into a resolved
//!   model with every default filled in.
//! - [`address`]: normalisation of the node addresses the SDKs put in attach frames.
//! - [`auth`]: shared-access-signature tokens (`$cbs` put-token) and SASL PLAIN credentials.
//! - [`errors`]: the Service Bus error conditions and the one mapping from [`BrokerError`] to the
//!   wire.
//! - [`runtime`]: the running broker — one task per entity over `busbar-core`, connection
//!   handlers on the `busbar-amqp` driver, durability through `busbar-store` group commit.
//!
//! Everything but [`runtime`] and [`config::load_file`] is pure; time is always an argument
//! (milliseconds since the Unix epoch).

pub mod address;
pub mod auth;
pub mod config;
pub mod errors;
mod names;
mod percent;
pub mod runtime;
mod timestamp;

pub use address::{Address, AddressError, EntityNode, EntityPath, SubQueue};
pub use errors::{BrokerError, TrackingId, WireError};
pub use names::EntityName;
