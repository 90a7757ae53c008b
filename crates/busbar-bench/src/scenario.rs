//! The scenarios (what each one sends and receives, on which queues, for how long) and the
//! runner that connects the clients, times the measured part and samples the broker around it.

use std::ops::Range;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::args::{Profile, RunOptions};
use crate::client::{self, Client, Payload, QueueProgress, ReceiveLatency, ReceiveMode, Tally};
use crate::entities::{self, ROUTE_PROPERTY};
use crate::error::BenchError;
use crate::flows::{self, close_client, usage};
use crate::probe::BrokerProbe;
use crate::report::{BrokerUsage, LatencySummary, Report, ScenarioResult};
use crate::transport::Connector;

mod slow_consumer;

/// How many queues the scenarios use, numbered from 0 (`bench-0` … on Busbar).
pub(crate) const QUEUE_COUNT: usize = 18;
/// The queue of the slow-consumer scenario, the only one with a small size quota.
pub(crate) const QUOTA_QUEUE: usize = 17;
/// Its `MaxSizeInMegabytes` (Busbar; other brokers get no quota).
pub(crate) const QUOTA_MEGABYTES: u32 = 10;
/// The queues of the many-connections and backlog scenarios.
const SHARED_QUEUES: Range<usize> = 7..17;
/// Receiver credit, as the issue asks.
const CREDIT: u32 = 1000;

/// What a scenario does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Producers (and, if any, consumers at the same time), each on its own connection.
    Flow(Flow),
    /// One consumer takes what earlier scenarios left on `queue`.
    Drain {
        /// The queue.
        queue: usize,
        /// How it settles.
        mode: ReceiveMode,
        /// Body size of the messages the earlier scenario sent there.
        body_bytes: usize,
    },
    /// One producer sends to the fan-out topic with `subscriptions` subscriptions, half of
    /// which take a copy (Busbar only: a peer has no such topics). Latency is send→accepted.
    FanOut {
        /// Its subscriptions (one of [`entities::FANOUT_SUBSCRIPTIONS`]).
        subscriptions: usize,
        /// Unsettled sends the producer keeps.
        in_flight: usize,
    },
    /// One producer sending as fast as it can and one consumer completing at a fixed slow rate.
    SlowConsumer(SlowConsumer),
}

/// The slow-consumer scenario: what the producer sends and how fast the consumer settles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SlowConsumer {
    /// The queue (with a small size quota).
    queue: usize,
    /// Body size in bytes.
    body_bytes: usize,
    /// Unsettled sends the producer keeps.
    in_flight: usize,
    /// Messages the consumer completes per second.
    consumer_rate: u32,
}

/// Body size of the fan-out scenarios' messages.
const FANOUT_BODY_BYTES: usize = 128;

/// Producers and consumers on each of `queues`. Without consumers, latency is
/// send→accepted; with them, send→received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Flow {
    /// The queues.
    queues: Range<usize>,
    /// Producer connections per queue.
    producers_per_queue: usize,
    /// Consumer connections per queue (peek-lock, explicit complete).
    consumers_per_queue: usize,
    /// Body size in bytes.
    body_bytes: usize,
    /// Unsettled sends each producer keeps.
    in_flight: usize,
}

/// One scenario of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scenario {
    /// Its name in reports.
    pub(crate) name: &'static str,
    /// What it does.
    pub(crate) shape: Shape,
    /// At most this many messages in total.
    pub(crate) messages: u64,
    /// At most this long (producers' time; consumers get [`flows::DRAIN_GRACE`] more).
    pub(crate) duration: Duration,
}

fn send(queue: usize, body_bytes: usize, in_flight: usize) -> Shape {
    Shape::Flow(Flow {
        queues: queue..queue + 1,
        producers_per_queue: 1,
        consumers_per_queue: 0,
        body_bytes,
        in_flight,
    })
}

