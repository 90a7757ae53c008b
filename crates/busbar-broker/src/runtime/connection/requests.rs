//! The `$cbs` and `$management` nodes: requests taken off request links, answered on the reply
//! link the routing rule of servicebus-amqp.md §2.3 picks (same connection; target or name equal
//! to reply-to, else the one in the request's session, else any for that node), pre-settled.

use busbar_amqp::engine::{Connection, IncomingTransfer, LinkId, OutgoingDelivery};
use busbar_amqp::message::Message;
use busbar_amqp::performatives::{Accepted, DeliveryState, MessageFormat};
use bytes::Bytes;

use super::attach::top_up_credit;
use super::transactions::{SendAnswer, transaction_of};
use super::transfers::size_exceeded;
use super::{BrokerConnection, Grant, LinkKind, RequestNode};
use crate::address::{Address, EntityPath, path_of};
use crate::auth::{Claim, PutTokenOutcome, put_token};
use crate::errors::{BrokerError, StatusCode};
use crate::names::EntityName;
use crate::runtime::MAX_TRANSFER_SIZE;
use crate::runtime::mailbox::{ConnectionCommand, EntityCommand, post_entity};
use crate::runtime::management::{self, OperationResult};
use crate::runtime::request::{Request, StatusKeys, failure, success};
use crate::runtime::settlement::rejected;

impl BrokerConnection {
    pub(super) fn request(&mut self, transfer: IncomingTransfer, connection: &mut Connection) {
        let (link, delivery_id) = (transfer.link, transfer.delivery_id);
        let txn = transaction_of(transfer.state.as_ref()).map(|state| state.txn_id.clone());
        // A request past the link's limit cannot be answered on the reply link (its message-id
        // and reply-to were dropped with it): its delivery is rejected instead, as soon as it
        // passed the limit.
        let limit = match self.links.get(&link) {
            Some(LinkKind::Requests {
                max_message_size, ..
            }) => *max_message_size,
            _ => MAX_TRANSFER_SIZE,
        };
        let oversize = transfer
            .oversize
            .and_then(|size| size_exceeded(&transfer, size, limit));
        if !transfer.settled {
            // Requests are accepted as deliveries; errors travel in the response.
            let state = match &oversize {
                None => DeliveryState::Accepted(Accepted {}),
                Some(error) => {
                    let wire = self.wire(error, "");
                    rejected(wire.condition, wire.description)
                }
            };
            let _ = connection.send_disposition(
                link,
                transfer.delivery_id,
                transfer.delivery_id,
                true,
                Some(state),
            );
        }
        if oversize.is_some() {
            return;
        }
        top_up_credit(link, connection);
        let Some(LinkKind::Requests { node, node_key, .. }) = self.links.get(&link) else {
            return;
        };
        let (node, node_key) = (node.clone(), node_key.clone());
        let request = match Request::decode(&Message::from_bytes(transfer.message)) {
            Ok(request) => request,
            Err(error) => {
                tracing::info!(connection = self.id, %error, "undecodable request dropped");
                return;
            }
        };
        match node {
            RequestNode::Cbs => {
                let response = self.put_token(&request, connection);
                self.route(
                    link,
                    &node_key,
                    request.reply_to.as_deref(),
                    response,
                    connection,
                );
            }
            RequestNode::Management {
                node,
                entity,
                sub_queue,
                topic,
            } => {
                // Each operation needs its own claim (the link itself needed Send or Listen).
                let operation = request.text_property("operation").unwrap_or_default();
                let claim = Claim::of_management_operation(operation);
                if let Err(refused) = self.check_access(&node, &[claim]) {
                    self.respond_management(link, &request, &entity.path, Err(refused), connection);
                    return;
                }
                if topic && let Some(refused) = topic_refusal(&request) {
                    self.respond_management(link, &request, &entity.path, Err(refused), connection);
                    return;
                }
                let Some(request) = self.rule_request(link, request, &entity.path, connection)
                else {
                    return;
                };
                if let Some(parsed) = management::parse_session_operation(&request) {
                    if let Some(txn) = txn {
                        let receiver = self.associated_receiver(&request);
                        let result = parsed.and_then(|operation| {
                            self.session_in_transaction(&txn, &entity, receiver, operation)
                        });
                        self.respond_management(link, &request, &entity.path, result, connection);
                        return;
                    }
                    self.session_request(link, request, &entity, parsed, connection);
                    return;
                }
                let operation = match management::parse(&request) {
                    Ok(operation) => operation,
                    Err(error) => {
                        self.respond_management(
                            link,
                            &request,
                            &entity.path,
                            Err(error),
                            connection,
                        );
                        return;
                    }
                };
                // schedule-message is a send: refused as one by the entity's status.
                if matches!(operation, management::Operation::Enqueue(_))
                    && let Some(refused) = self.shared.registry.current().send_refusal(
                        &self.shared.namespace,
                        &EntityPath::QueueOrTopic(EntityName::new(&entity.path)),
                    )
                {
                    self.respond_management(link, &request, &entity.path, Err(refused), connection);
                    return;
                }
                if let Some(txn) = txn {
                    if let management::Operation::Enqueue(messages) = operation {
                        let answer = SendAnswer::Schedule {
                            request: Box::new(request),
                            entity: entity.path.clone(),
                        };
                        let targets = vec![(entity, messages)];
                        self.send_in_transaction(
                            txn,
                            (link, delivery_id),
                            answer,
                            targets,
                            connection,
                        );
                        return;
                    }
                    let result = self.operate_in_transaction(&txn, &entity, operation);
                    self.respond_management(link, &request, &entity.path, result, connection);
                    return;
                }
                let mailbox = self.mailbox.clone();
                let path = entity.path.clone();
                post_entity(
                    &entity.inbox,
                    EntityCommand::Execute {
                        sub_queue,
                        operation,
                        reply: Box::new(move |result| {
                            mailbox.post(ConnectionCommand::Respond {
                                request_link: link,
                                request: Box::new(request),
                                entity: path,
                                result,
                            });
                        }),
                    },
                );
            }
        }
    }

