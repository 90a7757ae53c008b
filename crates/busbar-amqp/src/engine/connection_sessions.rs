//! Sessions on a connection: answering the peer's `begin`, and the application calls that act on
//! sessions and links (attach answers, transfers, dispositions, credit, detach, end).

use super::connection::{Connection, ConnectionState};
use super::error::{EngineError, Fault};
use super::event::{DeliveryId, Event, LinkId, SessionId};
use super::flow::SessionWindows;
use super::session::{Output, Session};
use super::session_control::{AttachReply, OutgoingDelivery};
use crate::condition;
use crate::frame::encode_amqp_frame;
use crate::performatives::{AmqpError, Begin, DeliveryState, Handle, Performative, TransferNumber};

/// The outgoing-window we advertise: we do not limit ourselves below the peer's incoming window.
const OUTGOING_WINDOW: u32 = i32::MAX.unsigned_abs();

/// Answers the peer's `begin` on `channel` with ours.
pub(crate) fn begin(connection: &mut Connection, channel: u16, begin: Begin) -> Result<(), Fault> {
    if channel > connection.config.channel_max {
        // §2.7.1: a channel outside the advertised range is a framing error.
        return Err(Fault::connection(
            condition::FRAMING_ERROR,
            format!(
                "channel {channel} exceeds channel-max {}",
                connection.config.channel_max
            ),
        ));
    }
    if begin.remote_channel.is_some() {
        return Err(Fault::connection(
            condition::NOT_ALLOWED,
            "begin answers a session the server never began",
        ));
    }
    if connection.with_channel(channel) {
        return Err(Fault::connection(
            condition::NOT_ALLOWED,
            format!("channel {channel} already has a session"),
        ));
    }
    let capacity = usize::from(
        connection
            .config
            .channel_max
            .min(connection.peer_channel_max()),
    ) + 1;
    let windows = SessionWindows::new(
        begin.next_outgoing_id.0,
        begin.incoming_window,
        connection.config.incoming_window,
    );
    // The session needs its own key inside it; insert a placeholder id and fix it after.
    let placeholder = SessionId {
        key: super::slab::SlotKey {
            slot: 0,
            generation: 0,
        },
    };
    let session = Session::new(
        placeholder,
        windows,
        connection.config.handle_max,
        begin.handle_max.0,
    );
    let Ok(key) = connection.sessions.insert(session, capacity) else {
        return Err(Fault::connection(
            condition::RESOURCE_LIMIT_EXCEEDED,
            "too many sessions on this connection",
        ));
    };
    let id = SessionId { key };
    if let Some(session) = connection.sessions.get_mut(key) {
        session.id = id;
    }
    connection.register_channel(channel, key);
    let reply = Begin {
        remote_channel: Some(channel),
        next_outgoing_id: TransferNumber(0),
        incoming_window: connection.config.incoming_window,
        outgoing_window: OUTGOING_WINDOW,
        handle_max: Handle(connection.config.handle_max),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    encode_amqp_frame(
        id.channel(),
        &Performative::Begin(reply),
        &[],
        &mut connection.outbox,
    );
    connection
        .events
        .push_back(Event::SessionBegun { session: id });
    Ok(())
}

impl Connection {
    /// Runs `f` on the link's session, when the connection is open and the ids are current.
    fn on_link<R>(
        &mut self,
        link: LinkId,
        f: impl FnOnce(
            &mut Session,
            &super::config::ConnectionConfig,
            &mut Output<'_>,
        ) -> Result<R, EngineError>,
    ) -> Result<R, EngineError> {
        if self.state != ConnectionState::Opened {
            return Err(EngineError::ConnectionClosed);
        }
        let key = self
            .session_key(link.session)
            .ok_or(EngineError::UnknownSession)?;
        self.with_output(key, |session, config, out| {
            if session.links.get(link.key).is_none() {
                return Err(EngineError::UnknownLink);
            }
            f(session, config, out)
        })
        .unwrap_or(Err(EngineError::UnknownSession))
    }

    /// Accepts the peer's attach (after [`Event::AttachRequested`]) with our termini and limits.
    pub fn accept_attach(&mut self, link: LinkId, reply: AttachReply) -> Result<(), EngineError> {
        self.on_link(link, |session, config, out| {
            session.accept_attach(link.key, reply, config, out)
        })
    }

    /// Refuses the peer's attach: an attach with null termini then `detach(closed, error)`.
    pub fn refuse_attach(&mut self, link: LinkId, error: AmqpError) -> Result<(), EngineError> {
        self.on_link(link, |session, _, out| {
            session.refuse_attach(link.key, error, out)
        })
    }

    /// Sends a delivery on a link where we are the sender; uses one credit. Frames are split to
    /// the peer's max-frame-size and held back (bounded) while the session window is closed.
    pub fn send_transfer(
        &mut self,
        link: LinkId,
        delivery: OutgoingDelivery,
    ) -> Result<DeliveryId, EngineError> {
        self.on_link(link, |session, config, out| {
            session.send_transfer(link.key, delivery, config, out)
        })
    }

    /// Sends a disposition for deliveries `first..=last` of a link.
    pub fn send_disposition(
        &mut self,
        link: LinkId,
        first: DeliveryId,
        last: DeliveryId,
        settled: bool,
        state: Option<DeliveryState>,
    ) -> Result<(), EngineError> {
        self.on_link(link, |session, _, out| {
            session.send_disposition(link.key, first, last, settled, state, out)
        })
    }

    /// Sets the credit of a link where we receive (absolute) and sends our flow.
    pub fn set_credit(&mut self, link: LinkId, credit: u32) -> Result<(), EngineError> {
        self.on_link(link, |session, _, out| {
            session.set_credit(link.key, credit, out)
        })
    }

    /// Adds to the credit of a link where we receive and sends our flow.
    pub fn add_credit(&mut self, link: LinkId, credit: u32) -> Result<(), EngineError> {
        let current = self.link_credit(link)?;
        self.set_credit(link, current.saturating_add(credit))
    }

    /// Ends a drain the peer asked for on a link where we send: the unused credit is consumed
    /// and `flow(delivery-count, link-credit = 0, drain = true)` is sent. Call it after sending
    /// whatever was available; does nothing when no drain is pending.
    pub fn finish_drain(&mut self, link: LinkId) -> Result<(), EngineError> {
        self.on_link(link, |session, _, out| session.finish_drain(link.key, out))
    }

    /// Detaches (closes) a link, with an error if given; the peer's detach completes it.
    pub fn detach(&mut self, link: LinkId, error: Option<AmqpError>) -> Result<(), EngineError> {
        self.on_link(link, |session, _, out| session.detach(link.key, error, out))
    }

    /// Ends a session, with an error if given. Its links are reported detached at once.
    pub fn end_session(
        &mut self,
        session: SessionId,
        error: Option<AmqpError>,
    ) -> Result<(), EngineError> {
        if self.state != ConnectionState::Opened {
            return Err(EngineError::ConnectionClosed);
        }
        let key = self
            .session_key(session)
            .ok_or(EngineError::UnknownSession)?;
        self.end_session_with(key, error, false);
        Ok(())
    }

    /// Credit on a link: what we may still send, or what the peer may still send us.
    pub fn link_credit(&self, link: LinkId) -> Result<u32, EngineError> {
        let session = self
            .sessions
            .get(link.session.key)
            .ok_or(EngineError::UnknownSession)?;
        Ok(session
            .links
            .get(link.key)
            .ok_or(EngineError::UnknownLink)?
            .credit())
    }

    /// The name the link was attached with.
    pub fn link_name(&self, link: LinkId) -> Result<&str, EngineError> {
        let session = self
            .sessions
            .get(link.session.key)
            .ok_or(EngineError::UnknownSession)?;
        let link = session
            .links
            .get(link.key)
            .ok_or(EngineError::UnknownLink)?;
        Ok(&link.name)
    }

    /// Bytes of outgoing transfers a session holds back for the peer's window.
    pub fn queued_bytes(&self, session: SessionId) -> Result<usize, EngineError> {
        Ok(self
            .sessions
            .get(session.key)
            .ok_or(EngineError::UnknownSession)?
            .queued_bytes)
    }

    /// Number of sessions currently begun.
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Number of links on a session (attached or being attached or detached).
    pub fn link_count(&self, session: SessionId) -> Result<usize, EngineError> {
        Ok(self
            .sessions
            .get(session.key)
            .ok_or(EngineError::UnknownSession)?
            .links
            .len())
    }
}
