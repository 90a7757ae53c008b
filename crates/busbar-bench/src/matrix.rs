//! The comparison matrix (`run --matrix`): durable send, receive + accept and send + receive at
//! once, for every message size, in-flight count (credit, for receives) and connection count;
//! then a topic with 5 subscriptions and 100 sessions taken one message each in turn. Cells a
//! broker cannot serve are reported as not run, with the reason.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::args::{Profile, RunOptions};
use crate::client::{self, Client, Payload, QueueProgress, ReceiveLatency, ReceiveMode, Tally};
use crate::error::BenchError;
use crate::flows::{self, Consumer, Producer, close_client, join, merge, usage};
use crate::probe::BrokerProbe;
use crate::report::{LatencySummary, NotRun, Report, ScenarioResult};
use crate::transport::Connector;

mod sessions;

/// Message body sizes.
const SIZES: [usize; 4] = [128, 4 * 1024, 64 * 1024, 256 * 1024];
/// Unsettled sends per producer, or credit per consumer.
const IN_FLIGHT: [usize; 3] = [1, 100, 1000];
/// Producer (and, for send + receive, consumer) connections.
const CONNECTIONS: [usize; 2] = [1, 16];
/// Most messages a cell sends, and most bytes: a cell stays well under an entity's quota.
const CELL_MESSAGES: u64 = 300_000;
const CELL_BYTES: u64 = 256 * 1024 * 1024;
/// Most messages a receive cell finds waiting.
const RECEIVE_BACKLOG: u64 = 100_000;
/// The queue of the send and send + receive cells, and the one the receive cells drain.
const SEND_QUEUE: usize = 0;
const RECEIVE_QUEUE: usize = 1;
/// The topic cell's subscriptions and its sizes.
pub(crate) const TOPIC_SUBSCRIPTIONS: usize = 5;
const TOPIC_SIZES: [usize; 2] = [128, 64 * 1024];
/// Credit of consumers that do not vary it, and in-flight sends of fills and the topic cell.
const CREDIT: u32 = 1000;
const TOPIC_IN_FLIGHT: usize = 100;

/// What a cell does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Producers only; latency send → accepted.
    Send,
    /// Consumers (peek-lock, accept each) take a backlog; `in_flight` is their credit.
    Receive,
    /// Producers and as many consumers at once; latency send → received.
    SendReceive,
    /// One producer to a topic, one consumer per subscription.
    Topic,
    /// 100 sessions of one message each, taken one session at a time.
    Sessions,
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cell {
    name: String,
    kind: Kind,
    body_bytes: usize,
    in_flight: usize,
    connections: usize,
}

impl Cell {
    fn new(kind: Kind, body_bytes: usize, in_flight: usize, connections: usize) -> Self {
        let size = size_name(body_bytes);
        let name = match kind {
            Kind::Send => format!("send {size} {in_flight}-in-flight {connections}-conn"),
            Kind::Receive => format!("receive+accept {size} credit-{in_flight} {connections}-conn"),
            Kind::SendReceive => {
                format!(
                    "send+receive {size} {in_flight}-in-flight {connections}+{connections}-conn"
                )
            }
            Kind::Topic => {
                format!("topic {TOPIC_SUBSCRIPTIONS} subscriptions {size} {in_flight}-in-flight")
            }
            Kind::Sessions => format!("sessions {} × 1 message {size}", sessions::SESSIONS),
        };
        Self {
            name,
            kind,
            body_bytes,
            in_flight,
            connections,
        }
    }

    /// Most messages the cell sends (or finds waiting, for a receive cell).
    fn messages(&self) -> u64 {
        let cap = CELL_MESSAGES.min(CELL_BYTES / self.body_bytes as u64);
        match self.kind {
            Kind::Receive => cap.min(RECEIVE_BACKLOG),
            _ => cap,
        }
    }
}

/// `128B`, `4KiB`, `64KiB`.
fn size_name(bytes: usize) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{}KiB", bytes / 1024)
    } else {
        format!("{bytes}B")
    }
}

/// The cells of a profile, in the order they run. Quick: 128 B and 64 KiB, 1 and 1000 in
/// flight, one connection, and the topic and sessions cells at 128 B.
fn plan(profile: Profile) -> Vec<Cell> {
    let quick = profile == Profile::Quick;
    let mut cells = Vec::new();
    for body_bytes in SIZES {
        if quick && ![128, 64 * 1024].contains(&body_bytes) {
            continue;
        }
        for in_flight in IN_FLIGHT {
            for connections in CONNECTIONS {
                if quick && (in_flight == 100 || connections > 1) {
                    continue;
                }
                for kind in [Kind::Send, Kind::Receive, Kind::SendReceive] {
                    cells.push(Cell::new(kind, body_bytes, in_flight, connections));
                }
            }
        }
    }
    for body_bytes in TOPIC_SIZES {
        if !(quick && body_bytes > 128) {
            cells.push(Cell::new(Kind::Topic, body_bytes, TOPIC_IN_FLIGHT, 1));
        }
    }
    cells.push(Cell::new(Kind::Sessions, 128, 1, 1));
    cells
}

