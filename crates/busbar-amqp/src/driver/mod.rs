//! The tokio driver: one task per TCP connection runs the sans-IO [`Connection`] engine, selecting
//! over the socket, the application's command channel and one idle timer.
//!
//! Bounded everywhere: the read buffer never holds more than one maximum-size frame plus one read
//! chunk, the command channel has a fixed capacity, and outgoing bytes are written (and awaited)
//! before more input is read, so a peer that does not read stops being read from.

mod acceptor;
mod clock;
mod handshakes;
mod serve;

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

use crate::condition;
use crate::engine::{Connection, ConnectionConfig, Event, Millis};

pub use acceptor::Acceptor;
pub use serve::serve;

use clock::Clock;
use handshakes::HandshakeSlot;

/// Bytes asked of the socket per read.
const READ_CHUNK: usize = 16 * 1024;

/// The application side of a connection: told every engine event, and every command sent to the
/// connection's channel, each with the engine to act on.
pub trait ConnectionHandler: Send + 'static {
    /// What other tasks send to this connection (completions, deliveries to make …).
    type Command: Send + 'static;

    /// Reacts to an engine event (answer SASL, accept attaches, store transfers …).
    fn on_event(&mut self, event: Event, connection: &mut Connection, now: Millis);

    /// Applies a command received on the connection's channel.
    fn on_command(&mut self, command: Self::Command, connection: &mut Connection, now: Millis);

    /// Called once the commands waiting on the channel (up to its capacity) have been applied,
    /// before the engine's output is written: a handler that held replies back to coalesce them
    /// (one ranged disposition for many settled deliveries) sends them now.
    fn on_commands_applied(&mut self, _connection: &mut Connection, _now: Millis) {}

    /// Called once the events of the input read so far have been handled, before the engine's
    /// output is written: a handler that held work back to coalesce it (the settlements of many
    /// `disposition` frames, applied in one entity command) hands it on now.
    fn on_events_handled(&mut self, _connection: &mut Connection, _now: Millis) {}
}

/// How the driver runs connections.
#[derive(Clone, Debug)]
pub struct DriverConfig {
    /// The engine's limits and advertised values.
    pub engine: ConnectionConfig,
    /// Capacity of each connection's command channel.
    pub command_capacity: usize,
    /// Connections served at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// Connections that may be in their handshake at once (accepted, the peer's `open` not yet
    /// received); a connection accepted beyond it is closed at once.
    pub max_handshaking: usize,
}

impl Default for DriverConfig {
    fn default() -> Self {
        Self {
            engine: ConnectionConfig::default(),
            command_capacity: 256,
            max_connections: 10_000,
            max_handshaking: 256,
        }
    }
}

/// The socket failed under a connection.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Reading or writing the socket failed.
    #[error("socket error: {0}")]
    Io(#[from] std::io::Error),
}

/// Tells the server and all its connections to stop: no new connections are accepted, and open
/// ones are closed with `amqp:connection:forced`.
#[derive(Debug)]
pub struct Shutdown {
    sender: watch::Sender<bool>,
}

/// The receiving side of a [`Shutdown`], cloned into every task.
#[derive(Clone, Debug)]
pub struct ShutdownSignal {
    receiver: watch::Receiver<bool>,
}

impl Shutdown {
    /// A shutdown switch and the signal to hand to [`serve`] and [`run_connection`].
    pub fn new() -> (Self, ShutdownSignal) {
        let (sender, receiver) = watch::channel(false);
        (Self { sender }, ShutdownSignal { receiver })
    }

    /// Starts the shutdown.
    pub fn trigger(&self) {
        self.sender.send_replace(true);
    }
}

impl ShutdownSignal {
    /// Resolves once shutdown has been triggered (or its switch dropped).
    pub async fn triggered(&mut self) {
        // An error means the switch is gone, which is a shutdown too.
        let _ = self.receiver.wait_for(|stop| *stop).await;
    }
}

