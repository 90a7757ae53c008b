//! What a server connection advertises and the limits it enforces.

use std::time::Duration;

use crate::types::Fields;

/// Limits and advertised values of a server-side [`Connection`](super::Connection).
#[derive(Clone, Debug)]
pub struct ConnectionConfig {
    /// Our container-id in `open`.
    pub container_id: String,
    /// The largest frame we accept, advertised in `open` (frames we send follow the peer's).
    pub max_frame_size: u32,
    /// The highest channel number the peer may use; bounds the sessions per connection.
    pub channel_max: u16,
    /// The highest link handle the peer may use per session; bounds the links per session.
    pub handle_max: u32,
    /// Our idle time-out, advertised in `open`: a peer silent for this long is closed.
    pub idle_time_out: Duration,
    /// The incoming window (in transfer frames) each session advertises and replenishes.
    pub incoming_window: u32,
    /// Hard cap on an incoming message, whatever a link's own max-message-size says.
    pub max_message_size: u64,
    /// Whether `send_transfer` refuses a message larger than the max-message-size the peer's
    /// receiving link advertised (as AMQP asks), or sends it anyway (as Service Bus does: the
    /// Python SDK's receivers advertise 1 MiB and take Premium's 100 MB messages).
    pub honour_peer_max_message_size: bool,
    /// Bytes of outgoing transfers held back by session windows, across the connection, before
    /// `send_transfer` refuses with back-pressure.
    pub max_buffered_outgoing: usize,
    /// Bytes of incomplete (multi-frame) incoming deliveries held across the connection, raised
    /// for a delivery to its link's max-message-size when that is larger (so one message up to
    /// the link's limit always fits); a delivery that would grow past it ends its link with
    /// `amqp:resource-limit-exceeded`.
    pub max_reassembly_bytes: usize,
    /// Deliveries a peer may send beyond its credit before the link is detached (Python's
    /// sender ignores credit).
    pub uncredited_transfer_allowance: u32,
    /// Whether a client must run SASL; if not, the plain AMQP header is accepted directly.
    pub require_sasl: bool,
    /// How long we wait for the peer's `close` after sending ours.
    pub close_timeout: Duration,
    /// How long the whole opening handshake may take, from the connection's start to the
    /// peer's `open` (protocol headers and SASL included); a connection still handshaking then
    /// is closed.
    pub handshake_timeout: Duration,
    /// Connection properties in our `open`.
    pub properties: Option<Fields>,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self {
            container_id: "busbar".to_owned(),
            max_frame_size: 256 * 1024,
            channel_max: 1023,
            handle_max: 1023,
            idle_time_out: Duration::from_secs(240),
            incoming_window: 5000,
            max_message_size: 1024 * 1024,
            honour_peer_max_message_size: true,
            max_buffered_outgoing: 4 * 1024 * 1024,
            max_reassembly_bytes: 8 * 1024 * 1024,
            uncredited_transfer_allowance: 1000,
            require_sasl: false,
            close_timeout: Duration::from_secs(5),
            handshake_timeout: Duration::from_secs(10),
            properties: None,
        }
    }
}
