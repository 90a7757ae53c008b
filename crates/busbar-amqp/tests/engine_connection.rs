//! Engine tests at connection scope with a scripted peer and a virtual clock: protocol headers,
//! SASL, open negotiation, pipelining, idle time-outs, close, and hostile input.

mod engine_peer;

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};

use busbar_amqp::condition;
use busbar_amqp::engine::{ConnectionConfig, ConnectionState, Event, SaslCredentials, SaslVerdict};
use busbar_amqp::frame::{Frame, ProtocolHeader, encode_amqp_frame};
use busbar_amqp::performatives::{Close, Performative, Role, SaslCode, SaslFrame, SaslInit};
use engine_peer::{Peer, attach_frame, begin_frame, open_frame};

fn close_condition(performative: Performative) -> Option<String> {
    match performative {
        Performative::Close(Close { error }) => {
            error.map(|error| error.condition.as_str().to_owned())
        }
        other => panic!("expected close, got {other:?}"),
    }
}

#[test]
fn sasl_offers_three_mechanisms_and_pipelined_open_begin_is_answered() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.send_bytes(&ProtocolHeader::Sasl.to_bytes());
    assert_eq!(peer.recv_header(), ProtocolHeader::Sasl);
    let Frame::Sasl(SaslFrame::SaslMechanisms(mechanisms)) = peer.recv() else {
        panic!("expected sasl-mechanisms");
    };
    let offered: Vec<&str> = mechanisms
        .sasl_server_mechanisms
        .iter()
        .map(|m| m.as_str())
        .collect();
    assert_eq!(offered, ["MSSBCBS", "ANONYMOUS", "PLAIN"]);

    peer.send_sasl(SaslInit {
        mechanism: "PLAIN".into(),
        initial_response: Some(Bytes::from_static(b"\0alice\0secret")),
        hostname: Some("localhost".into()),
    });
    match &peer.events()[..] {
        [
            Event::SaslInit {
                credentials:
                    SaslCredentials::Plain {
                        username, password, ..
                    },
                hostname,
            },
        ] => {
            assert_eq!((username.as_str(), password.as_str()), ("alice", "secret"));
            assert_eq!(hostname.as_deref(), Some("localhost"));
        }
        other => panic!("unexpected events {other:?}"),
    }
    peer.expect_silence();
    peer.conn.sasl_outcome(SaslVerdict::Ok);
    let Frame::Sasl(SaslFrame::SaslOutcome(outcome)) = peer.recv() else {
        panic!("expected sasl-outcome");
    };
    assert_eq!(outcome.code, SaslCode::Ok);

    // Python: AMQP header, open and begin (channel 1) in one write, before our open.
    let mut burst = BytesMut::new();
    burst.put_slice(&ProtocolHeader::Amqp.to_bytes());
    encode_amqp_frame(0, &open_frame(1 << 20, None).into(), &[], &mut burst);
    encode_amqp_frame(1, &begin_frame(65536).into(), &[], &mut burst);
    peer.send_bytes(&burst);
    assert_eq!(peer.recv_header(), ProtocolHeader::Amqp);
    let Performative::Open(open) = peer.recv_performative() else {
        panic!("expected open");
    };
    assert_eq!(open.max_frame_size, 256 * 1024);
    assert_eq!(open.idle_time_out.map(|t| t.0), Some(240_000));
    let (channel, Performative::Begin(begin), _) = peer.recv_amqp() else {
        panic!("expected begin");
    };
    assert_eq!((channel, begin.remote_channel), (0, Some(1)));
    let events = peer.events();
    assert!(matches!(
        events[0],
        Event::ConnectionOpened {
            sasl_used: true,
            ..
        }
    ));
    assert!(matches!(events[1], Event::SessionBegun { .. }));
}

#[test]
fn failed_sasl_ends_the_connection() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.send_bytes(&ProtocolHeader::Sasl.to_bytes());
    peer.recv_header();
    peer.recv();
    peer.send_sasl(SaslInit {
        mechanism: "PLAIN".into(),
        initial_response: Some(Bytes::from_static(b"\0bob\0wrong")),
        hostname: None,
    });
    peer.events();
    peer.conn.sasl_outcome(SaslVerdict::AuthFailed);
    let Frame::Sasl(SaslFrame::SaslOutcome(outcome)) = peer.recv() else {
        panic!("expected sasl-outcome");
    };
    assert_eq!(outcome.code, SaslCode::Auth);
    assert!(peer.conn.is_finished());
    assert!(matches!(
        peer.events()[..],
        [Event::ConnectionClosed { error: Some(_) }]
    ));
}

