//! Engine tests at link scope with a scripted peer: credit and delivery-count arithmetic,
//! long-poll credit, drain and echo, multi-frame transfers both ways, aborts, size limits.

mod engine_peer;

use bytes::{Bytes, BytesMut};

use busbar_amqp::condition;
use busbar_amqp::engine::{
    AttachReply, ConnectionConfig, ConnectionState, DeliveryId, EngineError, Event,
};
use busbar_amqp::performatives::{
    DeliveryNumber, DeliveryState, Detach, Handle, Performative, Rejected, Role,
};
use engine_peer::{
    Peer, attach_frame, delivery, expect_flow, receiving_client, sending_client, session_flow,
    transfer,
};

#[test]
fn sender_credit_is_absolute_and_never_overdrawn() {
    let (mut peer, link) = receiving_client();
    assert_eq!(peer.conn.link_credit(link), Ok(0));
    assert_eq!(
        peer.conn
            .send_transfer(link, delivery(b"a", Bytes::from_static(b"m"))),
        Err(EngineError::NoCredit)
    );
    peer.flow(1, 1, Some(0), 3, false);
    assert!(matches!(
        peer.events()[..],
        [Event::Flow {
            credit: 3,
            drain: false,
            ..
        }]
    ));
    for tag in [b"a", b"b", b"c"] {
        peer.conn
            .send_transfer(link, delivery(tag, Bytes::from_static(b"m")))
            .unwrap();
    }
    assert_eq!(
        peer.conn
            .send_transfer(link, delivery(b"d", Bytes::from_static(b"m"))),
        Err(EngineError::NoCredit)
    );
    // The client saw one of our three deliveries and grants 5 from there: 1 + 5 - 3 = 3.
    peer.flow(1, 1, Some(1), 5, false);
    assert_eq!(peer.conn.link_credit(link), Ok(3));
    for id in 0..3 {
        let (_, Performative::Transfer(transfer), payload) = peer.recv_amqp() else {
            panic!("expected transfer");
        };
        assert_eq!(transfer.delivery_id, Some(DeliveryNumber(id)));
        assert_eq!(&payload[..], b"m");
    }
}

#[test]
fn drain_consumes_unused_credit_and_echo_is_answered() {
    let (mut peer, link) = receiving_client();
    // js_drain trace: flow(delivery-count=1, link-credit=4, drain) -> flow(5, 0, drain).
    peer.flow(1, 1, Some(0), 1, false);
    peer.conn
        .send_transfer(link, delivery(b"a", Bytes::from_static(b"m")))
        .unwrap();
    peer.recv_amqp();
    peer.flow(1, 1, Some(1), 4, true);
    assert!(matches!(
        peer.events()[..],
        [
            _,
            Event::Flow {
                credit: 4,
                drain: true,
                ..
            }
        ]
    ));
    peer.expect_silence();
    peer.conn.finish_drain(link).unwrap();
    let flow = expect_flow(&mut peer);
    assert_eq!(flow.handle, Some(Handle(link.handle())));
    assert_eq!(
        (
            flow.delivery_count.map(|c| c.0),
            flow.link_credit,
            flow.drain
        ),
        (Some(5), Some(0), true)
    );
    assert_eq!(peer.conn.link_credit(link), Ok(0));
    // A second finish does nothing.
    peer.conn.finish_drain(link).unwrap();
    peer.expect_silence();

    let mut echo = session_flow(0, 100);
    echo.handle = Some(Handle(1));
    echo.delivery_count = Some(busbar_amqp::performatives::SequenceNo(5));
    echo.link_credit = Some(2);
    echo.echo = true;
    peer.send(1, echo);
    let flow = expect_flow(&mut peer);
    assert_eq!(
        (
            flow.delivery_count.map(|c| c.0),
            flow.link_credit,
            flow.drain
        ),
        (Some(5), Some(2), false)
    );
}

