//! One session endpoint (§2.5): its windows, its links by handle, delivery-id bookkeeping and
//! the queue of outgoing frames held back by the peer's incoming window.

use std::collections::{BTreeMap, HashMap, VecDeque};

use bytes::{Bytes, BytesMut};

use super::event::{Event, LinkId, SessionId};
use super::flow::SessionWindows;
use super::link::Link;
use super::slab::{Slab, SlotKey};
use crate::frame::{FRAME_HEADER_SIZE, encode_amqp_frame, encode_amqp_frame_parts};
use crate::performatives::{Flow, Handle, Performative, SequenceNo, Transfer, TransferNumber};
use crate::types::Composite;

/// Most entries (held-back deliveries and frames ordered behind them) a session queues while
/// the peer keeps its window shut.
const MAX_QUEUED_FRAMES: usize = 4096;
/// Transfer frames are written only while the connection's outbox holds less than this: a
/// large delivery goes out a slice at a time as the socket takes it, instead of being copied
/// whole into the outbox ([`Connection::poll_transmit`](super::Connection::poll_transmit)
/// writes the rest as the outbox empties).
pub(crate) const OUTBOX_PACE: usize = 1 << 20;

/// Session endpoint states (AMQP 1.0 §2.5.5). A server answers `begin` at once, so a session
/// it knows is already `Mapped`; `BEGIN-SENT`/`BEGIN-RCVD` never last beyond one frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SessionState {
    /// Both begins exchanged.
    Mapped,
    /// We sent `end` (application request) and wait for the peer's.
    EndSent,
    /// We sent `end` with an error and ignore everything but the peer's `end` (§2.5.5 DISCARDING).
    Discarding,
}

/// Where outgoing frames go, and where events are reported.
pub(crate) struct Output<'a> {
    pub(crate) buf: &'a mut BytesMut,
    pub(crate) events: &'a mut VecDeque<Event>,
    /// The peer's max-frame-size: no frame we write may be larger.
    pub(crate) max_frame_size: u32,
    /// Bytes of incomplete incoming deliveries the other sessions of the connection hold.
    pub(crate) incoming_elsewhere: usize,
    /// Bytes of held-back outgoing transfers this session may hold, likewise.
    pub(crate) outgoing_room: usize,
}

/// A delivery (or what is left of it) waiting for the peer's incoming window.
#[derive(Debug)]
pub(crate) struct QueuedTransfer {
    /// The first frame's performative; continuation frames carry only handle, settled and more.
    pub(crate) head: Transfer,
    pub(crate) started: bool,
    pub(crate) rest: Bytes,
    /// Sent after `rest` (see `OutgoingDelivery::tail`).
    pub(crate) tail: Bytes,
}

impl QueuedTransfer {
    fn len(&self) -> usize {
        self.rest.len() + self.tail.len()
    }
}

/// An outgoing frame held back to keep order behind queued transfers.
#[derive(Debug)]
pub(crate) enum Queued {
    Transfer(QueuedTransfer),
    Control(Performative),
}

/// One session of the connection.
#[derive(Debug)]
pub(crate) struct Session {
    pub(crate) id: SessionId,
    pub(crate) state: SessionState,
    pub(crate) windows: SessionWindows,
    /// The highest handle the peer may use (ours, advertised in begin).
    pub(crate) handle_max: u32,
    /// How many links may exist at once: bounded by our handle-max and the peer's, since our
    /// output handles are slot numbers.
    pub(crate) link_capacity: usize,
    pub(crate) links: Slab<Link>,
    /// The peer's handles to our link slots.
    pub(crate) input_handles: HashMap<u32, SlotKey>,
    pub(crate) next_delivery_id: u32,
    /// Deliveries we sent that are not settled yet, by delivery-id.
    pub(crate) outgoing_unsettled: BTreeMap<u32, SlotKey>,
    /// Deliveries we received that are not settled yet, by delivery-id.
    pub(crate) incoming_unsettled: BTreeMap<u32, SlotKey>,
    pub(crate) queue: VecDeque<Queued>,
    pub(crate) queued_bytes: usize,
    /// Bytes held in incomplete incoming deliveries of this session's links.
    pub(crate) held_incoming: usize,
    /// Our incoming window is low; re-advertise it with the next transmit.
    pub(crate) replenish_pending: bool,
}

