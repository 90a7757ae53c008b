//! How a session handles the peer's link frames: attach, flow, transfer, disposition, detach.

use bytes::{Bytes, BytesMut};

use super::config::ConnectionConfig;
use super::error::Fault;
use super::event::{AttachRequest, DeliveryId, DispositionUpdate, Event, IncomingTransfer, LinkId};
use super::flow::{ReceiverFlow, SenderFlow};
use super::link::{Link, LinkFlow, LinkState, PartialDelivery};
use super::session::{Output, Session, ids_in_range};
use super::slab::SlotKey;
use crate::condition;
use crate::performatives::{
    AmqpError, Attach, Detach, Disposition, Flow, Handle, LinkTarget, MessageFormat, Performative,
    Role, Transfer,
};

impl Session {
    pub(crate) fn on_attach(
        &mut self,
        attach: Attach,
        config: &ConnectionConfig,
        out: &mut Output<'_>,
    ) -> Result<(), Fault> {
        let handle = attach.handle.0;
        if handle > self.handle_max {
            // §2.7.2: a handle outside the advertised range is a framing error.
            return Err(Fault::connection(
                condition::FRAMING_ERROR,
                format!("handle {handle} exceeds handle-max {}", self.handle_max),
            ));
        }
        if self.input_handles.contains_key(&handle) {
            return Err(Fault::session(
                condition::HANDLE_IN_USE,
                format!("handle {handle} is already attached"),
            ));
        }
        let flow = match attach.role {
            Role::Sender => LinkFlow::Receiver(ReceiverFlow::new(
                attach.initial_delivery_count.map_or(0, |count| count.0),
            )),
            Role::Receiver => LinkFlow::Sender(SenderFlow::new(0)),
        };
        let link = Link {
            name: attach.name.clone(),
            state: LinkState::AttachReceived,
            input_handle: handle,
            flow,
            snd_settle_mode: attach.snd_settle_mode,
            rcv_settle_mode: attach.rcv_settle_mode,
            peer_max_message_size: attach.max_message_size.unwrap_or(0),
            max_message_size: config.max_message_size,
            partial: None,
        };
        let Ok(key) = self.links.insert(link, self.link_capacity) else {
            return Err(Fault::session(
                condition::RESOURCE_LIMIT_EXCEEDED,
                "too many links on this session",
            ));
        };
        self.input_handles.insert(handle, key);
        let (target, coordinator) = match attach.target.map(|target| *target) {
            Some(LinkTarget::Node(target)) => (Some(target), None),
            Some(LinkTarget::Coordinator(coordinator)) => (None, Some(coordinator)),
            None => (None, None),
        };
        out.events
            .push_back(Event::AttachRequested(Box::new(AttachRequest {
                link: self.link_id(key),
                name: attach.name,
                role: attach.role,
                source: attach.source.map(|source| *source),
                target,
                coordinator,
                snd_settle_mode: attach.snd_settle_mode,
                rcv_settle_mode: attach.rcv_settle_mode,
                properties: attach.properties,
                max_message_size: attach.max_message_size,
                initial_delivery_count: attach.initial_delivery_count.map(|count| count.0),
            })));
        Ok(())
    }

    pub(crate) fn on_detach(&mut self, detach: Detach, out: &mut Output<'_>) -> Result<(), Fault> {
        let key = self.known_handle(detach.handle)?;
        let Some(link) = self.links.get(key) else {
            return Ok(());
        };
        match link.state {
            LinkState::DetachSent => {}
            LinkState::AttachReceived => {
                // Never answered: complete the handshake with a null-terminus attach first.
                self.send_refusal(key, None, out);
                self.report_detached(key, detach.closed, detach.error, out);
            }
            LinkState::Attached => {
                self.send_control(
                    Performative::Detach(Detach {
                        handle: Handle(key.slot),
                        closed: detach.closed,
                        error: None,
                    }),
                    out,
                );
                self.report_detached(key, detach.closed, detach.error, out);
            }
        }
        self.remove_link(key);
        Ok(())
    }

    pub(crate) fn on_flow(&mut self, flow: Flow, out: &mut Output<'_>) -> Result<(), Fault> {
        self.windows
            .on_flow(flow.next_incoming_id.map(|id| id.0), flow.incoming_window);
        match flow.handle {
            Some(handle) => {
                let key = self.known_handle(handle)?;
                if let Some(link) = self
                    .links
                    .get_mut(key)
                    .filter(|link| link.state != LinkState::DetachSent)
                {
                    match &mut link.flow {
                        LinkFlow::Sender(state) => {
                            if let Some(credit) = flow.link_credit {
                                state.on_flow(
                                    flow.delivery_count.map(|count| count.0),
                                    credit,
                                    flow.drain,
                                );
                            }
                        }
                        LinkFlow::Receiver(state) => {
                            state.on_flow(
                                flow.delivery_count
                                    .map_or(state.delivery_count, |count| count.0),
                            );
                        }
                    }
                    let credit = link.credit();
                    // A drain is answered by `finish_drain` once the application has sent what it has.
                    // Nor is an echo on a link whose attach we have not answered yet.
                    let answer_echo = flow.echo
                        && link.state == LinkState::Attached
                        && !(link.role() == Role::Sender && flow.drain);
                    out.events.push_back(Event::Flow {
                        link: self.link_id(key),
                        credit,
                        drain: flow.drain,
                        echo: flow.echo,
                    });
                    if answer_echo {
                        self.send_flow(Some(key), out);
                    }
                }
            }
            None if flow.echo => self.send_flow(None, out),
            None => {}
        }
        self.pump(out);
        Ok(())
    }

