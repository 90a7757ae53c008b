//! Attaches: addresses resolved to entities or request/response nodes, authorisation checked,
//! termini echoed unchanged; an unknown entity is refused with `amqp:not-found`, a sender or
//! receiver its entity's status refuses with `com.microsoft:entity-disabled`.

use std::collections::{HashMap, VecDeque};

use busbar_amqp::engine::{AttachReply, AttachRequest, Connection, LinkId};
use busbar_amqp::performatives::{AmqpError, ReceiverSettleMode, Role, SenderSettleMode};
use busbar_amqp::types::{Fields, Value};
use busbar_core::{ReceiveMode, SubQueue};
use busbar_sessions::check_receiver_kind;

use super::send_window::{SEND_CREDIT, SendWindow};
use super::session_attach::{AcceptingSession, is_session_receiver, session_filter_descriptor};
use super::{BrokerConnection, LinkKind, ReceiveLink, ReplyLink, RequestNode};
use crate::address::{Address, EntityNode, EntityPath, SubQueue as AddressSubQueue};
use crate::auth::{AccessRights, Claim};
use crate::errors::BrokerError;
use crate::runtime::MAX_TRANSFER_SIZE;
use crate::runtime::inbound::batch_limit;
use crate::runtime::registry::{EntityHandle, Resolved};

/// The sender-link property with the largest batch the entity takes.
const MAX_MESSAGE_BATCH_SIZE: &str = "com.microsoft:max-message-batch-size";

/// Credit granted to request and coordinator links and kept topped up.
const REQUEST_CREDIT: u32 = 100;

/// Gives a request or coordinator link its credit back once half of it is used.
pub(super) fn top_up_credit(link: LinkId, connection: &mut Connection) {
    if connection.link_credit(link).unwrap_or(0) < REQUEST_CREDIT / 2 {
        // The link exists: a transfer just arrived on it.
        let _ = connection.set_credit(link, REQUEST_CREDIT);
    }
}

impl BrokerConnection {
    pub(super) fn attach(&mut self, request: AttachRequest, connection: &mut Connection) {
        let link = request.link;
        let raw = match request.role {
            Role::Sender => request.target.as_ref().and_then(|t| t.address_str()),
            Role::Receiver => request.source.as_ref().and_then(|s| s.address_str()),
        }
        .unwrap_or_default()
        .to_owned();
        let decided = self.decide(&request, &raw);
        let outcome = match decided {
            Ok((LinkKind::AcceptingSession(pending), _)) => {
                self.hold_session_attach(link, &request, pending);
                return;
            }
            Ok((kind, reply)) => connection.accept_attach(link, reply).map(|()| Some(kind)),
            Err(error) => {
                let wire = self.wire(&error, &raw);
                tracing::info!(connection = self.id, address = %raw, condition = wire.condition, "attach refused");
                let amqp =
                    busbar_amqp::performatives::AmqpError::new(wire.condition, wire.description);
                connection.refuse_attach(link, amqp).map(|()| None)
            }
        };
        let Ok(Some(kind)) = outcome else {
            return;
        };
        let credit = match &kind {
            LinkKind::Sender { .. } => Some(SEND_CREDIT),
            LinkKind::Requests { .. } | LinkKind::Coordinator => Some(REQUEST_CREDIT),
            LinkKind::Receiver(_) | LinkKind::AcceptingSession(_) | LinkKind::Replies(_) => None,
        };
        if let Some(credit) = credit {
            // The link was just accepted, so it exists.
            let _ = connection.set_credit(link, credit);
        }
        self.links.insert(link, kind);
    }