impl Session {
    pub(crate) fn new(
        id: SessionId,
        windows: SessionWindows,
        handle_max: u32,
        peer_handle_max: u32,
    ) -> Self {
        let link_capacity = usize::try_from(handle_max.min(peer_handle_max))
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        Self {
            id,
            state: SessionState::Mapped,
            windows,
            handle_max,
            link_capacity,
            links: Slab::default(),
            input_handles: HashMap::new(),
            next_delivery_id: 0,
            outgoing_unsettled: BTreeMap::new(),
            incoming_unsettled: BTreeMap::new(),
            queue: VecDeque::new(),
            queued_bytes: 0,
            held_incoming: 0,
            replenish_pending: false,
        }
    }

    pub(crate) fn channel(&self) -> u16 {
        self.id.channel()
    }

    pub(crate) fn link_id(&self, key: SlotKey) -> LinkId {
        LinkId {
            session: self.id,
            key,
        }
    }

    /// Writes a session or link frame now, or behind the queued transfers when there are some
    /// (a drain reply or detach must not overtake the deliveries it accounts for).
    pub(crate) fn send_control(&mut self, performative: Performative, out: &mut Output<'_>) {
        // A peer that keeps its window shut while asking for echoes must not grow the queue:
        // past the bound, order gives way to memory. (A queue paced by the outbox drains as
        // the socket takes it, so it keeps its order.)
        if self.queue.is_empty()
            || (self.queue.len() >= MAX_QUEUED_FRAMES && self.windows.remote_incoming_window == 0)
        {
            encode_amqp_frame(self.channel(), &performative, &[], out.buf);
        } else {
            self.queue.push_back(Queued::Control(performative));
        }
    }

    /// The session part of a flow (our windows), optionally for one link.
    pub(crate) fn flow_frame(&self, link: Option<&Link>, output_handle: u32) -> Flow {
        Flow {
            next_incoming_id: Some(TransferNumber(self.windows.next_incoming_id)),
            incoming_window: self.windows.incoming_window,
            next_outgoing_id: TransferNumber(self.windows.next_outgoing_id),
            outgoing_window: i32::MAX.unsigned_abs(),
            handle: link.map(|_| Handle(output_handle)),
            delivery_count: link.map(|link| SequenceNo(link.delivery_count())),
            link_credit: link.map(Link::credit),
            available: None,
            drain: link.is_some_and(Link::drain),
            echo: false,
            properties: None,
        }
    }

    /// Sends the flow state of `key` (or of the session alone).
    pub(crate) fn send_flow(&mut self, key: Option<SlotKey>, out: &mut Output<'_>) {
        let flow = match key.and_then(|key| self.links.get(key).map(|link| (key, link))) {
            Some((key, link)) => self.flow_frame(Some(link), key.slot),
            None => self.flow_frame(None, 0),
        };
        self.send_control(Performative::Flow(flow), out);
    }

    /// Whether the queue reached its bound (further deliveries are refused with back-pressure).
    pub(crate) fn queue_is_full(&self) -> bool {
        self.queue.len() >= MAX_QUEUED_FRAMES
    }

    /// Whether the queue's front could be written now: the peer's window is open (what holds
    /// it back is the outbox's pace).
    pub(crate) fn can_pump(&self) -> bool {
        !self.queue.is_empty() && self.windows.remote_incoming_window > 0
    }

