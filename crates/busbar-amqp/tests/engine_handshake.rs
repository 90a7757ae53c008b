//! The handshake deadline on the engine with a virtual clock: a connection that has not received
//! the peer's `open` within `handshake_timeout` is closed (with `close` once the AMQP headers are
//! exchanged, silently before), and a completed handshake is never timed out.

mod engine_peer;

use std::time::Duration;

use bytes::Bytes;

use busbar_amqp::condition;
use busbar_amqp::engine::{ConnectionConfig, Event};
use busbar_amqp::frame::{Frame, ProtocolHeader};
use busbar_amqp::performatives::{Close, Performative, SaslFrame, SaslInit};
use engine_peer::{Peer, T0};

const TEN_SECONDS: Duration = Duration::from_secs(10);
const JUST_UNDER: Duration = Duration::from_millis(9_999);
const ONE_MS: Duration = Duration::from_millis(1);

/// The condition and description of the `ConnectionClosed` event, which must be the last one.
fn closed_with(peer: &mut Peer) -> (String, String) {
    match peer.events().pop() {
        Some(Event::ConnectionClosed { error: Some(error) }) => (
            error.condition.as_str().to_owned(),
            error.description.unwrap_or_default(),
        ),
        other => panic!("expected a closed connection with an error, got {other:?}"),
    }
}

#[test]
fn a_peer_that_sends_nothing_is_dropped_at_the_deadline() {
    let mut peer = Peer::new(ConnectionConfig::default());
    assert_eq!(peer.conn.poll_timeout(), Some(T0.after(TEN_SECONDS)));
    assert!(peer.conn.is_handshaking());
    peer.advance(JUST_UNDER);
    assert!(!peer.conn.is_finished());
    peer.advance(ONE_MS);
    peer.expect_silence();
    assert!(peer.conn.is_finished());
    assert!(!peer.conn.is_handshaking());
    let (condition, description) = closed_with(&mut peer);
    assert_eq!(condition, condition::RESOURCE_LIMIT_EXCEEDED);
    assert_eq!(description, "handshake not completed within 10s");
}

#[test]
fn a_header_without_open_gets_open_and_close_at_the_deadline() {
    let mut peer = Peer::new(ConnectionConfig::default());
    peer.advance(Duration::from_secs(4));
    peer.send_bytes(&ProtocolHeader::Amqp.to_bytes());
    assert_eq!(peer.recv_header(), ProtocolHeader::Amqp);
    // Bytes received do not move the deadline: it counts from the connection's start.
    assert_eq!(peer.conn.poll_timeout(), Some(T0.after(TEN_SECONDS)));
    peer.advance(Duration::from_millis(5_999));
    peer.expect_silence();
    peer.advance(ONE_MS);
    assert!(matches!(peer.recv_performative(), Performative::Open(_)));
    let Performative::Close(Close { error: Some(error) }) = peer.recv_performative() else {
        panic!("expected close with an error");
    };
    assert_eq!(error.condition.as_str(), condition::RESOURCE_LIMIT_EXCEEDED);
    assert!(peer.conn.is_finished());
}

#[test]
fn a_stalled_sasl_exchange_is_shut_without_amqp_frames() {
    // Stalled after the mechanisms, and while the application has not answered sasl-init.
    for answer_init in [false, true] {
        let mut peer = Peer::new(ConnectionConfig::default());
        peer.send_bytes(&ProtocolHeader::Sasl.to_bytes());
        assert_eq!(peer.recv_header(), ProtocolHeader::Sasl);
        assert!(matches!(
            peer.recv(),
            Frame::Sasl(SaslFrame::SaslMechanisms(_))
        ));
        if answer_init {
            peer.send_sasl(SaslInit {
                mechanism: "ANONYMOUS".into(),
                initial_response: Some(Bytes::new()),
                hostname: None,
            });
            assert!(matches!(peer.events()[..], [Event::SaslInit { .. }]));
        }
        peer.advance(TEN_SECONDS);
        peer.expect_silence();
        assert!(peer.conn.is_finished());
        assert_eq!(closed_with(&mut peer).0, condition::RESOURCE_LIMIT_EXCEEDED);
    }
}

#[test]
fn a_completed_handshake_is_not_timed_out() {
    let config = ConnectionConfig {
        handshake_timeout: Duration::from_secs(2),
        ..ConnectionConfig::default()
    };
    let mut peer = Peer::new(config);
    peer.advance(Duration::from_millis(1_999));
    peer.open(65536, None);
    assert!(!peer.conn.is_handshaking());
    // Only the idle time-out (240 s from the last frame) is left.
    assert_eq!(
        peer.conn.poll_timeout(),
        Some(T0.after(Duration::from_millis(241_999)))
    );
    peer.advance(Duration::from_secs(60));
    peer.expect_silence();
    assert!(!peer.conn.is_finished());
    assert!(peer.events().is_empty());
}