/// The scenarios of a profile, in the order they run (drains follow the sends that fill them).
pub(crate) fn plan(profile: Profile) -> Vec<Scenario> {
    let (seconds, backlog, full) = match profile {
        Profile::Quick => (2, 20_000, false),
        Profile::Full => (10, 1_000_000, true),
    };
    let duration = Duration::from_secs(seconds);
    let scenario = |name, shape, messages| Scenario {
        name,
        shape,
        messages,
        duration,
    };
    // Per-queue caps keep each queue well under the emulator's 100 MB entity size.
    let mut plan = vec![
        scenario("send 128B 1-in-flight", send(0, 128, 1), 100_000),
        scenario("send 128B 100-in-flight", send(1, 128, 100), 300_000),
        scenario("send 128B 1000-in-flight", send(2, 128, 1000), 300_000),
    ];
    if full {
        plan.push(scenario("send 4KiB 1-in-flight", send(4, 4096, 1), 10_000));
        plan.push(scenario(
            "send 4KiB 100-in-flight",
            send(5, 4096, 100),
            20_000,
        ));
    }
    plan.extend([
        scenario("send 4KiB 1000-in-flight", send(3, 4096, 1000), 20_000),
        scenario(
            "receive peek-lock+complete credit 1000",
            Shape::Drain {
                queue: 2,
                mode: ReceiveMode::PeekLock,
                body_bytes: 128,
            },
            300_000,
        ),
        scenario(
            "receive-and-delete credit 1000",
            Shape::Drain {
                queue: 1,
                mode: ReceiveMode::ReceiveAndDelete,
                body_bytes: 128,
            },
            300_000,
        ),
        scenario(
            "end-to-end 1 producer 1 consumer 128B",
            Shape::Flow(Flow {
                queues: 6..7,
                producers_per_queue: 1,
                consumers_per_queue: 1,
                body_bytes: 128,
                in_flight: 100,
            }),
            300_000,
        ),
        scenario(
            "100 connections over 10 queues 128B",
            Shape::Flow(Flow {
                queues: SHARED_QUEUES,
                producers_per_queue: 5,
                consumers_per_queue: 5,
                body_bytes: 128,
                in_flight: 10,
            }),
            500_000,
        ),
    ]);
    plan.push(Scenario {
        name: "backlog 128B over 10 queues (RSS per message)",
        shape: Shape::Flow(Flow {
            queues: SHARED_QUEUES,
            producers_per_queue: 1,
            consumers_per_queue: 0,
            body_bytes: 128,
            in_flight: 1000,
        }),
        messages: backlog,
        duration: Duration::from_secs(if full { 300 } else { 20 }),
    });
    // Last, so the earlier rows run as before. Caps keep each run at about 1M stored copies.
    plan.extend([
        scenario("topic fan-out 1 subscription 128B", fan_out(1), 300_000),
        scenario("topic fan-out 10 subscriptions 128B", fan_out(10), 200_000),
        scenario("topic fan-out 100 subscriptions 128B", fan_out(100), 20_000),
    ]);
    plan.push(Scenario {
        name: "slow consumer 128B 200 msg/s, 10 MB quota (RSS peak)",
        shape: Shape::SlowConsumer(SlowConsumer {
            queue: QUOTA_QUEUE,
            body_bytes: 128,
            in_flight: 100,
            consumer_rate: 200,
        }),
        messages: u64::MAX,
        duration: Duration::from_secs(if full { 30 } else { 5 }),
    });
    plan
}

fn fan_out(subscriptions: usize) -> Shape {
    Shape::FanOut {
        subscriptions,
        in_flight: 1000,
    }
}

/// Runs the plan against one broker.
pub(crate) struct Runner {
    options: RunOptions,
    /// Opens the clients' connections over the URL's transport.
    connector: Arc<Connector>,
    probe: Option<BrokerProbe>,
    /// Messages accepted and not yet consumed, per queue (what a drain will find).
    queued: [u64; QUEUE_COUNT],
}

impl Runner {
    /// A runner for these options (refused if the URL or the CA file is).
    pub(crate) fn new(options: RunOptions) -> Result<Self, BenchError> {
        let connector = Connector::new(&options.url, options.ca.as_deref())?;
        Ok(Self {
            probe: options.broker_pid.map(BrokerProbe::new),
            connector: Arc::new(connector),
            options,
            queued: [0; QUEUE_COUNT],
        })
    }

    fn address(&self, queue: usize) -> String {
        self.options
            .address_template
            .replace("{n}", &queue.to_string())
    }