    /// The link's kind and our attach reply, or why it is refused.
    fn decide(
        &self,
        request: &AttachRequest,
        raw: &str,
    ) -> Result<(LinkKind, AttachReply), BrokerError> {
        // Transactions are declared and discharged on a link to the coordinator.
        // Request, reply and coordinator links carry requests and responses, never larger than
        // the connection reads whole (a `$management` request up to its entity's limit more);
        // entity links carry their entity's limit.
        let reply = AttachReply {
            max_message_size: Some(MAX_TRANSFER_SIZE),
            ..AttachReply::echo(request)
        };
        if request.coordinator.is_some() {
            return Ok((LinkKind::Coordinator, reply));
        }
        let address =
            Address::parse(raw).map_err(|error| BrokerError::Argument(error.to_string()))?;
        let node_key = address.to_string().to_ascii_lowercase();
        match (request.role, address) {
            (Role::Sender, Address::Cbs) => Ok((
                LinkKind::Requests {
                    node: RequestNode::Cbs,
                    node_key,
                    max_message_size: MAX_TRANSFER_SIZE,
                },
                reply,
            )),
            (Role::Receiver, address @ (Address::Cbs | Address::Management(_))) => {
                if let Address::Management(node) = &address {
                    self.management_node_of(node)?;
                }
                let kind = LinkKind::Replies(ReplyLink {
                    node: node_key,
                    name: request.name.clone(),
                    target: request
                        .target
                        .as_ref()
                        .and_then(|t| t.address_str())
                        .map(str::to_owned),
                    backlog: VecDeque::new(),
                });
                Ok((kind, reply))
            }
            (Role::Sender, Address::Management(node)) => {
                let (entity, sub_queue, topic) = self.management_node_of(&node)?;
                let registry = self.shared.registry.current();
                let max_message_size = MAX_TRANSFER_SIZE + registry.max_message_size(&node.path);
                Ok((
                    LinkKind::Requests {
                        node: RequestNode::Management {
                            node,
                            entity,
                            sub_queue,
                            topic,
                        },
                        node_key,
                        max_message_size,
                    },
                    AttachReply {
                        max_message_size: Some(max_message_size),
                        ..reply
                    },
                ))
            }
            (Role::Sender, Address::Entity(via)) => {
                self.check_access(&via, &[Claim::Send])?;
                // Send-via (cross-entity transactions): the link is attached to the entity the
                // transaction goes through, and names the real destination in a property.
                let node = match transfer_destination(request)? {
                    Some(destination) => destination,
                    None => via,
                };
                if node.sub_queue != AddressSubQueue::Active {
                    return Err(BrokerError::NotAllowed(
                        "messages cannot be sent to a dead-letter queue".into(),
                    ));
                }
                let registry = self.shared.registry.current();
                let display = match registry.resolve(&node.path) {
                    Some(Resolved::Entity(handle)) => handle.path.clone(),
                    Some(Resolved::Topic(route)) => route.path.clone(),
                    None => return Err(self.not_found(&node)),
                };
                if let Some(refusal) = registry.send_refusal(&self.shared.namespace, &node.path) {
                    return Err(refusal);
                }
                let max_message_size = registry.max_message_size(&node.path);
                let mut properties = Fields::default();
                properties.push(
                    MAX_MESSAGE_BATCH_SIZE,
                    Value::Ulong(batch_limit(max_message_size)),
                );
                let reply = AttachReply {
                    max_message_size: Some(max_message_size),
                    rcv_settle_mode: Some(ReceiverSettleMode::First),
                    properties: Some(properties),
                    ..reply
                };
                let path = node.path;
                Ok((
                    LinkKind::Sender {
                        path,
                        display,
                        max_message_size,
                        window: SendWindow::default(),
                    },
                    reply,
                ))
            }
            (Role::Receiver, Address::Entity(node)) => {
                let (entity, sub_queue) = self.entity_of(&node, &[Claim::Listen])?;
                let registry = self.shared.registry.current();
                if let Some(refusal) = registry.receive_refusal(&self.shared.namespace, &node.path)
                {
                    return Err(refusal);
                }
                if sub_queue == SubQueue::Main {
                    check_session_kind(&entity, request)?;
                }
                let mode = if request.snd_settle_mode == SenderSettleMode::Settled {
                    ReceiveMode::ReceiveAndDelete
                } else {
                    ReceiveMode::PeekLock
                };
                let reply = AttachReply {
                    max_message_size: Some(registry.max_message_size(&node.path)),
                    rcv_settle_mode: Some(match mode {
                        ReceiveMode::PeekLock => ReceiverSettleMode::Second,
                        ReceiveMode::ReceiveAndDelete => ReceiverSettleMode::First,
                    }),
                    ..reply
                };
                let receiver = ReceiveLink {
                    name: request.name.clone(),
                    entity,
                    sub_queue,
                    mode,
                    sent: 0,
                    unsettled: HashMap::new(),
                    credit_limit: 0,
                    granted_limit: 0,
                };
                let kind = if sub_queue == SubQueue::Main && is_session_receiver(request) {
                    LinkKind::AcceptingSession(Box::new(AcceptingSession {
                        receiver,
                        reply: reply.clone(),
                        filter_descriptor: session_filter_descriptor(request),
                    }))
                } else {
                    LinkKind::Receiver(receiver)
                };
                Ok((kind, reply))
            }
        }
    }

