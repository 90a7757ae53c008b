//! The AMQP side of the scenarios, through fe2o3-amqp: one connection per producer or consumer,
//! a send loop that keeps N deliveries unsettled, and a receive loop that settles as it goes.

use std::collections::VecDeque;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fe2o3_amqp::connection::ConnectionHandle;
use fe2o3_amqp::link::receiver::CreditMode;
use fe2o3_amqp::session::SessionHandle;
use fe2o3_amqp::types::definitions::{
    AmqpError, ErrorCondition, ReceiverSettleMode, SenderSettleMode,
};
use fe2o3_amqp::types::messaging::{
    ApplicationProperties, Body, Header, Message, Outcome, Rejected,
};
use fe2o3_amqp::types::primitives::{Binary, Value};
use fe2o3_amqp::{Receiver, Sender, Session};
use hdrhistogram::Histogram;

use crate::error::BenchError;
use crate::transport::Connector;

/// Bound on any single broker step (connect, attach, one outcome, close), so a stuck broker
/// fails the scenario instead of hanging the run.
const STEP: Duration = Duration::from_secs(30);
/// How often a waiting consumer re-checks whether its queue is done.
const RECHECK: Duration = Duration::from_millis(100);
/// Body bytes that carry the send time, for send→receive latency.
pub(crate) const STAMP_BYTES: usize = 8;

/// Runs a broker step under [`STEP`], naming it in the error.
pub(crate) async fn step<T, E: std::fmt::Display>(
    name: &'static str,
    future: impl Future<Output = Result<T, E>>,
) -> Result<T, BenchError> {
    match tokio::time::timeout(STEP, future).await {
        Ok(result) => result.map_err(|error| BenchError::broker(name, error)),
        Err(_) => Err(BenchError::TimedOut(name)),
    }
}

/// Microseconds since the first call in this process: the clock stamped into bodies.
fn now_micros() -> u64 {
    static ANCHOR: OnceLock<Instant> = OnceLock::new();
    let micros = ANCHOR.get_or_init(Instant::now).elapsed().as_micros();
    u64::try_from(micros).unwrap_or(u64::MAX)
}

/// A histogram of microseconds from 1 µs to 10 minutes, three significant figures.
pub(crate) fn latency_histogram() -> Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts; a failure here is a programming error.
    Histogram::new_with_bounds(1, 600_000_000, 3).expect("valid histogram bounds")
}

/// One client connection with one session.
pub(crate) struct Client {
    connection: ConnectionHandle<()>,
    session: SessionHandle<()>,
}

/// How a consumer settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReceiveMode {
    /// Unsettled deliveries, each completed (accepted) explicitly by the client.
    PeekLock,
    /// Deliveries settled by the broker on sending.
    ReceiveAndDelete,
}

/// What a send or receive loop did.
pub(crate) struct Tally {
    /// Messages accepted (sends) or received (receives).
    pub(crate) completed: u64,
    /// Sends with an outcome other than accepted.
    pub(crate) not_accepted: u64,
    /// Of those, sends rejected with `amqp:resource-limit-exceeded` (the entity is full).
    pub(crate) refused_quota: u64,
    /// Latencies in microseconds.
    pub(crate) latencies: Histogram<u64>,
    /// When the loop ended (before any link or connection is closed).
    pub(crate) finished: Instant,
}

impl Tally {
    /// Nothing yet.
    pub(crate) fn new() -> Self {
        Self {
            completed: 0,
            not_accepted: 0,
            refused_quota: 0,
            latencies: latency_histogram(),
            finished: Instant::now(),
        }
    }

    fn record(&mut self, micros: u64) {
        self.latencies.saturating_record(micros.max(1));
    }
}

/// A queue's traffic, shared by its producers and consumers: consumers stop when `consumed`
/// reaches `expected`, which is known once the last producer has finished.
pub(crate) struct QueueProgress {
    /// How many messages the consumers should take (`u64::MAX` while producers still run).
    expected: AtomicU64,
    /// How many they took.
    consumed: AtomicU64,
    /// Accepted sends of the producers that finished.
    produced: AtomicU64,
    /// Producers still running.
    producers_left: AtomicUsize,
}

impl QueueProgress {
    /// A queue fed by `producers` producers (0: its content is given by [`Self::expect`]).
    pub(crate) fn new(producers: usize) -> Self {
        Self {
            expected: AtomicU64::new(u64::MAX),
            consumed: AtomicU64::new(0),
            produced: AtomicU64::new(0),
            producers_left: AtomicUsize::new(producers),
        }
    }

