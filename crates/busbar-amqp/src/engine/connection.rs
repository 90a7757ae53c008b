//! The server-side connection engine: protocol headers, SASL, open/close, idle and handshake
//! time-outs, and the dispatch of frames to sessions. Pure: bytes and time in; bytes, events and
//! a deadline out.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::BytesMut;

use super::config::ConnectionConfig;
use super::error::Fault;
use super::event::{Event, SessionId};
use super::session::{Output, Session, SessionState};
use super::slab::{Slab, SlotKey};
use super::time::Millis;
use crate::condition;
use crate::frame::{
    AmqpFrame, Frame, FrameDecoder, MIN_MAX_FRAME_SIZE, encode_amqp_frame, encode_empty_frame,
};
use crate::performatives::{AmqpError, Close, End, Performative, SaslFrame};

/// How many recently ended peer channels are remembered, so that frames the peer sent after its
/// `end` (Python's detach-after-end) are dropped rather than treated as errors.
const ENDED_CHANNEL_MEMORY: usize = 16;

/// Shortest interval between our heartbeats, whatever the peer's idle time-out: a peer asking
/// for a few milliseconds must not make us spin.
const MIN_HEARTBEAT_INTERVAL: Duration = Duration::from_millis(100);

/// We send an empty frame after half the peer's idle time-out without output (§2.4.5).
fn heartbeat_interval(peer_idle_time_out: Duration) -> Duration {
    (peer_idle_time_out / 2).max(MIN_HEARTBEAT_INTERVAL)
}

/// Connection endpoint states (AMQP 1.0 §2.4.6), as a server passes through them, with the SASL
/// layer (§5.3.2) in front. The server answers each header and `open` at once, so the pipe
/// states (`HDR-RCVD`, `OPEN-RCVD` …) never outlive one input step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionState {
    /// `START`: waiting for the client's protocol header.
    Start,
    /// SASL header exchanged and mechanisms sent; waiting for `sasl-init`.
    SaslMechanismsSent,
    /// `sasl-init` received; waiting for the application's verdict.
    SaslInitReceived,
    /// `sasl-outcome(ok)` sent; waiting for the AMQP protocol header.
    SaslDone,
    /// `HDR-EXCH`: AMQP headers exchanged; waiting for `open`.
    HeaderExchanged,
    /// `OPENED`: both `open`s exchanged.
    Opened,
    /// `CLOSE-SENT`: we sent `close` and wait for the peer's.
    CloseSent,
    /// `END`: nothing more is read; the socket closes once our bytes are written.
    End,
}

/// A server-side AMQP 1.0 connection as a pure state machine (see the module docs of
/// [`engine`](super)).
#[derive(Debug)]
pub struct Connection {
    pub(crate) config: ConnectionConfig,
    pub(crate) state: ConnectionState,
    pub(crate) decoder: FrameDecoder,
    pub(crate) sasl_used: bool,
    pub(crate) peer_max_frame_size: u32,
    pub(crate) peer_channel_max: u16,
    pub(crate) peer_idle_time_out: Option<Duration>,
    pub(crate) sessions: Slab<Session>,
    /// Peer channel → session.
    channels: HashMap<u16, SlotKey>,
    ended_channels: VecDeque<u16>,
    pub(crate) events: VecDeque<Event>,
    pub(crate) outbox: BytesMut,
    pub(crate) now: Millis,
    pub(crate) last_received: Millis,
    last_sent: Millis,
    close_deadline: Option<Millis>,
    /// When the handshake must be complete; `None` once the peer's `open` is in.
    pub(crate) handshake_deadline: Option<Millis>,
    /// Which paced session [`Self::poll_transmit`] serves first, in turn.
    pump_turn: usize,
}

