//! One link endpoint (§2.6): its state, role, settle modes, credit and any delivery being
//! reassembled.

use bytes::{Bytes, BytesMut};

use super::flow::{ReceiverFlow, SenderFlow};
use crate::performatives::{
    DeliveryState, MessageFormat, ReceiverSettleMode, Role, SenderSettleMode,
};

/// Link endpoint states (AMQP 1.0 §2.6.1 attaching/detaching, seen from the server).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkState {
    /// The peer's attach arrived; the application has not answered.
    AttachReceived,
    /// Both attaches exchanged.
    Attached,
    /// We sent detach (refusal, error or application request) and wait for the peer's.
    DetachSent,
}

/// The link's credit, by our role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkFlow {
    /// We send on this link.
    Sender(SenderFlow),
    /// We receive on this link.
    Receiver(ReceiverFlow),
}

/// A delivery arriving in several transfer frames.
#[derive(Debug)]
pub(crate) struct PartialDelivery {
    pub(crate) delivery_id: u32,
    pub(crate) delivery_tag: Bytes,
    pub(crate) message_format: MessageFormat,
    pub(crate) settled: bool,
    pub(crate) rcv_settle_mode: Option<ReceiverSettleMode>,
    /// The sender's state for the delivery (a transaction's, for one).
    pub(crate) state: Option<DeliveryState>,
    pub(crate) beyond_credit: bool,
    pub(crate) body: BytesMut,
    /// Bytes received for the delivery so far, kept or dropped.
    pub(crate) size: u64,
    /// Past the link's max-message-size and reported: its bytes are dropped, and its frames
    /// until the last (or an abort) discarded.
    pub(crate) oversize_reported: bool,
}

/// One link of a session.
#[derive(Debug)]
pub(crate) struct Link {
    pub(crate) name: String,
    pub(crate) state: LinkState,
    /// The peer's handle for the link.
    pub(crate) input_handle: u32,
    pub(crate) flow: LinkFlow,
    pub(crate) snd_settle_mode: SenderSettleMode,
    pub(crate) rcv_settle_mode: ReceiverSettleMode,
    /// Largest message we send on this link (the peer's max-message-size, 0 = none).
    pub(crate) peer_max_message_size: u64,
    /// The max-message-size we advertise on this link (enforced by the application).
    pub(crate) max_message_size: u64,
    pub(crate) partial: Option<PartialDelivery>,
}

impl Link {
    /// Our role on the link.
    pub(crate) fn role(&self) -> Role {
        match self.flow {
            LinkFlow::Sender(_) => Role::Sender,
            LinkFlow::Receiver(_) => Role::Receiver,
        }
    }

    /// Credit available, in the direction the link carries messages.
    pub(crate) fn credit(&self) -> u32 {
        match self.flow {
            LinkFlow::Sender(flow) => flow.link_credit,
            LinkFlow::Receiver(flow) => flow.link_credit,
        }
    }

    /// Whether a drain is in progress.
    pub(crate) fn drain(&self) -> bool {
        match self.flow {
            LinkFlow::Sender(flow) => flow.drain,
            LinkFlow::Receiver(flow) => flow.drain,
        }
    }

    /// Our delivery-count as carried in a link flow.
    pub(crate) fn delivery_count(&self) -> u32 {
        match self.flow {
            LinkFlow::Sender(flow) => flow.delivery_count,
            LinkFlow::Receiver(flow) => flow.delivery_count,
        }
    }
}
