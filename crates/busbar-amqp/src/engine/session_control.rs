//! What the application does on a session's links: answer attaches, send transfers and
//! dispositions, grant credit, finish drains, detach.

use bytes::Bytes;

use super::config::ConnectionConfig;
use super::error::EngineError;
use super::event::DeliveryId;
use super::link::{LinkFlow, LinkState};
use super::session::{Output, Queued, QueuedTransfer, Session};
use super::slab::SlotKey;
use crate::performatives::{
    AmqpError, Attach, DeliveryNumber, DeliveryState, Detach, Disposition, Handle, LinkTarget,
    MessageFormat, Performative, ReceiverSettleMode, Role, SenderSettleMode, SequenceNo, Source,
    Target, Transfer,
};
use crate::types::{Fields, Value};

/// The largest delivery-tag AMQP allows (§2.8.7).
const MAX_DELIVERY_TAG: usize = 32;

/// Our side of an attach, given to [`Connection::accept_attach`](super::Connection::accept_attach).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AttachReply {
    /// Our source (echo the peer's; a filter may be changed, e.g. the session actually locked).
    pub source: Option<Source>,
    /// Our target (echo the peer's node, or the transaction coordinator it attached to).
    pub target: Option<LinkTarget>,
    /// Sender settle mode; `None` echoes the peer's.
    pub snd_settle_mode: Option<SenderSettleMode>,
    /// Receiver settle mode; `None` echoes the peer's.
    pub rcv_settle_mode: Option<ReceiverSettleMode>,
    /// Largest message we advertise on the link; `None` uses the connection's limit. A delivery
    /// past it is reported early as oversize ([`IncomingTransfer::oversize`]), for the
    /// application to refuse (e.g. with a `rejected` outcome).
    ///
    /// [`IncomingTransfer::oversize`]: super::event::IncomingTransfer::oversize
    pub max_message_size: Option<u64>,
    /// Link properties.
    pub properties: Option<Fields>,
}

impl AttachReply {
    /// A reply echoing the peer's source and target, everything else at its default. A terminus
    /// the peer left null is answered with an empty one: a null terminus in our attach would
    /// read as a refusal (Python treats it so, servicebus-amqp.md §1.6).
    pub fn echo(request: &super::event::AttachRequest) -> Self {
        Self {
            source: Some(request.source.clone().unwrap_or_else(|| Source {
                address: None,
                ..Source::with_address(Value::Null)
            })),
            target: Some(match (&request.coordinator, &request.target) {
                (Some(coordinator), _) => LinkTarget::Coordinator(coordinator.clone()),
                (None, Some(target)) => LinkTarget::Node(target.clone()),
                (None, None) => LinkTarget::Node(Target {
                    address: None,
                    ..Target::with_address(Value::Null)
                }),
            }),
            ..Self::default()
        }
    }
}

/// A delivery to send, given to [`Connection::send_transfer`](super::Connection::send_transfer).
#[derive(Clone, Debug, PartialEq)]
pub struct OutgoingDelivery {
    /// The delivery-tag (at most 32 bytes).
    pub tag: Bytes,
    /// The encoded message.
    pub message: Bytes,
    /// More of the message, sent after `message` as it is: a stored message's sections passed
    /// on unchanged behind new ones, without copying them into one buffer (empty for most).
    pub tail: Bytes,
    /// The message format.
    pub message_format: MessageFormat,
    /// Whether we send it settled.
    pub settled: bool,
}