    /// The entity serving a `$management` node, its sub-queue, and whether it is a topic's (which
    /// holds the topic's scheduled messages), after authorisation.
    fn management_node_of(
        &self,
        node: &EntityNode,
    ) -> Result<(EntityHandle, SubQueue, bool), BrokerError> {
        // Sending (schedule) and receiving (peek, renew, settle) both go through `$management`.
        let either = &[Claim::Send, Claim::Listen];
        if node.sub_queue == AddressSubQueue::Active {
            self.check_access(node, either)?;
            if let Some(Resolved::Topic(topic)) = self.shared.registry.current().resolve(&node.path)
            {
                return Ok((topic.scheduled.clone(), SubQueue::Main, true));
            }
        }
        let (entity, sub_queue) = self.entity_of(node, either)?;
        Ok((entity, sub_queue, false))
    }

    /// The queue or subscription a node names (receive and management), after authorisation
    /// for one of `claims`.
    fn entity_of(
        &self,
        node: &EntityNode,
        claims: &[Claim],
    ) -> Result<(EntityHandle, SubQueue), BrokerError> {
        self.check_access(node, claims)?;
        let sub_queue = match node.sub_queue {
            AddressSubQueue::Active => SubQueue::Main,
            AddressSubQueue::DeadLetter => SubQueue::DeadLetter,
            AddressSubQueue::TransferDeadLetter => return Err(self.not_found(node)),
        };
        match self.shared.registry.current().resolve(&node.path) {
            Some(Resolved::Entity(handle)) => Ok((handle.clone(), sub_queue)),
            Some(Resolved::Topic(_)) => Err(BrokerError::NotAllowed(format!(
                "'{}' is a topic: receive from one of its subscriptions",
                node.path
            ))),
            None => Err(self.not_found(node)),
        }
    }

    /// Whether the connection holds one of `claims` on the node. Authorisation comes before
    /// existence, as in Service Bus: unknown entities are reported as such only to a client
    /// whose rights would have let it use them.
    pub(super) fn check_access(
        &self,
        node: &EntityNode,
        claims: &[Claim],
    ) -> Result<(), BrokerError> {
        let rights = self.rights(&node.path);
        if claims.iter().any(|&claim| rights.allow(claim)) {
            Ok(())
        } else if rights == AccessRights::NONE {
            Err(BrokerError::Unauthorized(format!(
                "no valid token for '{node}' was put on $cbs"
            )))
        } else {
            Err(BrokerError::MissingClaim {
                claim: claims.first().map_or("Manage", |claim| claim.name()),
                resource: format!("sb://{}/{}", self.shared.namespace, node.path),
            })
        }
    }

    /// Voids what the connection's token for `path` (`None`: the namespace) granted, after
    /// its renewal was refused with `error` — the service re-checks a client's rights when it
    /// renews its token — and detaches, with that error, every link its remaining rights no
    /// longer cover.
    pub(super) fn revoke(
        &mut self,
        path: Option<&EntityPath>,
        error: &BrokerError,
        connection: &mut Connection,
    ) {
        self.grants.retain(|grant| grant.path.as_ref() != path);
        self.detach_uncovered(connection, |_, _, _| error.clone());
    }

