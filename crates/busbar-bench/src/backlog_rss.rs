//! `busbar-bench backlog-rss`: whether the broker gives memory back after a backlog drains.
//! It fills queues with a backlog of large messages, drains them with receive-and-delete and
//! reads the broker's resident set size (`/proc/PID/status` `VmRSS`) at start, at its peak while
//! filling, once full, once drained and after some idle seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::client::{
    Client, Payload, QueueProgress, ReceiveLatency, ReceiveMode, receive_loop, send_loop,
};
use crate::error::BenchError;
use crate::probe::BrokerProbe;
use crate::transport::Connector;

/// What `busbar-bench backlog-rss` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BacklogOptions {
    /// The broker (SASL PLAIN credentials in the URL).
    pub(crate) url: String,
    /// The broker process to read RSS from.
    pub(crate) broker_pid: u32,
    /// The queues the backlog is spread over, each filled by its own connection.
    pub(crate) queues: Vec<String>,
    /// The backlog in megabytes (10^6 bytes of message bodies), over all queues.
    pub(crate) megabytes: u64,
    /// Each message body in KiB.
    pub(crate) message_kib: usize,
    /// How long to stay idle after the drain before the last reading.
    pub(crate) idle: Duration,
    /// The name of this run in the table.
    pub(crate) label: String,
    /// Fill and drain, or one of them (to restart the broker in between).
    pub(crate) phase: BacklogPhase,
}

/// What a run does with the backlog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BacklogPhase {
    Both,
    Fill,
    /// Drains a backlog an earlier `Fill` run left, of the same size.
    Drain,
}

/// Unsettled sends each producer keeps in flight.
const IN_FLIGHT: usize = 16;
/// Credit of each draining receiver.
const CREDIT: u32 = 64;
/// How often RSS is sampled for the peak.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// A bound on the whole fill or drain, so a stuck broker ends the run.
const PHASE_LIMIT: Duration = Duration::from_secs(600);

/// Fills, drains, idles, and prints one Markdown table row of RSS readings in MiB.
pub(crate) async fn run(options: BacklogOptions) -> Result<(), BenchError> {
    let probe = BrokerProbe::new(options.broker_pid);
    let rss = || {
        probe
            .sample()
            .map(|sample| sample.rss_bytes())
            .ok_or_else(|| BenchError::broker("read RSS", "the broker process is gone"))
    };
    let connector = Arc::new(Connector::new(&options.url, None)?);
    let start = rss()?;
    let peak = Arc::new(AtomicU64::new(start));
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = tokio::spawn(sample_peak(probe, Arc::clone(&peak), Arc::clone(&sampling)));
    let per_queue = options.megabytes * 1_000_000 / options.queues.len() as u64;
    let body_bytes = options.message_kib * 1024;
    let messages = per_queue.div_ceil(body_bytes as u64);
    let filled = Instant::now();
    let accepted = if options.phase == BacklogPhase::Drain {
        vec![messages; options.queues.len()]
    } else {
        fill(&connector, &options.queues, body_bytes, messages).await?
    };
    let fill_seconds = filled.elapsed().as_secs_f64();
    let full = rss()?;
    let drained_at = Instant::now();
    if options.phase != BacklogPhase::Fill {
        drain(&connector, &options.queues, &accepted).await?;
    }
    let drain_seconds = drained_at.elapsed().as_secs_f64();
    sampling.store(false, Ordering::Relaxed);
    let _ = sampler.await;
    let drained = rss()?;
    tokio::time::sleep(options.idle).await;
    let idle = rss()?;
    let total: u64 = accepted.iter().sum();
    let mib = |bytes: u64| bytes as f64 / f64::from(1u32 << 20);
    println!(
        "| allocator | backlog | RSS start | RSS peak | RSS full | RSS drained | RSS after {} s idle | fill s | drain s |",
        options.idle.as_secs()
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {:.0} MB ({total} × {} KiB) | {:.0} MiB | {:.0} MiB | {:.0} MiB | {:.0} MiB | {:.0} MiB | {fill_seconds:.1} | {drain_seconds:.1} |",
        options.label,
        (total * body_bytes as u64) as f64 / 1e6,
        options.message_kib,
        mib(start),
        mib(peak.load(Ordering::Relaxed).max(full).max(drained)),
        mib(full),
        mib(drained),
        mib(idle),
    );
    Ok(())
}

/// Sends `messages` bodies of `body_bytes` to each queue, one connection per queue at once;
/// the accepted count per queue.
async fn fill(
    connector: &Arc<Connector>,
    queues: &[String],
    body_bytes: usize,
    messages: u64,
) -> Result<Vec<u64>, BenchError> {
    let producers: Vec<_> = queues
        .iter()
        .map(|queue| {
            let (connector, queue) = (Arc::clone(connector), queue.clone());
            tokio::spawn(async move {
                let mut client = Client::connect(&connector, format!("fill-{queue}")).await?;
                let mut sender = client.sender(&queue).await?;
                let payload = Payload {
                    body_bytes,
                    property: None,
                };
                let until = Instant::now() + PHASE_LIMIT;
                let tally = send_loop(&mut sender, payload, IN_FLIGHT, messages, until).await?;
                drop(sender);
                client.close().await?;
                if tally.not_accepted > 0 {
                    return Err(BenchError::broker(
                        "send",
                        format!("{} sends to {queue} were not accepted", tally.not_accepted),
                    ));
                }
                Ok(tally.completed)
            })
        })
        .collect();
    let mut accepted = Vec::with_capacity(producers.len());
    for producer in producers {
        accepted.push(
            producer
                .await
                .map_err(|error| BenchError::broker("producer", error))??,
        );
    }
    Ok(accepted)
}

/// Receives and deletes exactly `expected[i]` messages from queue `i`, one connection each.
async fn drain(
    connector: &Arc<Connector>,
    queues: &[String],
    expected: &[u64],
) -> Result<(), BenchError> {
    let consumers: Vec<_> = queues
        .iter()
        .zip(expected)
        .map(|(queue, &messages)| {
            let (connector, queue) = (Arc::clone(connector), queue.clone());
            tokio::spawn(async move {
                let mut client = Client::connect(&connector, format!("drain-{queue}")).await?;
                let mut receiver = client
                    .receiver(&queue, ReceiveMode::ReceiveAndDelete, CREDIT)
                    .await?;
                let progress = QueueProgress::new(0);
                progress.expect(messages);
                let until = Instant::now() + PHASE_LIMIT;
                let tally = receive_loop(
                    &mut receiver,
                    ReceiveMode::ReceiveAndDelete,
                    CREDIT,
                    ReceiveLatency::ServiceTime,
                    &progress,
                    until,
                )
                .await?;
                drop(receiver);
                client.close().await?;
                if tally.completed < messages {
                    return Err(BenchError::TimedOut("drain"));
                }
                Ok(())
            })
        })
        .collect();
    for consumer in consumers {
        consumer
            .await
            .map_err(|error| BenchError::broker("consumer", error))??;
    }
    Ok(())
}

/// Keeps the highest RSS seen in `peak` until `sampling` turns false.
async fn sample_peak(probe: BrokerProbe, peak: Arc<AtomicU64>, sampling: Arc<AtomicBool>) {
    while sampling.load(Ordering::Relaxed) {
        if let Some(sample) = probe.sample() {
            peak.fetch_max(sample.rss_bytes(), Ordering::Relaxed);
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
}
