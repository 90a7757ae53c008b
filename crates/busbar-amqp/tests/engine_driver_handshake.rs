//! Handshake hygiene through the driver: a connection that does not finish its handshake in time
//! is closed (on tokio's paused clock with the default 10 s, and on loopback with a short
//! configured time-out), and connections beyond the cap on handshakes are closed at once while
//! completed handshakes free their place.

#![allow(clippy::unwrap_used)]

mod interop_node;

use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

use busbar_amqp::condition;
use busbar_amqp::driver::{ConnectionHandler, DriverConfig, Shutdown, run_connection};
use busbar_amqp::engine::{Connection, ConnectionConfig, Event, Millis};
use busbar_amqp::frame::{Frame, FrameDecoder, ProtocolHeader};
use busbar_amqp::performatives::{Close, Performative};
use fe2o3_amqp::sasl_profile::SaslProfile;

const STEP: Duration = Duration::from_secs(10);

async fn step<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, future)
        .await
        .expect("step timed out")
}

/// A handler with nothing to say: the handshake deadline is the engine's and the driver's.
struct Quiet;

impl ConnectionHandler for Quiet {
    type Command = ();

    fn on_event(&mut self, _event: Event, _connection: &mut Connection, _now: Millis) {}

    fn on_command(&mut self, _command: (), _connection: &mut Connection, _now: Millis) {}
}

/// Everything the server writes until it closes the stream.
async fn read_to_end(mut stream: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut received = Vec::new();
    let _ = stream.read_to_end(&mut received).await;
    received
}

#[tokio::test(start_paused = true)]
async fn a_header_without_open_is_closed_after_ten_virtual_seconds() {
    let (mut client, server) = tokio::io::duplex(64 * 1024);
    let (_commands_sender, commands) = mpsc::channel(1);
    let (_shutdown, signal) = Shutdown::new();
    let started = Instant::now();
    let task = tokio::spawn(run_connection(
        server,
        Quiet,
        commands,
        ConnectionConfig::default(),
        signal,
    ));
    client
        .write_all(&ProtocolHeader::Amqp.to_bytes())
        .await
        .unwrap();

    let received = read_to_end(&mut client).await;
    let waited = started.elapsed();
    assert!(waited >= Duration::from_secs(10), "{waited:?}");
    assert!(waited < Duration::from_secs(11), "{waited:?}");
    assert_eq!(&received[..8], &ProtocolHeader::Amqp.to_bytes()[..]);
    let mut rest = BytesMut::from(&received[8..]);
    let mut decoder = FrameDecoder::new(u32::MAX);
    let mut performatives = Vec::new();
    while let Some(Frame::Amqp(frame)) = decoder.decode(&mut rest).unwrap() {
        performatives.push(frame.performative);
    }
    let [
        Performative::Open(_),
        Performative::Close(Close { error: Some(error) }),
    ] = &performatives[..]
    else {
        panic!("expected open and close, got {performatives:?}");
    };
    assert_eq!(error.condition.as_str(), condition::RESOURCE_LIMIT_EXCEEDED);
    drop(client);
    task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_handshakes_are_cut_off_and_capped_while_others_connect() {
    let node = interop_node::start_with(DriverConfig {
        engine: ConnectionConfig {
            handshake_timeout: Duration::from_millis(200),
            ..ConnectionConfig::default()
        },
        max_handshaking: 2,
        ..DriverConfig::default()
    })
    .await;
    let url = format!("amqp://{}", node.addr);

    // Two clients that send a SASL header and nothing more fill the cap.
    let mut stalled = Vec::new();
    for _ in 0..2 {
        let mut stream = step(TcpStream::connect(node.addr)).await.unwrap();
        stream
            .write_all(&ProtocolHeader::Sasl.to_bytes())
            .await
            .unwrap();
        let mut header = [0u8; 8];
        step(stream.read_exact(&mut header)).await.unwrap();
        assert_eq!(header, ProtocolHeader::Sasl.to_bytes());
        stalled.push((Instant::now(), stream));
    }

    // A third is closed at once: its header is not answered.
    let mut refused = step(TcpStream::connect(node.addr)).await.unwrap();
    let _ = refused.write_all(&ProtocolHeader::Sasl.to_bytes()).await;
    assert!(step(read_to_end(refused)).await.is_empty());

    // The stalled ones are shut at their deadline, without an AMQP frame.
    for (since, mut stream) in stalled {
        let rest = step(read_to_end(&mut stream)).await;
        assert!(since.elapsed() >= Duration::from_millis(150));
        // The sasl-mechanisms frame, then nothing.
        let mut rest = BytesMut::from(&rest[..]);
        let mut decoder = FrameDecoder::new(u32::MAX);
        assert!(matches!(
            decoder.decode(&mut rest),
            Ok(Some(Frame::Sasl(_)))
        ));
        assert!(rest.is_empty());
    }

    // Their places are free again, and completed handshakes give theirs back: three clients
    // open one after another and stay open under a cap of two.
    let mut open = Vec::new();
    for name in ["a", "b", "c"] {
        let connection = step(
            fe2o3_amqp::Connection::builder()
                .container_id(name)
                .sasl_profile(SaslProfile::Anonymous)
                .open(url.as_str()),
        )
        .await
        .unwrap();
        open.push(connection);
    }
    for mut connection in open {
        let mut session = step(fe2o3_amqp::Session::begin(&mut connection))
            .await
            .unwrap();
        step(session.end()).await.unwrap();
        step(connection.close()).await.unwrap();
    }
    node.shutdown.trigger();
    step(node.task).await.unwrap().unwrap();
}
