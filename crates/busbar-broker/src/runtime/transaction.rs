//! Transactions (AMQP part 4 as Service Bus serves them): what crosses between a connection,
//! which keeps its transactions, and the entity tasks that do their work.
//!
//! A send inside a transaction is held invisibly in every entity it reaches (as a send to
//! several entities is, see [`AtomicSend`](super::atomic_send::AtomicSend)), and its held parts
//! go back to the connection ([`TransactionHold`]) instead of being stored. A settlement inside
//! a transaction changes nothing until the commit: the message stays locked by its receiver.
//! At commit the entity the settlements concern checks every lock, settles them all, and
//! stores their records with every held copy of the transaction's sends in **one** submission
//! ([`TransactionCommit`]); only once it is durable are the copies released and the discharge
//! accepted. A rollback discards the held copies and forgets the settlements.

use busbar_amqp::engine::{DeliveryId, LinkId};
use busbar_core::{LockToken, Outcome};
use bytes::Bytes;

use super::atomic_send::{HeldPart, resolve_all};
use super::mailbox::{ConnectionCommand, Mailbox, ReceiverKey};
use crate::errors::BrokerError;

/// A transaction's id, as the coordinator declared it.
pub(crate) type TxnId = Bytes;

/// Where an entity reports its held part of a send made inside a transaction: the connection
/// that keeps the transaction.
pub(crate) struct TransactionHold {
    pub(crate) mailbox: Mailbox,
    pub(crate) txn: TxnId,
    /// The send's transfer, answered once every part is held.
    pub(crate) link: LinkId,
    pub(crate) delivery_id: DeliveryId,
}

impl TransactionHold {
    /// Hands the part (or the entity's refusal) to the connection.
    pub(crate) fn report(self, part: Result<HeldPart, BrokerError>) {
        self.mailbox.post(ConnectionCommand::TransactionHeld {
            txn: self.txn,
            link: self.link,
            delivery_id: self.delivery_id,
            part,
        });
    }
}

/// Work a transaction does in the entity it settles in, at the commit.
#[derive(Debug)]
pub(crate) enum TransactionWork {
    /// Settle the message locked under the token.
    Settle(LockToken, Outcome),
    /// Set (or clear) a session's state for the receive link holding the session
    /// (`set-session-state` inside a transaction, as .NET sends it).
    SessionState {
        /// The receive link that holds the session.
        receiver: Option<ReceiverKey>,
        /// The session.
        session: String,
        /// The new state (`None` clears it).
        state: Option<Bytes>,
    },
}

/// A transaction's commit, handed to the entity its settlements concern (or run by the
/// connection itself when it settles nothing).
pub(crate) struct TransactionCommit {
    /// The settlements (and session states) of the transaction, in order.
    pub(crate) settlements: Vec<TransactionWork>,
    /// The held copies of the transaction's sends, in every entity.
    pub(crate) parts: Vec<HeldPart>,
    /// Told whether it all was stored, once it is durable (or why nothing was).
    pub(crate) done: Box<dyn FnOnce(Result<(), BrokerError>) + Send>,
}

impl TransactionCommit {
    /// Gives up: every held copy is discarded, nothing is settled, and `error` is the answer.
    pub(crate) fn refuse(self, error: BrokerError) {
        resolve_all(self.parts, false);
        (self.done)(Err(error));
    }
}
