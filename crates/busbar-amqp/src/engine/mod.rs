//! Sans-IO AMQP 1.0 server engines: the connection (§2.4), its sessions (§2.5) and links (§2.6),
//! and the SASL server (§5.3).
//!
//! [`Connection`] is a pure state machine in the style of quinn-proto: bytes and time go in
//! ([`Connection::handle_input`], [`Connection::handle_timeout`]); outgoing bytes
//! ([`Connection::poll_transmit`]), [`Event`]s for the application ([`Connection::poll_event`])
//! and the next deadline ([`Connection::poll_timeout`]) come out. The application answers events
//! with calls such as [`Connection::accept_attach`] or [`Connection::send_transfer`]. Nothing
//! here reads a clock or touches a socket; [`crate::driver`] does that.
//!
//! Errors end exactly their scope: a bad link frame detaches that link with the condition AMQP
//! names, a session-level violation (window, handles) ends the session, and framing or decoding
//! errors close the connection.

mod config;
mod connection;
mod connection_sessions;
mod error;
mod event;
mod flow;
mod handshake;
mod link;
mod sasl;
mod session;
mod session_control;
mod session_input;
mod slab;
mod time;

pub use config::ConnectionConfig;
pub use connection::{Connection, ConnectionState};
pub use error::EngineError;
pub use event::{
    AttachRequest, DeliveryId, DispositionUpdate, Event, IncomingTransfer, LinkId, SessionId,
};
pub use sasl::{OFFERED_MECHANISMS, SaslCredentials, SaslVerdict};
pub use session_control::{AttachReply, OutgoingDelivery};
pub use time::Millis;
