//! The explorer's operations through the control interface, served with or without test
//! controls: peek a page of an entity's messages from a sequence number, send a message,
//! re-drive dead-lettered messages to their entity or another (each removed from the dead-letter
//! sub-queue only once its copy is durable, the way `ForwardDeadLetteredMessagesTo` moves
//! them), and view sessions with their state and lock holder, or edit a session's state.

use busbar_core::{SequenceNumber, SubQueue};
use bytes::Bytes;
use tokio::sync::oneshot;

use super::peeked::{OutgoingMessage, PeekedMessage, outgoing, peeked};
use super::{Control, ControlError, ControlState};
use crate::address::{Address, EntityPath, SubQueue as AddressSubQueue};
use crate::errors::BrokerError;
use crate::runtime::connection::store_routed;
use crate::runtime::dead_letter_forwarding::{
    DeadLetterSource, forwarded_copy, move_dead_lettered,
};
use crate::runtime::entity_task::{SessionView, SessionsAnswer, SessionsRequest};
use crate::runtime::mailbox::{EntityCommand, post_entity};
use crate::runtime::management::{Operation, OperationResult};
use crate::runtime::registry::{EntityHandle, Resolved};

/// The most messages one peek or one re-drive round reads.
pub const MAX_PAGE: usize = 1_000;

/// What a re-drive did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Redriven {
    /// Messages stored at the destination and removed from the dead-letter sub-queue.
    pub moved: u64,
    /// Messages left in the dead-letter sub-queue (refused by the destination, or locked by a
    /// dead-letter receiver meanwhile).
    pub kept: u64,
}

impl Control {
    /// Up to `count` (at most [`MAX_PAGE`]) messages of the queue or subscription `path` from
    /// sequence number `from` on, of its dead-letter sub-queue if `dead_letter`. Reads only
    /// that range of the entity's ordered index, so a page costs the same however many
    /// messages the entity holds.
    pub async fn peek(
        &self,
        path: &str,
        dead_letter: bool,
        from: i64,
        count: usize,
    ) -> Result<Vec<PeekedMessage>, ControlError> {
        let entity = self.state()?.entity(path)?;
        let deliveries = peek_deliveries(&entity, dead_letter, from, count).await?;
        deliveries
            .iter()
            .map(|delivery| {
                peeked(delivery).map_err(|error| {
                    ControlError::Invalid(format!(
                        "message {} cannot be decoded: {error}",
                        delivery.sequence.value()
                    ))
                })
            })
            .collect()
    }

    /// Sends `message` to the queue or topic `path` as a client would; answered once stored.
    pub async fn send(&self, path: &str, message: OutgoingMessage) -> Result<(), ControlError> {
        let state = self.state()?;
        let destination = destination(path)?;
        let message = outgoing(message)
            .map_err(|error| ControlError::Invalid(format!("the message is malformed: {error}")))?;
        let registry = state.registry.current();
        let targets = registry.route(&destination, vec![message]);
        if targets.is_empty() && registry.resolve(&destination).is_none() {
            return Err(ControlError::NotFound(path.to_owned()));
        }
        if let Some(refusal) = registry.send_refusal(&state.namespace, &destination) {
            return Err(ControlError::Invalid(refusal.to_string()));
        }
        let (reply, stored) = oneshot::channel();
        store_routed(
            targets,
            Box::new(move |result| {
                let _ = reply.send(result.map(drop));
            }),
        );
        broker_answer(stored.await)
    }

    /// Moves dead-lettered messages of the queue or subscription `path` — those numbered in
    /// `sequences`, or all when `None` — to `destination` (a queue or topic; the entity itself
    /// when `None`). Each copy is stored first, and the original leaves the dead-letter
    /// sub-queue only once that copy is durable; answered when every move has finished.
    pub async fn redrive(
        &self,
        path: &str,
        sequences: Option<Vec<i64>>,
        destination: Option<&str>,
    ) -> Result<Redriven, ControlError> {
        let state = self.state()?;
        let source = state.entity(path)?;
        let target = match destination {
            Some(name) => self::destination(name)?,
            None => entity_path(path)?,
        };
        // A copy routed nowhere would count as stored and its original be removed: refuse.
        if state.registry.current().resolve(&target).is_none() {
            return Err(ControlError::NotFound(
                destination.unwrap_or(path).to_owned(),
            ));
        }
        let mut outcome = Redriven::default();
        let mut from = 1;
        loop {
            let page = peek_deliveries(&source, true, from, MAX_PAGE).await?;
            let Some(last) = page.last() else { break };
            from = last.sequence.value().saturating_add(1);
            let wanted = page.into_iter().filter(|delivery| {
                sequences
                    .as_ref()
                    .is_none_or(|wanted| wanted.contains(&delivery.sequence.value()))
            });
            let mut moves = Vec::new();
            for delivery in wanted {
                let (done, moved) = oneshot::channel();
                let copy = forwarded_copy(delivery.payload.clone(), &delivery.properties, None);
                let inbox = DeadLetterSource {
                    inbox: source.inbox.downgrade(),
                    runtime: tokio::runtime::Handle::current(),
                };
                let registry = &state.registry;
                move_dead_lettered(
                    registry,
                    &target,
                    delivery.sequence,
                    copy,
                    inbox,
                    Some(done),
                );
                moves.push(moved);
            }
            for moved in moves {
                match moved.await {
                    Ok(Ok(())) => outcome.moved += 1,
                    _ => outcome.kept += 1,
                }
            }
        }
        Ok(outcome)
    }