    /// Consumers should take exactly `messages`.
    pub(crate) fn expect(&self, messages: u64) {
        self.expected.store(messages, Ordering::Relaxed);
    }

    /// A producer finished with `accepted` messages; the last one fixes the expected count.
    pub(crate) fn producer_finished(&self, accepted: u64) {
        let produced = self.produced.fetch_add(accepted, Ordering::AcqRel) + accepted;
        if self.producers_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.expect(produced);
        }
    }

    fn done(&self) -> bool {
        self.consumed.load(Ordering::Relaxed) >= self.expected.load(Ordering::Relaxed)
    }
}

impl Client {
    /// Opens a connection (SASL PLAIN from the URL's credentials) and begins a session.
    pub(crate) async fn connect(
        connector: &Connector,
        container_id: String,
    ) -> Result<Self, BenchError> {
        let mut connection = step("connect", connector.open(container_id)).await?;
        let session = step("begin session", Session::begin(&mut connection)).await?;
        Ok(Self {
            connection,
            session,
        })
    }

    /// Attaches a sender to `address`.
    pub(crate) async fn sender(&mut self, address: &str) -> Result<Sender, BenchError> {
        attach_sender(&mut self.session, format!("send-{address}"), address).await
    }

    /// Attaches a receiver to `address` with `credit` kept topped up by the client.
    pub(crate) async fn receiver(
        &mut self,
        address: &str,
        mode: ReceiveMode,
        credit: u32,
    ) -> Result<Receiver, BenchError> {
        let settle = match mode {
            ReceiveMode::PeekLock => SenderSettleMode::Unsettled,
            ReceiveMode::ReceiveAndDelete => SenderSettleMode::Settled,
        };
        step(
            "attach receiver",
            Receiver::builder()
                .name(format!("receive-{address}"))
                .source(address)
                .sender_settle_mode(settle)
                .receiver_settle_mode(ReceiverSettleMode::First)
                .credit_mode(CreditMode::Auto(credit))
                .attach(&mut self.session),
        )
        .await
    }

    /// The connection's session, for links the helpers here do not make.
    pub(crate) fn session(&mut self) -> &mut SessionHandle<()> {
        &mut self.session
    }

    /// Ends the session and closes the connection.
    pub(crate) async fn close(mut self) -> Result<(), BenchError> {
        step("end session", self.session.end()).await?;
        step("close connection", self.connection.close()).await
    }
}

/// Attaches a sender named `name` to `address`; each send waits for its outcome (unsettled).
pub(crate) async fn attach_sender(
    session: &mut SessionHandle<()>,
    name: String,
    address: &str,
) -> Result<Sender, BenchError> {
    step(
        "attach sender",
        Sender::builder()
            .name(name)
            .target(address)
            .sender_settle_mode(SenderSettleMode::Unsettled)
            .attach(session),
    )
    .await
}

/// What a producer sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Payload {
    /// Body size in bytes.
    pub(crate) body_bytes: usize,
    /// An application property (name, string value) for topic subscriptions to filter on.
    pub(crate) property: Option<(&'static str, &'static str)>,
}

/// A message of `payload`, its body's first [`STAMP_BYTES`] holding the send time. Marked
/// durable so that a broker which honours the flag (RabbitMQ) persists it as Busbar does.
fn stamped_message(payload: Payload) -> Message<fe2o3_amqp::types::messaging::Data> {
    let mut body = vec![0x5a; payload.body_bytes.max(STAMP_BYTES)];
    body[..STAMP_BYTES].copy_from_slice(&now_micros().to_le_bytes());
    let properties = payload
        .property
        .map(|(name, value)| ApplicationProperties::builder().insert(name, value).build());
    Message::builder()
        .header(Header::builder().durable(true).build())
        .application_properties(properties)
        .data(Binary::from(body))
        .build()
}

/// The send time stamped in a received body, if it has one.
fn stamp_of(body: &Body<Value>) -> Option<u64> {
    let Body::Data(batch) = body else {
        return None;
    };
    let first = batch.iter().next()?;
    let stamp: [u8; STAMP_BYTES] = first.0.get(..STAMP_BYTES)?.try_into().ok()?;
    Some(u64::from_le_bytes(stamp))
}

