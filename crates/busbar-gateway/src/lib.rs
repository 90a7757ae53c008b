//! Busbar's listeners. Every port serves every way a client reaches Service Bus: each accepted
//! connection is told apart by its first byte — an AMQP or SASL protocol header (`A`), a TLS
//! ClientHello (`0x16`), or anything else, an HTTP request — and, inside TLS, by the first byte
//! again. So one port can carry AMQP, AMQPS, the administration API over HTTP and HTTPS, and
//! AMQP over WebSockets (an HTTP upgrade on `/$servicebus/websocket`).
//!
//! The crate knows neither AMQP nor the administration API: it hands each opened connection to
//! a [`Dispatch`] the binary implements (the broker's AMQP driver, the admin HTTP server).
//!
//! - [`serve`]: the accept loop of one listener, with a deadline and a cap on connections
//!   still opening (first byte, TLS handshake), and a cap on HTTP connections.
//! - [`tls`]: the certificate (a development CA, or PEM files) and rustls's configuration.
//! - [`websocket`]: the upgrade to WebSocket subprotocol `AMQPWSB10` and the byte stream it
//!   carries in binary messages.

mod quick_ack;
mod rewind;
mod serve;
mod sniff;
pub mod tls;
pub mod websocket;

pub use rewind::{BoxedIo, Io};
pub use serve::{Connection, Dispatch, Gateway, Limits, Stopping, serve};
