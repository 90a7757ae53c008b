//! The HTTP data plane's door into the broker: sends, receives, settlements and lock renewals
//! on an entity, for clients that speak Service Bus's REST API instead of AMQP. Each takes the
//! path an AMQP link would: a send goes through `client_send` (topic fan-out, `ForwardTo`,
//! quotas, duplicate detection), a receive registers a one-message receive link with the entity
//! task (so its lock, delivery count and MaxDeliveryCount are an AMQP PeekLock delivery's), and
//! settlements and renewals are the `$management` operations on lock tokens.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use busbar_amqp::engine::LinkId;
use busbar_amqp::message::Message;
use busbar_core::{LockToken, Outcome, ReceiveMode, SubQueue, Timestamp};
use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use super::{Control, ControlError};
use crate::address::{Address, EntityNode, EntityPath, SubQueue as AddressSubQueue};
use crate::errors::BrokerError;
use crate::runtime::MAX_MESSAGE_SIZE;
use crate::runtime::connection::client_send;
use crate::runtime::inbound::new_message;
use crate::runtime::mailbox::{
    ConnectionCommand, EntityCommand, Mailbox, ReceiverKey, post_entity,
};
use crate::runtime::management::{Operation, OperationResult};
use crate::runtime::outbound::delivered_message;
use crate::runtime::registry::{EntityHandle, Resolved};

/// What an HTTP client does with a message it holds locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockedMessageAction {
    /// `DELETE …/messages/{id}/{lock}`: complete it.
    Complete,
    /// `PUT …/messages/{id}/{lock}`: unlock it (abandon: the delivery counts).
    Unlock,
}

/// Numbers an HTTP receive as if it were a link of its own connection: counted down from the
/// top of the range so they never meet the AMQP connections', which count up from 1.
static NEXT_HTTP_RECEIVER: AtomicU64 = AtomicU64::new(u64::MAX);

impl Control {
    /// Sends AMQP-encoded messages to a queue or topic, as one send; answered once they are
    /// durable (a duplicate is accepted and dropped, as over AMQP).
    pub async fn send_messages(
        &self,
        entity: &str,
        messages: Vec<Bytes>,
    ) -> Result<(), BrokerError> {
        let state = self.state().map_err(unavailable)?;
        let path = match sub_queue_node(entity, &state.namespace)? {
            EntityNode {
                path: path @ EntityPath::QueueOrTopic(_),
                sub_queue: AddressSubQueue::Active,
            } => path,
            _ => {
                return Err(BrokerError::NotAllowed(format!(
                    "messages cannot be sent to '{entity}': send to a queue or a topic"
                )));
            }
        };
        let limit = state.registry.current().max_message_size(&path);
        let mut parsed = Vec::with_capacity(messages.len());
        for bytes in messages {
            let size = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
            if size > limit {
                return Err(BrokerError::MessageSizeExceeded {
                    delivery_id: None,
                    size,
                    limit,
                });
            }
            let message = Message::parse(bytes)
                .and_then(new_message)
                .map_err(|error| {
                    BrokerError::Argument(format!("the message cannot be encoded: {error}"))
                })?;
            parsed.push(message);
        }
        let (done, answer) = oneshot::channel();
        let registry = state.registry.current();
        let reply = Box::new(move |result: Result<OperationResult, BrokerError>| {
            let _ = done.send(result.map(drop));
        });
        client_send(&registry, &state.namespace, &path, parsed, reply);
        drop(state);
        answer.await.unwrap_or(Err(BrokerError::ShuttingDown))
    }

    /// The largest message the queue or topic `entity` takes (`MaxMessageSizeInKilobytes`, in
    /// bytes); the default for a path that names none.
    pub fn max_message_size(&self, entity: &str) -> u64 {
        let Ok(state) = self.state() else {
            return MAX_MESSAGE_SIZE;
        };
        sub_queue_node(entity, &state.namespace).map_or(MAX_MESSAGE_SIZE, |node| {
            state.registry.current().max_message_size(&node.path)
        })
    }