#[test]
fn receiver_credit_grants_counts_deliveries_and_tolerates_a_bounded_overdraft() {
    let config = ConnectionConfig {
        uncredited_transfer_allowance: 2,
        ..ConnectionConfig::default()
    };
    let (mut peer, link) = sending_client(config);
    peer.conn.set_credit(link, 2).unwrap();
    let flow = expect_flow(&mut peer);
    assert_eq!(
        (flow.delivery_count.map(|c| c.0), flow.link_credit),
        (Some(0), Some(2))
    );
    for id in 0..4 {
        peer.send_with_payload(1, transfer(1, Some(id), false), b"hello");
    }
    let beyond: Vec<bool> = peer
        .events()
        .into_iter()
        .map(|event| match event {
            Event::Transfer(transfer) => transfer.beyond_credit,
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(beyond, [false, false, true, true]);
    peer.conn.add_credit(link, 1).unwrap();
    assert_eq!(expect_flow(&mut peer).link_credit, Some(1));
    peer.send_with_payload(1, transfer(1, Some(4), false), b"x");
    peer.send_with_payload(1, transfer(1, Some(5), false), b"x");
    peer.send_with_payload(1, transfer(1, Some(6), false), b"x");
    peer.send_with_payload(1, transfer(1, Some(7), false), b"x");
    // The third uncredited delivery exceeds the allowance: the link, and only it, is detached.
    match peer.recv_performative() {
        Performative::Detach(Detach {
            closed: true,
            error: Some(error),
            ..
        }) => {
            assert_eq!(error.condition.as_str(), condition::TRANSFER_LIMIT_EXCEEDED);
        }
        other => panic!("expected detach, got {other:?}"),
    }
    assert_eq!(peer.conn.state(), ConnectionState::Opened);
}

#[test]
fn outgoing_messages_are_split_to_the_peers_max_frame_size() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(512, None);
    peer.begin(1, 65536);
    let link = peer.attach(1, 1, Role::Receiver, "q");
    peer.flow(1, 1, Some(0), 1, false);
    let message: Bytes = (0..3000u32).map(|i| i as u8).collect::<Vec<u8>>().into();
    peer.conn
        .send_transfer(link, delivery(b"big", message.clone()))
        .unwrap();
    peer.pull();
    let mut reassembled = BytesMut::new();
    let mut frames = 0;
    loop {
        let before = peer.unread();
        let (_, Performative::Transfer(transfer), payload) = peer.recv_amqp() else {
            panic!("expected transfer");
        };
        assert!(
            before - peer.unread() <= 512,
            "frame larger than the peer's max"
        );
        frames += 1;
        if frames == 1 {
            assert_eq!(transfer.delivery_tag.as_deref(), Some(&b"big"[..]));
        }
        reassembled.extend_from_slice(&payload);
        if !transfer.more {
            break;
        }
    }
    assert!(frames >= 7);
    assert_eq!(reassembled.freeze(), message);
}

/// A delivery far larger than the outbox's pace (1 MiB) leaves a slice per transmit, the
/// connection asking to be polled again until it is out; its tail follows its head unchanged,
/// and a delivery sent behind it is queued (not refused) and follows it.
#[test]
fn a_large_delivery_leaves_a_slice_at_a_time_head_then_tail() {
    const PACE: usize = 1 << 20;
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(1, 65536);
    let link = peer.attach(1, 1, Role::Receiver, "q");
    peer.flow(1, 1, Some(0), 10, false);
    let tail: Bytes = (0..5_000_000u32)
        .map(|i| (i % 251) as u8)
        .collect::<Vec<u8>>()
        .into();
    let mut big = delivery(b"big", Bytes::from_static(b"head:"));
    big.tail = tail.clone();
    peer.conn.send_transfer(link, big).unwrap();
    peer.conn
        .send_transfer(link, delivery(b"small", Bytes::from_static(b"next")))
        .unwrap();
    let mut transmits = 0;
    loop {
        let before = peer.unread();
        peer.pull();
        let written = peer.unread() - before;
        assert!(
            written <= PACE + 65536,
            "one transmit wrote {written} bytes"
        );
        transmits += 1;
        if !peer.conn.wants_transmit() {
            break;
        }
    }
    assert!(transmits >= 5, "{transmits} transmits for 5 MB");
    let mut reassembled = BytesMut::new();
    loop {
        let (_, Performative::Transfer(transfer), payload) = peer.recv_amqp() else {
            panic!("expected a transfer");
        };
        reassembled.extend_from_slice(&payload);
        if !transfer.more {
            break;
        }
    }
    assert_eq!(&reassembled[..5], b"head:");
    assert!(reassembled[5..] == tail[..], "the tail arrived changed");
    let (_, Performative::Transfer(transfer), payload) = peer.recv_amqp() else {
        panic!("expected the next delivery");
    };
    assert_eq!(transfer.delivery_tag.as_deref(), Some(&b"small"[..]));
    assert_eq!(&payload[..], b"next");
    peer.expect_silence();
}

#[test]
fn outgoing_transfers_wait_for_the_peers_session_window_within_a_bound() {
    let config = ConnectionConfig {
        max_buffered_outgoing: 10_000,
        ..ConnectionConfig::default()
    };
    let mut peer = Peer::new(config);
    peer.open(65536, None);
    peer.begin(1, 2);
    let link = peer.attach(1, 1, Role::Receiver, "q");
    let mut flow = session_flow(0, 2);
    flow.handle = Some(Handle(1));
    flow.link_credit = Some(100);
    peer.send(1, flow);
    peer.events();
    for tag in [b"a", b"b", b"c"] {
        peer.conn
            .send_transfer(link, delivery(tag, Bytes::from(vec![7; 4000])))
            .unwrap();
    }
    // Window of two frames: two go out, the third waits; a fourth would exceed the buffer.
    assert_eq!(
        peer.conn
            .send_transfer(link, delivery(b"d", Bytes::from(vec![7; 8000]))),
        Err(EngineError::Backpressure)
    );
    assert!(matches!(
        peer.recv_performative(),
        Performative::Transfer(_)
    ));
    assert!(matches!(
        peer.recv_performative(),
        Performative::Transfer(_)
    ));
    peer.expect_silence();
    assert_eq!(peer.conn.queued_bytes(link.session), Ok(4000));
    peer.send(1, session_flow(2, 10));
    assert!(matches!(
        peer.recv_performative(),
        Performative::Transfer(_)
    ));
    assert_eq!(peer.conn.queued_bytes(link.session), Ok(0));
}

#[test]
fn incoming_multi_frame_transfers_are_reassembled_and_aborts_dropped() {
    let (mut peer, link) = sending_client(ConnectionConfig::default());
    peer.conn.set_credit(link, 10).unwrap();
    peer.send_with_payload(1, transfer(1, Some(0), true), b"hel");
    peer.send_with_payload(1, transfer(1, None, true), b"lo ");
    peer.send_with_payload(1, transfer(1, None, false), b"world");
    match &peer.events()[..] {
        [Event::Transfer(t)] => {
            assert_eq!(&t.message[..], b"hello world");
            assert_eq!(t.delivery_id, DeliveryId(0));
        }
        other => panic!("unexpected {other:?}"),
    }
    peer.send_with_payload(1, transfer(1, Some(1), true), b"part");
    let mut abort = transfer(1, None, false);
    abort.aborted = true;
    peer.send(1, abort);
    assert!(peer.events().is_empty());
    peer.send_with_payload(1, transfer(1, Some(2), false), b"next");
    assert!(matches!(&peer.events()[..], [Event::Transfer(t)] if &t.message[..] == b"next"));
    // The aborted delivery still used its credit.
    assert_eq!(peer.conn.link_credit(link), Ok(7));
}

#[test]
fn a_message_past_the_limit_is_reported_at_once_and_its_later_frames_are_discarded() {
    let config = ConnectionConfig {
        max_message_size: 10,
        ..ConnectionConfig::default()
    };
    let (mut peer, link) = sending_client(config);
    peer.conn.set_credit(link, 10).unwrap();
    expect_flow(&mut peer);
    peer.send_with_payload(1, transfer(1, Some(0), true), b"123456");
    assert!(peer.events().is_empty());
    // The second frame takes it past 10 bytes: reported now, with no bytes kept.
    peer.send_with_payload(1, transfer(1, None, true), b"789012");
    match &peer.events()[..] {
        [Event::Transfer(t)] => {
            assert_eq!(t.oversize, Some(12));
            assert!(t.message.is_empty());
            assert_eq!(t.delivery_id, DeliveryId(0));
        }
        other => panic!("unexpected {other:?}"),
    }
    // The application's rejection goes out while the peer is still sending.
    let rejected = DeliveryState::Rejected(Rejected { error: None });
    peer.conn
        .send_disposition(
            link,
            DeliveryId(0),
            DeliveryId(0),
            true,
            Some(rejected.clone()),
        )
        .unwrap();
    match peer.recv_performative() {
        Performative::Disposition(d) => {
            assert_eq!((d.first, d.settled), (DeliveryNumber(0), true));
            assert_eq!(d.state, Some(rejected));
        }
        other => panic!("expected a disposition, got {other:?}"),
    }
    // The rest of its frames, the last one included, are discarded without a word.
    peer.send_with_payload(1, transfer(1, None, true), b"345678");
    peer.send_with_payload(1, transfer(1, None, false), b"9");
    assert!(peer.events().is_empty());
    peer.expect_silence();
    // The link is still attached and takes the next message whole.
    peer.send_with_payload(1, transfer(1, Some(1), false), b"ok");
    match &peer.events()[..] {
        [Event::Transfer(t)] => {
            assert_eq!(t.oversize, None);
            assert_eq!(&t.message[..], b"ok");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(peer.conn.link_count(link.session), Ok(1));
}

#[test]
fn an_abort_ends_the_discarding_of_an_oversize_delivery() {
    let config = ConnectionConfig {
        max_message_size: 4,
        ..ConnectionConfig::default()
    };
    let (mut peer, link) = sending_client(config);
    peer.conn.set_credit(link, 10).unwrap();
    peer.send_with_payload(1, transfer(1, Some(0), true), b"12345");
    assert!(matches!(&peer.events()[..], [Event::Transfer(t)] if t.oversize == Some(5)));
    let mut abort = transfer(1, None, false);
    abort.aborted = true;
    peer.send(1, abort);
    assert!(peer.events().is_empty());
    // A new delivery, not a continuation of the aborted one.
    peer.send_with_payload(1, transfer(1, Some(1), true), b"o");
    peer.send_with_payload(1, transfer(1, None, false), b"k");
    match &peer.events()[..] {
        [Event::Transfer(t)] => {
            assert_eq!((t.delivery_id, t.oversize), (DeliveryId(1), None));
            assert_eq!(&t.message[..], b"ok");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn the_links_advertised_max_message_size_is_the_limit() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(1, 65536);
    peer.send(1, attach_frame(1, Role::Sender, "q"));
    let Some(Event::AttachRequested(request)) = peer.events().pop() else {
        panic!("expected an attach request");
    };
    let reply = AttachReply {
        max_message_size: Some(4),
        ..AttachReply::echo(&request)
    };
    peer.conn.accept_attach(request.link, reply).unwrap();
    match peer.recv_performative() {
        Performative::Attach(attach) => assert_eq!(attach.max_message_size, Some(4)),
        other => panic!("expected an attach, got {other:?}"),
    }
    peer.conn.set_credit(request.link, 10).unwrap();
    peer.send_with_payload(1, transfer(1, Some(0), false), b"1234");
    assert!(matches!(&peer.events()[..], [Event::Transfer(t)] if &t.message[..] == b"1234"));
    // One byte over, in a single frame: reported once, and the next delivery starts afresh.
    peer.send_with_payload(1, transfer(1, Some(1), false), b"12345");
    assert!(matches!(&peer.events()[..], [Event::Transfer(t)] if t.oversize == Some(5)));
    peer.send_with_payload(1, transfer(1, Some(2), false), b"ok");
    assert!(matches!(&peer.events()[..], [Event::Transfer(t)] if &t.message[..] == b"ok"));
}

#[test]
fn unused_credit_stays_registered_as_a_long_poll() {
    let (mut peer, link) = receiving_client();
    peer.flow(1, 1, Some(0), 5, false);
    peer.events();
    // Minutes pass with nothing to send; heartbeats do not touch the credit.
    for _ in 0..10 {
        peer.advance(std::time::Duration::from_secs(60));
        peer.send_bytes(&[0, 0, 0, 8, 2, 0, 0, 0]);
    }
    assert_eq!(peer.conn.link_credit(link), Ok(5));
    peer.conn
        .send_transfer(link, delivery(b"late", Bytes::from_static(b"m")))
        .unwrap();
    assert!(matches!(
        peer.recv_performative(),
        Performative::Transfer(_)
    ));
    assert_eq!(peer.conn.link_credit(link), Ok(4));
}

#[test]
fn a_split_delivery_trickles_out_frame_by_frame_and_a_detach_waits_behind_it() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(512, None);
    peer.begin(1, 1);
    let link = peer.attach(1, 1, Role::Receiver, "q");
    let mut flow = session_flow(0, 1);
    flow.handle = Some(Handle(1));
    flow.link_credit = Some(10);
    peer.send(1, flow);
    peer.events();
    let message = Bytes::from(vec![3u8; 1200]);
    peer.conn
        .send_transfer(link, delivery(b"t", message.clone()))
        .unwrap();
    peer.conn.detach(link, None).unwrap();
    let mut reassembled = BytesMut::new();
    for seen in 1.. {
        let (_, Performative::Transfer(transfer), payload) = peer.recv_amqp() else {
            panic!("expected a transfer frame");
        };
        reassembled.extend_from_slice(&payload);
        if !transfer.more {
            break;
        }
        // Nothing more (not even the detach) until the window opens again.
        peer.expect_silence();
        // Open the window by one more frame.
        peer.send(1, session_flow(seen, 1));
    }
    assert_eq!(reassembled.freeze(), message);
    // The detach follows the delivery's last frame.
    assert!(matches!(peer.recv_performative(), Performative::Detach(_)));
}

#[test]
fn incomplete_deliveries_share_one_connection_wide_budget() {
    let config = ConnectionConfig {
        max_reassembly_bytes: 100,
        max_message_size: 100,
        ..ConnectionConfig::default()
    };
    let mut peer = Peer::new(config);
    peer.open(65536, None);
    peer.begin(1, 100);
    peer.begin(2, 100);
    let a = peer.attach(1, 1, Role::Sender, "a");
    let b = peer.attach(2, 1, Role::Sender, "b");
    peer.conn.set_credit(a, 10).unwrap();
    peer.conn.set_credit(b, 10).unwrap();
    peer.pull();
    while peer.unread() > 0 {
        peer.recv();
    }
    peer.send_with_payload(1, transfer(1, Some(0), true), &[1; 60]);
    // The other session's partial delivery would take the total past 100 bytes.
    peer.send_with_payload(2, transfer(1, Some(0), true), &[2; 60]);
    match peer.recv_amqp() {
        (
            _,
            Performative::Detach(Detach {
                error: Some(error), ..
            }),
            _,
        ) => {
            assert_eq!(error.condition.as_str(), condition::RESOURCE_LIMIT_EXCEEDED);
        }
        other => panic!("expected detach, got {other:?}"),
    }
    // Completing the first delivery releases its bytes for the next one.
    peer.send_with_payload(1, transfer(1, None, false), &[1; 10]);
    peer.send_with_payload(1, transfer(1, Some(1), true), &[3; 90]);
    peer.send_with_payload(1, transfer(1, None, false), &[3; 5]);
    assert_eq!(transferred_sizes(&mut peer), [70, 95]);
    assert_eq!(peer.conn.state(), ConnectionState::Opened);
}

/// The sizes of the messages the engine reported since the last look.
fn transferred_sizes(peer: &mut Peer) -> Vec<usize> {
    peer.events()
        .into_iter()
        .filter_map(|event| match event {
            Event::Transfer(t) => Some(t.message.len()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_link_whose_limit_is_above_the_budget_reassembles_one_message_up_to_it() {
    let config = ConnectionConfig {
        max_reassembly_bytes: 100,
        max_message_size: 1000,
        ..ConnectionConfig::default()
    };
    let (mut peer, link) = sending_client(config);
    peer.conn.set_credit(link, 10).unwrap();
    expect_flow(&mut peer);
    peer.send_with_payload(1, transfer(1, Some(0), true), &[1; 400]);
    peer.send_with_payload(1, transfer(1, None, true), &[1; 400]);
    peer.send_with_payload(1, transfer(1, None, false), &[1; 200]);
    assert_eq!(transferred_sizes(&mut peer), [1000]);
    assert_eq!(peer.unread(), 0, "the link stays attached");
}

#[test]
fn held_back_outgoing_bytes_are_bounded_across_sessions() {
    let config = ConnectionConfig {
        max_buffered_outgoing: 1000,
        ..ConnectionConfig::default()
    };
    let mut peer = Peer::new(config);
    peer.open(65536, None);
    let mut links = Vec::new();
    for channel in [1, 2] {
        // A session whose incoming window is closed: everything we send is held back.
        peer.begin(channel, 0);
        let link = peer.attach(channel, 1, Role::Receiver, "q");
        let mut flow = session_flow(0, 0);
        flow.handle = Some(Handle(1));
        flow.link_credit = Some(10);
        peer.send(channel, flow);
        peer.events();
        links.push(link);
    }
    peer.conn
        .send_transfer(links[0], delivery(b"a", Bytes::from(vec![0; 600])))
        .unwrap();
    assert_eq!(
        peer.conn
            .send_transfer(links[1], delivery(b"b", Bytes::from(vec![0; 600]))),
        Err(EngineError::Backpressure)
    );
    peer.conn
        .send_transfer(links[1], delivery(b"c", Bytes::from(vec![0; 300])))
        .unwrap();
    // The refused send used no credit.
    assert_eq!(peer.conn.link_credit(links[1]), Ok(9));
}

#[test]
fn a_detached_links_held_back_transfers_release_their_budget() {
    let config = ConnectionConfig {
        max_buffered_outgoing: 1000,
        ..ConnectionConfig::default()
    };
    let mut peer = Peer::new(config);
    peer.open(65536, None);
    peer.begin(1, 0);
    let link = peer.attach(1, 1, Role::Receiver, "q");
    let other = peer.attach(1, 2, Role::Receiver, "q");
    for handle in [1, 2] {
        let mut flow = session_flow(0, 0);
        flow.handle = Some(Handle(handle));
        flow.link_credit = Some(10);
        peer.send(1, flow);
    }
    peer.events();
    peer.conn
        .send_transfer(link, delivery(b"a", Bytes::from(vec![0; 900])))
        .unwrap();
    // The peer detaches the link whose transfer is held back; its bytes are released.
    peer.send(
        1,
        Detach {
            handle: Handle(1),
            closed: true,
            error: None,
        },
    );
    assert_eq!(peer.conn.queued_bytes(link.session), Ok(0));
    peer.conn
        .send_transfer(other, delivery(b"b", Bytes::from(vec![0; 900])))
        .unwrap();
}

#[test]
fn a_delivery_past_the_receivers_max_message_size_is_refused_unless_sending_it_is_asked() {
    for honour in [true, false] {
        let config = ConnectionConfig {
            honour_peer_max_message_size: honour,
            ..ConnectionConfig::default()
        };
        let mut peer = Peer::new(config);
        peer.open(65536, None);
        peer.begin(1, 65536);
        let mut attach = attach_frame(1, Role::Receiver, "q");
        attach.max_message_size = Some(10);
        peer.send(1, attach);
        let Some(Event::AttachRequested(request)) = peer.events().pop() else {
            panic!("expected AttachRequested");
        };
        peer.conn
            .accept_attach(request.link, AttachReply::echo(&request))
            .unwrap();
        assert!(matches!(peer.recv_performative(), Performative::Attach(_)));
        peer.flow(1, 1, Some(0), 1, false);
        let sent = peer
            .conn
            .send_transfer(request.link, delivery(b"big", Bytes::from(vec![7; 100])));
        if honour {
            assert_eq!(
                sent,
                Err(EngineError::MessageTooLarge { size: 100, max: 10 })
            );
        } else {
            assert_eq!(sent, Ok(DeliveryId(0)));
        }
    }
}
