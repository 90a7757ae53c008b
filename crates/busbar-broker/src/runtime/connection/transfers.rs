//! Messages both ways: client sends stored through the entity task and settled once durable;
//! entity deliveries sent on receive links; client settlements applied and echoed (outcomes and
//! echoes held for the run of commands and sent as ranges); credit passed on to the entity as
//! an absolute limit.

use std::sync::Arc;

use busbar_amqp::engine::{
    Connection, DeliveryId, DispositionUpdate, IncomingTransfer, LinkId, OutgoingDelivery,
};
use busbar_amqp::performatives::{Accepted, DeliveryState, MessageFormat, Role};
use busbar_core::{Delivery, NewMessage, ReceiveMode, SubQueue};
use busbar_sessions::check_session_message;
use bytes::Bytes;

use super::settlements::Settlement;
use super::transactions::{SendAnswer, transaction_of};
use super::{BrokerConnection, LinkKind, ReceiveLink};
use crate::address::EntityPath;
use crate::errors::BrokerError;
use crate::runtime::atomic_send::AtomicSend;
use crate::runtime::entity_task::session_error;
use crate::runtime::inbound::{batch_limit, messages_of_transfer};
use crate::runtime::mailbox::{
    ConnectionCommand, EntityCommand, HoldJoin, Mailbox, ReceiverKey, Reply, post_entity,
};
use crate::runtime::management::{Operation, OperationResult};
use crate::runtime::outbound::{delivered_parts, lock_tag};
use crate::runtime::registry::{EntityHandle, Registry, Resolved};
use crate::runtime::settlement::{outcome_of, rejected, success_echo};

impl BrokerConnection {
    pub(super) fn transfer(&mut self, transfer: IncomingTransfer, connection: &mut Connection) {
        let link = transfer.link;
        match self.links.get(&link) {
            Some(LinkKind::Sender {
                path,
                max_message_size,
                ..
            }) => {
                let (path, limit) = (path.clone(), *max_message_size);
                self.send(&path, limit, transfer, connection);
            }
            Some(LinkKind::Requests { .. }) => self.request(transfer, connection),
            Some(LinkKind::Coordinator) => self.coordinate(transfer, connection),
            _ => {}
        }
    }

    /// Stores a message sent on a sender link to `path`, which takes messages up to
    /// `max_message_size`. One past it is refused as soon as it passes (the engine reports it
    /// then, its bytes dropped, while the client may still be sending it, so the rejection goes
    /// out before its last frame).
    fn send(
        &mut self,
        path: &EntityPath,
        max_message_size: u64,
        transfer: IncomingTransfer,
        connection: &mut Connection,
    ) {
        let (link, delivery_id, settled) = (transfer.link, transfer.delivery_id, transfer.settled);
        let txn = transaction_of(transfer.state.as_ref()).map(|state| state.txn_id.clone());
        self.send_taken(link, transfer_size(&transfer), connection);
        let limit = if transfer.message_format == MessageFormat::BATCH {
            batch_limit(max_message_size)
        } else {
            max_message_size
        };
        if let Some(error) = size_exceeded(&transfer, transfer_size(&transfer), limit) {
            // Answered now rather than through the mailbox: the client may still be streaming
            // the message, and the sooner it hears, the less it sends for nothing.
            self.send_answered(link, connection);
            if !settled {
                self.send_outcome(link, delivery_id, Err(error));
                self.flush_dispositions(connection);
            }
            return;
        }
        let mailbox = self.mailbox.clone();
        // Posted for a pre-settled send too: its answer gives the link's credit back.
        let outcome = move |result: Result<OperationResult, BrokerError>| {
            mailbox.post(ConnectionCommand::SendOutcome {
                link,
                delivery_id,
                settled,
                result: result.map(|_| ()),
            });
        };
        let messages = match messages_of_transfer(transfer.message, transfer.message_format) {
            Ok(messages) => messages,
            Err(error) => {
                outcome(Err(BrokerError::Argument(format!(
                    "the message cannot be decoded: {error}"
                ))));
                return;
            }
        };
        let registry = self.shared.registry.current();
        if let Some(txn) = txn {
            if registry.resolve(path).is_none() {
                outcome(Err(BrokerError::EntityNotFound {
                    namespace: self.shared.namespace.clone(),
                    entity: path.to_string(),
                }));
                return;
            }
            if let Some(refusal) = registry.send_refusal(&self.shared.namespace, path) {
                outcome(Err(refusal));
                return;
            }
            let targets = registry.route(path, messages);
            // Answered through the transaction, not the link's window.
            self.send_answered(link, connection);
            let answer = SendAnswer::Transfer { settled };
            self.send_in_transaction(txn, (link, delivery_id), answer, targets, connection);
            return;
        }
        client_send(
            &registry,
            &self.shared.namespace,
            path,
            messages,
            Box::new(outcome),
        );
    }

