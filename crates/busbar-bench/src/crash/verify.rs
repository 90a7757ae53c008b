//! What a restarted broker holds, read by draining it: a sentinel sent after the restart marks
//! the end of each queue, subscription and session (everything recovered was stored before it),
//! and a sentinel dead-lettered after the queue's drain marks the end of its dead-letter
//! sub-queue. Everything drained is completed through `$management`, acknowledged, so the next
//! round starts from empty entities whatever happens to it.

use fe2o3_amqp::Receiver;
use fe2o3_amqp::types::primitives::Uuid;

use super::link::{Link, Management, Settlement, id_and_token, receive, send};
use super::model::{Found, Place};
use super::{QUEUE, SESSION_QUEUE, SESSIONS, SUBSCRIPTIONS, TOPIC, subscription_path};
use crate::client::step;
use crate::error::BenchError;

/// Lock tokens settled per `update-disposition` request.
const SETTLE_BATCH: usize = 200;
/// Credit of a draining receiver.
const DRAIN_CREDIT: u32 = 100;

/// Drains every entity of the campaign and says where each message was, and the sessions' states.
pub(crate) async fn collect(url: &str, round: u64) -> Result<Found, BenchError> {
    let mut found = Found::default();
    let mut link = Link::open(url, &format!("check-{round}")).await?;
    let sentinel = format!("check-{round}");

    let mut sender = link.sender("check-queue-send", QUEUE).await?;
    sentinel_sent(send(&mut sender, &sentinel, None).await?)?;
    let mut receiver = link
        .receiver("check-queue", QUEUE, None, DRAIN_CREDIT)
        .await?;
    let mut management = link.management(QUEUE).await?;
    let (drained, sentinel_token) = drain(&mut receiver, &sentinel).await?;
    record(&mut found, QUEUE, Place::Active, &drained);
    complete(&mut management, &drained, None).await?;
    management
        .settle(&[sentinel_token], Settlement::DeadLetter, None)
        .await?;
    let dead_letters = format!("{QUEUE}/$DeadLetterQueue");
    let mut receiver = link
        .receiver("check-dlq", &dead_letters, None, DRAIN_CREDIT)
        .await?;
    let mut management = link.management(&dead_letters).await?;
    let (drained, sentinel_token) = drain(&mut receiver, &sentinel).await?;
    record(&mut found, QUEUE, Place::DeadLettered, &drained);
    complete(&mut management, &drained, None).await?;
    management
        .settle(&[sentinel_token], Settlement::Complete, None)
        .await?;

    let mut sender = link.sender("check-topic-send", TOPIC).await?;
    sentinel_sent(send(&mut sender, &sentinel, None).await?)?;
    for subscription in SUBSCRIPTIONS {
        let path = subscription_path(subscription);
        let mut receiver = link
            .receiver(&format!("check-{subscription}"), &path, None, DRAIN_CREDIT)
            .await?;
        let mut management = link.management(&path).await?;
        let (drained, sentinel_token) = drain(&mut receiver, &sentinel).await?;
        record(&mut found, &path, Place::Active, &drained);
        complete(&mut management, &drained, None).await?;
        management
            .settle(&[sentinel_token], Settlement::Complete, None)
            .await?;
    }

    let mut sender = link.sender("check-sessions-send", SESSION_QUEUE).await?;
    let mut management = link.management(SESSION_QUEUE).await?;
    for session in SESSIONS {
        let holder = format!("check-{session}");
        let mut receiver = link
            .receiver(&holder, SESSION_QUEUE, Some(session), DRAIN_CREDIT)
            .await?;
        let state = management.session_state(session, &holder).await?;
        found.states.insert(session.to_owned(), state);
        sentinel_sent(send(&mut sender, &sentinel, Some(session)).await?)?;
        let (drained, sentinel_token) = drain(&mut receiver, &sentinel).await?;
        record(&mut found, SESSION_QUEUE, Place::Active, &drained);
        complete(&mut management, &drained, Some((session, &holder))).await?;
        management
            .settle(
                &[sentinel_token],
                Settlement::Complete,
                Some((session, &holder)),
            )
            .await?;
        step("detach session receiver", receiver.close()).await?;
    }
    link.close().await;
    Ok(found)
}

fn sentinel_sent(accepted: bool) -> Result<(), BenchError> {
    if accepted {
        Ok(())
    } else {
        Err(BenchError::broker("send", "the sentinel was refused"))
    }
}

/// Receives up to the sentinel: the messages before it, and the sentinel's lock token.
async fn drain(
    receiver: &mut Receiver,
    sentinel: &str,
) -> Result<(Vec<(String, Uuid)>, Uuid), BenchError> {
    let (mut drained, mut received) = (Vec::new(), 0);
    loop {
        let delivery = step("drain", receive(receiver, DRAIN_CREDIT, &mut received))
            .await
            .map_err(|error| {
                BenchError::broker(
                    "drain",
                    format!(
                        "{}: {error} after {} messages",
                        receiver.name(),
                        drained.len()
                    ),
                )
            })?;
        let (id, token) = id_and_token(&delivery)?;
        if id == sentinel {
            return Ok((drained, token));
        }
        drained.push((id, token));
    }
}

fn record(found: &mut Found, entity: &str, place: Place, drained: &[(String, Uuid)]) {
    for (id, _) in drained {
        found.add(entity, id, place);
    }
}

async fn complete(
    management: &mut Management,
    drained: &[(String, Uuid)],
    session: Option<(&str, &str)>,
) -> Result<(), BenchError> {
    for batch in drained.chunks(SETTLE_BATCH) {
        let tokens: Vec<Uuid> = batch.iter().map(|(_, token)| token.clone()).collect();
        management
            .settle(&tokens, Settlement::Complete, session)
            .await?;
    }
    Ok(())
}