/// Runs the matrix against one broker.
pub(crate) struct Matrix {
    options: RunOptions,
    connector: Arc<Connector>,
    probe: Option<BrokerProbe>,
    /// Messages waiting on the send queue and on the receive queue.
    queued: [u64; 2],
    /// The body size of what waits on the receive queue.
    backlog_size: usize,
}

/// The measured part of a cell.
struct Measured {
    tally: Tally,
    started: Instant,
    broker: Option<crate::report::BrokerUsage>,
    copies: Option<u64>,
    latency_kind: &'static str,
}

impl Matrix {
    /// A matrix run for these options.
    pub(crate) fn new(options: RunOptions) -> Result<Self, BenchError> {
        let connector = Connector::new(&options.url, options.ca.as_deref())?;
        Ok(Self {
            probe: options.broker_pid.map(BrokerProbe::new),
            connector: Arc::new(connector),
            options,
            queued: [0; 2],
            backlog_size: 0,
        })
    }

    fn address(&self, queue: usize) -> String {
        self.options
            .address_template
            .replace("{n}", &queue.to_string())
    }

    fn duration(&self) -> Duration {
        match self.options.profile {
            Profile::Quick => Duration::from_millis(1500),
            Profile::Full => Duration::from_secs(3),
        }
    }

    /// Warms the broker up, then runs the selected cells in order.
    pub(crate) async fn run(mut self) -> Result<Report, BenchError> {
        if !self.options.warmup.is_zero() {
            eprintln!(
                "[{}] warming up for {:?} …",
                self.options.label, self.options.warmup
            );
            let cell = Cell::new(Kind::SendReceive, 4096, 100, 1);
            self.queue_flow(&cell, self.options.warmup, u64::MAX)
                .await?;
        }
        let (mut results, mut not_run) = (Vec::new(), Vec::new());
        for cell in plan(self.options.profile) {
            let wanted = self.options.wants(&cell.name);
            if !wanted {
                continue;
            }
            if let Some(reason) = self.unserved(cell.kind) {
                not_run.push(NotRun {
                    name: cell.name.clone(),
                    reason,
                });
                continue;
            }
            // A broker that cannot keep up with one cell (a send unanswered for the client's
            // step timeout) is reported as such; the queues are emptied for the next cell.
            match self.run_cell(&cell).await {
                Ok(result) => {
                    result.log(&self.options.label);
                    results.push(result);
                }
                Err(error) => {
                    eprintln!("[{}] {}: failed: {error}", self.options.label, cell.name);
                    not_run.push(NotRun {
                        name: cell.name.clone(),
                        reason: format!("failed: {error}"),
                    });
                    self.recover().await?;
                }
            }
        }
        Ok(Report {
            label: self.options.label.clone(),
            profile: self.options.profile,
            scenarios: results,
            not_run,
        })
    }

    /// After a failed cell: empties both queues, however much is on them (what the failed cell
    /// left is not known).
    async fn recover(&mut self) -> Result<(), BenchError> {
        for queue in [SEND_QUEUE, RECEIVE_QUEUE] {
            self.queued[queue] = u64::MAX;
            self.purge(queue).await?;
        }
        Ok(())
    }

    /// Why this broker cannot run cells of `kind`, if it cannot.
    fn unserved(&self, kind: Kind) -> Option<String> {
        match kind {
            Kind::Topic if self.options.matrix_topic.is_none() => {
                Some("no topic with subscriptions mapped for this broker".to_owned())
            }
            Kind::Sessions if self.options.sessions_queue.is_none() => {
                Some("no Service Bus sessions (session-filter receivers)".to_owned())
            }
            _ => None,
        }
    }