    /// Answers a `$cbs` put-token and records what it grants; a refused one voids the grant it
    /// would have renewed, and the links that held by it alone are detached.
    fn put_token(&mut self, request: &Request, connection: &mut Connection) -> Message {
        let token = request.body.as_str().unwrap_or_default();
        let audience = request.text_property("name").unwrap_or_default();
        let outcome = if request.text_property("operation") == Some("put-token") {
            put_token(
                &self.shared.keys.current(),
                token,
                audience,
                self.shared.clock.wall_now().as_millis(),
                // As Service Bus: a token for an unknown entity is answered 404 with the
                // entity-not-found wording (.NET MessagingEntityNotFoundException, Go
                // CodeNotFound, Java MESSAGING_ENTITY_NOT_FOUND; Python raises its
                // authentication error carrying the text). The attach is still refused for
                // clients that skip `$cbs`.
                |path| self.shared.registry.current().resolve(path).is_some(),
                |entity| self.shared.registry.current().entity_keys(entity),
            )
        } else {
            return failure(
                request,
                StatusKeys::Cbs,
                &self.wire(
                    &BrokerError::Argument("only put-token is supported".into()),
                    "",
                ),
            );
        };
        match outcome.to_broker_error(&self.shared.namespace) {
            None => {
                if let PutTokenOutcome::Accepted {
                    expires_at_unix_millis,
                    rights,
                } = outcome
                {
                    let path = granted_path(audience);
                    self.grants.retain(|grant| grant.path != path);
                    self.grants.push(Grant {
                        path,
                        expires_at: busbar_core::Timestamp(expires_at_unix_millis),
                        rights,
                    });
                    self.arm_lapse_timer();
                }
                success(
                    request,
                    StatusKeys::Cbs,
                    StatusCode::ACCEPTED,
                    "Accepted",
                    None,
                )
            }
            // The tracker names the entity path, not the whole audience URI.
            Some(error) => {
                if let PutTokenOutcome::Unauthorized(_) = outcome {
                    self.revoke(granted_path(audience).as_ref(), &error, connection);
                }
                failure(
                    request,
                    StatusKeys::Cbs,
                    &self.wire(&error, path_of(audience).trim_matches('/')),
                )
            }
        }
    }

    pub(super) fn respond_management(
        &mut self,
        request_link: LinkId,
        request: &Request,
        entity: &str,
        result: Result<OperationResult, BrokerError>,
        connection: &mut Connection,
    ) {
        let Some(LinkKind::Requests { node_key, .. }) = self.links.get(&request_link) else {
            return;
        };
        let node_key = node_key.clone();
        let response = match result.and_then(|result| management::response_body(&result)) {
            Ok(Some(body)) => success(
                request,
                StatusKeys::Management,
                StatusCode::OK,
                "OK",
                Some(body),
            ),
            Ok(None) => success(
                request,
                StatusKeys::Management,
                StatusCode::NO_CONTENT,
                "No messages",
                None,
            ),
            Err(error) => failure(request, StatusKeys::Management, &self.wire(&error, entity)),
        };
        self.route(
            request_link,
            &node_key,
            request.reply_to.as_deref(),
            response,
            connection,
        );
    }

