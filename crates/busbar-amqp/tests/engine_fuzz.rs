//! Property tests: whatever a peer sends after the handshake (random bytes, or random sequences
//! of well-formed performatives with small handles, channels and ids), the engine never panics,
//! keeps its bounds, and either stays open or ends with a `close` it wrote.
#![allow(clippy::unwrap_used)]

mod engine_peer;

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

use busbar_amqp::engine::{
    AttachReply, ConnectionConfig, ConnectionState, Event, OutgoingDelivery,
};
use busbar_amqp::frame::encode_amqp_frame;
use busbar_amqp::performatives::{
    Accepted, DeliveryNumber, DeliveryState, Detach, Disposition, End, Handle, MessageFormat,
    Performative, Role, SequenceNo, Transfer,
};
use engine_peer::{Peer, attach_frame, begin_frame, session_flow};

fn config() -> ConnectionConfig {
    ConnectionConfig {
        channel_max: 3,
        handle_max: 7,
        incoming_window: 8,
        max_message_size: 4096,
        max_buffered_outgoing: 16 * 1024,
        ..ConnectionConfig::default()
    }
}

fn opened() -> Peer {
    let mut peer = Peer::new(config());
    peer.open(512, Some(1000));
    peer
}

/// One client action, with small numbers so that they collide often.
#[derive(Debug, Clone)]
enum Action {
    Begin(u16),
    End(u16),
    Attach(u16, u32, bool),
    Detach(u16, u32),
    Flow(u16, Option<u32>, u32, bool, bool),
    Transfer(u16, u32, Option<u32>, bool, bool, usize),
    Disposition(u16, bool, u32, u32, bool),
    Garbage(Vec<u8>),
    Tick(u64),
}

fn action() -> impl Strategy<Value = Action> {
    let ch = 0u16..3;
    let h = 0u32..5;
    prop_oneof![
        ch.clone().prop_map(Action::Begin),
        ch.clone().prop_map(Action::End),
        (ch.clone(), h.clone(), any::<bool>()).prop_map(|(c, h, r)| Action::Attach(c, h, r)),
        (ch.clone(), h.clone()).prop_map(|(c, h)| Action::Detach(c, h)),
        (
            ch.clone(),
            proptest::option::of(h.clone()),
            0u32..20,
            any::<bool>(),
            any::<bool>()
        )
            .prop_map(|(c, h, n, d, e)| Action::Flow(c, h, n, d, e)),
        (
            ch.clone(),
            h.clone(),
            proptest::option::of(0u32..20),
            any::<bool>(),
            any::<bool>(),
            0usize..3000
        )
            .prop_map(|(c, h, id, more, abort, len)| Action::Transfer(c, h, id, more, abort, len)),
        (ch.clone(), any::<bool>(), 0u32..20, 0u32..20, any::<bool>())
            .prop_map(|(c, r, f, l, s)| Action::Disposition(c, r, f, l, s)),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(Action::Garbage),
        (0u64..3000).prop_map(Action::Tick),
    ]
}

fn apply(peer: &mut Peer, action: &Action) {
    let mut buf = BytesMut::new();
    let mut frame = |channel: u16, performative: Performative, payload: &[u8]| {
        encode_amqp_frame(channel, &performative, payload, &mut buf);
    };
    match action.clone() {
        Action::Begin(c) => frame(c, begin_frame(4).into(), &[]),
        Action::End(c) => frame(c, End { error: None }.into(), &[]),
        Action::Attach(c, h, sender) => {
            let role = if sender { Role::Sender } else { Role::Receiver };
            frame(c, attach_frame(h, role, "q").into(), &[]);
        }
        Action::Detach(c, h) => frame(
            c,
            Detach {
                handle: Handle(h),
                closed: true,
                error: None,
            }
            .into(),
            &[],
        ),
        Action::Flow(c, h, n, drain, echo) => {
            let mut flow = session_flow(0, 4);
            flow.handle = h.map(Handle);
            flow.delivery_count = h.map(|_| SequenceNo(0));
            flow.link_credit = h.map(|_| n);
            flow.drain = drain;
            flow.echo = echo;
            frame(c, flow.into(), &[]);
        }
        Action::Transfer(c, h, id, more, aborted, len) => {
            let mut transfer = Transfer::new(Handle(h));
            transfer.delivery_id = id.map(DeliveryNumber);
            transfer.delivery_tag = id.map(|id| Bytes::copy_from_slice(&id.to_be_bytes()));
            transfer.more = more;
            transfer.aborted = aborted;
            frame(c, transfer.into(), &vec![1; len.min(400)]);
        }
        Action::Disposition(c, receiver, first, last, settled) => {
            let disposition = Disposition {
                role: if receiver {
                    Role::Receiver
                } else {
                    Role::Sender
                },
                first: DeliveryNumber(first),
                last: Some(DeliveryNumber(last)),
                settled,
                state: Some(DeliveryState::Accepted(Accepted {})),
                batchable: false,
            };
            frame(c, disposition.into(), &[]);
        }
        Action::Garbage(bytes) => buf.extend_from_slice(&bytes),
        Action::Tick(ms) => {
            peer.advance(std::time::Duration::from_millis(ms));
            return;
        }
    }
    peer.send_bytes(&buf);
}

/// A permissive application: accepts every attach, grants credit, answers drains, sends a
/// message on every flow it can.
fn application(peer: &mut Peer) {
    while let Some(event) = peer.conn.poll_event() {
        match event {
            Event::AttachRequested(request) => {
                let _ = peer
                    .conn
                    .accept_attach(request.link, AttachReply::echo(&request));
                let _ = peer.conn.set_credit(request.link, 3);
            }
            Event::Flow { link, drain, .. } => {
                let delivery = OutgoingDelivery {
                    tag: Bytes::from_static(b"t"),
                    message: Bytes::from(vec![2; 700]),
                    tail: Bytes::new(),
                    message_format: MessageFormat::AMQP,
                    settled: false,
                };
                let _ = peer.conn.send_transfer(link, delivery);
                if drain {
                    let _ = peer.conn.finish_drain(link);
                }
            }
            Event::Transfer(transfer) => {
                assert!(
                    transfer.message.len() <= 4096,
                    "a message above the limit was delivered"
                );
                let _ = peer.conn.send_disposition(
                    transfer.link,
                    transfer.delivery_id,
                    transfer.delivery_id,
                    true,
                    None,
                );
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_after_the_handshake_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let mut peer = opened();
        peer.send_bytes(&bytes);
        application(&mut peer);
        peer.pull();
        let state = peer.conn.state();
        prop_assert!(matches!(state, ConnectionState::Opened | ConnectionState::End));
    }

    #[test]
    fn random_performative_sequences_keep_the_engine_bounded(actions in proptest::collection::vec(action(), 1..60)) {
        let mut peer = opened();
        // Start from a session with a link each way, so that most actions reach links.
        let prelude = [Action::Begin(0), Action::Attach(0, 0, true), Action::Attach(0, 1, false), Action::Flow(0, Some(1), 5, false, false)];
        for action in prelude.iter().chain(&actions) {
            apply(&mut peer, action);
            application(&mut peer);
            // Read everything the server wrote, as a real client would.
            peer.pull();
            while peer.unread() > 0 {
                peer.recv();
            }
            prop_assert!(peer.conn.session_count() <= 4);
            if peer.conn.state() == ConnectionState::End {
                break;
            }
        }
    }
}
