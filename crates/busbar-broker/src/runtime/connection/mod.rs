//! A connection task's handler on the amqp driver: SASL identity, `$cbs` grants, and the link
//! table — sender links into entities, receive links fed by entity tasks, and the `$cbs` /
//! `$management` request/response pairs.

mod attach;
mod dispositions;
mod requests;
mod rule_requests;
mod send_window;
mod session_attach;
mod session_requests;
mod settlements;
mod token_lapse;
mod transactional_work;
mod transactions;
mod transfers;
mod unsettled_cap;

pub(crate) use transfers::{client_send, store_routed};

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use busbar_amqp::driver::ConnectionHandler;
use busbar_amqp::engine::{
    Connection, DeliveryId, Event, LinkId, Millis, SaslCredentials, SaslVerdict, SessionId,
};
use busbar_amqp::message::Message;
use busbar_core::{LockToken, ReceiveMode, SubQueue, Timestamp};
use tokio::sync::mpsc;

use self::dispositions::HeldDispositions;
use self::settlements::HeldSettlements;
use super::Shared;
use super::mailbox::{ConnectionCommand, EntityCommand, Mailbox, ReceiverKey, post_entity};
use super::registry::EntityHandle;
use crate::address::{EntityNode, EntityPath};
use crate::auth::AccessRights;
use crate::errors::{BrokerError, ErrorScope, TrackingId, WireError};
use crate::names::EntityName;

/// A link on which we deliver messages from an entity.
#[derive(Debug)]
struct ReceiveLink {
    /// The link's name (what `associated-link-name` refers to).
    name: String,
    entity: EntityHandle,
    sub_queue: SubQueue,
    mode: ReceiveMode,
    /// Transfers sent on the link (wrapping), for the absolute credit given to the entity.
    sent: u32,
    /// Peek-locked deliveries not settled yet.
    unsettled: HashMap<DeliveryId, LockToken>,
    /// The client's credit as a limit on `sent` (wrapping), from its last flow.
    credit_limit: u32,
    /// The limit last given to the entity: the client's, unless the unsettled deliveries were
    /// at their cap ([`unsettled_cap`]).
    granted_limit: u32,
}

/// Which node a request link talks to.
#[derive(Clone, Debug)]
enum RequestNode {
    Cbs,
    Management {
        /// The node as addressed, which each request's rights are checked on.
        node: EntityNode,
        entity: EntityHandle,
        sub_queue: SubQueue,
        /// A topic's node: only scheduling is served there.
        topic: bool,
    },
}

/// A link on which we send responses.
#[derive(Debug)]
struct ReplyLink {
    /// The normalised node address (lower case), to match requests to.
    node: String,
    name: String,
    target: Option<String>,
    /// Responses waiting for credit.
    backlog: VecDeque<Message>,
}

#[derive(Debug)]
enum LinkKind {
    /// The client sends to this queue or topic (its path as configured, for error texts).
    Sender {
        path: EntityPath,
        display: String,
        /// The largest message it takes: its entity's limit when it attached.
        max_message_size: u64,
        /// Its sends not answered yet, which its credit follows.
        window: send_window::SendWindow,
    },
    Receiver(ReceiveLink),
    /// A session receive link whose attach waits for a session.
    AcceptingSession(Box<session_attach::AcceptingSession>),
    Requests {
        node: RequestNode,
        node_key: String,
        /// The largest request it takes: 1 MiB, plus its entity's message size limit on a
        /// `$management` node (a request may carry a message to schedule).
        max_message_size: u64,
    },
    Replies(ReplyLink),
    /// The client declares and discharges transactions here (target `amqp:coordinator`).
    Coordinator,
}

/// What a `$cbs` put-token granted: an entity (or the whole namespace) until a time.
#[derive(Debug)]
struct Grant {
    path: Option<EntityPath>,
    expires_at: Timestamp,
    /// The rights of the rule that signed the token.
    rights: AccessRights,
}

/// One connection's broker state.
pub(crate) struct BrokerConnection {
    shared: Arc<Shared>,
    id: u64,
    mailbox: Mailbox,
    /// The rights of the namespace rule whose key SASL PLAIN presented (none without it).
    authenticated: AccessRights,
    /// The rights of the entity rules whose key SASL PLAIN presented, each on its queue or
    /// topic (and a topic's subscriptions).
    authenticated_within: Vec<(EntityName, AccessRights)>,
    /// The SASL PLAIN response that signed in, checked again whenever a rule changes.
    plain_credential: Option<Vec<u8>>,
    /// Wakes the connection when a rule changes, while it holds a SASL PLAIN credential.
    plain_watcher: Option<tokio::task::AbortHandle>,
    grants: Vec<Grant>,
    /// Wakes the connection when the first of its grants expires ([`token_lapse`]).
    lapse_timer: Option<tokio::task::AbortHandle>,
    links: HashMap<LinkId, LinkKind>,
    /// Entity inboxes of receive links that ended, for deliveries still on their way to them.
    detached_receivers: HashMap<LinkId, mpsc::Sender<EntityCommand>>,
    /// Delivery tags of responses (pre-settled, so only unique per link).
    response_tags: u64,
    /// Send outcomes and settlement echoes of the current run of commands, sent as ranges.
    held_dispositions: HeldDispositions,
    /// Client settlements of the current read, handed to the entities as one command per link.
    held_settlements: HeldSettlements,
    /// The transactions declared on this connection.
    transactions: transactions::Transactions,
}