/// Sends up to `limit` messages of `payload` until `until`, keeping `in_flight` unsettled;
/// latency is send to outcome. The broker settles a link's deliveries in order, so outcomes are
/// awaited oldest first.
pub(crate) async fn send_loop(
    sender: &mut Sender,
    payload: Payload,
    in_flight: usize,
    limit: u64,
    until: Instant,
) -> Result<Tally, BenchError> {
    let mut tally = Tally::new();
    let mut pending = VecDeque::with_capacity(in_flight);
    let mut sent = 0;
    while sent < limit && Instant::now() < until {
        if pending.len() >= in_flight.max(1) {
            settle_oldest(&mut pending, &mut tally).await?;
        }
        let started = now_micros();
        let outcome = step("send", sender.send_batchable(stamped_message(payload))).await?;
        pending.push_back((started, outcome));
        sent += 1;
    }
    while !pending.is_empty() {
        settle_oldest(&mut pending, &mut tally).await?;
    }
    tally.finished = Instant::now();
    Ok(tally)
}

type PendingOutcome =
    fe2o3_amqp::link::delivery::DeliveryFut<Result<Outcome, fe2o3_amqp::link::SendError>>;

async fn settle_oldest(
    pending: &mut VecDeque<(u64, PendingOutcome)>,
    tally: &mut Tally,
) -> Result<(), BenchError> {
    let Some((started, outcome)) = pending.pop_front() else {
        return Ok(());
    };
    match step("outcome", outcome).await? {
        Outcome::Accepted(_) => {
            tally.completed += 1;
            tally.record(now_micros().saturating_sub(started));
        }
        Outcome::Rejected(rejected) if is_quota_refusal(&rejected) => {
            tally.not_accepted += 1;
            tally.refused_quota += 1;
        }
        _ => tally.not_accepted += 1,
    }
    Ok(())
}

/// Whether a rejection says the entity reached its size quota.
fn is_quota_refusal(rejected: &Rejected) -> bool {
    rejected.error.as_ref().is_some_and(|error| {
        error.condition == ErrorCondition::AmqpError(AmqpError::ResourceLimitExceeded)
    })
}

/// Receives and completes one message at a time, at most `per_second` a second, until `until`;
/// returns how many it completed. The slow consumer of the quota scenario.
pub(crate) async fn settle_at_rate(
    receiver: &mut Receiver,
    per_second: u32,
    until: Instant,
) -> Result<u64, BenchError> {
    let mut ticks = tokio::time::interval(Duration::from_secs(1) / per_second.max(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut completed = 0;
    while Instant::now() < until {
        ticks.tick().await;
        let delivery = match tokio::time::timeout(RECHECK, receiver.recv::<Body<Value>>()).await {
            Ok(delivery) => delivery.map_err(|error| BenchError::broker("receive", error))?,
            Err(_) => continue,
        };
        step("complete", receiver.accept(&delivery)).await?;
        completed += 1;
    }
    Ok(completed)
}

/// What a receive loop measures as latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReceiveLatency {
    /// From the send time stamped in the body to its arrival.
    SinceSent,
    /// How long the client waited for each message and settled it.
    ServiceTime,
}

/// Receives until the queue's consumers have taken what is expected or `until` passes,
/// completing each message explicitly in peek-lock mode; `credit` is what the link was
/// attached with (at least 2).
pub(crate) async fn receive_loop(
    receiver: &mut Receiver,
    mode: ReceiveMode,
    credit: u32,
    latency: ReceiveLatency,
    progress: &QueueProgress,
    until: Instant,
) -> Result<Tally, BenchError> {
    let mut tally = Tally::new();
    while !progress.done() && Instant::now() < until {
        let waited_from = now_micros();
        let delivery = match tokio::time::timeout(RECHECK, receiver.recv::<Body<Value>>()).await {
            Ok(delivery) => delivery.map_err(|error| BenchError::broker("receive", error))?,
            Err(_) => continue,
        };
        match mode {
            ReceiveMode::PeekLock => step("complete", receiver.accept(&delivery)).await?,
            // fe2o3 tops credit up only when the client settles, which pre-settled deliveries
            // never need: top it up by hand at the same half-way mark.
            ReceiveMode::ReceiveAndDelete
                if (tally.completed + 1).is_multiple_of(u64::from(credit / 2)) =>
            {
                step("flow", receiver.set_credit(credit)).await?;
            }
            ReceiveMode::ReceiveAndDelete => {}
        }
        let arrived = now_micros();
        let micros = match latency {
            ReceiveLatency::SinceSent => {
                stamp_of(delivery.body()).map_or(0, |sent| arrived.saturating_sub(sent))
            }
            ReceiveLatency::ServiceTime => arrived.saturating_sub(waited_from),
        };
        tally.record(micros);
        tally.completed += 1;
        progress.consumed.fetch_add(1, Ordering::Relaxed);
    }
    tally.finished = Instant::now();
    Ok(tally)
}
