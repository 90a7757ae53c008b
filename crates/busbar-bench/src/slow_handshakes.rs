//! `busbar-bench slow-handshakes`: how long a broker lets connections that never finish their
//! opening handshake hold a socket. Each connection sends only a protocol header (or nothing)
//! and then stays silent; every second the tool counts how many the broker still holds open and
//! prints the counts over time as a Markdown table.

use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use crate::error::BenchError;

/// What each silent connection sends before falling silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opening {
    /// Not a byte.
    Nothing,
    /// The AMQP protocol header.
    AmqpHeader,
    /// The SASL protocol header.
    SaslHeader,
}

impl Opening {
    pub(crate) fn parse(text: &str) -> Option<Opening> {
        match text {
            "nothing" => Some(Opening::Nothing),
            "amqp-header" => Some(Opening::AmqpHeader),
            "sasl-header" => Some(Opening::SaslHeader),
            _ => None,
        }
    }

    fn bytes(self) -> &'static [u8] {
        match self {
            Opening::Nothing => b"",
            Opening::AmqpHeader => b"AMQP\x00\x01\x00\x00",
            Opening::SaslHeader => b"AMQP\x03\x01\x00\x00",
        }
    }
}

/// The options of `slow-handshakes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SlowHandshakeOptions {
    /// The broker's `host:port`.
    pub(crate) address: String,
    /// How many silent connections.
    pub(crate) connections: usize,
    /// How long to watch them.
    pub(crate) seconds: u64,
    /// What each sends first.
    pub(crate) opening: Opening,
}

/// Opens the connections, then prints how many are open at each second.
pub(crate) async fn run(options: SlowHandshakeOptions) -> Result<(), BenchError> {
    let broker = |detail: std::io::Error| BenchError::Broker {
        step: "connect",
        detail: detail.to_string(),
    };
    let mut open = Vec::with_capacity(options.connections);
    for _ in 0..options.connections {
        let stream = TcpStream::connect(&options.address).await.map_err(broker)?;
        stream.writable().await.map_err(broker)?;
        stream.try_write(options.opening.bytes()).map_err(broker)?;
        open.push(stream);
    }
    let started = Instant::now();
    println!("| seconds | connections open |\n|---:|---:|");
    for second in 0..=options.seconds {
        tokio::time::sleep_until((started + Duration::from_secs(second)).into()).await;
        open.retain(still_open);
        println!("| {second} | {} |", open.len());
    }
    Ok(())
}

/// Whether the broker still holds `stream` open (what it sent, such as its own header, is read
/// and dropped).
fn still_open(stream: &TcpStream) -> bool {
    let mut buffer = [0u8; 4096];
    loop {
        match stream.try_read(&mut buffer) {
            Ok(0) => return false,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    }
}
