//! The messages that cross between tasks: commands to an entity task, commands to a connection
//! task, and the mailbox through which any thread (the store's writer included) reaches a
//! connection without blocking.

use busbar_amqp::engine::{DeliveryId, LinkId};
use busbar_amqp::performatives::DeliveryState;
use busbar_core::{
    Delivery, EntityConfig, LockToken, MessageCounts, NewMessage, Outcome, ReceiveMode,
    SequenceNumber, SubQueue, Timestamp,
};
use tokio::runtime::Handle;
use tokio::sync::mpsc;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::oneshot;

use busbar_store::GroupCommitHandle;

use super::atomic_send::{AtomicSend, HeldPart};
use super::dead_letter_forwarding::DeadLetterForwarding;
use super::entity_task::{SessionsAnswer, SessionsRequest};
use super::management::{Operation, OperationResult, SessionOperation};
use super::request::Request;
use super::transaction::{TransactionCommit, TransactionHold, TxnId};
use crate::errors::BrokerError;

/// Called once with the outcome of an entity operation (after durability when it changed
/// anything).
pub(crate) type Reply = Box<dyn FnOnce(Result<OperationResult, BrokerError>) + Send>;

/// Where an entity task sends the result of each settlement of a
/// [`EntityCommand::SettleDeliveries`], in order.
pub(crate) type SettlementsReply = Box<dyn FnOnce(Vec<Result<(), BrokerError>>) + Send>;

/// What a held part of a send is reported to.
pub(crate) enum HoldJoin {
    /// A send to several entities, stored once every part is held.
    Atomic(AtomicSend),
    /// A send inside a transaction, stored when the transaction commits.
    Transaction(TransactionHold),
}

impl HoldJoin {
    /// Reports the entity's held part (or its refusal); `store` takes an atomic send's records.
    pub(crate) fn report(self, part: Result<HeldPart, BrokerError>, store: &GroupCommitHandle) {
        match self {
            Self::Atomic(send) => send.report(part, store),
            Self::Transaction(hold) => hold.report(part),
        }
    }
}

/// A receive link, named across tasks: its connection and its link id there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ReceiverKey {
    /// The connection's number.
    pub(crate) connection: u64,
    /// The link on that connection.
    pub(crate) link: LinkId,
}