#[test]
fn plain_amqp_header_is_accepted_unless_sasl_is_required() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.send_bytes(&ProtocolHeader::Amqp.to_bytes());
    assert_eq!(peer.recv_header(), ProtocolHeader::Amqp);
    peer.send(0, open_frame(65536, Some(60_000)));
    assert!(matches!(peer.recv_performative(), Performative::Open(_)));
    assert!(matches!(
        peer.events()[..],
        [Event::ConnectionOpened {
            sasl_used: false,
            ..
        }]
    ));

    let mut strict = Peer::new(ConnectionConfig {
        require_sasl: true,
        ..ConnectionConfig::default()
    });
    strict.send_bytes(&ProtocolHeader::Amqp.to_bytes());
    assert_eq!(strict.recv_header(), ProtocolHeader::Sasl);
    assert!(strict.conn.is_finished());
}

#[test]
fn garbage_header_is_answered_with_ours_then_closed() {
    for garbage in [
        &b"GET / HTTP/1.1\r\n"[..],
        b"AMQP\x00\x01\x00\x01",
        b"AMQP\x02\x01\x00\x00",
    ] {
        let mut peer = Peer::new(ConnectionConfig::default());
        peer.send_bytes(garbage);
        assert_eq!(peer.recv_header(), ProtocolHeader::Amqp, "{garbage:?}");
        assert!(peer.conn.is_finished());
        assert!(matches!(
            peer.events()[..],
            [Event::ConnectionClosed { error: Some(_) }]
        ));
    }
}

#[test]
fn input_split_at_every_byte_is_handled_like_one_burst() {
    let mut burst = BytesMut::new();
    burst.put_slice(&ProtocolHeader::Amqp.to_bytes());
    encode_amqp_frame(0, &open_frame(65536, None).into(), &[], &mut burst);
    encode_amqp_frame(3, &begin_frame(100).into(), &[], &mut burst);
    for split in 0..burst.len() {
        let mut peer = Peer::new(ConnectionConfig::default());
        let mut input = BytesMut::from(&burst[..split]);
        peer.conn.handle_input(&mut input, peer.now);
        input.extend_from_slice(&burst[split..]);
        peer.conn.handle_input(&mut input, peer.now);
        assert!(input.is_empty());
        let events = peer.events();
        assert_eq!(events.len(), 2, "split at {split}");
        assert!(matches!(events[1], Event::SessionBegun { .. }));
    }
}

#[test]
fn heartbeats_go_out_at_half_the_peers_idle_time_out() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, Some(10_000));
    peer.expect_silence();
    assert_eq!(
        peer.conn.poll_timeout(),
        Some(peer.now.after(Duration::from_secs(5)))
    );
    peer.advance(Duration::from_millis(4_999));
    peer.expect_silence();
    peer.advance(Duration::from_millis(1));
    assert!(matches!(peer.recv(), Frame::Empty { .. }));
    peer.advance(Duration::from_secs(5));
    assert!(matches!(peer.recv(), Frame::Empty { .. }));
    assert_eq!(peer.conn.state(), ConnectionState::Opened);
}

#[test]
fn a_silent_peer_is_closed_after_our_idle_time_out() {
    let config = ConnectionConfig {
        idle_time_out: Duration::from_secs(60),
        ..ConnectionConfig::default()
    };
    let mut peer = Peer::new(config);
    peer.open(65536, None);
    peer.advance(Duration::from_secs(59));
    peer.send_bytes(&[0, 0, 0, 8, 2, 0, 0, 0]); // a heartbeat resets the clock
    peer.advance(Duration::from_secs(59));
    peer.expect_silence();
    peer.advance(Duration::from_secs(1));
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::RESOURCE_LIMIT_EXCEEDED)
    );
    assert!(peer.conn.is_finished());
}

