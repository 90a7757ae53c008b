//! The transactions of one connection (see [`crate::runtime::transaction`]): the coordinator
//! link's `declare` and `discharge`, sends and settlements that carry a `transactional-state`,
//! and the end of a transaction — committed as one submission, rolled back on request, when
//! its coordinator link or connection goes away, or after Service Bus's two minutes.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use busbar_amqp::engine::{Connection, DeliveryId, IncomingTransfer, LinkId};
use busbar_amqp::message::{Body, Message};
use busbar_amqp::performatives::{
    Accepted, CoordinatorRequest, Declared, DeliveryState, TransactionalState,
};
use bytes::Bytes;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

use super::attach::top_up_credit;
use super::{BrokerConnection, LinkKind};
use crate::errors::BrokerError;
use crate::runtime::atomic_send::{HeldPart, resolve_all, store_parts};
use crate::runtime::clock;
use crate::runtime::mailbox::{ConnectionCommand, EntityCommand, post_entity};
use crate::runtime::request::Request;
use crate::runtime::settlement::rejected;
use crate::runtime::transaction::{TransactionCommit, TransactionWork, TxnId};

/// How long a transaction may stay open (Service Bus: two minutes).
const TRANSACTION_TIMEOUT: Duration = Duration::from_secs(120);

/// The transactions of a connection.
#[derive(Default)]
pub(super) struct Transactions {
    pub(super) open: HashMap<TxnId, Transaction>,
    /// Transactions rolled back by their time-out, for the discharge that comes too late.
    timed_out: HashSet<TxnId>,
    /// Commits on their way to the store: the discharge to answer, and the receive-link
    /// deliveries the commit settles.
    committing: HashMap<TxnId, Committing>,
}

/// One open transaction.
pub(super) struct Transaction {
    /// The coordinator link that declared it: it rolls back if that link goes.
    coordinator: LinkId,
    /// Held copies of the sends answered so far.
    pub(super) parts: Vec<HeldPart>,
    /// Sends whose copies are still being held, by transfer.
    pub(super) sending: HashMap<(LinkId, DeliveryId), PendingSend>,
    /// The settlements, all on one entity.
    pub(super) settlements: Option<Settlements>,
    /// A commit asked for while sends were still being held: the discharge transfer.
    pub(super) discharge: Option<(LinkId, DeliveryId)>,
    timer: AbortHandle,
}

/// A send inside a transaction whose entities have not all answered.
pub(super) struct PendingSend {
    pub(super) remaining: usize,
    pub(super) parts: Vec<HeldPart>,
    pub(super) refusal: Option<BrokerError>,
    /// Who hears the outcome once every entity answered.
    pub(super) answer: SendAnswer,
}

/// Who a send inside a transaction is answered to.
pub(super) enum SendAnswer {
    /// The client's transfer on a sender link, unless it came settled.
    Transfer { settled: bool },
    /// A `schedule-message` request: answered with the held copies' sequence numbers.
    Schedule {
        request: Box<Request>,
        entity: String,
    },
}

/// The settlements of a transaction: one entity's (Service Bus refuses a local transaction
/// spanning several), each with the receive link and delivery it settles.
pub(super) struct Settlements {
    pub(super) inbox: mpsc::Sender<EntityCommand>,
    pub(super) entity: String,
    /// Each settlement, with the receive-link delivery it settles (none when it came through
    /// `$management`).
    pub(super) items: Vec<(Option<LinkDelivery>, TransactionWork)>,
}

/// A delivery of a receive link.
pub(super) type LinkDelivery = (LinkId, DeliveryId);

/// A commit on its way to the store.
struct Committing {
    discharge: (LinkId, DeliveryId),
    settled: Vec<(LinkId, DeliveryId)>,
}

/// The transactional state a delivery carries, if any.
pub(super) fn transaction_of(state: Option<&DeliveryState>) -> Option<&TransactionalState> {
    match state {
        Some(DeliveryState::Transactional(state)) => Some(state),
        _ => None,
    }
}