    /// Runs the selected scenarios in order, printing each row as it completes.
    pub(crate) async fn run(mut self) -> Result<Report, BenchError> {
        let mut results = Vec::new();
        for scenario in plan(self.options.profile) {
            let wanted = self.options.wants(scenario.name);
            let served = self.options.topics || !matches!(scenario.shape, Shape::FanOut { .. });
            if !wanted || !served {
                continue;
            }
            eprintln!("[{}] {} …", self.options.label, scenario.name);
            let result = self.run_one(&scenario).await?;
            result.log(&self.options.label);
            results.push(result);
        }
        Ok(Report {
            label: self.options.label.clone(),
            profile: self.options.profile,
            scenarios: results,
            not_run: Vec::new(),
        })
    }

    async fn run_one(&mut self, scenario: &Scenario) -> Result<ScenarioResult, BenchError> {
        let (measured, body_bytes, latency_kind) = match &scenario.shape {
            Shape::Flow(flow) => {
                let kind = if flow.consumers_per_queue == 0 {
                    "send→accepted"
                } else {
                    "send→received"
                };
                (
                    self.flow(scenario, flow).await?,
                    flow.body_bytes as u64,
                    kind,
                )
            }
            Shape::Drain {
                queue,
                mode,
                body_bytes,
            } => {
                let measured = self.drain(scenario, *queue, *mode).await?;
                (measured, *body_bytes as u64, "wait+settle")
            }
            Shape::FanOut {
                subscriptions,
                in_flight,
            } => {
                let measured = self.fan_out(scenario, *subscriptions, *in_flight).await?;
                (measured, FANOUT_BODY_BYTES as u64, "send→accepted")
            }
            Shape::SlowConsumer(slow) => (
                self.slow_consumer(scenario, slow).await?,
                slow.body_bytes as u64,
                "send→accepted",
            ),
        };
        let copies = match scenario.shape {
            Shape::FanOut { subscriptions, .. } => {
                Some(measured.tally.completed * entities::copies_per_message(subscriptions) as u64)
            }
            _ => None,
        };
        Ok(ScenarioResult {
            name: scenario.name.to_owned(),
            latency_kind: latency_kind.to_owned(),
            messages: measured.tally.completed,
            body_bytes,
            elapsed_secs: measured.elapsed.as_secs_f64(),
            latency: LatencySummary::from_histogram(&measured.tally.latencies),
            not_accepted: measured.tally.not_accepted,
            copies,
            refused_quota: measured.tally.refused_quota,
            broker: measured.broker,
            rss_peak_bytes: measured.rss_peak,
        })
    }
}

/// The measured part of a scenario.
struct Measured {
    tally: Tally,
    elapsed: Duration,
    broker: Option<BrokerUsage>,
    /// The broker's largest RSS sampled during the scenario, where it is sampled throughout.
    rss_peak: Option<u64>,
}

impl Runner {
    async fn flow(&mut self, scenario: &Scenario, flow: &Flow) -> Result<Measured, BenchError> {
        let producer_count = flow.queues.len() * flow.producers_per_queue;
        let per_producer = scenario.messages / producer_count.max(1) as u64;
        let (mut producers, mut consumers) = (Vec::new(), Vec::new());
        for queue in flow.queues.clone() {
            let address = self.address(queue);
            let progress = Arc::new(QueueProgress::new(flow.producers_per_queue));
            producers.extend((0..flow.producers_per_queue).map(|_| flows::Producer {
                address: address.clone(),
                tag: queue,
                feeds: vec![Arc::clone(&progress)],
            }));
            consumers.extend((0..flow.consumers_per_queue).map(|_| flows::Consumer {
                address: address.clone(),
                credit: CREDIT,
                progress: Arc::clone(&progress),
            }));
        }
        let payload = Payload {
            body_bytes: flow.body_bytes,
            property: None,
        };
        let load = flows::Load {
            payload,
            in_flight: flow.in_flight,
            per_producer,
            duration: scenario.duration,
        };
        let outcome = flows::run(&self.connector, self.probe, producers, consumers, load).await?;
        for (queue, tally) in &outcome.sent {
            if let Some(queued) = self.queued.get_mut(*queue) {
                *queued += tally.completed;
            }
        }
        let sent = outcome.sent_total();
        let tally = if flow.consumers_per_queue == 0 {
            sent
        } else {
            for queue in flow.queues.clone() {
                if let Some(queued) = self.queued.get_mut(queue) {
                    *queued = 0;
                }
            }
            let mut received = outcome.received;
            received.not_accepted = sent.not_accepted;
            received
        };
        Ok(Measured {
            broker: usage(outcome.before, outcome.after, tally.completed),
            elapsed: tally.finished.saturating_duration_since(outcome.started),
            tally,
            rss_peak: None,
        })
    }