    async fn run_cell(&mut self, cell: &Cell) -> Result<ScenarioResult, BenchError> {
        let measured = match cell.kind {
            Kind::Send | Kind::SendReceive => {
                let measured = self
                    .queue_flow(cell, self.duration(), cell.messages())
                    .await?;
                // Sends left on the queue would be received by the next cell.
                self.purge(SEND_QUEUE).await?;
                measured
            }
            Kind::Receive => self.receive(cell).await?,
            Kind::Topic => self.topic(cell).await?,
            Kind::Sessions => {
                let address = self.options.sessions_queue.clone().unwrap_or_default();
                let (tally, started, before) =
                    sessions::run(&self.connector, self.probe, &address, self.duration()).await?;
                let after = self.probe.and_then(|probe| probe.sample());
                Measured {
                    broker: usage(before, after, tally.completed),
                    tally,
                    started,
                    copies: None,
                    latency_kind: "attach→accepted",
                }
            }
        };
        let tally = measured.tally;
        Ok(ScenarioResult {
            name: cell.name.clone(),
            latency_kind: measured.latency_kind.to_owned(),
            messages: tally.completed,
            body_bytes: cell.body_bytes as u64,
            elapsed_secs: tally
                .finished
                .saturating_duration_since(measured.started)
                .as_secs_f64(),
            latency: LatencySummary::from_histogram(&tally.latencies),
            not_accepted: tally.not_accepted,
            copies: measured.copies,
            refused_quota: tally.refused_quota,
            broker: measured.broker,
            rss_peak_bytes: None,
        })
    }

    /// Producers (and, for send + receive, as many consumers) on the send queue.
    async fn queue_flow(
        &mut self,
        cell: &Cell,
        duration: Duration,
        messages: u64,
    ) -> Result<Measured, BenchError> {
        let address = self.address(SEND_QUEUE);
        let consumers = if cell.kind == Kind::SendReceive {
            cell.connections
        } else {
            0
        };
        let progress = Arc::new(QueueProgress::new(cell.connections));
        let producers = (0..cell.connections)
            .map(|_| Producer {
                address: address.clone(),
                tag: SEND_QUEUE,
                feeds: vec![Arc::clone(&progress)],
            })
            .collect();
        let consumers = (0..consumers)
            .map(|_| Consumer {
                address: address.clone(),
                credit: CREDIT,
                progress: Arc::clone(&progress),
            })
            .collect();
        let load = flows::Load {
            payload: payload(cell.body_bytes),
            in_flight: cell.in_flight,
            per_producer: messages / cell.connections as u64,
            duration,
        };
        let outcome = flows::run(&self.connector, self.probe, producers, consumers, load).await?;
        let sent = outcome.sent_total();
        let (tally, latency_kind) = if cell.kind == Kind::SendReceive {
            let mut received = outcome.received;
            self.queued[0] += sent.completed.saturating_sub(received.completed);
            received.not_accepted = sent.not_accepted;
            (received, "send→received")
        } else {
            self.queued[0] += sent.completed;
            (sent, "send→accepted")
        };
        Ok(Measured {
            broker: usage(outcome.before, outcome.after, tally.completed),
            tally,
            started: outcome.started,
            copies: None,
            latency_kind,
        })
    }

    /// Tops the receive queue up to the cell's backlog, then lets the consumers take it.
    async fn receive(&mut self, cell: &Cell) -> Result<Measured, BenchError> {
        if self.backlog_size != cell.body_bytes {
            self.purge(RECEIVE_QUEUE).await?;
            self.backlog_size = cell.body_bytes;
        }
        let address = self.address(RECEIVE_QUEUE);
        let wanted = cell.messages();
        if self.queued[1] < wanted {
            let mut client = Client::connect(&self.connector, "fill".to_owned()).await?;
            let mut sender = client.sender(&address).await?;
            let deadline = Instant::now() + Duration::from_secs(120);
            let tally = client::send_loop(
                &mut sender,
                payload(cell.body_bytes),
                CREDIT as usize,
                wanted - self.queued[1],
                deadline,
            )
            .await?;
            close_client(sender, client).await;
            self.queued[1] += tally.completed;
        }
        let progress = QueueProgress::new(0);
        progress.expect(self.queued[1]);
        let progress = Arc::new(progress);
        let credit = u32::try_from(cell.in_flight).unwrap_or(CREDIT);
        let mut receivers = Vec::new();
        for index in 0..cell.connections {
            let mut client = Client::connect(&self.connector, format!("r{index}")).await?;
            let receiver = client
                .receiver(&address, ReceiveMode::PeekLock, credit)
                .await?;
            receivers.push((client, receiver));
        }
        let before = self.probe.and_then(|probe| probe.sample());
        let started = Instant::now();
        let until = started + self.duration();
        let mut tasks = Vec::new();
        for (client, mut receiver) in receivers {
            let progress = Arc::clone(&progress);
            tasks.push(tokio::spawn(async move {
                let tally = client::receive_loop(
                    &mut receiver,
                    ReceiveMode::PeekLock,
                    credit,
                    ReceiveLatency::ServiceTime,
                    &progress,
                    until,
                )
                .await?;
                close_client(receiver, client).await;
                Ok::<_, BenchError>(tally)
            }));
        }
        let mut tally = Tally::new();
        for task in tasks {
            merge(&mut tally, &join(task).await?);
        }
        let after = self.probe.and_then(|probe| probe.sample());
        self.queued[1] = self.queued[1].saturating_sub(tally.completed);
        Ok(Measured {
            broker: usage(before, after, tally.completed),
            tally,
            started,
            copies: None,
            latency_kind: "wait+settle",
        })
    }