    /// Holds the outcome of a client's send until the end of the current run of commands.
    pub(super) fn send_outcome(
        &mut self,
        link: LinkId,
        delivery_id: DeliveryId,
        result: Result<(), BrokerError>,
    ) {
        let state = self.send_state(link, result);
        self.held_dispositions.hold(link, delivery_id, state);
    }

    /// The outcome of a send on sender `link`: `accepted`, or `rejected` with the error.
    pub(super) fn send_state(
        &self,
        link: LinkId,
        result: Result<(), BrokerError>,
    ) -> DeliveryState {
        match result {
            Ok(()) => DeliveryState::Accepted(Accepted {}),
            Err(error) => {
                let path = match self.links.get(&link) {
                    Some(LinkKind::Sender { display, .. }) => display.clone(),
                    _ => String::new(),
                };
                let wire = self.wire(&error, &path);
                rejected(wire.condition, wire.description)
            }
        }
    }

    /// Sends the held outcomes and echoes, contiguous deliveries with one state as one range.
    pub(super) fn flush_dispositions(&mut self, connection: &mut Connection) {
        self.held_dispositions.flush(|range| {
            // A link detached meanwhile cannot be settled any more.
            let _ = connection.send_disposition(
                range.link,
                range.first,
                range.last,
                true,
                Some(range.state),
            );
        });
    }

    pub(super) fn flow(
        &mut self,
        link: LinkId,
        credit: u32,
        drain: bool,
        connection: &mut Connection,
    ) {
        let key = self.receiver_key(link);
        let mailbox = self.mailbox.clone();
        match self.links.get_mut(&link) {
            Some(LinkKind::Receiver(receiver)) => {
                let limit = receiver.take_credit(credit);
                post_flow(receiver, key, limit, drain, mailbox);
            }
            Some(LinkKind::Replies(_)) => self.flush_replies(link, connection),
            _ => {}
        }
    }

    /// Gives the entity the credit the unsettled cap held back, once settlements on `link`
    /// made room.
    fn grant_held_back_credit(&mut self, link: LinkId) {
        let key = self.receiver_key(link);
        if let Some(LinkKind::Receiver(receiver)) = self.links.get_mut(&link)
            && let Some(limit) = receiver.more_credit()
        {
            post_flow(receiver, key, limit, false, self.mailbox.clone());
        }
    }

    pub(super) fn deliver(
        &mut self,
        link: LinkId,
        delivery: Delivery,
        mode: ReceiveMode,
        connection: &mut Connection,
    ) {
        let token = delivery.lock.map(|lock| lock.token);
        let sent = match self.links.get_mut(&link) {
            Some(LinkKind::Receiver(receiver)) => {
                // Service Bus tags every delivery with a GUID, a lock token's or (received and
                // deleted) a fresh one: clients such as the Rust azservicebus crate insist on one.
                let tag = match &token {
                    Some(token) => lock_tag(token),
                    None => Bytes::copy_from_slice(uuid::Uuid::new_v4().as_bytes()),
                };
                let outgoing = delivered_parts(&delivery).map(|(message, tail)| OutgoingDelivery {
                    tag,
                    message,
                    tail,
                    message_format: MessageFormat::AMQP,
                    settled: mode == ReceiveMode::ReceiveAndDelete,
                });
                match outgoing {
                    Ok(outgoing) => match connection.send_transfer(link, outgoing) {
                        Ok(delivery_id) => {
                            receiver.sent = receiver.sent.wrapping_add(1);
                            receiver.entity.metrics.delivered();
                            if let Some(token) = token {
                                receiver.unsettled.insert(delivery_id, token);
                            }
                            true
                        }
                        Err(error) => {
                            tracing::debug!(connection = self.id, %error, "delivery not sent");
                            false
                        }
                    },
                    Err(error) => {
                        tracing::warn!(connection = self.id, %error, sequence = delivery.sequence.value(), "stored message cannot be decoded");
                        false
                    }
                }
            }
            _ => false,
        };
        if !sent && let Some(entity) = self.entity_for_release(link) {
            if let Some(token) = token {
                post_entity(&entity, EntityCommand::Release(vec![token]));
            }
            // A flow reordered behind the link's detach may have registered it again.
            if !matches!(self.links.get(&link), Some(LinkKind::Receiver(_))) {
                post_entity(&entity, EntityCommand::Detach(self.receiver_key(link)));
            }
        }
    }

