//! The sessions cell: a producer puts one message in each of 100 sessions of a session-enabled
//! queue, then one consumer takes the sessions in turn: attach a receiver locked to the
//! session, receive its message, accept it, detach. Repeated until the time is up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use fe2o3_amqp::Receiver;
use fe2o3_amqp::link::receiver::CreditMode;
use fe2o3_amqp::types::definitions::{ReceiverSettleMode, SenderSettleMode};
use fe2o3_amqp::types::messaging::{Body, Message, Properties, Source};
use fe2o3_amqp::types::primitives::{Binary, OrderedMap, Symbol, Value};

use crate::client::{Client, Tally, step};
use crate::error::BenchError;
use crate::probe::{BrokerProbe, ProcessSample};
use crate::transport::Connector;

/// Sessions per round, one message each.
pub(super) const SESSIONS: usize = 100;
/// Body size of their messages.
const BODY_BYTES: usize = 128;

/// Runs rounds of [`SESSIONS`] sessions on `address` for `duration`; the tally counts messages
/// received and accepted, latency from attaching the session's receiver to its accept.
pub(super) async fn run(
    connector: &Arc<Connector>,
    probe: Option<BrokerProbe>,
    address: &str,
    duration: Duration,
) -> Result<(Tally, Instant, Option<ProcessSample>), BenchError> {
    let mut producer = Client::connect(connector, "sessions-p".to_owned()).await?;
    let mut sender = producer.sender(address).await?;
    let mut consumer = Client::connect(connector, "sessions-c".to_owned()).await?;
    let before = probe.and_then(|probe| probe.sample());
    let started = Instant::now();
    let mut tally = Tally::new();
    let mut round = 0;
    while started.elapsed() < duration {
        let mut outcomes = Vec::with_capacity(SESSIONS);
        for session in 0..SESSIONS {
            let message = Message::builder()
                .properties(Properties {
                    group_id: Some(format!("s-{session}")),
                    ..Properties::default()
                })
                .data(Binary::from(vec![0x5a; BODY_BYTES]))
                .build();
            outcomes.push(step("send", sender.send_batchable(message)).await?);
        }
        for outcome in outcomes {
            step("outcome", outcome).await?;
        }
        for session in 0..SESSIONS {
            let attached = Instant::now();
            let mut receiver =
                session_receiver(&mut consumer, address, &format!("s-{session}"), round).await?;
            let delivery = step("receive", receiver.recv::<Body<Value>>()).await?;
            step("complete", receiver.accept(&delivery)).await?;
            let micros = u64::try_from(attached.elapsed().as_micros()).unwrap_or(u64::MAX);
            tally.latencies.saturating_record(micros.max(1));
            tally.completed += 1;
            step("detach", receiver.close()).await?;
        }
        round += 1;
    }
    tally.finished = Instant::now();
    drop(sender);
    for client in [producer, consumer] {
        if let Err(error) = client.close().await {
            eprintln!("warning: {error}");
        }
    }
    Ok((tally, started, before))
}

/// A peek-lock receiver locked to `session` (Service Bus's `com.microsoft:session-filter`).
async fn session_receiver(
    client: &mut Client,
    address: &str,
    session: &str,
    round: usize,
) -> Result<Receiver, BenchError> {
    let mut filter = OrderedMap::new();
    filter.insert(
        Symbol::from("com.microsoft:session-filter"),
        Value::String(session.to_owned()),
    );
    step(
        "attach session receiver",
        Receiver::builder()
            .name(format!("session-{session}-{round}"))
            .source(Source::builder().address(address).filter(filter).build())
            .sender_settle_mode(SenderSettleMode::Unsettled)
            .receiver_settle_mode(ReceiverSettleMode::First)
            .credit_mode(CreditMode::Auto(1))
            .attach(client.session()),
    )
    .await
}
