//! Hostile clients lose only their own connection: silence, garbage, a stalled or forged TLS
//! handshake, a flood of TLS records, connections beyond the opening cap, and WebSocket frames
//! that break RFC 6455 (unmasked, oversized, text) or upgrades that do not ask for AMQP. After
//! each, the gateway still serves a well-behaved client.
//!
//! Deadlines are observed on tokio's paused clock: it jumps ahead whenever every task waits, so
//! a 10 s deadline passes at once yet is measured.

#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use busbar_gateway::Limits;
use support::{TestGateway, read_to_close};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

const DEADLINE: Duration = Duration::from_secs(10);

#[tokio::test(start_paused = true)]
async fn a_silent_client_is_closed_at_the_opening_deadline() {
    let gateway = TestGateway::start(Limits::default()).await;
    let started = Instant::now();
    let silent = gateway.tcp().await;
    assert_eq!(read_to_close(silent).await.unwrap(), b"");
    assert!(
        started.elapsed() >= DEADLINE,
        "closed after {:?}",
        started.elapsed()
    );
    gateway.still_serves().await;
}

#[tokio::test(start_paused = true)]
async fn a_stalled_tls_handshake_is_closed_at_the_opening_deadline() {
    let gateway = TestGateway::start(Limits::default()).await;
    let started = Instant::now();
    let mut stalled = gateway.tcp().await;
    // The start of a ClientHello record, and then nothing.
    stalled
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00])
        .await
        .unwrap();
    let _ = read_to_close(stalled).await;
    assert!(
        started.elapsed() >= DEADLINE,
        "closed after {:?}",
        started.elapsed()
    );
    gateway.still_serves().await;
}

#[tokio::test]
async fn garbage_is_answered_as_a_bad_http_request() {
    let gateway = TestGateway::start(Limits::default()).await;
    let mut garbage = gateway.tcp().await;
    garbage.write_all(&[0xff; 4096]).await.unwrap();
    let answer = read_to_close(garbage).await.unwrap_or_default();
    assert!(
        answer.starts_with(b"HTTP/1.1 400"),
        "{:?}",
        String::from_utf8_lossy(&answer)
    );
    gateway.still_serves().await;
}

#[tokio::test]
async fn a_forged_tls_handshake_and_a_record_flood_are_cut_off() {
    let gateway = TestGateway::start(Limits::default()).await;
    let mut forged = gateway.tcp().await;
    forged
        .write_all(&[0x16, 0x03, 0x03, 0x00, 0x10])
        .await
        .unwrap();
    forged.write_all(&[0xab; 16]).await.unwrap();
    let _ = read_to_close(forged).await;

    // 64 MiB of records: the server reads the first, refuses it, and closes; the rest never
    // gets through.
    let mut flood = gateway.tcp().await;
    let record = [[0x16, 0x03, 0x03, 0x40, 0x00].as_slice(), &[0xcd; 0x4000]].concat();
    let mut sent = 0usize;
    while sent < 64 << 20 {
        if flood.write_all(&record).await.is_err() {
            break;
        }
        sent += record.len();
    }
    assert!(sent < 64 << 20, "the whole flood was accepted");
    gateway.still_serves().await;
}

#[tokio::test(start_paused = true)]
async fn connections_beyond_the_opening_cap_are_closed_at_once() {
    let limits = Limits {
        max_opening: 2,
        ..Limits::default()
    };
    let gateway = TestGateway::start(limits).await;
    let silent = [gateway.tcp().await, gateway.tcp().await];
    // Let the gateway take both before the third arrives.
    tokio::task::yield_now().await;
    let started = Instant::now();
    let extra = gateway.tcp().await;
    assert_eq!(read_to_close(extra).await.unwrap_or_default(), b"");
    assert!(
        started.elapsed() < DEADLINE,
        "closed after {:?}",
        started.elapsed()
    );
    drop(silent);
    gateway.still_serves().await;
}

/// Upgrades a raw connection to the AMQP WebSocket (the handshake by hand, so that the frames
/// after it can break the rules): the connection, past the `101` response.
async fn raw_websocket(gateway: &TestGateway) -> TcpStream {
    let mut stream = gateway.tcp().await;
    let request = "GET /$servicebus/websocket HTTP/1.1\r\nHost: localhost\r\n\
        Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\
        Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: AMQPWSB10\r\n\r\n";
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.push(stream.read_u8().await.unwrap());
    }
    assert!(
        head.starts_with(b"HTTP/1.1 101"),
        "{}",
        String::from_utf8_lossy(&head)
    );
    stream
}

/// The close code of the close frame the server sends after what it was given.
async fn close_code_after(gateway: &TestGateway, frame: &[u8]) -> u16 {
    let mut stream = raw_websocket(gateway).await;
    stream.write_all(frame).await.unwrap();
    let answer = read_to_close(stream).await.unwrap_or_default();
    assert!(
        answer.len() >= 4 && answer[0] == 0x88,
        "not a close frame: {answer:?}"
    );
    u16::from_be_bytes([answer[2], answer[3]])
}

#[tokio::test]
async fn websocket_frames_that_break_the_rules_close_with_the_code_that_names_them() {
    let gateway = TestGateway::start(Limits::default()).await;
    // A binary frame without the mask every client frame must carry: 1002, protocol error.
    assert_eq!(
        close_code_after(&gateway, &[0x82, 0x04, b'A', b'M', b'Q', b'P']).await,
        1002
    );
    // A frame announcing 100 MiB, past the cap: 1009, message too big.
    let mut oversized = vec![0x82, 0x80 | 127];
    oversized.extend_from_slice(&(100u64 << 20).to_be_bytes());
    oversized.extend_from_slice(&[1, 2, 3, 4]);
    assert_eq!(close_code_after(&gateway, &oversized).await, 1009);
    // A masked text frame: AMQP is binary, 1003, unsupported data.
    assert_eq!(
        close_code_after(&gateway, &[0x81, 0x81, 0, 0, 0, 0, b'x']).await,
        1003
    );
    gateway.still_serves().await;
}

/// The status line the server answers `request` with.
async fn status_of(gateway: &TestGateway, request: &str) -> String {
    let mut stream = gateway.tcp().await;
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 12];
    stream.read_exact(&mut answer).await.unwrap();
    String::from_utf8(answer).unwrap()
}

#[tokio::test]
async fn upgrades_that_do_not_ask_for_amqp_over_websocket_13_are_refused() {
    let gateway = TestGateway::start(Limits::default()).await;
    let upgrade = |version: &str, protocol: &str| {
        format!(
            "GET /$servicebus/websocket HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n\
             Connection: Upgrade\r\nSec-WebSocket-Version: {version}\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{protocol}\r\n"
        )
    };
    let wrong_version = upgrade("8", "Sec-WebSocket-Protocol: AMQPWSB10\r\n");
    assert_eq!(status_of(&gateway, &wrong_version).await, "HTTP/1.1 426");
    let no_subprotocol = upgrade("13", "");
    assert_eq!(status_of(&gateway, &no_subprotocol).await, "HTTP/1.1 400");
    let not_an_upgrade = "GET /$servicebus/websocket HTTP/1.1\r\nHost: localhost\r\n\r\n";
    assert_eq!(status_of(&gateway, not_an_upgrade).await, "HTTP/1.1 400");
    gateway.still_serves().await;
}
