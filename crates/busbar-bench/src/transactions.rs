//! `busbar-bench transactions`: handlers that each receive a message, then complete it and send
//! it back to the same queue in one transaction (fe2o3-amqp's controller), as a transactional
//! message handler does; each on its own connection. Reports committed round trips per second
//! and the latency of one round trip (receive → commit accepted).

use std::time::{Duration, Instant};

use fe2o3_amqp::link::receiver::CreditMode;
use fe2o3_amqp::transaction::{
    Controller, Transaction, TransactionDischarge, TransactionPosting, TransactionRetirement,
};
use fe2o3_amqp::types::definitions::{ReceiverSettleMode, SenderSettleMode};
use fe2o3_amqp::types::messaging::Outcome;
use fe2o3_amqp::{Connection, Receiver, Sender, Session};
use hdrhistogram::Histogram;
use tokio::sync::watch;

use crate::client::{latency_histogram, step};
use crate::error::BenchError;

/// What `busbar-bench transactions` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TransactionOptions {
    /// The broker (SASL PLAIN credentials in the URL).
    pub(crate) url: String,
    /// The queue the handlers read and write.
    pub(crate) queue: String,
    /// Concurrent handlers, each on its own connection.
    pub(crate) handlers: usize,
    /// How long the measured part runs.
    pub(crate) duration: Duration,
}

/// Messages each handler puts on the queue first: what keeps every handler busy.
const MESSAGES_PER_HANDLER: usize = 4;
/// Runs the handlers for the options' duration and prints one Markdown table row.
pub(crate) async fn run(options: TransactionOptions) -> Result<(), BenchError> {
    let (stop, stopped) = watch::channel(false);
    let started = Instant::now();
    let handlers: Vec<_> = (0..options.handlers)
        .map(|index| {
            let (url, queue, stopped) =
                (options.url.clone(), options.queue.clone(), stopped.clone());
            tokio::spawn(async move { handle(&url, &queue, index, stopped).await })
        })
        .collect();
    tokio::time::sleep(options.duration).await;
    stop.send_replace(true);
    let mut latencies = latency_histogram();
    for handler in handlers {
        let handled = handler
            .await
            .map_err(|error| BenchError::broker("handler", error))??;
        latencies
            .add(&handled)
            .map_err(|error| BenchError::broker("latency", error))?;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let percentile = |q: f64| latencies.value_at_quantile(q) as f64 / 1000.0;
    println!("| handlers | round trips/s | p50 ms | p99 ms |");
    println!("|---:|---:|---:|---:|");
    println!(
        "| {} | {:.0} | {:.2} | {:.2} |",
        options.handlers,
        latencies.len() as f64 / elapsed,
        percentile(0.5),
        percentile(0.99)
    );
    Ok(())
}

/// One handler's loop; its round-trip latencies in microseconds.
async fn handle(
    url: &str,
    queue: &str,
    index: usize,
    mut stopped: watch::Receiver<bool>,
) -> Result<Histogram<u64>, BenchError> {
    let mut connection = step(
        "connect",
        Connection::builder()
            .container_id(format!("txn-handler-{index}"))
            .open(url),
    )
    .await?;
    let mut session = step("begin session", Session::begin(&mut connection)).await?;
    let controller = step(
        "attach controller",
        Controller::attach(&mut session, "controller"),
    )
    .await?;
    let mut sender = step(
        "attach sender",
        Sender::builder()
            .name("send")
            .target(queue)
            .sender_settle_mode(SenderSettleMode::Unsettled)
            .attach(&mut session),
    )
    .await?;
    let mut receiver = step(
        "attach receiver",
        Receiver::builder()
            .name("receive")
            .source(queue)
            .receiver_settle_mode(ReceiverSettleMode::Second)
            .credit_mode(CreditMode::Auto(MESSAGES_PER_HANDLER as u32))
            .attach(&mut session),
    )
    .await?;
    for message in 0..MESSAGES_PER_HANDLER {
        let outcome = step("send", sender.send(format!("work-{index}-{message}"))).await?;
        if !matches!(outcome, Outcome::Accepted(_)) {
            return Err(BenchError::broker("send", format!("{outcome:?}")));
        }
    }
    let mut latencies = latency_histogram();
    loop {
        let delivery = tokio::select! {
            delivery = step("receive", receiver.recv::<String>()) => delivery?,
            _ = stopped.wait_for(|stop| *stop) => break,
        };
        let began = Instant::now();
        let txn = step("declare", Transaction::declare(&controller, None)).await?;
        step("complete", txn.accept(&mut receiver, &delivery)).await?;
        step("send", txn.post(&mut sender, delivery.body().clone())).await?;
        step("commit", txn.commit()).await?;
        let micros = u64::try_from(began.elapsed().as_micros()).unwrap_or(u64::MAX);
        latencies
            .record(micros.max(1))
            .map_err(|error| BenchError::broker("latency", error))?;
    }
    let _ = step("close", connection.close()).await;
    Ok(latencies)
}