/// `outcome` as the provisional outcome of work inside `txn`.
pub(super) fn transactional(txn: &TxnId, outcome: DeliveryState) -> DeliveryState {
    DeliveryState::Transactional(Box::new(TransactionalState {
        txn_id: txn.clone(),
        outcome: Some(outcome),
    }))
}

impl BrokerConnection {
    /// A transfer on a coordinator link: a declare or a discharge.
    pub(super) fn coordinate(&mut self, transfer: IncomingTransfer, connection: &mut Connection) {
        let (link, delivery_id) = (transfer.link, transfer.delivery_id);
        top_up_credit(link, connection);
        let request = Message::from_bytes(transfer.message)
            .body()
            .map_err(|error| error.to_string())
            .and_then(|body| match body {
                Body::Value(value) => {
                    CoordinatorRequest::from_value(value).map_err(|error| error.to_string())
                }
                _ => Err("the body is not an amqp-value".to_owned()),
            });
        match request {
            Ok(CoordinatorRequest::Declare(_)) => {
                let txn = self.declare(link);
                let state = DeliveryState::Declared(Declared { txn_id: txn });
                let _ =
                    connection.send_disposition(link, delivery_id, delivery_id, true, Some(state));
            }
            Ok(CoordinatorRequest::Discharge(discharge)) if discharge.fail == Some(true) => {
                let result = self
                    .end(&discharge.txn_id)
                    .map(|transaction| transaction.roll_back());
                self.answer_discharge((link, delivery_id), result, connection);
            }
            Ok(CoordinatorRequest::Discharge(discharge)) => {
                self.commit(discharge.txn_id, (link, delivery_id), connection);
            }
            Err(reason) => {
                let error = BrokerError::Argument(format!("not a coordinator request: {reason}"));
                self.answer_discharge((link, delivery_id), Err(error), connection);
            }
        }
    }

    /// Opens a transaction and starts its time-out.
    fn declare(&mut self, coordinator: LinkId) -> TxnId {
        let txn = Bytes::copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        let clock = self.shared.clock.clone();
        let mailbox = self.mailbox.clone();
        let deadline = clock.now().saturating_add(TRANSACTION_TIMEOUT);
        let timed = txn.clone();
        // On the broker's clock, so a test's virtual clock can run a transaction out.
        let timer = tokio::spawn(async move {
            let mut advances = clock.advances();
            while clock.now() < deadline {
                tokio::select! {
                    () = tokio::time::sleep_until(clock.instant_at(deadline)) => {}
                    () = clock::advanced(&mut advances) => {}
                }
            }
            mailbox.post(ConnectionCommand::TransactionTimedOut(timed));
        })
        .abort_handle();
        self.transactions.open.insert(
            txn.clone(),
            Transaction {
                coordinator,
                parts: Vec::new(),
                sending: HashMap::new(),
                settlements: None,
                discharge: None,
                timer,
            },
        );
        txn
    }

    /// Takes an open transaction out of the table, or says why it is not open.
    fn end(&mut self, txn: &TxnId) -> Result<Transaction, BrokerError> {
        if self.transactions.timed_out.remove(txn) {
            return Err(BrokerError::TransactionTimedOut);
        }
        self.transactions
            .open
            .remove(txn)
            .ok_or(BrokerError::TransactionUnknown)
    }

    /// Why work inside `txn` cannot be done: it is not open.
    pub(super) fn not_open(&self, txn: &TxnId) -> BrokerError {
        if self.transactions.timed_out.contains(txn) {
            BrokerError::TransactionTimedOut
        } else {
            BrokerError::TransactionUnknown
        }
    }