    /// Up to `top` sessions of the session-enabled queue or subscription `path` after the first
    /// `skip`, in id order, each with its state and lock holder.
    pub async fn sessions(
        &self,
        path: &str,
        skip: usize,
        top: usize,
    ) -> Result<Vec<SessionView>, ControlError> {
        let top = top.min(MAX_PAGE);
        match self
            .ask_sessions(path, SessionsRequest::List { skip, top })
            .await?
        {
            SessionsAnswer::Listed(views) => Ok(views),
            SessionsAnswer::Stored => Ok(Vec::new()),
        }
    }

    /// Sets (`Some`) or clears (`None`) the state of `session` in the queue or subscription
    /// `path`, whether or not a receiver holds it; answered once durable.
    pub async fn set_session_state(
        &self,
        path: &str,
        session: &str,
        state: Option<Bytes>,
    ) -> Result<(), ControlError> {
        let session = session.to_owned();
        let request = SessionsRequest::SetState { session, state };
        self.ask_sessions(path, request).await.map(drop)
    }

    async fn ask_sessions(
        &self,
        path: &str,
        request: SessionsRequest,
    ) -> Result<SessionsAnswer, ControlError> {
        let entity = self.state()?.entity(path)?;
        let (reply, answer) = oneshot::channel();
        post_entity(
            &entity.inbox,
            EntityCommand::ExploreSessions { request, reply },
        );
        broker_answer(answer.await)
    }
}

impl ControlState {
    /// The queue or subscription at `path` (a topic holds no messages of its own to explore).
    fn entity(&self, path: &str) -> Result<EntityHandle, ControlError> {
        let node = entity_path(path)?;
        match self.registry.current().resolve(&node) {
            Some(Resolved::Entity(handle)) => Ok(handle.clone()),
            _ => Err(ControlError::NotFound(path.to_owned())),
        }
    }
}

async fn peek_deliveries(
    entity: &EntityHandle,
    dead_letter: bool,
    from: i64,
    count: usize,
) -> Result<Vec<busbar_core::Delivery>, ControlError> {
    let (reply, answer) = oneshot::channel();
    let operation = Operation::Peek {
        from: SequenceNumber(from.max(1)),
        count: count.min(MAX_PAGE),
    };
    let sub_queue = if dead_letter {
        SubQueue::DeadLetter
    } else {
        SubQueue::Main
    };
    post_entity(
        &entity.inbox,
        EntityCommand::Execute {
            sub_queue,
            operation,
            reply: Box::new(move |result| {
                let _ = reply.send(result);
            }),
        },
    );
    match broker_answer(answer.await)? {
        OperationResult::Messages(deliveries) => Ok(deliveries),
        _ => Ok(Vec::new()),
    }
}

/// The entity path an explorer path names (no sub-queue suffix).
fn entity_path(path: &str) -> Result<EntityPath, ControlError> {
    match Address::parse(path) {
        Ok(Address::Entity(node)) if node.sub_queue == AddressSubQueue::Active => Ok(node.path),
        _ => Err(ControlError::NotFound(path.to_owned())),
    }
}

/// Where a send or re-drive goes: a queue or topic, or a subscription of one.
fn destination(path: &str) -> Result<EntityPath, ControlError> {
    entity_path(path)
}

#[cfg(test)]
#[path = "explorer_tests.rs"]
mod tests;

fn broker_answer<T>(
    answer: Result<Result<T, BrokerError>, oneshot::error::RecvError>,
) -> Result<T, ControlError> {
    match answer {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(BrokerError::EntityNotFound { entity, .. })) => Err(ControlError::NotFound(entity)),
        Ok(Err(
            error @ (BrokerError::Argument(_)
            | BrokerError::NotAllowed(_)
            | BrokerError::ArgumentOutOfRange(_)),
        )) => Err(ControlError::Invalid(error.to_string())),
        Ok(Err(error)) => Err(ControlError::Unavailable(error.to_string())),
        Err(_) => Err(ControlError::Unavailable(
            "the entity's task has stopped".into(),
        )),
    }
}