impl Connection {
    /// A connection waiting for the client's protocol header.
    pub fn new(config: ConnectionConfig, now: Millis) -> Self {
        let handshake_deadline = Some(now.after(config.handshake_timeout));
        Self {
            decoder: FrameDecoder::new(config.max_frame_size.max(MIN_MAX_FRAME_SIZE)),
            config,
            state: ConnectionState::Start,
            sasl_used: false,
            peer_max_frame_size: u32::MAX,
            peer_channel_max: u16::MAX,
            peer_idle_time_out: None,
            sessions: Slab::default(),
            channels: HashMap::new(),
            ended_channels: VecDeque::new(),
            events: VecDeque::new(),
            outbox: BytesMut::new(),
            pump_turn: 0,
            now,
            last_received: now,
            last_sent: now,
            close_deadline: None,
            handshake_deadline,
        }
    }

    /// The connection's state.
    pub fn state(&self) -> ConnectionState {
        self.state
    }

    /// The most bytes the input buffer needs to hold: one frame of our max-frame-size.
    pub fn input_limit(&self) -> usize {
        usize::try_from(self.decoder.max_frame_size()).unwrap_or(usize::MAX)
    }

    /// Whether the opening handshake is still under way: no `open` received yet and not ended.
    pub fn is_handshaking(&self) -> bool {
        matches!(
            self.state,
            ConnectionState::Start
                | ConnectionState::SaslMechanismsSent
                | ConnectionState::SaslInitReceived
                | ConnectionState::SaslDone
                | ConnectionState::HeaderExchanged
        )
    }

    /// Whether the connection has ended and all its bytes were taken by [`Self::poll_transmit`].
    pub fn is_finished(&self) -> bool {
        self.state == ConnectionState::End && self.outbox.is_empty()
    }

    /// Consumes every complete protocol header and frame at the front of `input`; an incomplete
    /// frame stays there for the next call.
    pub fn handle_input(&mut self, input: &mut BytesMut, now: Millis) {
        self.now = now;
        loop {
            match self.state {
                ConnectionState::End => {
                    input.clear();
                    return;
                }
                ConnectionState::SaslInitReceived => return,
                ConnectionState::Start | ConnectionState::SaslDone => {
                    if !self.handle_header(input) {
                        return;
                    }
                }
                _ => match self.decoder.decode(input) {
                    Ok(None) => return,
                    Ok(Some(frame)) => {
                        self.last_received = now;
                        self.handle_frame(frame);
                    }
                    Err(error) => {
                        self.fail(AmqpError::new(error.condition(), error.to_string()));
                        return;
                    }
                },
            }
        }
    }

    /// Appends everything the engine has to send to `out`.
    pub fn poll_transmit(&mut self, out: &mut BytesMut) {
        let low: Vec<SlotKey> = self
            .sessions
            .iter()
            .filter(|(_, session)| session.replenish_pending)
            .map(|(key, _)| key)
            .collect();
        for key in low {
            self.with_output(key, |session, _, out| session.replenish(out));
        }
        self.pump_paced();
        if self.outbox.is_empty() {
            return;
        }
        self.last_sent = self.now;
        if out.is_empty() {
            std::mem::swap(out, &mut self.outbox);
        } else {
            out.extend_from_slice(&self.outbox);
            self.outbox.clear();
        }
    }

    /// Whether transfers wait only for the outbox to empty: call [`Self::poll_transmit`]
    /// again once its bytes are written, without waiting for input.
    pub fn wants_transmit(&self) -> bool {
        self.sessions.iter().any(|(_, session)| session.can_pump())
    }