    /// Commits `txn` for the discharge transfer, once its sends are all held: the entity its
    /// settlements concern stores them with every held copy (or, settling nothing, the copies
    /// are stored from here), as one submission.
    pub(super) fn commit(
        &mut self,
        txn: TxnId,
        discharge: (LinkId, DeliveryId),
        connection: &mut Connection,
    ) {
        if let Some(transaction) = self.transactions.open.get_mut(&txn)
            && !transaction.sending.is_empty()
        {
            transaction.discharge = Some(discharge);
            return;
        }
        let transaction = match self.end(&txn) {
            Ok(transaction) => transaction,
            Err(error) => return self.answer_discharge(discharge, Err(error), connection),
        };
        transaction.timer.abort();
        let mailbox = self.mailbox.clone();
        let committed = txn.clone();
        let done = Box::new(move |result| {
            mailbox.post(ConnectionCommand::TransactionCommitted {
                txn: committed,
                result,
            });
        });
        let (settlements, settled, inbox) = match transaction.settlements {
            Some(settlements) => {
                let settled = settlements
                    .items
                    .iter()
                    .filter_map(|(delivery, ..)| *delivery)
                    .collect();
                let items = settlements
                    .items
                    .into_iter()
                    .map(|(_, work)| work)
                    .collect();
                (items, settled, Some(settlements.inbox))
            }
            None => (Vec::new(), Vec::new(), None),
        };
        self.transactions
            .committing
            .insert(txn, Committing { discharge, settled });
        let commit = TransactionCommit {
            settlements,
            parts: transaction.parts,
            done,
        };
        match inbox {
            Some(inbox) => post_entity(&inbox, EntityCommand::CommitTransaction(commit)),
            None => commit_sends(commit, &self.shared.store),
        }
    }

    /// A commit is durable (or failed): the discharge is answered, and the deliveries it
    /// settled are forgotten by their receive links.
    pub(super) fn committed(
        &mut self,
        txn: &TxnId,
        result: Result<(), BrokerError>,
        connection: &mut Connection,
    ) {
        let Some(committing) = self.transactions.committing.remove(txn) else {
            return;
        };
        if result.is_ok() {
            for (link, delivery_id) in committing.settled {
                if let Some(LinkKind::Receiver(receiver)) = self.links.get_mut(&link) {
                    receiver.unsettled.remove(&delivery_id);
                }
            }
        }
        let result = result.map_err(|error| BrokerError::TransactionRolledBack {
            reason: error.to_string(),
        });
        self.answer_discharge(committing.discharge, result, connection);
    }

    fn answer_discharge(
        &mut self,
        (link, delivery_id): (LinkId, DeliveryId),
        result: Result<(), BrokerError>,
        connection: &mut Connection,
    ) {
        let state = match result {
            Ok(()) => DeliveryState::Accepted(Accepted {}),
            Err(error) => {
                let wire = self.wire(&error, "");
                rejected(wire.condition, wire.description)
            }
        };
        let _ = connection.send_disposition(link, delivery_id, delivery_id, true, Some(state));
    }

    /// The time-out of `txn` passed: roll it back unless it ended meanwhile.
    pub(super) fn transaction_timed_out(&mut self, txn: TxnId) {
        if let Some(transaction) = self.transactions.open.remove(&txn) {
            transaction.roll_back();
            self.transactions.timed_out.insert(txn);
        }
    }

    /// Rolls back the transactions declared on `coordinator` (its link went away), or every
    /// open transaction (`None`: the connection ended).
    pub(super) fn roll_back_declared_on(&mut self, coordinator: Option<LinkId>) {
        let ended: Vec<TxnId> = self
            .transactions
            .open
            .iter()
            .filter(|(_, transaction)| {
                coordinator.is_none_or(|link| transaction.coordinator == link)
            })
            .map(|(txn, _)| txn.clone())
            .collect();
        for txn in ended {
            if let Some(transaction) = self.transactions.open.remove(&txn) {
                transaction.roll_back();
            }
        }
    }
}

impl Transaction {
    /// Discards every held copy; the settlements are forgotten (their messages stay locked by
    /// their receivers, as in Service Bus).
    fn roll_back(self) {
        self.timer.abort();
        let sending = self.sending.into_values().flat_map(|send| send.parts);
        resolve_all(self.parts.into_iter().chain(sending), false);
    }
}

/// Stores the held copies of a transaction that settles nothing, as one submission.
fn commit_sends(commit: TransactionCommit, store: &busbar_store::GroupCommitHandle) {
    let TransactionCommit { parts, done, .. } = commit;
    if parts.is_empty() {
        done(Ok(()));
        return;
    }
    store_parts(parts, store, done);
}
