//! What the engine tells the application (`Event`), and the ids it names sessions, links and
//! deliveries by.

use bytes::Bytes;

use super::sasl::SaslCredentials;
use super::slab::SlotKey;
use crate::performatives::{
    AmqpError, Coordinator, DeliveryState, MessageFormat, Open, ReceiverSettleMode, Role,
    SenderSettleMode, Source, Target,
};
use crate::types::Fields;

/// A session of this connection: its local channel plus a generation, so an id kept after the
/// session ended never reaches a later session on the same channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId {
    pub(crate) key: SlotKey,
}

impl SessionId {
    /// The local channel number of the session.
    pub fn channel(self) -> u16 {
        u16::try_from(self.key.slot).unwrap_or(u16::MAX)
    }
}

/// A link: its session, its slot (our output handle) and the slot's generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId {
    /// The session the link belongs to.
    pub session: SessionId,
    pub(crate) key: SlotKey,
}

impl LinkId {
    /// An id no engine hands out (slot and generation `u32::MAX`), for code that keys
    /// receivers by link but also serves receivers that have no connection (the broker's HTTP
    /// receives).
    pub const OUTSIDE_ENGINE: LinkId = LinkId {
        session: SessionId {
            key: SlotKey {
                slot: u32::MAX,
                generation: u32::MAX,
            },
        },
        key: SlotKey {
            slot: u32::MAX,
            generation: u32::MAX,
        },
    };

    /// Our handle for the link (the peer uses its own handle).
    pub fn handle(self) -> u32 {
        self.key.slot
    }
}

/// A delivery-id (§2.8.9) within a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeliveryId(pub u32);

/// The peer's attach, waiting for [`Connection::accept_attach`](super::Connection::accept_attach)
/// or [`Connection::refuse_attach`](super::Connection::refuse_attach).
#[derive(Clone, Debug, PartialEq)]
pub struct AttachRequest {
    /// The new link.
    pub link: LinkId,
    /// The link name.
    pub name: String,
    /// The peer's role: `Sender` means the peer will send us messages.
    pub role: Role,
    /// The peer's source.
    pub source: Option<Source>,
    /// The peer's target, when it names a node.
    pub target: Option<Target>,
    /// The transaction coordinator, when the peer targets it instead of a node.
    pub coordinator: Option<Coordinator>,
    /// The peer's sender settle mode.
    pub snd_settle_mode: SenderSettleMode,
    /// The peer's receiver settle mode.
    pub rcv_settle_mode: ReceiverSettleMode,
    /// Link properties.
    pub properties: Option<Fields>,
    /// The peer's max-message-size (absent or 0: no limit).
    pub max_message_size: Option<u64>,
    /// The peer's initial delivery-count, when it is the sender.
    pub initial_delivery_count: Option<u32>,
}

/// A complete incoming delivery (reassembled when it spanned several transfer frames).
#[derive(Clone, Debug, PartialEq)]
pub struct IncomingTransfer {
    /// The receiving link.
    pub link: LinkId,
    /// The delivery-id, for dispositions.
    pub delivery_id: DeliveryId,
    /// The delivery-tag.
    pub delivery_tag: Bytes,
    /// The encoded message.
    pub message: Bytes,
    /// The message format (0 or the Service Bus batch format).
    pub message_format: MessageFormat,
    /// Whether the sender settled it already.
    pub settled: bool,
    /// The per-delivery receiver settle mode, when the sender set one.
    pub rcv_settle_mode: Option<ReceiverSettleMode>,
    /// The sender's delivery state (`transactional-state` for a send inside a transaction).
    pub state: Option<DeliveryState>,
    /// Whether it arrived without credit (tolerated up to a bound).
    pub beyond_credit: bool,
    /// The bytes received when the delivery passed the link's max-message-size: it is
    /// reported at once, before its last frame (`message` is empty), for the application to
    /// reject it; the rest of its frames are discarded as they arrive.
    pub oversize: Option<u64>,
}

/// An update on deliveries of one link, from the peer's `disposition`.
#[derive(Clone, Debug, PartialEq)]
pub struct DispositionUpdate {
    /// The link the deliveries belong to.
    pub link: LinkId,
    /// The peer's role in the disposition (`Receiver`: about deliveries we sent).
    pub role: Role,
    /// First delivery-id of the range.
    pub first: DeliveryId,
    /// Last delivery-id of the range (inclusive).
    pub last: DeliveryId,
    /// Whether the peer settled them.
    pub settled: bool,
    /// The new state or outcome.
    pub state: Option<DeliveryState>,
}

/// Something the application must know or decide.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The client sent `sasl-init`; answer with
    /// [`Connection::sasl_outcome`](super::Connection::sasl_outcome).
    SaslInit {
        /// The mechanism and credentials.
        credentials: SaslCredentials,
        /// The hostname the client named.
        hostname: Option<String>,
    },
    /// The peer's `open` arrived and ours was sent.
    ConnectionOpened {
        /// The peer's open (container-id, hostname, properties …).
        open: Box<Open>,
        /// Whether the connection came through SASL (false: the client skipped it).
        sasl_used: bool,
    },
    /// A session began (we answered the peer's begin).
    SessionBegun {
        /// The session.
        session: SessionId,
    },
    /// A session ended; its links are gone (each reported with [`Event::Detached`] first).
    SessionEnded {
        /// The session.
        session: SessionId,
        /// The error it ended with, if any (the peer's or ours).
        error: Option<AmqpError>,
    },
    /// The peer asks to attach a link.
    AttachRequested(Box<AttachRequest>),
    /// A complete delivery arrived on a receiving link.
    Transfer(IncomingTransfer),
    /// The peer changed the state of deliveries of a link.
    Disposition(DispositionUpdate),
    /// The peer's link flow arrived.
    Flow {
        /// The link.
        link: LinkId,
        /// Credit now available: on a link where we send, what we may still send; on a link where
        /// we receive, what the peer may still send.
        credit: u32,
        /// On a link where we send, the peer asks us to use up the credit or give it back
        /// ([`Connection::finish_drain`](super::Connection::finish_drain)).
        drain: bool,
        /// The peer asked for our flow state (already answered by the engine).
        echo: bool,
    },
    /// A link ended: the peer detached it, or its session or connection ended.
    Detached {
        /// The link.
        link: LinkId,
        /// Whether it was closed (rather than just detached).
        closed: bool,
        /// The error it ended with, if any.
        error: Option<AmqpError>,
    },
    /// The connection ended; the driver closes the socket once everything is written.
    ConnectionClosed {
        /// The error it ended with (the peer's or ours), if any.
        error: Option<AmqpError>,
    },
}