    pub(crate) fn on_transfer(
        &mut self,
        transfer: Transfer,
        payload: Bytes,
        config: &ConnectionConfig,
        out: &mut Output<'_>,
    ) -> Result<(), Fault> {
        if !self.windows.consume_incoming() {
            return Err(Fault::session(
                condition::WINDOW_VIOLATION,
                "transfer beyond the session's incoming window",
            ));
        }
        // The window re-opens when our flow actually leaves (`Connection::poll_transmit`):
        // frames the peer sent in the same burst cannot have seen it.
        self.replenish_pending |= self.windows.needs_replenish();
        let key = self.known_handle(transfer.handle)?;
        let link_id = self.link_id(key);
        let Some(link) = self.links.get_mut(key) else {
            return Ok(());
        };
        match (link.state, &mut link.flow) {
            // Frames in flight when we detached are dropped (§2.6.5).
            (LinkState::DetachSent, _) => return Ok(()),
            (LinkState::AttachReceived, _) => {
                return self.link_fault(
                    key,
                    condition::ILLEGAL_STATE,
                    "transfer before the attach was answered",
                    out,
                );
            }
            (_, LinkFlow::Sender(_)) => {
                return self.link_fault(
                    key,
                    condition::NOT_ALLOWED,
                    "transfer on a link where the server is the sender",
                    out,
                );
            }
            (LinkState::Attached, LinkFlow::Receiver(state)) => {
                if link.partial.is_none() {
                    let (Some(delivery_id), Some(delivery_tag)) =
                        (transfer.delivery_id, transfer.delivery_tag.clone())
                    else {
                        return self.link_fault(
                            key,
                            condition::INVALID_FIELD,
                            "first transfer of a delivery lacks delivery-id or delivery-tag",
                            out,
                        );
                    };
                    let credited = state.on_delivery();
                    if !credited && state.overdraft > config.uncredited_transfer_allowance {
                        return self.link_fault(
                            key,
                            condition::TRANSFER_LIMIT_EXCEEDED,
                            "transfers far beyond the link credit",
                            out,
                        );
                    }
                    link.partial = Some(PartialDelivery {
                        delivery_id: delivery_id.0,
                        delivery_tag,
                        message_format: transfer.message_format.unwrap_or(MessageFormat::AMQP),
                        settled: false,
                        rcv_settle_mode: transfer.rcv_settle_mode,
                        state: None,
                        beyond_credit: !credited,
                        body: BytesMut::new(),
                        size: 0,
                        oversize_reported: false,
                    });
                }
            }
        }
        // Service Bus rejects an oversize message with a `rejected` disposition and keeps the
        // link (servicebus-amqp.md §3.3). Once a delivery passes the link's max-message-size it
        // is reported at once, its bytes dropped, so the application can reject it while the
        // peer still streams it; its later frames are discarded as they arrive.
        let limit = link.max_message_size;
        let Some(partial) = link.partial.as_mut() else {
            return Ok(());
        };
        if partial.oversize_reported {
            if transfer.aborted || !transfer.more {
                self.take_partial(key);
            }
            return Ok(());
        }
        partial.settled |= transfer.settled.unwrap_or(false);
        if transfer.state.is_some() {
            partial.state = transfer.state.clone();
        }
        if transfer.aborted {
            self.take_partial(key);
            return Ok(());
        }
        partial.size = partial
            .size
            .saturating_add(u64::try_from(payload.len()).unwrap_or(u64::MAX));
        if partial.size > limit {
            self.held_incoming = self.held_incoming.saturating_sub(partial.body.len());
            partial.body = BytesMut::new();
            partial.oversize_reported = true;
            if !partial.settled {
                self.incoming_unsettled.insert(partial.delivery_id, key);
            }
            let event = transfer_event(link_id, partial, Bytes::new());
            if !transfer.more {
                self.take_partial(key);
            }
            out.events.push_back(event);
            return Ok(());
        }
        if transfer.more {
            // The connection's reassembly budget, raised to the link's own limit: a link that
            // takes messages larger than the budget can hold one whole.
            let room = config
                .max_reassembly_bytes
                .max(usize::try_from(limit).unwrap_or(usize::MAX))
                .saturating_sub(out.incoming_elsewhere);
            if self.held_incoming.saturating_add(payload.len()) > room {
                return self.link_fault(
                    key,
                    condition::RESOURCE_LIMIT_EXCEEDED,
                    "too many bytes held in incomplete deliveries on this connection",
                    out,
                );
            }
            partial.body.extend_from_slice(&payload);
            self.held_incoming += payload.len();
            return Ok(());
        }
        let Some(mut partial) = self.take_partial(key) else {
            return Ok(());
        };
        let message = if partial.body.is_empty() {
            payload
        } else {
            let mut body = std::mem::take(&mut partial.body);
            body.extend_from_slice(&payload);
            body.freeze()
        };
        if !partial.settled {
            self.incoming_unsettled.insert(partial.delivery_id, key);
        }
        out.events
            .push_back(transfer_event(link_id, &partial, message));
        Ok(())
    }

