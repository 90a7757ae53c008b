//! Connection and session performatives (§2.7.1–2.7.2, 2.7.8–2.7.9): open, begin, end, close.

use super::{AmqpError, Handle, Milliseconds, TransferNumber};
use crate::types::{Fields, Symbol, composite};

composite! {
    /// Negotiate connection parameters (§2.7.1).
    Open = 0x10, "amqp:open:list" {
        /// The id of the source container.
        container_id: String = required,
        /// The name of the target host.
        hostname: Option<String> = optional,
        /// Proposed maximum frame size.
        max_frame_size: u32 = default(u32::MAX),
        /// The maximum channel number that can be used on the connection.
        channel_max: u16 = default(u16::MAX),
        /// Idle time-out.
        idle_time_out: Option<Milliseconds> = optional,
        /// Locales available for outgoing text.
        outgoing_locales: Option<Vec<Symbol>> = optional,
        /// Desired locales for incoming text in decreasing level of preference.
        incoming_locales: Option<Vec<Symbol>> = optional,
        /// The extension capabilities the sender supports.
        offered_capabilities: Option<Vec<Symbol>> = optional,
        /// The extension capabilities the sender can use if the receiver supports them.
        desired_capabilities: Option<Vec<Symbol>> = optional,
        /// Connection properties.
        properties: Option<Fields> = optional,
    }
}

composite! {
    /// Begin a session on a channel (§2.7.2).
    Begin = 0x11, "amqp:begin:list" {
        /// The remote channel for this session (set when answering a peer's begin).
        remote_channel: Option<u16> = optional,
        /// The transfer-id of the first transfer id the sender will send.
        next_outgoing_id: TransferNumber = required,
        /// The initial incoming-window of the sender.
        incoming_window: u32 = required,
        /// The initial outgoing-window of the sender.
        outgoing_window: u32 = required,
        /// The maximum handle value that can be used on the session.
        handle_max: Handle = default(Handle(u32::MAX)),
        /// The extension capabilities the sender supports.
        offered_capabilities: Option<Vec<Symbol>> = optional,
        /// The extension capabilities the sender can use if the receiver supports them.
        desired_capabilities: Option<Vec<Symbol>> = optional,
        /// Session properties.
        properties: Option<Fields> = optional,
    }
}

composite! {
    /// End the session (§2.7.8).
    End = 0x17, "amqp:end:list" {
        /// Error causing the end.
        error: Option<AmqpError> = optional,
    }
}

composite! {
    /// Signal a connection close (§2.7.9).
    Close = 0x18, "amqp:close:list" {
        /// Error causing the close.
        error: Option<AmqpError> = optional,
    }
}
