//! Producers and consumers at once, each on its own connection: the wiring (which consumers
//! wait for which producers) and the runner that connects them, times the measured part and
//! samples the broker around it. Shared by the scenarios and the matrix.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::{self, Client, Payload, QueueProgress, ReceiveLatency, ReceiveMode, Tally};
use crate::error::BenchError;
use crate::probe::{BrokerProbe, ProcessSample};
use crate::report::BrokerUsage;
use crate::transport::Connector;

/// How long consumers may keep draining after the producers' time is up.
pub(crate) const DRAIN_GRACE: Duration = Duration::from_secs(15);

/// One producer connection: where it sends, and the progress of every consumer group that
/// receives what it sends (one per queue, or one per subscription of a topic).
pub(crate) struct Producer {
    /// Its link's target address.
    pub(crate) address: String,
    /// A tag returned with its tally (the queue number in the scenarios).
    pub(crate) tag: usize,
    /// The groups it feeds.
    pub(crate) feeds: Vec<Arc<QueueProgress>>,
}

/// One consumer connection (peek-lock, each delivery accepted).
pub(crate) struct Consumer {
    /// Its link's source address.
    pub(crate) address: String,
    /// The credit it keeps topped up.
    pub(crate) credit: u32,
    /// Its group: it stops once the group has taken what the group's producers sent.
    pub(crate) progress: Arc<QueueProgress>,
}

/// What every producer of a [`run`] sends, and for how long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Load {
    /// Each message.
    pub(crate) payload: Payload,
    /// Unsettled sends each producer keeps.
    pub(crate) in_flight: usize,
    /// Most messages each producer sends.
    pub(crate) per_producer: u64,
    /// The producers' time.
    pub(crate) duration: Duration,
}

/// What [`run`] measured.
pub(crate) struct FlowOutcome {
    /// Each producer's tag and tally, in the order given.
    pub(crate) sent: Vec<(usize, Tally)>,
    /// All consumers' tallies, merged.
    pub(crate) received: Tally,
    /// The broker around the measured part.
    pub(crate) before: Option<ProcessSample>,
    /// The broker after it.
    pub(crate) after: Option<ProcessSample>,
    /// When the measured part started.
    pub(crate) started: Instant,
}

impl FlowOutcome {
    /// The producers' tallies merged.
    pub(crate) fn sent_total(&self) -> Tally {
        let mut total = Tally::new();
        for (_, tally) in &self.sent {
            merge(&mut total, tally);
        }
        total
    }
}

/// Connects every producer and consumer, then runs them together: each producer sends as
/// `load` says, each consumer receives until its group has what the group's producers sent (or
/// the grace ends).
pub(crate) async fn run(
    connector: &Arc<Connector>,
    probe: Option<BrokerProbe>,
    producers: Vec<Producer>,
    consumers: Vec<Consumer>,
    load: Load,
) -> Result<FlowOutcome, BenchError> {
    let mut senders = Vec::new();
    for (index, producer) in producers.into_iter().enumerate() {
        let mut client = Client::connect(connector, format!("p{}-{index}", producer.tag)).await?;
        let sender = client.sender(&producer.address).await?;
        senders.push((producer, client, sender));
    }
    let mut receivers = Vec::new();
    for (index, consumer) in consumers.into_iter().enumerate() {
        let mut client = Client::connect(connector, format!("c{index}")).await?;
        let receiver = client
            .receiver(&consumer.address, ReceiveMode::PeekLock, consumer.credit)
            .await?;
        receivers.push((consumer, client, receiver));
    }
    let before = probe.and_then(|probe| probe.sample());
    let started = Instant::now();
    let until = started + load.duration;
    let mut consumer_tasks = Vec::new();
    for (consumer, client, mut receiver) in receivers {
        consumer_tasks.push(tokio::spawn(async move {
            let tally = client::receive_loop(
                &mut receiver,
                ReceiveMode::PeekLock,
                consumer.credit,
                ReceiveLatency::SinceSent,
                &consumer.progress,
                until + DRAIN_GRACE,
            )
            .await?;
            close_client(receiver, client).await;
            Ok::<_, BenchError>(tally)
        }));
    }
    let mut producer_tasks = Vec::new();
    for (producer, client, mut sender) in senders {
        producer_tasks.push(tokio::spawn(async move {
            let tally = client::send_loop(
                &mut sender,
                load.payload,
                load.in_flight,
                load.per_producer,
                until,
            )
            .await;
            // On failure the consumers stop at their deadline; the error ends the run.
            let accepted = tally.as_ref().map_or(0, |tally| tally.completed);
            for progress in &producer.feeds {
                progress.producer_finished(accepted);
            }
            close_client(sender, client).await;
            tally.map(|tally| (producer.tag, tally))
        }));
    }
    let mut sent = Vec::new();
    for task in producer_tasks {
        sent.push(join(task).await?);
    }
    let mut received = Tally::new();
    for task in consumer_tasks {
        merge(&mut received, &join(task).await?);
    }
    let after = probe.and_then(|probe| probe.sample());
    Ok(FlowOutcome {
        sent,
        received,
        before,
        after,
        started,
    })
}

/// The broker's CPU and memory between two samples, per message.
pub(crate) fn usage(
    before: Option<ProcessSample>,
    after: Option<ProcessSample>,
    messages: u64,
) -> Option<BrokerUsage> {
    before
        .zip(after)
        .map(|(before, after)| before.usage_until(&after, messages))
}

/// Adds `from` into `into`.
pub(crate) fn merge(into: &mut Tally, from: &Tally) {
    into.completed += from.completed;
    into.not_accepted += from.not_accepted;
    into.refused_quota += from.refused_quota;
    into.finished = into.finished.max(from.finished);
    // Both histograms have the same bounds, so adding cannot fail; saturate if it ever did.
    if into.latencies.add(&from.latencies).is_err() {
        into.latencies.saturating_record(from.latencies.max());
    }
}

/// Waits for a client task, turning a panic into an error.
pub(crate) async fn join<T>(
    task: tokio::task::JoinHandle<Result<T, BenchError>>,
) -> Result<T, BenchError> {
    task.await
        .map_err(|error| BenchError::broker("client task", error))?
}

/// Ends a client after the measured part. Its links are detached implicitly by the session's
/// end (closing them one by one first fails with "illegal local state" against RabbitMQ 3.10);
/// a failure here does not change the figures, so it is a warning.
pub(crate) async fn close_client<L>(link: L, client: Client) {
    drop(link);
    if let Err(error) = client.close().await {
        eprintln!("warning: {error}");
    }
}
