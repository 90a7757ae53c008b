//! The slow-consumer scenario: one producer sends as fast as the broker answers while one
//! consumer completes at a fixed slow rate, on a queue with a small size quota. Refusals with
//! `amqp:resource-limit-exceeded` are the expected outcome once the queue is full (counted, not
//! fatal), and the broker's RSS is sampled throughout, so the report shows whether memory stays
//! bounded by the quota rather than growing with the producer's lead.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{Measured, Runner, Scenario, SlowConsumer};
use crate::client::{self, Client, Payload, ReceiveMode};
use crate::error::BenchError;
use crate::flows::{close_client, join, usage};
use crate::probe::BrokerProbe;

/// How often the broker's RSS is sampled.
const SAMPLE_EVERY: Duration = Duration::from_millis(20);
/// Credit of the slow consumer: a few deliveries ahead of its settling.
const CONSUMER_CREDIT: u32 = 10;

impl Runner {
    pub(super) async fn slow_consumer(
        &mut self,
        scenario: &Scenario,
        slow: &SlowConsumer,
    ) -> Result<Measured, BenchError> {
        let connector = Arc::clone(&self.connector);
        let address = self.address(slow.queue);
        let mut producer = Client::connect(&connector, format!("slow-p{}", slow.queue)).await?;
        let mut sender = producer.sender(&address).await?;
        let mut consumer = Client::connect(&connector, format!("slow-c{}", slow.queue)).await?;
        let mut receiver = consumer
            .receiver(&address, ReceiveMode::PeekLock, CONSUMER_CREDIT)
            .await?;
        let before = self.probe.and_then(|probe| probe.sample());
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = self
            .probe
            .map(|probe| tokio::spawn(peak_rss(probe, Arc::clone(&stop))));
        let started = Instant::now();
        let until = started + scenario.duration;
        let rate = slow.consumer_rate;
        let consumer_task = tokio::spawn(async move {
            let completed = client::settle_at_rate(&mut receiver, rate, until).await;
            close_client(receiver, consumer).await;
            completed
        });
        let payload = Payload {
            body_bytes: slow.body_bytes,
            property: None,
        };
        let sent = client::send_loop(
            &mut sender,
            payload,
            slow.in_flight,
            scenario.messages,
            until,
        )
        .await;
        close_client(sender, producer).await;
        let consumed = join(consumer_task).await?;
        stop.store(true, Ordering::Relaxed);
        let peak = match sampler {
            Some(task) => task.await.ok().flatten(),
            None => None,
        };
        let after = self.probe.and_then(|probe| probe.sample());
        let tally = sent?;
        if let Some(queued) = self.queued.get_mut(slow.queue) {
            *queued += tally.completed.saturating_sub(consumed);
        }
        eprintln!(
            "[{}] slow consumer completed {consumed} messages; {} sends accepted, {} refused as over quota",
            self.options.label, tally.completed, tally.refused_quota
        );
        Ok(Measured {
            broker: usage(before, after, tally.completed),
            elapsed: tally.finished.saturating_duration_since(started),
            tally,
            rss_peak: peak,
        })
    }
}

/// The largest RSS of the broker sampled until `stop` is set (`None` if it could not be read).
async fn peak_rss(probe: BrokerProbe, stop: Arc<AtomicBool>) -> Option<u64> {
    let mut peak = None;
    while !stop.load(Ordering::Relaxed) {
        if let Some(sample) = probe.sample() {
            peak = peak.max(Some(sample.rss_bytes()));
        }
        tokio::time::sleep(SAMPLE_EVERY).await;
    }
    peak
}