/// Runs one connection to its end: feeds the socket's bytes to the engine, hands events and
/// commands to `handler`, writes what the engine produced in one write, and fires the engine's
/// time-outs (idle, handshake, close).
pub async fn run_connection<S, H>(
    stream: S,
    handler: H,
    commands: mpsc::Receiver<H::Command>,
    config: ConnectionConfig,
    shutdown: ShutdownSignal,
) -> Result<(), DriverError>
where
    S: AsyncRead + AsyncWrite + Unpin,
    H: ConnectionHandler,
{
    drive(
        stream,
        handler,
        commands,
        config,
        shutdown,
        HandshakeSlot::uncounted(),
    )
    .await
}

/// [`run_connection`], giving `handshake` back once the handshake is over (or the task ends).
async fn drive<S, H>(
    mut stream: S,
    mut handler: H,
    mut commands: mpsc::Receiver<H::Command>,
    config: ConnectionConfig,
    mut shutdown: ShutdownSignal,
    mut handshake: HandshakeSlot,
) -> Result<(), DriverError>
where
    S: AsyncRead + AsyncWrite + Unpin,
    H: ConnectionHandler,
{
    let clock = Clock::new();
    let mut connection = Connection::new(config, clock.now());
    let input_limit = connection.input_limit();
    let mut input = BytesMut::with_capacity(READ_CHUNK);
    let mut output = BytesMut::with_capacity(READ_CHUNK);
    let mut shutting_down = false;
    loop {
        loop {
            while let Some(event) = connection.poll_event() {
                handler.on_event(event, &mut connection, clock.now());
            }
            // Input the engine left while it waited for the application (a header pipelined
            // after sasl-init) is looked at again once the events are handled.
            let pending = input.len();
            if pending == 0 {
                break;
            }
            connection.handle_input(&mut input, clock.now());
            if input.len() == pending {
                break;
            }
        }
        handler.on_events_handled(&mut connection, clock.now());
        connection.poll_transmit(&mut output);
        // Given back before our `open` (or the closing of the socket) reaches the peer, so a
        // peer that saw its handshake end finds its place free.
        if !connection.is_handshaking() {
            handshake.leave();
        }
        if !output.is_empty() {
            stream.write_all(&output).await?;
            output.clear();
        }
        if connection.is_finished() {
            break;
        }
        // Deliveries paced by the outbox go on at once, input still read between turns.
        let paced = connection.wants_transmit();
        let deadline = connection.poll_timeout().map(|at| clock.instant_at(at));
        let can_read = input.len() < input_limit;
        if can_read {
            input.reserve(READ_CHUNK);
        }
        tokio::select! {
            read = stream.read_buf(&mut input), if can_read => {
                let now = clock.now();
                if read? == 0 {
                    connection.handle_eof(now);
                } else {
                    connection.handle_input(&mut input, now);
                }
            }
            Some(command) = commands.recv() => {
                handler.on_command(command, &mut connection, clock.now());
                // Everything already queued goes out in one write (bounded, so input is still
                // read between runs).
                for _ in 1..commands.max_capacity() {
                    let Ok(command) = commands.try_recv() else {
                        break;
                    };
                    handler.on_command(command, &mut connection, clock.now());
                }
                handler.on_commands_applied(&mut connection, clock.now());
            }
            () = sleep_until(deadline) => connection.handle_timeout(clock.now()),
            () = std::future::ready(()), if paced => {}
            () = shutdown.triggered(), if !shutting_down => {
                shutting_down = true;
                connection.close(Some(crate::performatives::AmqpError::new(
                    condition::CONNECTION_FORCED,
                    "the server is shutting down",
                )));
            }
        }
    }
    // Flush and end the stream; a peer that already went away is not an error worth reporting.
    let _ = stream.shutdown().await;
    linger(&mut stream).await;
    Ok(())
}

/// Most bytes read and dropped after our close, and for how long.
const LINGER_BYTES: usize = 1024 * 1024;
const LINGER_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// Reads and drops what the peer still sends (boundedly) before the socket is dropped: closing
/// with unread input makes the kernel reset the connection, and a reset can destroy our `close`
/// frame before the peer reads it.
async fn linger<S: AsyncRead + Unpin>(stream: &mut S) {
    let mut sink = [0u8; 4096];
    let mut dropped = 0;
    let drain = async {
        while dropped < LINGER_BYTES {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => dropped += n,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, drain).await;
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