    /// The inbox a lock taken for `link` goes back to when its delivery could not be sent.
    fn entity_for_release(&self, link: LinkId) -> Option<tokio::sync::mpsc::Sender<EntityCommand>> {
        match self.links.get(&link) {
            Some(LinkKind::Receiver(receiver)) => Some(receiver.entity.inbox.clone()),
            _ => self.detached_receivers.get(&link).cloned(),
        }
    }

    pub(super) fn disposition(&mut self, update: DispositionUpdate, connection: &mut Connection) {
        if update.role != Role::Receiver {
            return;
        }
        if let Some(transactional) = transaction_of(update.state.as_ref()) {
            let transactional = transactional.clone();
            self.disposition_in_transaction(&update, &transactional, connection);
            return;
        }
        let link = update.link;
        let Some(LinkKind::Receiver(receiver)) = self.links.get_mut(&link) else {
            return;
        };
        let Some(state) = update.state else {
            return;
        };
        let Some(outcome) = outcome_of(&state) else {
            return;
        };
        let (first, last) = (update.first.0, update.last.0);
        // A range no wider than the locks held (one delivery, usually) is looked up id by id;
        // a wider one is matched against the locks, so no disposition costs more than either.
        let narrow = usize::try_from(last.saturating_sub(first))
            .is_ok_and(|span| span < receiver.unsettled.len());
        let ids: Vec<DeliveryId> = if narrow {
            (first..=last)
                .map(DeliveryId)
                .filter(|id| receiver.unsettled.contains_key(id))
                .collect()
        } else {
            receiver
                .unsettled
                .keys()
                .filter(|id| (update.first..=update.last).contains(id))
                .copied()
                .collect()
        };
        // A single delivery we hold no lock for (settled before, or never ours) cannot settle.
        let unknown = update.first == update.last && !ids.contains(&update.first);
        for delivery_id in ids {
            let Some(token) = receiver.unsettled.remove(&delivery_id) else {
                continue;
            };
            self.held_settlements.hold(
                link,
                &receiver.entity.inbox,
                Settlement {
                    delivery_id,
                    token,
                    outcome: outcome.clone(),
                    echo: (!update.settled).then(|| state.clone()),
                },
            );
        }
        self.grant_held_back_credit(link);
        if unknown && !update.settled {
            let echo = self.settle_echo(link, &state, Err(BrokerError::MessageLockLost));
            let _ = connection.send_disposition(link, update.first, update.first, true, Some(echo));
        }
    }

    /// The state echoed to a client's unsettled settlement: its own outcome when applied, or
    /// why not.
    pub(super) fn settle_echo(
        &self,
        link: LinkId,
        state: &DeliveryState,
        result: Result<(), BrokerError>,
    ) -> DeliveryState {
        match result {
            Ok(()) => success_echo(state),
            Err(error) => {
                let path = match self.links.get(&link) {
                    Some(LinkKind::Receiver(receiver)) => receiver.entity.path.clone(),
                    _ => String::new(),
                };
                let wire = self.wire(&error, &path);
                rejected(wire.condition, wire.description)
            }
        }
    }
}