/// What an entity task is asked to do.
pub(crate) enum EntityCommand {
    /// Run an operation (send, settle, management) and reply.
    Execute {
        /// Main queue or dead-letter sub-queue.
        sub_queue: SubQueue,
        /// The operation.
        operation: Operation,
        /// Where the outcome goes.
        reply: Reply,
    },
    /// Settle the deliveries a receive link's client settled in one read, each with its own
    /// outcome, and reply with each one's result in the same order.
    SettleDeliveries {
        /// Each delivery's lock and outcome.
        settlements: Vec<(LockToken, Outcome)>,
        /// Where the results go, once durable.
        reply: SettlementsReply,
    },
    /// Hold this entity's copies of a send to several entities, or of a send inside a
    /// transaction, and report them to the send (see [`AtomicSend`], [`TransactionHold`]).
    Hold {
        /// The copies for this entity.
        messages: Vec<NewMessage>,
        /// The send they belong to.
        send: HoldJoin,
    },
    /// Commit a transaction whose settlements concern this entity (see [`TransactionCommit`]).
    CommitTransaction(TransactionCommit),
    /// A receive link's credit as an absolute limit: the entity delivers while the number of
    /// deliveries it made to the link stays below `limit` (AMQP delivery-count arithmetic).
    Flow {
        /// The receive link.
        receiver: ReceiverKey,
        /// Which sub-queue it reads.
        sub_queue: SubQueue,
        /// Peek-lock or receive-and-delete.
        mode: ReceiveMode,
        /// The connection's deliveries on the link so far plus the link's credit (wrapping).
        limit: u32,
        /// Whether the client asked to drain.
        drain: bool,
        /// The connection to deliver to.
        mailbox: Mailbox,
    },
    /// A receive link ended: deliver nothing more to it (its locks stay until they expire).
    Detach(ReceiverKey),
    /// Messages handed to a link that could not be sent: unlock them without counting.
    Release(Vec<LockToken>),
    /// Run a session operation of `$management` for the session link `receiver` (`None`: the
    /// request named no link of its connection) and reply.
    Session {
        /// The session link the request acts for.
        receiver: Option<ReceiverKey>,
        /// The operation.
        operation: SessionOperation,
        /// Where the outcome goes.
        reply: Reply,
    },
    /// A session receive link attached: lock the named session (`Some`) or the next available
    /// one, waiting until `wait_until`; the answer is a [`ConnectionCommand::SessionAccepted`]
    /// or [`ConnectionCommand::SessionRefused`].
    AcceptSession {
        /// The receive link.
        receiver: ReceiverKey,
        /// The session asked for, or `None` for the next available one.
        session: Option<String>,
        /// When a wait for the next available session ends.
        wait_until: Timestamp,
        /// The connection to answer.
        mailbox: Mailbox,
    },
    /// Report the entity's message counts (its runtime properties).
    Counts(oneshot::Sender<MessageCounts>),
    /// The entity's definition changed: apply it (ends every lock, as in Service Bus).
    Reconfigure {
        /// The new core configuration.
        config: EntityConfig,
        /// Where dead-lettered messages go now (`ForwardDeadLetteredMessagesTo`).
        forwarding: Option<DeadLetterForwarding>,
        /// What receives are refused with now that the entity's status (or its topic's)
        /// refuses them; `None` when it hands out messages.
        receive_refusal: Option<BrokerError>,
        /// Answered once applied.
        done: oneshot::Sender<Result<(), BrokerError>>,
    },
    /// Remove every stored message (of the dead-letter sub-queue only, or of both sub-queues
    /// and every session's state); answered with how many went, once that is durable.
    Purge {
        /// Only the dead-letter sub-queue.
        dead_letter_only: bool,
        /// Answered once the removal is durable.
        done: oneshot::Sender<Result<usize, BrokerError>>,
    },
    /// Misbehave on purpose for the next operations (test controls).
    InjectFault(Fault),
    /// The entity was deleted: remove its messages, detach its receivers, and from then on
    /// answer everything with entity-not-found.
    Delete {
        /// What every later command is answered with.
        error: BrokerError,
        /// Answered once the removal is durable.
        done: oneshot::Sender<Result<(), BrokerError>>,
    },
    /// A topic's due scheduled message, locked under `token`, was routed to its subscriptions:
    /// once they hold it durably it is completed; if they refused it, its lock runs out and it
    /// is tried again.
    ScheduledReleased {
        /// The topic entity's lock on the message.
        token: LockToken,
        /// The subscriptions' answer.
        result: Result<(), BrokerError>,
    },
    /// A dead-lettered message was forwarded (`ForwardDeadLetteredMessagesTo`): once the
    /// destination holds it durably it leaves the dead-letter sub-queue; if the destination
    /// refused it, it stays.
    DeadLetterForwarded {
        /// The message in the dead-letter sub-queue.
        sequence: SequenceNumber,
        /// The destination's answer.
        result: Result<(), BrokerError>,
        /// Told the outcome once the removal is durable (the explorer's re-drive waits on it).
        done: Option<oneshot::Sender<Result<(), BrokerError>>>,
    },
    /// The explorer's look at the entity's sessions, or its edit of one's state
    /// (`control/explorer.rs`); answered once an edit is durable.
    ExploreSessions {
        /// What is asked.
        request: SessionsRequest,
        /// Where the answer goes.
        reply: oneshot::Sender<Result<SessionsAnswer, BrokerError>>,
    },
}

/// A fault a test asks an entity to show (test controls).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The next `n` sends are refused with `com.microsoft:server-busy`.
    ServerBusy(u32),
    /// The next `n` settlements are answered with lock lost (and settle nothing).
    LockLost(u32),
    /// One receive link of the entity (now, or the next to ask for messages) is detached with
    /// this condition.
    DetachLink(String),
    /// The connection of one receive link of the entity is closed with this condition.
    DropConnection(String),
    /// The next `count` answers to sends and settlements go out `delay` late.
    Delay {
        /// How late.
        delay: std::time::Duration,
        /// How many answers.
        count: u32,
    },
}

