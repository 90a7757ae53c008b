//! Hostile input through the real driver on loopback: garbage headers, oversize and truncated
//! frames, bad types and 10k attaches. Each bad connection is closed with the right condition,
//! nothing panics, and a client connected meanwhile keeps working.

#![allow(clippy::unwrap_used)]

mod interop_node;

use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::BytesMut;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use busbar_amqp::condition;
use busbar_amqp::engine::ConnectionConfig;
use busbar_amqp::frame::{Frame, FrameDecoder, ProtocolHeader, encode_amqp_frame};
use busbar_amqp::performatives::{
    Attach, Begin, Close, Handle, Open, Performative, ReceiverSettleMode, Role, SenderSettleMode,
    TransferNumber,
};
use fe2o3_amqp::sasl_profile::SaslProfile;
use fe2o3_amqp::{Connection, Receiver, Sender, Session};

const STEP: Duration = Duration::from_secs(10);

async fn step<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, future)
        .await
        .expect("step timed out")
}

fn amqp_start() -> BytesMut {
    let mut out = BytesMut::new();
    out.extend_from_slice(&ProtocolHeader::Amqp.to_bytes());
    let open = Open {
        container_id: "hostile".into(),
        hostname: None,
        max_frame_size: 65536,
        channel_max: 10,
        idle_time_out: None,
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    encode_amqp_frame(0, &Performative::Open(open), &[], &mut out);
    out
}

/// Writes `bytes` (concurrently, ignoring write errors once the server hung up) and reads
/// everything until the server closes. Returns the bytes read.
async fn exchange(node: &interop_node::Node, bytes: BytesMut, half_close: bool) -> Vec<u8> {
    let stream = TcpStream::connect(node.addr).await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    let write = tokio::spawn(async move {
        let _ = writer.write_all(&bytes).await;
        if half_close {
            let _ = writer.shutdown().await;
        }
        writer
    });
    let mut received = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match step(reader.read(&mut chunk)).await {
            Ok(0) | Err(_) => break,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
        }
    }
    drop(write.await.unwrap());
    received
}

/// The frames after the protocol header.
fn frames(received: &[u8]) -> Vec<Performative> {
    assert_eq!(&received[..8], &ProtocolHeader::Amqp.to_bytes()[..]);
    let mut buf = BytesMut::from(&received[8..]);
    let mut decoder = FrameDecoder::new(u32::MAX);
    let mut out = Vec::new();
    while let Ok(Some(frame)) = decoder.decode(&mut buf) {
        if let Frame::Amqp(frame) = frame {
            out.push(frame.performative);
        }
    }
    out
}

fn close_condition(performatives: &[Performative]) -> Option<String> {
    performatives.iter().find_map(|p| match p {
        Performative::Close(Close { error: Some(error) }) => {
            Some(error.condition.as_str().to_owned())
        }
        _ => None,
    })
}

fn attach(handle: u32) -> Performative {
    Performative::Attach(Attach {
        name: format!("l{handle}"),
        handle: Handle(handle),
        role: Role::Receiver,
        snd_settle_mode: SenderSettleMode::Mixed,
        rcv_settle_mode: ReceiverSettleMode::First,
        source: None,
        target: None,
        unsettled: None,
        incomplete_unsettled: false,
        initial_delivery_count: None,
        max_message_size: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_connections_are_closed_and_others_keep_working() {
    let node = interop_node::start(ConnectionConfig {
        max_frame_size: 4096,
        handle_max: 63,
        ..ConnectionConfig::default()
    })
    .await;

    // A well-behaved client, connected before the attacks.
    let url = format!("amqp://{}", node.addr);
    let mut good = step(
        Connection::builder()
            .container_id("good")
            .sasl_profile(SaslProfile::Anonymous)
            .open(url.as_str()),
    )
    .await
    .unwrap();
    let mut session = step(Session::begin(&mut good)).await.unwrap();
    let mut sender = step(Sender::attach(&mut session, "s", "q")).await.unwrap();

    // Garbage protocol header: answered with ours, then closed.
    let received = exchange(&node, BytesMut::from(&b"GET / HTTP/1.1\r\n\r\n"[..]), false).await;
    assert_eq!(received, ProtocolHeader::Amqp.to_bytes());

    // A frame above our max-frame-size: framing-error.
    let mut bytes = amqp_start();
    bytes.extend_from_slice(&[0, 16, 0, 0, 2, 0, 0, 0]);
    let performatives = frames(&exchange(&node, bytes, false).await);
    assert!(matches!(performatives[0], Performative::Open(_)));
    assert_eq!(
        close_condition(&performatives).as_deref(),
        Some(condition::FRAMING_ERROR)
    );

    // A truncated frame, then the client hangs up: no reply beyond our open, the task ends.
    let mut bytes = amqp_start();
    bytes.extend_from_slice(&[0, 0, 0, 100, 2, 0, 0, 0, 0x00, 0x53]);
    let performatives = frames(&exchange(&node, bytes, true).await);
    assert_eq!(performatives.len(), 1);

    // A body with an undefined constructor: decode-error.
    let mut bytes = amqp_start();
    bytes.extend_from_slice(&[0, 0, 0, 12, 2, 0, 0, 0, 0x00, 0x53, 0x11, 0xff]);
    let performatives = frames(&exchange(&node, bytes, false).await);
    assert_eq!(
        close_condition(&performatives).as_deref(),
        Some(condition::DECODE_ERROR)
    );

    // 10k attaches on one session: the first 64 fit under handle-max, the 65th closes the
    // connection with framing-error (the driver lingers so the close is not lost to a reset).
    let mut bytes = amqp_start();
    let begin = Begin {
        remote_channel: None,
        next_outgoing_id: TransferNumber(0),
        incoming_window: 100,
        outgoing_window: 100,
        handle_max: Handle(u32::MAX),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    encode_amqp_frame(0, &Performative::Begin(begin), &[], &mut bytes);
    for handle in 0..10_000 {
        encode_amqp_frame(0, &attach(handle), &[], &mut bytes);
    }
    let received = exchange(&node, bytes, false).await;
    let performatives = frames(&received);
    assert_eq!(
        close_condition(&performatives).as_deref(),
        Some(condition::FRAMING_ERROR)
    );
    assert!(
        performatives
            .iter()
            .filter(|p| matches!(p, Performative::Attach(_)))
            .count()
            <= 64
    );

    // Every hostile connection was closed (5), and the good client still works.
    let closed = async {
        while node.stats.connections_closed.load(Ordering::Relaxed) < 5 {
            tokio::task::yield_now().await;
        }
    };
    step(closed).await;
    let mut receiver = step(Receiver::attach(&mut session, "r", "q"))
        .await
        .unwrap();
    step(sender.send("still here".to_owned())).await.unwrap();
    let delivery = step(receiver.recv::<String>()).await.unwrap();
    assert_eq!(delivery.body(), "still here");
    step(receiver.accept(&delivery)).await.unwrap();
    step(good.close()).await.unwrap();

    node.shutdown.trigger();
    step(node.task).await.unwrap().unwrap();
}