    /// Detaches every link the connection's rights (as its grants now are) no longer cover,
    /// each with the error `error(link name, claim it needs, entity)` gives.
    pub(super) fn detach_uncovered(
        &mut self,
        connection: &mut Connection,
        error: impl Fn(&str, Claim, &EntityPath) -> BrokerError,
    ) {
        let parsed = |path: &str| Some(Address::parse(path).ok()?.entity_node()?.path.clone());
        let lapsed: Vec<(LinkId, EntityPath, Claim)> = self
            .links
            .iter()
            .filter_map(|(&link, kind)| {
                let (path, claims): (EntityPath, &[Claim]) = match kind {
                    LinkKind::Sender { path, .. } => (path.clone(), &[Claim::Send]),
                    LinkKind::Receiver(receiver) => {
                        (parsed(&receiver.entity.path)?, &[Claim::Listen])
                    }
                    LinkKind::AcceptingSession(pending) => {
                        (parsed(&pending.receiver.entity.path)?, &[Claim::Listen])
                    }
                    LinkKind::Requests {
                        node: RequestNode::Management { node, .. },
                        ..
                    } => (node.path.clone(), &[Claim::Send, Claim::Listen]),
                    LinkKind::Requests { .. } | LinkKind::Replies(_) | LinkKind::Coordinator => {
                        return None;
                    }
                };
                let rights = self.rights(&path);
                let covered = claims.iter().any(|&claim| rights.allow(claim));
                (!covered).then_some((link, path, claims[0]))
            })
            .collect();
        for (link, path, claim) in lapsed {
            let name = connection.link_name(link).unwrap_or_default().to_owned();
            let wire = self.wire(&error(&name, claim, &path), &path.to_string());
            self.forget(link);
            let _ = connection.detach(link, Some(AmqpError::new(wire.condition, wire.description)));
        }
    }

    fn not_found(&self, node: &EntityNode) -> BrokerError {
        BrokerError::EntityNotFound {
            namespace: self.shared.namespace.clone(),
            entity: node.to_string(),
        }
    }
}

/// §6.3: a receiver of a `RequiresSession` entity's main queue must name a session (or ask for
/// the next one) with `com.microsoft:session-filter`, and only such an entity takes one.
fn check_session_kind(entity: &EntityHandle, request: &AttachRequest) -> Result<(), BrokerError> {
    if check_receiver_kind(entity.requires_session, is_session_receiver(request)).is_err() {
        let reason = if entity.requires_session {
            "requires sessions: receive with a session receiver (accept a session)"
        } else {
            "does not use sessions: receive without a session filter"
        };
        return Err(BrokerError::NotAllowed(format!(
            "The entity '{}' {reason}.",
            entity.path
        )));
    }
    Ok(())
}

/// The link property naming a send-via link's destination.
const TRANSFER_DESTINATION: &str = "com.microsoft:transfer-destination-address";

/// The destination of a send-via link, when the client names one.
fn transfer_destination(request: &AttachRequest) -> Result<Option<EntityNode>, BrokerError> {
    let Some(value) = request
        .properties
        .as_ref()
        .and_then(|properties| properties.get(TRANSFER_DESTINATION))
    else {
        return Ok(None);
    };
    let text = match value {
        busbar_amqp::types::Value::String(text) => text.as_str(),
        busbar_amqp::types::Value::Symbol(symbol) => symbol.as_str(),
        _ => return Ok(None),
    };
    match Address::parse(text).map_err(|error| BrokerError::Argument(error.to_string()))? {
        Address::Entity(node) => Ok(Some(node)),
        _ => Err(BrokerError::Argument(format!(
            "'{text}' is not an entity to transfer messages to"
        ))),
    }
}
