//! Link performatives (§2.7.3–2.7.7): attach, flow, transfer, disposition, detach.

use bytes::Bytes;

use super::{
    AmqpError, DeliveryNumber, DeliveryState, Handle, LinkTarget, MessageFormat,
    ReceiverSettleMode, Role, SenderSettleMode, SequenceNo, Source, TransferNumber,
};
use crate::types::{Fields, Symbol, Value, composite};

composite! {
    /// Attach a link to a session (§2.7.3).
    Attach = 0x12, "amqp:attach:list" {
        /// The name of the link.
        name: String = required,
        /// The handle for the link while attached.
        handle: Handle = required,
        /// Role of the link endpoint.
        role: Role = required,
        /// Settlement policy for the sender.
        snd_settle_mode: SenderSettleMode = default(SenderSettleMode::Mixed),
        /// The settlement policy of the receiver.
        rcv_settle_mode: ReceiverSettleMode = default(ReceiverSettleMode::First),
        /// The source for messages.
        source: Option<Box<Source>> = optional,
        /// The target for messages (or the transaction coordinator).
        target: Option<Box<LinkTarget>> = optional,
        /// Unsettled delivery state (delivery-tag → delivery-state).
        unsettled: Option<Vec<(Value, Value)>> = optional,
        /// Whether the unsettled map is incomplete.
        incomplete_unsettled: bool = default(false),
        /// The sender's initial value for delivery-count (mandatory for senders).
        initial_delivery_count: Option<SequenceNo> = optional,
        /// The maximum message size supported by the link endpoint (absent or 0: no limit).
        max_message_size: Option<u64> = optional,
        /// The extension capabilities the sender supports.
        offered_capabilities: Option<Vec<Symbol>> = optional,
        /// The extension capabilities the sender can use if the receiver supports them.
        desired_capabilities: Option<Vec<Symbol>> = optional,
        /// Link properties.
        properties: Option<Fields> = optional,
    }
}

composite! {
    /// Update link state (§2.7.4).
    Flow = 0x13, "amqp:flow:list" {
        /// The expected transfer-id of the next incoming transfer.
        next_incoming_id: Option<TransferNumber> = optional,
        /// The incoming-window of the sender.
        incoming_window: u32 = required,
        /// The transfer-id that will be assigned to the next outgoing transfer.
        next_outgoing_id: TransferNumber = required,
        /// The outgoing-window of the sender.
        outgoing_window: u32 = required,
        /// The link the flow state applies to (absent: session flow only).
        handle: Option<Handle> = optional,
        /// The endpoint's delivery-count.
        delivery_count: Option<SequenceNo> = optional,
        /// The current maximum number of messages that can be received.
        link_credit: Option<u32> = optional,
        /// The number of available messages.
        available: Option<u32> = optional,
        /// Indicates drain mode.
        drain: bool = default(false),
        /// Request state from partner.
        echo: bool = default(false),
        /// Link state properties.
        properties: Option<Fields> = optional,
    }
}

composite! {
    /// Transfer a message (§2.7.5). The message bytes follow the performative in the frame.
    Transfer = 0x14, "amqp:transfer:list" {
        /// The link the transfer is on.
        handle: Handle = required,
        /// Alias for the delivery-tag (first frame of a delivery).
        delivery_id: Option<DeliveryNumber> = optional,
        /// Uniquely identifies the delivery on the link (first frame of a delivery).
        delivery_tag: Option<Bytes> = optional,
        /// Indicates the message format.
        message_format: Option<MessageFormat> = optional,
        /// Whether the delivery is settled by the sender.
        settled: Option<bool> = optional,
        /// More frames of this delivery follow.
        more: bool = default(false),
        /// Settlement mode for this delivery.
        rcv_settle_mode: Option<ReceiverSettleMode> = optional,
        /// The state of the delivery at the sender.
        state: Option<DeliveryState> = optional,
        /// Indicates a resumed delivery.
        resume: bool = default(false),
        /// Indicates that the message is aborted.
        aborted: bool = default(false),
        /// Batchable hint.
        batchable: bool = default(false),
    }
}

composite! {
    /// Inform remote peer of delivery state changes (§2.7.6).
    Disposition = 0x15, "amqp:disposition:list" {
        /// Directionality of disposition.
        role: Role = required,
        /// Lower bound of deliveries.
        first: DeliveryNumber = required,
        /// Upper bound of deliveries (absent: `first`).
        last: Option<DeliveryNumber> = optional,
        /// Indicates deliveries are settled.
        settled: bool = default(false),
        /// Indicates state of deliveries.
        state: Option<DeliveryState> = optional,
        /// Batchable hint.
        batchable: bool = default(false),
    }
}

composite! {
    /// Detach the link endpoint from the session (§2.7.7).
    Detach = 0x16, "amqp:detach:list" {
        /// The local handle of the link to be detached.
        handle: Handle = required,
        /// If true then the sender has closed the link.
        closed: bool = default(false),
        /// Error causing the detach.
        error: Option<AmqpError> = optional,
    }
}

impl Transfer {
    /// A transfer on `handle` with every optional field absent and every flag false.
    pub fn new(handle: Handle) -> Self {
        Self {
            handle,
            delivery_id: None,
            delivery_tag: None,
            message_format: None,
            settled: None,
            more: false,
            rcv_settle_mode: None,
            state: None,
            resume: false,
            aborted: false,
            batchable: false,
        }
    }
}