/// What a connection task is told.
#[derive(Debug)]
pub(crate) enum ConnectionCommand {
    /// Send this message on a receive link.
    Deliver {
        /// The link.
        link: LinkId,
        /// The message and its lock.
        delivery: Box<Delivery>,
        /// Whether it goes out settled (receive-and-delete).
        mode: ReceiveMode,
    },
    /// The entity has nothing more for a draining link: end the drain.
    DrainDone(LinkId),
    /// A send was stored (or failed): settle the transfer.
    SendOutcome {
        /// The sender link.
        link: LinkId,
        /// The transfer.
        delivery_id: DeliveryId,
        /// The client settled it when sending: nothing to answer, only its credit to give back.
        settled: bool,
        /// Stored, or why not.
        result: Result<(), BrokerError>,
    },
    /// Settlements of one receive link were applied (or failed): echo each.
    SettleEchoes {
        /// The receive link.
        link: LinkId,
        /// Each delivery, the state the client sent, and whether it was applied (or why not).
        echoes: Vec<(DeliveryId, DeliveryState, Result<(), BrokerError>)>,
    },
    /// A session receive link holds its session: complete its attach (§6.2).
    SessionAccepted {
        /// The link.
        link: LinkId,
        /// The session it holds.
        session: String,
        /// When the session lock ends unless renewed.
        locked_until: Timestamp,
    },
    /// A session receive link got no session: refuse its attach (§6.3).
    SessionRefused {
        /// The link.
        link: LinkId,
        /// Why.
        error: BrokerError,
    },
    /// A session link's lock expired: detach it with `com.microsoft:session-lock-lost` (§6.4).
    SessionLockLost(LinkId),
    /// The entity a receive link reads was deleted (`amqp:not-found`) or stopped handing out
    /// messages (`com.microsoft:entity-disabled`): detach the link, or refuse its pending
    /// session attach, with the error.
    ReceiverEnded {
        /// The link.
        link: LinkId,
        /// Why.
        error: BrokerError,
    },
    /// Detach this link with this condition (test controls).
    DetachLink {
        /// The link.
        link: LinkId,
        /// The AMQP condition.
        condition: String,
    },
    /// Close the connection with this condition (test controls).
    CloseConnection(String),
    /// An entity holds its part of a send inside a transaction (or refused it).
    TransactionHeld {
        /// The transaction.
        txn: TxnId,
        /// The send's link and transfer.
        link: LinkId,
        delivery_id: DeliveryId,
        /// The held copies, or why not.
        part: Result<HeldPart, BrokerError>,
    },
    /// A transaction's commit is durable (or failed): answer its discharge.
    TransactionCommitted {
        /// The transaction.
        txn: TxnId,
        /// Committed, or why not.
        result: Result<(), BrokerError>,
    },
    /// A transaction reached its time-out: roll it back.
    TransactionTimedOut(TxnId),
    /// The first of the connection's tokens reached its expiry: detach what held by it.
    TokensLapsed,
    /// A namespace or entity rule changed: check the SASL PLAIN credential again.
    RulesChanged,
    /// A request/response operation finished: answer it.
    Respond {
        /// The link the request came on.
        request_link: LinkId,
        /// The request.
        request: Box<Request>,
        /// The entity path it concerned, for error texts.
        entity: String,
        /// The outcome.
        result: Result<OperationResult, BrokerError>,
    },
}

/// A connection's command channel, usable from any thread without blocking: when the channel is
/// full the command is sent from a spawned task instead of being dropped.
#[derive(Clone, Debug)]
pub(crate) struct Mailbox {
    pub(crate) sender: mpsc::Sender<ConnectionCommand>,
    runtime: Handle,
}

impl Mailbox {
    /// A mailbox for `sender`; must be created inside the tokio runtime.
    pub(crate) fn new(sender: mpsc::Sender<ConnectionCommand>) -> Self {
        Self {
            sender,
            runtime: Handle::current(),
        }
    }

    /// Posts a command; a connection that has gone away is not an error.
    pub(crate) fn post(&self, command: ConnectionCommand) {
        match self.sender.try_send(command) {
            Ok(()) | Err(TrySendError::Closed(_)) => {}
            Err(TrySendError::Full(command)) => {
                let sender = self.sender.clone();
                self.runtime.spawn(async move {
                    let _ = sender.send(command).await;
                });
            }
        }
    }
}

/// Posts to an entity inbox; a full inbox is waited on in a spawned task so that commands are
/// never lost (the link credit and request pipelining of the clients bound how many wait).
pub(crate) fn post_entity(inbox: &mpsc::Sender<EntityCommand>, command: EntityCommand) {
    match inbox.try_send(command) {
        Ok(()) | Err(TrySendError::Closed(_)) => {}
        Err(TrySendError::Full(command)) => {
            let inbox = inbox.clone();
            tokio::spawn(async move {
                let _ = inbox.send(command).await;
            });
        }
    }
}
