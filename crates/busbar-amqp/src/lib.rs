//! AMQP 1.0: codec, sans-IO protocol engines and a thin tokio driver.
//!
//! The codec layers: [`types`] (every AMQP value, its decoder and compact encoder),
//! [`performatives`] (typed §2.7 performatives and SASL frames), [`frame`] (protocol headers,
//! 8-byte frame headers, a size-limited zero-copy `FrameDecoder`), and [`message`] (a received
//! message kept as `Bytes` with lazily located sections, header/annotation rewriting, building).

pub mod condition;
pub mod driver;
pub mod engine;
pub mod error;
pub mod frame;
pub mod message;
pub mod performatives;
pub mod types;

pub use error::{DecodeError, FrameError};