/// A client's send to `path` (over an AMQP link or the HTTP data plane): refused if the queue
/// or topic's status refuses sends, otherwise routed through the registry and stored, counted as received by the entity that accepts it (a topic: its own
/// entity of scheduled messages); `reply` gets the outcome once it is durable.
pub(crate) fn client_send(
    registry: &Registry,
    namespace: &str,
    path: &EntityPath,
    messages: Vec<NewMessage>,
    reply: Reply,
) {
    if let Some(refusal) = registry.send_refusal(namespace, path) {
        reply(Err(refusal));
        return;
    }
    let metrics = match registry.resolve(path) {
        Some(Resolved::Entity(handle)) => Arc::clone(&handle.metrics),
        Some(Resolved::Topic(topic)) => Arc::clone(&topic.scheduled.metrics),
        // Deleted while the link was open: refused as Service Bus refuses a missing entity.
        None => {
            reply(Err(BrokerError::EntityNotFound {
                namespace: namespace.to_owned(),
                entity: path.to_string(),
            }));
            return;
        }
    };
    let count = u64::try_from(messages.len()).unwrap_or(u64::MAX);
    let counted: Reply = Box::new(move |result: Result<OperationResult, BrokerError>| {
        if result.is_ok() {
            metrics.received(count);
        }
        reply(result);
    });
    store_routed(registry.route(path, messages), counted);
}

/// Stores routed messages (a client's send, or a message forwarded out of a dead-letter
/// sub-queue): refused as a whole for a reason known up front, otherwise stored everywhere.
pub(crate) fn store_routed(targets: Vec<(EntityHandle, Vec<NewMessage>)>, reply: Reply) {
    if let Some(refusal) = refusal(&targets) {
        reply(Err(refusal));
        return;
    }
    store_everywhere(targets, reply);
}

/// A refusal that depends only on the messages and where they go (a `RequiresSession` target
/// and a message without a valid SessionId), found before any copy is stored: a topic send
/// refused for it stores nothing in any subscription.
pub(super) fn refusal(targets: &[(EntityHandle, Vec<NewMessage>)]) -> Option<BrokerError> {
    targets
        .iter()
        .filter(|(entity, _)| entity.requires_session)
        .flat_map(|(_, messages)| messages)
        .find_map(|message| check_session_message(message).err())
        .map(session_error)
}

/// Stores messages in every target entity (a message no subscription selects is accepted and
/// dropped, as in Service Bus). One target takes the plain enqueue path. Several targets (a
/// topic with two or more selected subscriptions, `ForwardTo` chains ending in one) make one
/// [`AtomicSend`]: every copy is held invisibly, all insert records are stored in one
/// submission (recovered all or nothing after a crash), and only then are the copies released
/// for receive and peek, before the `accepted` goes out. If any entity refuses its copies or
/// the store fails, every copy is discarded and never delivered; the client gets the error.
fn store_everywhere(targets: Vec<(EntityHandle, Vec<NewMessage>)>, reply: Reply) {
    match &targets[..] {
        [] => reply(Ok(OperationResult::Done)),
        [(entity, _)] => {
            let inbox = entity.inbox.clone();
            let messages = targets
                .into_iter()
                .flat_map(|(_, messages)| messages)
                .collect();
            post_entity(
                &inbox,
                EntityCommand::Execute {
                    sub_queue: SubQueue::Main,
                    operation: Operation::Enqueue(messages),
                    reply,
                },
            );
        }
        _ => {
            let send = AtomicSend::new(targets.len(), reply);
            for (entity, messages) in targets {
                let send = send.clone();
                post_entity(
                    &entity.inbox,
                    EntityCommand::Hold {
                        messages,
                        send: HoldJoin::Atomic(send),
                    },
                );
            }
        }
    }
}

/// A transfer's size: as received, or for an oversize one what had arrived when it passed its
/// link's limit (its bytes were dropped).
fn transfer_size(transfer: &IncomingTransfer) -> u64 {
    transfer
        .oversize
        .unwrap_or_else(|| u64::try_from(transfer.message.len()).unwrap_or(u64::MAX))
}

/// The refusal of a transfer of `size` bytes past `limit`, in Service Bus's words.
pub(super) fn size_exceeded(
    transfer: &IncomingTransfer,
    size: u64,
    limit: u64,
) -> Option<BrokerError> {
    (size > limit).then_some(BrokerError::MessageSizeExceeded {
        delivery_id: Some(transfer.delivery_id.0),
        size,
        limit,
    })
}

/// Gives `receiver`'s entity the absolute `limit` on its deliveries.
fn post_flow(receiver: &ReceiveLink, key: ReceiverKey, limit: u32, drain: bool, mailbox: Mailbox) {
    post_entity(
        &receiver.entity.inbox,
        EntityCommand::Flow {
            receiver: key,
            sub_queue: receiver.sub_queue,
            mode: receiver.mode,
            limit,
            drain,
            mailbox,
        },
    );
}