impl BrokerConnection {
    /// The handler of connection number `id`, reachable through `mailbox`.
    pub(crate) fn new(shared: Arc<Shared>, id: u64, mailbox: Mailbox) -> Self {
        shared.metrics.connection_opened();
        Self {
            shared,
            id,
            mailbox,
            authenticated: AccessRights::NONE,
            authenticated_within: Vec::new(),
            plain_credential: None,
            plain_watcher: None,
            grants: Vec::new(),
            lapse_timer: None,
            links: HashMap::new(),
            detached_receivers: HashMap::new(),
            response_tags: 0,
            held_dispositions: HeldDispositions::default(),
            held_settlements: HeldSettlements::default(),
            transactions: transactions::Transactions::default(),
        }
    }

    fn now(&self) -> Timestamp {
        self.shared.clock.now()
    }

    /// The rights this connection holds on the entity at `path`: its SASL PLAIN credential's
    /// and those of its unexpired tokens covering `path` (token expiry is wall time: a virtual
    /// clock moved ahead does not expire the clients' tokens).
    fn rights(&self, path: &EntityPath) -> AccessRights {
        let now = self.shared.clock.wall_now();
        let plain = self
            .authenticated_within
            .iter()
            .filter(|(entity, _)| entity == path.top_level())
            .fold(self.authenticated, |rights, (_, within)| {
                rights.union(*within)
            });
        self.grants
            .iter()
            .filter(|grant| {
                grant.expires_at > now && grant.path.as_ref().is_none_or(|granted| granted == path)
            })
            .fold(plain, |rights, grant| rights.union(grant.rights))
    }

    /// The wire form of an error concerning `entity`.
    fn wire(&self, error: &BrokerError, entity: &str) -> WireError {
        let tracking_id = TrackingId::random();
        tracing::debug!(connection = self.id, %tracking_id, entity, %error, "request refused");
        self.shared.metrics.refused(error);
        error.to_wire(&ErrorScope {
            namespace: &self.shared.namespace,
            entity,
            tracking_id,
            now_unix_millis: self.now().as_millis(),
        })
    }

    fn receiver_key(&self, link: LinkId) -> ReceiverKey {
        ReceiverKey {
            connection: self.id,
            link,
        }
    }

    /// Forgets a link; a receive link is unregistered from its entity (its message locks stay;
    /// a session link's session is released).
    fn forget(&mut self, link: LinkId) {
        let receiver = match self.links.remove(&link) {
            Some(LinkKind::Receiver(receiver)) => Some(receiver),
            Some(LinkKind::AcceptingSession(pending)) => Some(pending.receiver),
            Some(LinkKind::Coordinator) => {
                self.roll_back_declared_on(Some(link));
                None
            }
            _ => None,
        };
        if let Some(receiver) = receiver {
            post_entity(
                &receiver.entity.inbox,
                EntityCommand::Detach(self.receiver_key(link)),
            );
            self.detached_receivers.insert(link, receiver.entity.inbox);
        }
    }

    fn sasl(&mut self, credentials: SaslCredentials, connection: &mut Connection) {
        let verdict = match credentials {
            SaslCredentials::Anonymous { .. } | SaslCredentials::Cbs => SaslVerdict::Ok,
            SaslCredentials::Plain {
                authzid,
                username,
                password,
            } => {
                let response = format!("{authzid}\0{username}\0{password}").into_bytes();
                if self.sign_in_plain(&response) {
                    self.plain_credential = Some(response);
                    self.watch_rules();
                    SaslVerdict::Ok
                } else {
                    tracing::info!(connection = self.id, "SASL PLAIN refused");
                    SaslVerdict::AuthFailed
                }
            }
            SaslCredentials::MalformedPlain | SaslCredentials::Other { .. } => {
                SaslVerdict::AuthFailed
            }
        };
        connection.sasl_outcome(verdict);
    }

    /// Takes the rights of the rules whose key the SASL PLAIN `response` presents: a namespace
    /// rule's, or else those of the entity rules that take it. Whether any took it.
    fn sign_in_plain(&mut self, response: &[u8]) -> bool {
        let keys = self.shared.keys.current();
        self.authenticated = match keys.authenticate_plain(response) {
            Ok(name) => keys.rights_of(&name),
            Err(_) => AccessRights::NONE,
        };
        // A key name no namespace rule has may be an entity's own rule's.
        self.authenticated_within = if self.authenticated == AccessRights::NONE {
            self.shared.registry.current().plain_entity_rights(response)
        } else {
            Vec::new()
        };
        self.authenticated != AccessRights::NONE || !self.authenticated_within.is_empty()
    }
}