    /// One producer to the topic, one consumer on each subscription; a message counts once all
    /// its copies are received.
    async fn topic(&mut self, cell: &Cell) -> Result<Measured, BenchError> {
        let (send, receive) = self.options.matrix_topic.clone().unwrap_or_default();
        let groups: Vec<Arc<QueueProgress>> = (0..TOPIC_SUBSCRIPTIONS)
            .map(|_| Arc::new(QueueProgress::new(1)))
            .collect();
        let producers = vec![Producer {
            address: send,
            tag: 0,
            feeds: groups.clone(),
        }];
        let consumers = groups
            .iter()
            .enumerate()
            .map(|(index, progress)| Consumer {
                address: receive.replace("{n}", &index.to_string()),
                credit: CREDIT,
                progress: Arc::clone(progress),
            })
            .collect();
        let load = flows::Load {
            payload: payload(cell.body_bytes),
            in_flight: cell.in_flight,
            per_producer: cell.messages(),
            duration: self.duration(),
        };
        let outcome = flows::run(&self.connector, self.probe, producers, consumers, load).await?;
        let sent = outcome.sent_total();
        let mut tally = outcome.received;
        let copies = tally.completed;
        tally.completed = copies / TOPIC_SUBSCRIPTIONS as u64;
        tally.not_accepted = sent.not_accepted;
        Ok(Measured {
            broker: usage(outcome.before, outcome.after, tally.completed),
            tally,
            started: outcome.started,
            copies: Some(copies),
            latency_kind: "send→received",
        })
    }

    /// Takes what waits on `queue` (receive-and-delete, unmeasured).
    async fn purge(&mut self, queue: usize) -> Result<(), BenchError> {
        let waiting = self.queued[queue.min(1)];
        if waiting == 0 {
            return Ok(());
        }
        let address = self.address(queue);
        let progress = QueueProgress::new(0);
        progress.expect(waiting);
        let mut client = Client::connect(&self.connector, "purge".to_owned()).await?;
        let mut receiver = client
            .receiver(&address, ReceiveMode::ReceiveAndDelete, CREDIT)
            .await?;
        // An unknown count (after a failure) is taken for a while, not waited for.
        let seconds = if waiting == u64::MAX { 10 } else { 120 };
        let deadline = Instant::now() + Duration::from_secs(seconds);
        let tally = client::receive_loop(
            &mut receiver,
            ReceiveMode::ReceiveAndDelete,
            CREDIT,
            ReceiveLatency::ServiceTime,
            &progress,
            deadline,
        )
        .await?;
        close_client(receiver, client).await;
        if tally.completed < waiting && waiting != u64::MAX {
            eprintln!(
                "warning: purged {} of {waiting} messages from {address}",
                tally.completed
            );
        }
        self.queued[queue.min(1)] = 0;
        Ok(())
    }
}

fn payload(body_bytes: usize) -> Payload {
    Payload {
        body_bytes,
        property: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_matrix_has_every_cell_once() {
        let full = plan(Profile::Full);
        assert_eq!(full.len(), 4 * 3 * 2 * 3 + 2 + 1);
        let mut names: Vec<&str> = full.iter().map(|cell| cell.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), full.len());
        assert!(names.contains(&"send 64KiB 100-in-flight 1-conn"));
        assert!(names.contains(&"receive+accept 256KiB credit-1000 16-conn"));
        assert!(names.contains(&"send+receive 128B 1-in-flight 16+16-conn"));
        assert!(names.contains(&"topic 5 subscriptions 64KiB 100-in-flight"));
        assert_eq!(plan(Profile::Quick).len(), 2 * 2 * 3 + 1 + 1);
    }

    #[test]
    fn cells_stay_under_the_byte_cap() {
        for cell in plan(Profile::Full) {
            assert!(
                cell.messages() * cell.body_bytes as u64 <= CELL_BYTES,
                "{}",
                cell.name
            );
            assert!(cell.messages() >= 1000, "{}", cell.name);
        }
    }
}