    pub(crate) fn on_disposition(&mut self, disposition: Disposition, out: &mut Output<'_>) {
        let first = disposition.first.0;
        let last = disposition.last.map_or(first, |last| last.0);
        let map = match disposition.role {
            Role::Receiver => &mut self.outgoing_unsettled,
            Role::Sender => &mut self.incoming_unsettled,
        };
        let matched = ids_in_range(map, first, last);
        if disposition.settled {
            for (id, _) in &matched {
                map.remove(id);
            }
        }
        // One update per run of consecutive ids on the same link.
        let mut runs: Vec<(SlotKey, u32, u32)> = Vec::new();
        for (id, key) in matched {
            match runs.last_mut() {
                Some((run_key, _, run_last))
                    if *run_key == key && run_last.wrapping_add(1) == id =>
                {
                    *run_last = id;
                }
                _ => runs.push((key, id, id)),
            }
        }
        for (key, first, last) in runs {
            out.events.push_back(Event::Disposition(DispositionUpdate {
                link: self.link_id(key),
                role: disposition.role,
                first: DeliveryId(first),
                last: DeliveryId(last),
                settled: disposition.settled,
                state: disposition.state.clone(),
            }));
        }
    }

    /// The link for a peer handle, or the `unattached-handle` session error.
    fn known_handle(&self, handle: Handle) -> Result<SlotKey, Fault> {
        self.link_by_input_handle(handle.0).ok_or_else(|| {
            Fault::session(
                condition::UNATTACHED_HANDLE,
                format!("handle {} is not attached", handle.0),
            )
        })
    }

    /// Ends one link with an error (§2.6.5 errant link): detach(closed, error) now, and the
    /// link's later frames are dropped until the peer's detach arrives.
    pub(crate) fn link_fault(
        &mut self,
        key: SlotKey,
        condition: &str,
        description: impl Into<String>,
        out: &mut Output<'_>,
    ) -> Result<(), Fault> {
        let error = AmqpError::new(condition, description);
        let unanswered = self
            .links
            .get(key)
            .is_some_and(|link| link.state == LinkState::AttachReceived);
        if unanswered {
            // Our detach must follow an attach of ours: the refusal pattern.
            self.send_refusal(key, Some(error.clone()), out);
        } else {
            self.detach_link(key, Some(error.clone()), out);
        }
        self.report_detached(key, true, Some(error), out);
        Ok(())
    }

    /// Sends our detach(closed) for an attached link and waits for the peer's.
    pub(crate) fn detach_link(
        &mut self,
        key: SlotKey,
        error: Option<AmqpError>,
        out: &mut Output<'_>,
    ) {
        self.take_partial(key);
        if let Some(link) = self.links.get_mut(key) {
            link.state = LinkState::DetachSent;
        }
        self.send_control(
            Performative::Detach(Detach {
                handle: Handle(key.slot),
                closed: true,
                error,
            }),
            out,
        );
    }

    fn report_detached(
        &self,
        key: SlotKey,
        closed: bool,
        error: Option<AmqpError>,
        out: &mut Output<'_>,
    ) {
        out.events.push_back(Event::Detached {
            link: self.link_id(key),
            closed,
            error,
        });
    }
}

/// The event reporting `partial` with `message` as its bytes: empty once it passed the link's
/// max-message-size, which `oversize` then says.
fn transfer_event(link: LinkId, partial: &PartialDelivery, message: Bytes) -> Event {
    Event::Transfer(IncomingTransfer {
        link,
        delivery_id: DeliveryId(partial.delivery_id),
        delivery_tag: partial.delivery_tag.clone(),
        message,
        message_format: partial.message_format,
        settled: partial.settled,
        rcv_settle_mode: partial.rcv_settle_mode,
        state: partial.state.clone(),
        beyond_credit: partial.beyond_credit,
        oversize: partial.oversize_reported.then_some(partial.size),
    })
}