    /// Writes more of the deliveries held back by the outbox's pace, each session first in
    /// turn so that one session's large delivery does not keep the others' waiting.
    fn pump_paced(&mut self) {
        let mut paced: Vec<SlotKey> = self
            .sessions
            .iter()
            .filter(|(_, session)| session.can_pump())
            .map(|(key, _)| key)
            .collect();
        if paced.is_empty() {
            return;
        }
        self.pump_turn = self.pump_turn.wrapping_add(1);
        let turn = self.pump_turn % paced.len();
        paced.rotate_left(turn);
        for key in paced {
            self.with_output(key, |session, _, out| session.pump(out));
        }
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`Self::handle_timeout`] must next be called.
    pub fn poll_timeout(&self) -> Option<Millis> {
        if self.state == ConnectionState::End {
            return None;
        }
        let silence = Some(self.last_received.after(self.config.idle_time_out));
        let heartbeat = match (self.state, self.peer_idle_time_out) {
            (ConnectionState::Opened, Some(peer)) => {
                Some(self.last_sent.after(heartbeat_interval(peer)))
            }
            _ => None,
        };
        [
            silence,
            heartbeat,
            self.close_deadline,
            self.handshake_deadline,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Fires whatever is due at `now`: a heartbeat, an idle or handshake time-out, a close that
    /// was not answered.
    pub fn handle_timeout(&mut self, now: Millis) {
        self.now = now;
        if self.state == ConnectionState::End {
            return;
        }
        if self.close_deadline.is_some_and(|deadline| now >= deadline) {
            self.finish(None);
            return;
        }
        if self
            .handshake_deadline
            .is_some_and(|deadline| now >= deadline)
        {
            self.handshake_expired();
            return;
        }
        if now >= self.last_received.after(self.config.idle_time_out) {
            self.fail(AmqpError::new(
                condition::RESOURCE_LIMIT_EXCEEDED,
                "idle time-out expired: nothing received",
            ));
            return;
        }
        if let (ConnectionState::Opened, Some(peer)) = (self.state, self.peer_idle_time_out)
            && now >= self.last_sent.after(heartbeat_interval(peer))
            && self.outbox.is_empty()
        {
            encode_empty_frame(&mut self.outbox);
        }
    }

    /// The peer closed its end of the socket.
    pub fn handle_eof(&mut self, now: Millis) {
        self.now = now;
        if self.state != ConnectionState::End {
            self.finish(None);
        }
    }

    /// Closes the connection: sends `close` (with `error`, if any) and waits a bounded time for
    /// the peer's. Before the handshake is complete the connection just ends.
    pub fn close(&mut self, error: Option<AmqpError>) {
        match self.state {
            ConnectionState::HeaderExchanged => {
                // A close must follow an open (§2.4.1).
                self.send_open();
                self.send_close_and_wait(error);
            }
            ConnectionState::Opened => self.send_close_and_wait(error),
            ConnectionState::CloseSent | ConnectionState::End => {}
            _ => self.finish(error),
        }
    }

    fn send_close_and_wait(&mut self, error: Option<AmqpError>) {
        encode_amqp_frame(
            0,
            &Performative::Close(Close { error }),
            &[],
            &mut self.outbox,
        );
        self.state = ConnectionState::CloseSent;
        self.close_deadline = Some(self.now.after(self.config.close_timeout));
    }

    fn handle_frame(&mut self, frame: Frame) {
        match (self.state, frame) {
            (ConnectionState::SaslMechanismsSent, Frame::Sasl(SaslFrame::SaslInit(init))) => {
                self.on_sasl_init(init);
            }
            (ConnectionState::SaslMechanismsSent, _) => {
                self.finish(Some(AmqpError::new(
                    condition::NOT_ALLOWED,
                    "expected sasl-init",
                )));
            }
            (_, Frame::Empty { .. }) => {}
            (_, Frame::Sasl(_)) => self.fail(AmqpError::new(
                condition::NOT_ALLOWED,
                "SASL frame after the SASL layer",
            )),
            (
                ConnectionState::HeaderExchanged,
                Frame::Amqp(AmqpFrame {
                    performative: Performative::Open(open),
                    ..
                }),
            ) => {
                self.on_open(open);
            }
            (ConnectionState::HeaderExchanged, Frame::Amqp(_)) => {
                self.fail(AmqpError::new(condition::NOT_ALLOWED, "expected open"));
            }
            (
                ConnectionState::CloseSent,
                Frame::Amqp(AmqpFrame {
                    performative: Performative::Close(close),
                    ..
                }),
            ) => {
                self.finish(close.error);
            }
            (ConnectionState::CloseSent, Frame::Amqp(_)) => {}
            (_, Frame::Amqp(frame)) => self.on_amqp_frame(frame),
        }
    }

    fn on_amqp_frame(&mut self, frame: AmqpFrame) {
        let AmqpFrame {
            channel,
            performative,
            payload,
        } = frame;
        match performative {
            Performative::Open(_) => {
                self.fail(AmqpError::new(condition::NOT_ALLOWED, "second open"))
            }
            Performative::Close(close) => {
                encode_amqp_frame(
                    0,
                    &Performative::Close(Close { error: None }),
                    &[],
                    &mut self.outbox,
                );
                self.finish(close.error);
            }
            Performative::Begin(begin) => {
                if let Err(fault) = super::connection_sessions::begin(self, channel, begin) {
                    self.apply_fault(None, fault);
                }
            }
            Performative::End(end) => self.on_end(channel, end),
            other => {
                let Some(&key) = self.channels.get(&channel) else {
                    if !self.ended_channels.contains(&channel) {
                        self.fail(AmqpError::new(
                            condition::NOT_ALLOWED,
                            format!("no session on channel {channel}"),
                        ));
                    }
                    return;
                };
                let result = self.with_output(key, |session, config, out| {
                    if session.state != SessionState::Mapped {
                        return Ok(());
                    }
                    match other {
                        Performative::Attach(attach) => session.on_attach(attach, config, out),
                        Performative::Flow(flow) => session.on_flow(flow, out),
                        Performative::Transfer(transfer) => {
                            session.on_transfer(transfer, payload, config, out)
                        }
                        Performative::Disposition(disposition) => {
                            session.on_disposition(disposition, out);
                            Ok(())
                        }
                        Performative::Detach(detach) => session.on_detach(detach, out),
                        _ => Ok(()),
                    }
                });
                if let Some(Err(fault)) = result {
                    self.apply_fault(Some(key), fault);
                }
            }
        }
    }

    fn on_end(&mut self, channel: u16, end: End) {
        let Some(key) = self.channels.remove(&channel) else {
            if !self.ended_channels.contains(&channel) {
                self.fail(AmqpError::new(
                    condition::NOT_ALLOWED,
                    format!("end on channel {channel} without a session"),
                ));
            }
            return;
        };
        let Some(mut session) = self.sessions.remove(key) else {
            return;
        };
        let local_channel = session.channel();
        let error = match session.state {
            SessionState::Mapped => {
                encode_amqp_frame(
                    local_channel,
                    &Performative::End(End { error: None }),
                    &[],
                    &mut self.outbox,
                );
                session.drop_all_links(&mut self.events);
                end.error
            }
            // We ended it first and already told the application.
            SessionState::EndSent | SessionState::Discarding => {
                self.remember_ended(channel);
                return;
            }
        };
        self.remember_ended(channel);
        self.events.push_back(Event::SessionEnded {
            session: session.id,
            error,
        });
    }

    fn remember_ended(&mut self, channel: u16) {
        if self.ended_channels.len() == ENDED_CHANNEL_MEMORY {
            self.ended_channels.pop_front();
        }
        self.ended_channels.push_back(channel);
    }

    /// Runs `f` on a session with the connection's output; `None` if the session is gone.
    pub(crate) fn with_output<R>(
        &mut self,
        key: SlotKey,
        f: impl FnOnce(&mut Session, &ConnectionConfig, &mut Output<'_>) -> R,
    ) -> Option<R> {
        // The byte budgets are connection-wide: what the other sessions hold is summed on
        // demand (sessions are few, and bounded by channel-max), so no total can drift.
        let (others_incoming, others_outgoing) = self
            .sessions
            .iter()
            .filter(|(other, _)| *other != key)
            .fold((0usize, 0usize), |(incoming, outgoing), (_, session)| {
                (
                    incoming.saturating_add(session.held_incoming),
                    outgoing.saturating_add(session.queued_bytes),
                )
            });
        let session = self.sessions.get_mut(key)?;
        let mut out = Output {
            buf: &mut self.outbox,
            events: &mut self.events,
            max_frame_size: self.peer_max_frame_size,
            incoming_elsewhere: others_incoming,
            outgoing_room: self
                .config
                .max_buffered_outgoing
                .saturating_sub(others_outgoing),
        };
        Some(f(session, &self.config, &mut out))
    }

    pub(crate) fn register_channel(&mut self, channel: u16, key: SlotKey) {
        self.ended_channels.retain(|ended| *ended != channel);
        self.channels.insert(channel, key);
    }

    /// Whether a session is mapped to the peer's `channel`.
    pub(crate) fn with_channel(&self, channel: u16) -> bool {
        self.channels.contains_key(&channel)
    }

    pub(crate) fn peer_channel_max(&self) -> u16 {
        self.peer_channel_max
    }

    /// Ends the scope a fault belongs to.
    fn apply_fault(&mut self, session: Option<SlotKey>, fault: Fault) {
        match (fault, session) {
            (Fault::Session(error), Some(key)) => self.end_session_with(key, Some(error), true),
            (Fault::Session(error) | Fault::Connection(error), _) => self.fail(error),
        }
    }

    /// Sends `end` for a session; with `discard`, its frames are dropped until the peer's `end`.
    pub(crate) fn end_session_with(
        &mut self,
        key: SlotKey,
        error: Option<AmqpError>,
        discard: bool,
    ) {
        let Some(session) = self.sessions.get_mut(key) else {
            return;
        };
        if session.state != SessionState::Mapped {
            return;
        }
        session.state = if discard {
            SessionState::Discarding
        } else {
            SessionState::EndSent
        };
        session.queue.clear();
        session.queued_bytes = 0;
        let id = session.id;
        encode_amqp_frame(
            id.channel(),
            &Performative::End(End {
                error: error.clone(),
            }),
            &[],
            &mut self.outbox,
        );
        session.drop_all_links(&mut self.events);
        self.events
            .push_back(Event::SessionEnded { session: id, error });
    }

    /// Closes the connection for a protocol error: `close(error)` is written and the socket is
    /// closed once it is sent, without waiting for the peer.
    pub(crate) fn fail(&mut self, error: AmqpError) {
        if matches!(self.state, ConnectionState::HeaderExchanged) {
            self.send_open();
        }
        if matches!(
            self.state,
            ConnectionState::HeaderExchanged | ConnectionState::Opened
        ) {
            encode_amqp_frame(
                0,
                &Performative::Close(Close {
                    error: Some(error.clone()),
                }),
                &[],
                &mut self.outbox,
            );
        }
        self.finish(Some(error));
    }

    /// Ends the connection: every session and link is reported gone, then the connection.
    pub(crate) fn finish(&mut self, error: Option<AmqpError>) {
        let keys: Vec<SlotKey> = self.sessions.iter().map(|(key, _)| key).collect();
        for key in keys {
            if let Some(mut session) = self.sessions.remove(key)
                && session.state == SessionState::Mapped
            {
                session.drop_all_links(&mut self.events);
                self.events.push_back(Event::SessionEnded {
                    session: session.id,
                    error: None,
                });
            }
        }
        self.channels.clear();
        self.state = ConnectionState::End;
        self.close_deadline = None;
        self.events.push_back(Event::ConnectionClosed { error });
    }

    /// The session for an id, if it is still current.
    pub(crate) fn session_key(&self, id: SessionId) -> Option<SlotKey> {
        self.sessions.get(id.key).map(|_| id.key)
    }
}