    /// Receives one message from a queue, a subscription or a dead-letter sub-queue, locked
    /// (peek-lock) or removed (receive-and-delete): the message as an AMQP receiver gets it
    /// (header and broker annotations included), or `None` when none arrived before `give_up`
    /// resolved. Waiting holds nothing but a registration with the entity task.
    ///
    /// A message handed out just as `give_up` resolves is still returned, never dropped. If the
    /// caller drops the future instead, a message in flight is lost to it as it would be to an
    /// AMQP connection that broke: a lock runs out, a receive-and-delete is gone.
    pub async fn receive_message(
        &self,
        entity: &str,
        mode: ReceiveMode,
        give_up: impl Future<Output = ()>,
    ) -> Result<Option<Bytes>, BrokerError> {
        let (handle, sub_queue) = {
            let state = self.state().map_err(unavailable)?;
            let node = sub_queue_node(entity, &state.namespace)?;
            let registry = state.registry.current();
            let handle = entity_handle(&registry, &node, &state.namespace)?;
            if let Some(refusal) = registry.receive_refusal(&state.namespace, &node.path) {
                return Err(refusal);
            }
            let sub_queue = match node.sub_queue {
                AddressSubQueue::Active if handle.requires_session => {
                    return Err(BrokerError::NotAllowed(format!(
                        "'{entity}' requires sessions, which the HTTP API does not receive from"
                    )));
                }
                AddressSubQueue::Active => SubQueue::Main,
                AddressSubQueue::DeadLetter => SubQueue::DeadLetter,
                AddressSubQueue::TransferDeadLetter => {
                    return Err(not_found(&state.namespace, entity));
                }
            };
            (handle, sub_queue)
        };
        let receiver = ReceiverKey {
            connection: NEXT_HTTP_RECEIVER.fetch_sub(1, Ordering::Relaxed),
            link: LinkId::OUTSIDE_ENGINE,
        };
        // Room for a delivery and the end of a drain.
        let (sender, mut deliveries) = mpsc::channel(2);
        let registration = Registration {
            inbox: handle.inbox.clone(),
            receiver,
        };
        let flow = |drain: bool, sender| EntityCommand::Flow {
            receiver,
            sub_queue,
            mode,
            limit: 1,
            drain,
            mailbox: Mailbox::new(sender),
        };
        let drain_sender = sender.clone();
        post_entity(&handle.inbox, flow(false, sender));
        tokio::pin!(give_up);
        let command = tokio::select! {
            command = deliveries.recv() => command,
            () = &mut give_up => {
                // Drain, as an AMQP receiver would (§2.6.7): the entity hands out a message that
                // is available now or says it has none, so even a zero wait finds one, and one
                // handed out meanwhile is still ours.
                post_entity(&handle.inbox, flow(true, drain_sender));
                deliveries.recv().await
            }
        };
        drop(registration);
        match command {
            Some(ConnectionCommand::Deliver { delivery, .. }) => {
                handle.metrics.delivered();
                let message = delivered_message(&delivery).map_err(|error| {
                    BrokerError::Internal(format!("a stored message cannot be decoded: {error}"))
                })?;
                Ok(Some(message.into_bytes()))
            }
            Some(ConnectionCommand::ReceiverEnded { error, .. }) => Err(error),
            _ => Ok(None),
        }
    }

    /// Completes or unlocks a message locked by an HTTP (or AMQP) receive of `entity`.
    pub async fn settle_message(
        &self,
        entity: &str,
        token: LockToken,
        action: LockedMessageAction,
    ) -> Result<(), BrokerError> {
        let outcome = match action {
            LockedMessageAction::Complete => Outcome::Complete,
            LockedMessageAction::Unlock => Outcome::Abandon {
                properties: busbar_core::Properties::default(),
            },
        };
        let operation = Operation::Settle {
            tokens: vec![token],
            outcome,
        };
        self.execute_on_lock(entity, operation).await.map(drop)
    }

    /// Renews the lock of a message `entity` handed out; answers its new locked-until.
    pub async fn renew_message_lock(
        &self,
        entity: &str,
        token: LockToken,
    ) -> Result<Timestamp, BrokerError> {
        match self
            .execute_on_lock(entity, Operation::RenewLock(vec![token]))
            .await?
        {
            OperationResult::Expirations(until) => {
                until.first().copied().ok_or(BrokerError::MessageLockLost)
            }
            _ => Err(BrokerError::Internal("renew-lock answered no time".into())),
        }
    }

    /// Runs a lock operation on the entity (or dead-letter sub-queue) that holds the lock.
    async fn execute_on_lock(
        &self,
        entity: &str,
        operation: Operation,
    ) -> Result<OperationResult, BrokerError> {
        let (inbox, sub_queue) = {
            let state = self.state().map_err(unavailable)?;
            let node = sub_queue_node(entity, &state.namespace)?;
            let registry = state.registry.current();
            let handle = entity_handle(&registry, &node, &state.namespace)?;
            if let Some(refusal) = registry.receive_refusal(&state.namespace, &node.path) {
                return Err(refusal);
            }
            let sub_queue = match node.sub_queue {
                AddressSubQueue::Active => SubQueue::Main,
                _ => SubQueue::DeadLetter,
            };
            (handle.inbox.clone(), sub_queue)
        };
        let (done, answer) = oneshot::channel();
        post_entity(
            &inbox,
            EntityCommand::Execute {
                sub_queue,
                operation,
                reply: Box::new(move |result| {
                    let _ = done.send(result);
                }),
            },
        );
        answer.await.unwrap_or(Err(BrokerError::ShuttingDown))
    }
}

/// Ends an HTTP receive's registration with its entity task, however the receive ends.
struct Registration {
    inbox: mpsc::Sender<EntityCommand>,
    receiver: ReceiverKey,
}

impl Drop for Registration {
    fn drop(&mut self) {
        post_entity(&self.inbox, EntityCommand::Detach(self.receiver));
    }
}

/// The entity (and sub-queue) an HTTP path names, as an AMQP address would name it.
fn sub_queue_node(entity: &str, namespace: &str) -> Result<EntityNode, BrokerError> {
    match Address::parse(entity) {
        Ok(Address::Entity(node)) => Ok(node),
        _ => Err(not_found(namespace, entity)),
    }
}

/// The queue or subscription at `node` (a topic has nothing to receive or settle).
fn entity_handle(
    registry: &crate::runtime::registry::Registry,
    node: &EntityNode,
    namespace: &str,
) -> Result<EntityHandle, BrokerError> {
    match registry.resolve(&node.path) {
        Some(Resolved::Entity(handle)) => Ok(handle.clone()),
        Some(Resolved::Topic(_)) => Err(BrokerError::NotAllowed(format!(
            "'{}' is a topic: receive from one of its subscriptions",
            node.path
        ))),
        None => Err(not_found(namespace, &node.path.to_string())),
    }
}

fn not_found(namespace: &str, entity: &str) -> BrokerError {
    BrokerError::EntityNotFound {
        namespace: namespace.to_owned(),
        entity: entity.to_owned(),
    }
}

/// The broker has stopped: the control interface answers nothing more.
fn unavailable(_: ControlError) -> BrokerError {
    BrokerError::ShuttingDown
}