#[test]
fn a_client_that_never_sends_a_header_is_dropped() {
    let config = ConnectionConfig {
        idle_time_out: Duration::from_secs(30),
        ..ConnectionConfig::default()
    };
    let mut peer = Peer::new(config);
    peer.advance(Duration::from_secs(30));
    assert!(peer.conn.is_finished());
}

#[test]
fn close_is_answered_and_application_close_waits_boundedly() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.send(0, Close { error: None });
    assert_eq!(close_condition(peer.recv_performative()), None);
    assert!(peer.conn.is_finished());

    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.begin(0, 100);
    peer.conn
        .close(Some(busbar_amqp::performatives::AmqpError::new(
            condition::CONNECTION_FORCED,
            "bye",
        )));
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::CONNECTION_FORCED)
    );
    assert!(!peer.conn.is_finished());
    peer.advance(Duration::from_secs(5));
    assert!(peer.conn.is_finished());
    let events = peer.events();
    assert!(matches!(
        events[..],
        [Event::SessionEnded { .. }, Event::ConnectionClosed { .. }]
    ));
}

#[test]
fn oversize_frame_is_a_framing_error() {
    let mut peer = Peer::new(ConnectionConfig {
        max_frame_size: 4096,
        ..ConnectionConfig::default()
    });
    peer.open(65536, None);
    peer.send_bytes(&[0, 1, 0, 0, 2, 0, 0, 0]);
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::FRAMING_ERROR)
    );
    assert!(peer.conn.is_finished());
}

#[test]
fn truncated_frame_waits_and_bad_types_are_a_decode_error() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    // A frame header announcing 64 bytes, with only 10 of them: nothing happens yet.
    peer.send_bytes(&[0, 0, 0, 64, 2, 0, 0, 0, 0, 0x53]);
    peer.expect_silence();
    assert_eq!(peer.conn.state(), ConnectionState::Opened);

    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    // A body whose constructor 0xff does not exist.
    peer.send_bytes(&[0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0x10, 0xff]);
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::DECODE_ERROR)
    );
    // A performative missing its mandatory container-id.
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.send_bytes(&ProtocolHeader::Amqp.to_bytes());
    peer.recv_header();
    peer.send_bytes(&[0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0x10, 0x45]);
    assert!(matches!(peer.recv_performative(), Performative::Open(_)));
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::INVALID_FIELD)
    );
}

#[test]
fn frames_before_open_and_a_second_open_are_not_allowed() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.send_bytes(&ProtocolHeader::Amqp.to_bytes());
    peer.recv_header();
    peer.send(0, begin_frame(10));
    assert!(matches!(peer.recv_performative(), Performative::Open(_)));
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::NOT_ALLOWED)
    );

    let mut peer = Peer::new(ConnectionConfig::default());
    peer.open(65536, None);
    peer.send(0, open_frame(65536, None));
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::NOT_ALLOWED)
    );
}

#[test]
fn channels_and_handles_beyond_the_advertised_maximum_close_with_framing_error() {
    let mut peer = Peer::new(ConnectionConfig {
        channel_max: 3,
        ..ConnectionConfig::default()
    });
    peer.open(65536, None);
    peer.send(4, begin_frame(10));
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::FRAMING_ERROR)
    );

    // 10k attaches: the first handle-max+1 are taken, the next one closes the connection, and
    // nothing grows past the bound.
    let mut peer = Peer::new(ConnectionConfig {
        handle_max: 63,
        ..ConnectionConfig::default()
    });
    peer.open(65536, None);
    let session = peer.begin(0, 100);
    let mut burst = BytesMut::new();
    for handle in 0..10_000 {
        encode_amqp_frame(
            0,
            &attach_frame(handle, Role::Receiver, "q").into(),
            &[],
            &mut burst,
        );
    }
    peer.send_bytes(&burst);
    let events = peer.events();
    let requested = events
        .iter()
        .filter(|e| matches!(e, Event::AttachRequested(_)))
        .count();
    assert_eq!(requested, 64);
    assert!(matches!(
        events.last(),
        Some(Event::ConnectionClosed { .. })
    ));
    assert_eq!(
        close_condition(peer.recv_performative()).as_deref(),
        Some(condition::FRAMING_ERROR)
    );
    assert!(peer.conn.link_count(session).is_err());
}