    /// Queues a response on the reply link the routing rule picks, and sends what credit allows.
    fn route(
        &mut self,
        request_link: LinkId,
        node_key: &str,
        reply_to: Option<&str>,
        response: Message,
        connection: &mut Connection,
    ) {
        let candidates: Vec<(LinkId, u8)> = self
            .links
            .iter()
            .filter_map(|(link, kind)| match kind {
                LinkKind::Replies(reply) if reply.node == node_key => Some((
                    *link,
                    reply_rank(
                        reply.target.as_deref(),
                        &reply.name,
                        reply_to,
                        link.session == request_link.session,
                    ),
                )),
                _ => None,
            })
            .collect();
        let Some((link, _)) = candidates.into_iter().min_by_key(|(_, rank)| *rank) else {
            tracing::info!(
                connection = self.id,
                node = node_key,
                "no reply link for a response"
            );
            return;
        };
        if let Some(LinkKind::Replies(reply)) = self.links.get_mut(&link) {
            reply.backlog.push_back(response);
        }
        self.flush_replies(link, connection);
    }

    /// Sends waiting responses while the reply link has credit.
    pub(super) fn flush_replies(&mut self, link: LinkId, connection: &mut Connection) {
        while connection.link_credit(link).unwrap_or(0) > 0 {
            let Some(LinkKind::Replies(reply)) = self.links.get_mut(&link) else {
                return;
            };
            let Some(response) = reply.backlog.pop_front() else {
                return;
            };
            self.response_tags = self.response_tags.wrapping_add(1);
            let delivery = OutgoingDelivery {
                tag: Bytes::copy_from_slice(&self.response_tags.to_be_bytes()),
                message: response.into_bytes(),
                tail: Bytes::new(),
                message_format: MessageFormat::AMQP,
                settled: true,
            };
            if let Err(error) = connection.send_transfer(link, delivery) {
                tracing::debug!(connection = self.id, %error, "response not sent");
                return;
            }
        }
    }
}

/// How well a reply link fits a request (lower is better): its target address or name equal to
/// the request's reply-to (JS names the link, .NET gives its target, Python sends none), then a
/// link in the request's own session, then any link of the node on the connection.
fn reply_rank(target: Option<&str>, name: &str, reply_to: Option<&str>, same_session: bool) -> u8 {
    let named = reply_to.is_some_and(|to| target == Some(to) || name == to);
    if named {
        0
    } else if same_session {
        1
    } else {
        2
    }
}

/// Why a request to a topic's `$management` node is refused: a topic serves scheduling only
/// (its messages are received, peeked and settled through its subscriptions).
fn topic_refusal(request: &Request) -> Option<BrokerError> {
    let operation = request.text_property("operation").unwrap_or_default();
    (!TOPIC_OPERATIONS.contains(&operation)).then(|| {
        BrokerError::NotAllowed(format!(
            "the operation '{operation}' is not supported on a topic: use one of its subscriptions"
        ))
    })
}

/// The `$management` operations a topic serves.
const TOPIC_OPERATIONS: [&str; 2] = [
    "com.microsoft:schedule-message",
    "com.microsoft:cancel-scheduled-message",
];

/// The entity a token's audience grants rights on, `None` for the namespace (`sb://host/`).
fn granted_path(audience: &str) -> Option<EntityPath> {
    match Address::parse(audience) {
        Ok(address) if !path_of(audience).trim_end_matches('/').is_empty() => {
            address.entity_node().map(|node| node.path.clone())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::reply_rank;

    #[test]
    fn reply_routing_prefers_reply_to_then_the_session() {
        // .NET: reply-to is the receiver's target address.
        assert_eq!(
            reply_rank(Some("guid"), "mgmt:receiver", Some("guid"), false),
            0
        );
        // JS: reply-to is the receiver's link name, its target has no address.
        assert_eq!(reply_rank(None, "cbs-1", Some("cbs-1"), false), 0);
        // Python: no reply-to; the link in the same session wins over others.
        assert_eq!(reply_rank(Some("$cbs"), "x", None, true), 1);
        assert_eq!(reply_rank(Some("$cbs"), "x", None, false), 2);
        assert_eq!(reply_rank(Some("other"), "y", Some("guid"), true), 1);
    }
}