    /// Writes queued frames while the peer's incoming window allows transfers and the outbox
    /// holds less than [`OUTBOX_PACE`].
    pub(crate) fn pump(&mut self, out: &mut Output<'_>) {
        let channel = self.channel();
        while let Some(front) = self.queue.front_mut() {
            let queued = match front {
                Queued::Control(performative) => {
                    encode_amqp_frame(channel, performative, &[], out.buf);
                    self.queue.pop_front();
                    continue;
                }
                Queued::Transfer(queued) => queued,
            };
            if out.buf.len() >= OUTBOX_PACE || !self.windows.consume_outgoing() {
                break;
            }
            let mut transfer = if queued.started {
                let mut continuation = Transfer::new(queued.head.handle);
                continuation.settled = queued.head.settled;
                continuation
            } else {
                queued.head.clone()
            };
            transfer.more = true;
            let overhead = FRAME_HEADER_SIZE + transfer.encoded_size();
            let room = usize::try_from(out.max_frame_size)
                .unwrap_or(usize::MAX)
                .saturating_sub(overhead)
                .max(1);
            let first = queued.rest.split_to(room.min(queued.rest.len()));
            let second = queued
                .tail
                .split_to((room - first.len()).min(queued.tail.len()));
            transfer.more = queued.len() > 0;
            let transfer = Performative::Transfer(transfer);
            encode_amqp_frame_parts(channel, &transfer, &[&first, &second], out.buf);
            queued.started = true;
            self.queued_bytes = self.queued_bytes.saturating_sub(first.len() + second.len());
            if queued.len() == 0 {
                self.queue.pop_front();
            }
        }
    }

    /// Re-opens our incoming window and tells the peer, if it ran low.
    pub(crate) fn replenish(&mut self, out: &mut Output<'_>) {
        if self.replenish_pending && self.state == SessionState::Mapped {
            self.replenish_pending = false;
            self.windows.replenish();
            self.send_flow(None, out);
        }
    }

    /// Finds the link for a peer handle.
    pub(crate) fn link_by_input_handle(&self, handle: u32) -> Option<SlotKey> {
        self.input_handles.get(&handle).copied()
    }

    /// Forgets a link and every unsettled delivery it had.
    pub(crate) fn remove_link(&mut self, key: SlotKey) -> Option<Link> {
        self.take_partial(key);
        let link = self.links.remove(key)?;
        if self.input_handles.get(&link.input_handle) == Some(&key) {
            self.input_handles.remove(&link.input_handle);
        }
        self.outgoing_unsettled.retain(|_, owner| *owner != key);
        self.incoming_unsettled.retain(|_, owner| *owner != key);
        let mut released = 0;
        self.queue.retain(|queued| match queued {
            Queued::Transfer(transfer) if transfer.head.handle.0 == key.slot => {
                released += transfer.rest.len();
                false
            }
            _ => true,
        });
        self.queued_bytes = self.queued_bytes.saturating_sub(released);
        Some(link)
    }

    /// Takes a link's incomplete incoming delivery, releasing the bytes it held.
    pub(crate) fn take_partial(&mut self, key: SlotKey) -> Option<super::link::PartialDelivery> {
        let partial = self.links.get_mut(key)?.partial.take()?;
        self.held_incoming = self.held_incoming.saturating_sub(partial.body.len());
        Some(partial)
    }

    /// Ends every link, reporting each one the application still knows as detached.
    pub(crate) fn drop_all_links(&mut self, events: &mut VecDeque<Event>) {
        let keys: Vec<SlotKey> = self.links.iter().map(|(key, _)| key).collect();
        for key in keys {
            if let Some(link) = self.remove_link(key)
                && link.state != super::link::LinkState::DetachSent
            {
                events.push_back(Event::Detached {
                    link: self.link_id(key),
                    closed: false,
                    error: None,
                });
            }
        }
    }
}

/// Delivery-ids in `first..=last` (serial order, so the range may wrap) that are in `map`.
pub(crate) fn ids_in_range(
    map: &BTreeMap<u32, SlotKey>,
    first: u32,
    last: u32,
) -> Vec<(u32, SlotKey)> {
    let pairs = |lo: u32, hi: u32| map.range(lo..=hi).map(|(id, key)| (*id, *key));
    if first <= last {
        pairs(first, last).collect()
    } else {
        pairs(first, u32::MAX).chain(pairs(0, last)).collect()
    }
}
