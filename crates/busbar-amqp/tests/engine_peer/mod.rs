//! A scripted AMQP client for engine tests: it feeds frames to a server [`Connection`], reads back
//! what the server wrote, and moves a virtual clock.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use std::time::Duration;

use bytes::{Bytes, BytesMut};

use busbar_amqp::engine::{
    AttachReply, Connection, ConnectionConfig, Event, LinkId, Millis, OutgoingDelivery,
    SaslVerdict, SessionId,
};
use busbar_amqp::frame::{
    AmqpFrame, Frame, FrameDecoder, ProtocolHeader, encode_amqp_frame, encode_sasl_frame,
};
use busbar_amqp::performatives::{
    Attach, Begin, DeliveryNumber, End, Flow, Handle, MessageFormat, Open, Performative,
    ReceiverSettleMode, Role, SaslFrame, SenderSettleMode, SequenceNo, Source, Target, Transfer,
    TransferNumber,
};

/// Start of the virtual clock.
pub const T0: Millis = Millis(1_700_000_000_000);

/// A client talking to one server connection.
pub struct Peer {
    pub conn: Connection,
    pub now: Millis,
    received: BytesMut,
    decoder: FrameDecoder,
}

impl Peer {
    /// A server connection with `config`, at the start of the virtual clock.
    pub fn new(config: ConnectionConfig) -> Self {
        Self {
            conn: Connection::new(config, T0),
            now: T0,
            received: BytesMut::new(),
            decoder: FrameDecoder::new(u32::MAX),
        }
    }

    /// Feeds raw bytes to the server.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let mut input = BytesMut::from(bytes);
        self.conn.handle_input(&mut input, self.now);
        self.pull();
    }

    /// Sends a performative on `channel`.
    pub fn send(&mut self, channel: u16, performative: impl Into<Performative>) {
        let mut buf = BytesMut::new();
        encode_amqp_frame(channel, &performative.into(), &[], &mut buf);
        self.send_bytes(&buf);
    }

    /// Sends a transfer with its payload.
    pub fn send_with_payload(
        &mut self,
        channel: u16,
        performative: impl Into<Performative>,
        payload: &[u8],
    ) {
        let mut buf = BytesMut::new();
        encode_amqp_frame(channel, &performative.into(), payload, &mut buf);
        self.send_bytes(&buf);
    }

    /// Sends a SASL frame.
    pub fn send_sasl(&mut self, frame: impl Into<SaslFrame>) {
        let mut buf = BytesMut::new();
        encode_sasl_frame(&frame.into(), &mut buf);
        self.send_bytes(&buf);
    }

    /// Moves the virtual clock and fires the server's timers.
    pub fn advance(&mut self, by: Duration) {
        self.now = self.now.after(by);
        self.conn.handle_timeout(self.now);
        self.pull();
    }

    /// Takes what the server wrote.
    pub fn pull(&mut self) {
        self.conn.poll_transmit(&mut self.received);
    }

    /// Bytes the server wrote and the peer has not read yet.
    pub fn unread(&self) -> usize {
        self.received.len()
    }

    /// The next protocol header the server wrote.
    pub fn recv_header(&mut self) -> ProtocolHeader {
        self.pull();
        ProtocolHeader::decode(&mut self.received)
            .unwrap()
            .expect("a protocol header")
    }

    /// The next frame the server wrote.
    pub fn recv(&mut self) -> Frame {
        self.pull();
        self.decoder
            .decode(&mut self.received)
            .unwrap()
            .expect("a frame from the server")
    }

    /// The next frame, which must be an AMQP performative.
    pub fn recv_amqp(&mut self) -> (u16, Performative, Bytes) {
        match self.recv() {
            Frame::Amqp(AmqpFrame {
                channel,
                performative,
                payload,
            }) => (channel, performative, payload),
            other => panic!("expected an AMQP frame, got {other:?}"),
        }
    }

    /// The next performative, ignoring its channel and payload.
    pub fn recv_performative(&mut self) -> Performative {
        self.recv_amqp().1
    }

    /// Asserts the server wrote nothing more.
    pub fn expect_silence(&mut self) {
        self.pull();
        assert!(
            self.received.is_empty(),
            "unexpected output: {:?}",
            self.decoder.decode(&mut self.received)
        );
    }

    /// All pending events.
    pub fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.conn.poll_event()).collect()
    }

    /// Runs SASL ANONYMOUS, the AMQP header and open (with `max_frame_size`, `idle`) and reads
    /// the server's replies.
    pub fn open(&mut self, max_frame_size: u32, idle: Option<u32>) {
        self.send_bytes(&ProtocolHeader::Sasl.to_bytes());
        assert_eq!(self.recv_header(), ProtocolHeader::Sasl);
        assert!(matches!(
            self.recv(),
            Frame::Sasl(SaslFrame::SaslMechanisms(_))
        ));
        self.send_sasl(busbar_amqp::performatives::SaslInit {
            mechanism: "ANONYMOUS".into(),
            initial_response: Some(Bytes::new()),
            hostname: Some("localhost".into()),
        });
        assert!(matches!(self.events()[..], [Event::SaslInit { .. }]));
        self.conn.sasl_outcome(SaslVerdict::Ok);
        assert!(matches!(
            self.recv(),
            Frame::Sasl(SaslFrame::SaslOutcome(_))
        ));
        self.send_bytes(&ProtocolHeader::Amqp.to_bytes());
        assert_eq!(self.recv_header(), ProtocolHeader::Amqp);
        self.send(0, open_frame(max_frame_size, idle));
        assert!(matches!(self.recv_performative(), Performative::Open(_)));
        assert!(matches!(
            self.events()[..],
            [Event::ConnectionOpened { .. }]
        ));
    }

    /// Begins a session on `channel` (incoming window `window`) and returns the server's id.
    pub fn begin(&mut self, channel: u16, window: u32) -> SessionId {
        self.send(channel, begin_frame(window));
        match self.recv_amqp() {
            (_, Performative::Begin(begin), _) => assert_eq!(begin.remote_channel, Some(channel)),
            other => panic!("expected begin, got {other:?}"),
        }
        match self.events()[..] {
            [Event::SessionBegun { session }] => session,
            ref other => panic!("expected SessionBegun, got {other:?}"),
        }
    }

    /// Attaches a link with `role` (the client's) on `channel`, accepts it on the server with
    /// echoed termini, reads the server's attach and returns the link id.
    pub fn attach(&mut self, channel: u16, handle: u32, role: Role, address: &str) -> LinkId {
        self.send(channel, attach_frame(handle, role, address));
        let request = match self.events().pop() {
            Some(Event::AttachRequested(request)) => request,
            other => panic!("expected AttachRequested, got {other:?}"),
        };
        self.conn
            .accept_attach(request.link, AttachReply::echo(&request))
            .unwrap();
        assert!(matches!(self.recv_performative(), Performative::Attach(_)));
        request.link
    }

    /// Sends a link flow.
    pub fn flow(
        &mut self,
        channel: u16,
        handle: u32,
        delivery_count: Option<u32>,
        credit: u32,
        drain: bool,
    ) {
        let mut flow = session_flow(0, 100);
        flow.handle = Some(Handle(handle));
        flow.delivery_count = delivery_count.map(SequenceNo);
        flow.link_credit = Some(credit);
        flow.drain = drain;
        self.send(channel, flow);
    }
}

