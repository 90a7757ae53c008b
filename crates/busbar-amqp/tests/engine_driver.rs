//! The driver on loopback: a fully pipelined handshake (SASL init, AMQP header, open and begin in
//! one write) and shutdown closing open connections with `amqp:connection:forced`.
#![allow(clippy::unwrap_used)]

mod interop_node;

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use busbar_amqp::condition;
use busbar_amqp::engine::ConnectionConfig;
use busbar_amqp::frame::{
    Frame, FrameDecoder, ProtocolHeader, encode_amqp_frame, encode_sasl_frame,
};
use busbar_amqp::performatives::{
    Begin, Close, Handle, Open, Performative, SaslCode, SaslFrame, SaslInit, TransferNumber,
};

const STEP: Duration = Duration::from_secs(10);

/// Reads from `stream` until `decoder` yields a frame (after skipping `headers` protocol headers).
struct Reader {
    stream: TcpStream,
    buf: BytesMut,
    decoder: FrameDecoder,
}

impl Reader {
    async fn fill(&mut self) {
        let n = tokio::time::timeout(STEP, self.stream.read_buf(&mut self.buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "server closed the connection early");
    }

    async fn header(&mut self) -> ProtocolHeader {
        loop {
            if let Some(header) = ProtocolHeader::decode(&mut self.buf).unwrap() {
                return header;
            }
            self.fill().await;
        }
    }

    async fn frame(&mut self) -> Frame {
        loop {
            if let Some(frame) = self.decoder.decode(&mut self.buf).unwrap() {
                return frame;
            }
            self.fill().await;
        }
    }

    async fn performative(&mut self) -> Performative {
        match self.frame().await {
            Frame::Amqp(frame) => frame.performative,
            other => panic!("expected an AMQP frame, got {other:?}"),
        }
    }
}

fn open() -> Performative {
    Performative::Open(Open {
        container_id: "pipelined".into(),
        hostname: Some("localhost".into()),
        max_frame_size: 65536,
        channel_max: 10,
        idle_time_out: Some(busbar_amqp::performatives::Milliseconds(60_000)),
        outgoing_locales: None,
        incoming_locales: None,
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipelined_handshake_and_shutdown() {
    let node = interop_node::start(ConnectionConfig::default()).await;
    let mut burst = BytesMut::new();
    burst.extend_from_slice(&ProtocolHeader::Sasl.to_bytes());
    let init = SaslInit {
        mechanism: "ANONYMOUS".into(),
        initial_response: Some(Bytes::from_static(b"\0RootManageSharedAccessKey")),
        hostname: Some("localhost".into()),
    };
    encode_sasl_frame(&SaslFrame::SaslInit(init), &mut burst);
    burst.extend_from_slice(&ProtocolHeader::Amqp.to_bytes());
    encode_amqp_frame(0, &open(), &[], &mut burst);
    let begin = Begin {
        remote_channel: None,
        next_outgoing_id: TransferNumber(0),
        incoming_window: 2048,
        outgoing_window: u32::MAX,
        handle_max: Handle(u32::MAX),
        offered_capabilities: None,
        desired_capabilities: None,
        properties: None,
    };
    encode_amqp_frame(1, &Performative::Begin(begin), &[], &mut burst);

    let mut stream = TcpStream::connect(node.addr).await.unwrap();
    stream.write_all(&burst).await.unwrap();
    let mut reader = Reader {
        stream,
        buf: BytesMut::new(),
        decoder: FrameDecoder::new(u32::MAX),
    };
    assert_eq!(reader.header().await, ProtocolHeader::Sasl);
    assert!(matches!(
        reader.frame().await,
        Frame::Sasl(SaslFrame::SaslMechanisms(_))
    ));
    match reader.frame().await {
        Frame::Sasl(SaslFrame::SaslOutcome(outcome)) => assert_eq!(outcome.code, SaslCode::Ok),
        other => panic!("expected sasl-outcome, got {other:?}"),
    }
    assert_eq!(reader.header().await, ProtocolHeader::Amqp);
    assert!(matches!(reader.performative().await, Performative::Open(_)));
    match reader.performative().await {
        Performative::Begin(begin) => assert_eq!(begin.remote_channel, Some(1)),
        other => panic!("expected begin, got {other:?}"),
    }

    // Shutdown: the open connection gets close(connection:forced); we answer and the server ends.
    node.shutdown.trigger();
    match reader.performative().await {
        Performative::Close(Close { error: Some(error) }) => {
            assert_eq!(error.condition.as_str(), condition::CONNECTION_FORCED);
        }
        other => panic!("expected close, got {other:?}"),
    }
    let mut reply = BytesMut::new();
    encode_amqp_frame(
        0,
        &Performative::Close(Close { error: None }),
        &[],
        &mut reply,
    );
    reader.stream.write_all(&reply).await.unwrap();
    drop(reader);
    tokio::time::timeout(STEP, node.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        TcpStream::connect(node.addr).await.is_err(),
        "the listener is gone"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_limit_wait_for_a_free_slot() {
    use busbar_amqp::driver::DriverConfig;
    let node = interop_node::start_with(DriverConfig {
        engine: ConnectionConfig::default(),
        command_capacity: 8,
        max_connections: 1,
        ..DriverConfig::default()
    })
    .await;
    let mut first = TcpStream::connect(node.addr).await.unwrap();
    first
        .write_all(&ProtocolHeader::Amqp.to_bytes())
        .await
        .unwrap();
    let mut header = [0u8; 8];
    tokio::time::timeout(STEP, first.read_exact(&mut header))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(header, ProtocolHeader::Amqp.to_bytes());

    // The second client is in the backlog: its header is not answered while the first is served.
    let mut second = TcpStream::connect(node.addr).await.unwrap();
    second
        .write_all(&ProtocolHeader::Amqp.to_bytes())
        .await
        .unwrap();
    let mut early = [0u8; 8];
    assert!(
        matches!(second.try_read(&mut early), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    );

    drop(first);
    tokio::time::timeout(STEP, second.read_exact(&mut header))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(header, ProtocolHeader::Amqp.to_bytes());
    node.shutdown.trigger();
    drop(second);
    tokio::time::timeout(STEP, node.task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