impl Session {
    pub(crate) fn accept_attach(
        &mut self,
        key: SlotKey,
        reply: AttachReply,
        config: &ConnectionConfig,
        out: &mut Output<'_>,
    ) -> Result<(), EngineError> {
        let link = self.links.get_mut(key).ok_or(EngineError::UnknownLink)?;
        if link.state != LinkState::AttachReceived {
            return Err(EngineError::InvalidState("the attach was already answered"));
        }
        link.state = LinkState::Attached;
        if let Some(mode) = reply.snd_settle_mode {
            link.snd_settle_mode = mode;
        }
        if let Some(mode) = reply.rcv_settle_mode {
            link.rcv_settle_mode = mode;
        }
        link.max_message_size = reply
            .max_message_size
            .unwrap_or(config.max_message_size)
            .min(config.max_message_size);
        let attach = Attach {
            name: link.name.clone(),
            handle: Handle(key.slot),
            role: link.role(),
            snd_settle_mode: link.snd_settle_mode,
            rcv_settle_mode: link.rcv_settle_mode,
            source: reply.source.map(Box::new),
            target: reply.target.map(Box::new),
            unsettled: None,
            incomplete_unsettled: false,
            // Python detaches a receiver whose attach reply lacks it (servicebus-amqp.md §1.6).
            initial_delivery_count: Some(SequenceNo(link.delivery_count())),
            max_message_size: Some(link.max_message_size),
            offered_capabilities: None,
            desired_capabilities: None,
            properties: reply.properties,
        };
        self.send_control(Performative::Attach(attach), out);
        Ok(())
    }

    /// The refusal pattern: an attach with null termini, then detach(closed, error), in one write.
    pub(crate) fn send_refusal(
        &mut self,
        key: SlotKey,
        error: Option<AmqpError>,
        out: &mut Output<'_>,
    ) {
        let Some(link) = self.links.get_mut(key) else {
            return;
        };
        let attach = Attach {
            name: link.name.clone(),
            handle: Handle(key.slot),
            role: link.role(),
            snd_settle_mode: link.snd_settle_mode,
            rcv_settle_mode: link.rcv_settle_mode,
            source: None,
            target: None,
            unsettled: None,
            incomplete_unsettled: false,
            initial_delivery_count: Some(SequenceNo(link.delivery_count())),
            max_message_size: None,
            offered_capabilities: None,
            desired_capabilities: None,
            properties: None,
        };
        link.state = LinkState::DetachSent;
        self.send_control(Performative::Attach(attach), out);
        self.send_control(
            Performative::Detach(Detach {
                handle: Handle(key.slot),
                closed: true,
                error,
            }),
            out,
        );
    }

    pub(crate) fn refuse_attach(
        &mut self,
        key: SlotKey,
        error: AmqpError,
        out: &mut Output<'_>,
    ) -> Result<(), EngineError> {
        let link = self.links.get(key).ok_or(EngineError::UnknownLink)?;
        if link.state != LinkState::AttachReceived {
            return Err(EngineError::InvalidState("the attach was already answered"));
        }
        self.send_refusal(key, Some(error), out);
        Ok(())
    }

    pub(crate) fn send_transfer(
        &mut self,
        key: SlotKey,
        delivery: OutgoingDelivery,
        config: &ConnectionConfig,
        out: &mut Output<'_>,
    ) -> Result<DeliveryId, EngineError> {
        if delivery.tag.len() > MAX_DELIVERY_TAG {
            return Err(EngineError::InvalidState(
                "delivery-tag longer than 32 bytes",
            ));
        }
        let room = out.outgoing_room.saturating_sub(self.queued_bytes);
        let queue_full = self.queue_is_full();
        let link = self.links.get_mut(key).ok_or(EngineError::UnknownLink)?;
        if link.state != LinkState::Attached {
            return Err(EngineError::InvalidState("the link is not attached"));
        }
        let LinkFlow::Sender(flow) = &mut link.flow else {
            return Err(EngineError::WrongRole("send_transfer"));
        };
        let len = delivery.message.len() + delivery.tail.len();
        let size = u64::try_from(len).unwrap_or(u64::MAX);
        if config.honour_peer_max_message_size
            && link.peer_max_message_size != 0
            && size > link.peer_max_message_size
        {
            return Err(EngineError::MessageTooLarge {
                size,
                max: link.peer_max_message_size,
            });
        }
        // Only what the peer's window holds back is bounded; checked before anything changes.
        // (A queue the outbox paces drains as the socket takes it: see `OUTBOX_PACE`.)
        let held_back = self.windows.remote_incoming_window == 0;
        if held_back && (len > room || queue_full) {
            return Err(EngineError::Backpressure);
        }
        if !flow.consume() {
            return Err(EngineError::NoCredit);
        }
        let delivery_id = self.next_delivery_id;
        self.next_delivery_id = delivery_id.wrapping_add(1);
        if !delivery.settled {
            self.outgoing_unsettled.insert(delivery_id, key);
        }
        let mut head = Transfer::new(Handle(key.slot));
        head.delivery_id = Some(DeliveryNumber(delivery_id));
        head.delivery_tag = Some(delivery.tag);
        head.message_format = Some(delivery.message_format);
        head.settled = Some(delivery.settled);
        self.queued_bytes = self.queued_bytes.saturating_add(len);
        self.queue.push_back(Queued::Transfer(QueuedTransfer {
            head,
            started: false,
            rest: delivery.message,
            tail: delivery.tail,
        }));
        self.pump(out);
        Ok(DeliveryId(delivery_id))
    }