impl Drop for BrokerConnection {
    /// The driver drops the handler when its connection has ended.
    fn drop(&mut self) {
        // Nothing of a transaction left open may ever appear.
        self.roll_back_declared_on(None);
        for task in [self.lapse_timer.take(), self.plain_watcher.take()]
            .into_iter()
            .flatten()
        {
            task.abort();
        }
        self.shared.metrics.connection_closed();
    }
}

impl ConnectionHandler for BrokerConnection {
    type Command = ConnectionCommand;

    fn on_event(&mut self, event: Event, connection: &mut Connection, _now: Millis) {
        if !matches!(event, Event::Disposition(_)) {
            // What reaches the entities keeps the order of the frames that caused it.
            self.held_settlements.flush(&self.mailbox);
        }
        match event {
            Event::SaslInit { credentials, .. } => self.sasl(credentials, connection),
            Event::AttachRequested(request) => self.attach(*request, connection),
            Event::Transfer(transfer) => self.transfer(transfer, connection),
            Event::Disposition(update) => self.disposition(update, connection),
            Event::Flow {
                link,
                credit,
                drain,
                ..
            } => self.flow(link, credit, drain, connection),
            Event::Detached { link, .. } => self.forget(link),
            Event::SessionEnded { session, .. } => self.session_ended(session),
            Event::ConnectionClosed { .. } => {
                let links: Vec<LinkId> = self.links.keys().copied().collect();
                for link in links {
                    self.forget(link);
                }
            }
            Event::ConnectionOpened { .. } | Event::SessionBegun { .. } => {}
        }
    }

    fn on_command(
        &mut self,
        command: ConnectionCommand,
        connection: &mut Connection,
        _now: Millis,
    ) {
        let held = matches!(
            command,
            ConnectionCommand::SendOutcome { .. }
                | ConnectionCommand::SettleEchoes { .. }
                | ConnectionCommand::TransactionHeld { .. }
        );
        if !held {
            // Frames keep the order of the commands that caused them.
            self.flush_dispositions(connection);
        }
        match command {
            ConnectionCommand::Deliver {
                link,
                delivery,
                mode,
            } => self.deliver(link, *delivery, mode, connection),
            ConnectionCommand::DrainDone(link) => {
                if let Some(LinkKind::Receiver(receiver)) = self.links.get_mut(&link) {
                    receiver.drained();
                }
                // The link may be gone; then there is nothing to drain.
                let _ = connection.finish_drain(link);
            }
            ConnectionCommand::SendOutcome {
                link,
                delivery_id,
                settled,
                result,
            } => {
                self.send_answered(link, connection);
                if !settled {
                    self.send_outcome(link, delivery_id, result);
                }
            }
            ConnectionCommand::SettleEchoes { link, echoes } => {
                for (delivery_id, state, result) in echoes {
                    let echo = self.settle_echo(link, &state, result);
                    self.held_dispositions.hold(link, delivery_id, echo);
                }
            }
            ConnectionCommand::SessionAccepted {
                link,
                session,
                locked_until,
            } => self.session_accepted(link, session, locked_until, connection),
            ConnectionCommand::SessionRefused { link, error } => {
                self.session_refused(link, &error, connection);
            }
            ConnectionCommand::SessionLockLost(link) => self.session_lock_lost(link, connection),
            ConnectionCommand::ReceiverEnded { link, error } => {
                self.receiver_ended(link, &error, connection);
            }
            ConnectionCommand::DetachLink { link, condition } => {
                self.forget(link);
                let _ = connection.detach(link, Some(injected(&condition)));
            }
            ConnectionCommand::CloseConnection(condition) => {
                connection.close(Some(injected(&condition)));
            }
            ConnectionCommand::TransactionHeld {
                txn,
                link,
                delivery_id,
                part,
            } => self.transaction_held(txn, (link, delivery_id), part, connection),
            ConnectionCommand::TransactionCommitted { txn, result } => {
                self.committed(&txn, result, connection);
            }
            ConnectionCommand::TransactionTimedOut(txn) => self.transaction_timed_out(txn),
            ConnectionCommand::TokensLapsed => self.tokens_lapsed(connection),
            ConnectionCommand::RulesChanged => self.rules_changed(connection),
            ConnectionCommand::Respond {
                request_link,
                request,
                entity,
                result,
            } => self.respond_management(request_link, &request, &entity, result, connection),
        }
    }

    fn on_commands_applied(&mut self, connection: &mut Connection, _now: Millis) {
        self.flush_dispositions(connection);
    }

    fn on_events_handled(&mut self, _connection: &mut Connection, _now: Millis) {
        self.held_settlements.flush(&self.mailbox);
    }
}

impl BrokerConnection {
    fn session_ended(&mut self, session: SessionId) {
        let links: Vec<LinkId> = self
            .links
            .keys()
            .filter(|link| link.session == session)
            .copied()
            .collect();
        for link in links {
            self.forget(link);
        }
    }
}

/// The error of a fault a test injected (test controls).
fn injected(condition: &str) -> busbar_amqp::performatives::AmqpError {
    busbar_amqp::performatives::AmqpError::new(condition, "injected by Busbar's test controls")
}