/// A client `open`.
pub fn open_frame(max_frame_size: u32, idle: Option<u32>) -> Open {
    Open {
        container_id: "scripted-peer".into(),
        hostname: Some("localhost".into()),
        max_frame_size,
        channel_max: 65535,
        idle_time_out: idle.map(busbar_amqp::performatives::Milliseconds),
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    }
}

/// A client `begin` with incoming window `window`.
pub fn begin_frame(window: u32) -> Begin {
    Begin {
        remote_channel: None,
        next_outgoing_id: TransferNumber(0),
        incoming_window: window,
        outgoing_window: 65536,
        handle_max: Handle(u32::MAX),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    }
}

/// A client `attach` for `address` (as source for a receiver, target for a sender).
pub fn attach_frame(handle: u32, role: Role, address: &str) -> Attach {
    Attach {
        name: format!("link-{handle}"),
        handle: Handle(handle),
        role,
        snd_settle_mode: SenderSettleMode::Unsettled,
        rcv_settle_mode: ReceiverSettleMode::Second,
        source: Some(Box::new(Source::with_address(address))),
        target: Some(Box::new(Target::with_address(address).into())),
        unsettled: None,
        incomplete_unsettled: false,
        initial_delivery_count: (role == Role::Sender).then_some(SequenceNo(0)),
        max_message_size: Some(0),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    }
}

/// A session-only flow.
pub fn session_flow(next_incoming_id: u32, window: u32) -> Flow {
    Flow {
        next_incoming_id: Some(TransferNumber(next_incoming_id)),
        incoming_window: window,
        next_outgoing_id: TransferNumber(0),
        outgoing_window: 65536,
        handle: None,
        delivery_count: None,
        link_credit: None,
        available: None,
        drain: false,
        echo: false,
        properties: None,
    }
}

/// An unsettled delivery with `tag` and `message`.
pub fn delivery(tag: &[u8], message: Bytes) -> OutgoingDelivery {
    OutgoingDelivery {
        tag: Bytes::copy_from_slice(tag),
        message,
        tail: Bytes::new(),
        message_format: MessageFormat::AMQP,
        settled: false,
    }
}

/// A client transfer frame on `handle`; `delivery_id` also sets a matching tag.
pub fn transfer(handle: u32, delivery_id: Option<u32>, more: bool) -> Transfer {
    let mut transfer = Transfer::new(Handle(handle));
    transfer.delivery_id = delivery_id.map(DeliveryNumber);
    transfer.delivery_tag = delivery_id.map(|id| Bytes::copy_from_slice(&id.to_be_bytes()));
    transfer.more = more;
    transfer
}

/// The next performative, which must be a flow.
pub fn expect_flow(peer: &mut Peer) -> Flow {
    match peer.recv_performative() {
        Performative::Flow(flow) => flow,
        other => panic!("expected flow, got {other:?}"),
    }
}

/// The condition of the next performative, which must be an `end` with an error.
pub fn expect_end_condition(peer: &mut Peer) -> String {
    match peer.recv_performative() {
        Performative::End(End { error: Some(error) }) => error.condition.as_str().to_owned(),
        other => panic!("expected end with error, got {other:?}"),
    }
}

/// An open connection with one session on channel 1 and the client receiving on handle 1.
pub fn receiving_client() -> (Peer, LinkId) {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(1, 65536);
    let link = peer.attach(1, 1, Role::Receiver, "q");
    (peer, link)
}

/// An open connection with one session on channel 1 and the client sending on handle 1.
pub fn sending_client(config: ConnectionConfig) -> (Peer, LinkId) {
    let mut peer = Peer::new(config);
    peer.open(65536, None);
    peer.begin(1, 65536);
    let link = peer.attach(1, 1, Role::Sender, "q");
    (peer, link)
}