    pub(crate) fn send_disposition(
        &mut self,
        key: SlotKey,
        first: DeliveryId,
        last: DeliveryId,
        settled: bool,
        state: Option<DeliveryState>,
        out: &mut Output<'_>,
    ) -> Result<(), EngineError> {
        let role = self.links.get(key).ok_or(EngineError::UnknownLink)?.role();
        if settled {
            let map = match role {
                Role::Receiver => &mut self.incoming_unsettled,
                Role::Sender => &mut self.outgoing_unsettled,
            };
            for (id, _) in super::session::ids_in_range(map, first.0, last.0) {
                map.remove(&id);
            }
        }
        let disposition = Disposition {
            role,
            first: DeliveryNumber(first.0),
            last: (last != first).then_some(DeliveryNumber(last.0)),
            settled,
            state,
            batchable: false,
        };
        self.send_control(Performative::Disposition(disposition), out);
        Ok(())
    }

    pub(crate) fn set_credit(
        &mut self,
        key: SlotKey,
        credit: u32,
        out: &mut Output<'_>,
    ) -> Result<(), EngineError> {
        let link = self.links.get_mut(key).ok_or(EngineError::UnknownLink)?;
        if link.state != LinkState::Attached {
            return Err(EngineError::InvalidState("the link is not attached"));
        }
        let LinkFlow::Receiver(flow) = &mut link.flow else {
            return Err(EngineError::WrongRole("set_credit"));
        };
        flow.set_credit(credit);
        self.send_flow(Some(key), out);
        Ok(())
    }

    pub(crate) fn finish_drain(
        &mut self,
        key: SlotKey,
        out: &mut Output<'_>,
    ) -> Result<(), EngineError> {
        let link = self.links.get_mut(key).ok_or(EngineError::UnknownLink)?;
        let LinkFlow::Sender(flow) = &mut link.flow else {
            return Err(EngineError::WrongRole("finish_drain"));
        };
        if !flow.drain {
            return Ok(());
        }
        flow.finish_drain();
        // The reply carries drain=true; after it the drain is over.
        self.send_flow(Some(key), out);
        if let Some(LinkFlow::Sender(flow)) = self.links.get_mut(key).map(|link| &mut link.flow) {
            flow.drain = false;
        }
        Ok(())
    }

    pub(crate) fn detach(
        &mut self,
        key: SlotKey,
        error: Option<AmqpError>,
        out: &mut Output<'_>,
    ) -> Result<(), EngineError> {
        let link = self.links.get(key).ok_or(EngineError::UnknownLink)?;
        match link.state {
            LinkState::AttachReceived => self.send_refusal(key, error, out),
            LinkState::Attached => self.detach_link(key, error, out),
            LinkState::DetachSent => return Err(EngineError::InvalidState("already detached")),
        }
        Ok(())
    }
}