    async fn drain(
        &mut self,
        scenario: &Scenario,
        queue: usize,
        mode: ReceiveMode,
    ) -> Result<Measured, BenchError> {
        let address = self.address(queue);
        let available = self.queued.get(queue).copied().unwrap_or(0);
        let progress = QueueProgress::new(0);
        progress.expect(available.min(scenario.messages));
        let mut client = Client::connect(&self.connector, format!("d{queue}")).await?;
        let mut receiver = client.receiver(&address, mode, CREDIT).await?;
        let before = self.probe.and_then(|probe| probe.sample());
        let started = Instant::now();
        let tally = client::receive_loop(
            &mut receiver,
            mode,
            CREDIT,
            ReceiveLatency::ServiceTime,
            &progress,
            started + scenario.duration,
        )
        .await?;
        let elapsed = started.elapsed();
        let after = self.probe.and_then(|probe| probe.sample());
        close_client(receiver, client).await;
        if let Some(queued) = self.queued.get_mut(queue) {
            *queued = queued.saturating_sub(tally.completed);
        }
        Ok(Measured {
            broker: usage(before, after, tally.completed),
            tally,
            elapsed,
            rss_peak: None,
        })
    }

    /// One producer on the topic with `subscriptions` subscriptions; what it stores stays there.
    async fn fan_out(
        &mut self,
        scenario: &Scenario,
        subscriptions: usize,
        in_flight: usize,
    ) -> Result<Measured, BenchError> {
        let topic = entities::topic_name(subscriptions);
        let mut client = Client::connect(&self.connector, format!("p{topic}")).await?;
        let mut sender = client.sender(&topic).await?;
        let payload = Payload {
            body_bytes: FANOUT_BODY_BYTES,
            property: Some(ROUTE_PROPERTY),
        };
        let before = self.probe.and_then(|probe| probe.sample());
        let started = Instant::now();
        let tally = client::send_loop(
            &mut sender,
            payload,
            in_flight,
            scenario.messages,
            started + scenario.duration,
        )
        .await?;
        let after = self.probe.and_then(|probe| probe.sample());
        close_client(sender, client).await;
        Ok(Measured {
            broker: usage(before, after, tally.completed),
            elapsed: tally.finished.saturating_duration_since(started),
            tally,
            rss_peak: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entities::FANOUT_SUBSCRIPTIONS;

    #[test]
    fn plans_fit_the_entities_and_drain_what_was_sent() {
        for profile in [Profile::Quick, Profile::Full] {
            let plan = plan(profile);
            let mut filled = [false; QUEUE_COUNT];
            for scenario in &plan {
                match &scenario.shape {
                    Shape::Flow(Flow { queues, .. }) => {
                        assert!(queues.end <= QUEUE_COUNT, "{}", scenario.name);
                        for queue in queues.clone() {
                            filled[queue] = true;
                        }
                    }
                    Shape::Drain { queue, .. } => assert!(filled[*queue], "{}", scenario.name),
                    Shape::FanOut { subscriptions, .. } => {
                        assert!(
                            FANOUT_SUBSCRIPTIONS.contains(subscriptions),
                            "{}",
                            scenario.name
                        );
                    }
                    Shape::SlowConsumer(slow) => assert_eq!(slow.queue, QUOTA_QUEUE),
                }
            }
            let fan_outs: Vec<usize> = plan
                .iter()
                .filter_map(|scenario| match scenario.shape {
                    Shape::FanOut { subscriptions, .. } => Some(subscriptions),
                    _ => None,
                })
                .collect();
            assert_eq!(fan_outs, FANOUT_SUBSCRIPTIONS);
        }
        assert_eq!(plan(Profile::Quick).len(), 13);
        assert_eq!(plan(Profile::Full).len(), 15);
    }
}
