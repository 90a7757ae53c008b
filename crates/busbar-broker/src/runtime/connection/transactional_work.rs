//! Work inside a transaction (see [`crate::runtime::transaction`]): sends held in their
//! entities until the commit and answered with a provisional `transactional-state`, and
//! settlements — of receive-link deliveries, or of deferred messages through `$management` —
//! kept while their messages stay locked.

use busbar_amqp::engine::{Connection, DeliveryId, DispositionUpdate, LinkId};
use busbar_amqp::performatives::TransactionalState;
use busbar_core::{LockToken, NewMessage, Outcome, SequenceNumber};

use super::transactions::{LinkDelivery, PendingSend, SendAnswer, Settlements, transactional};
use super::{BrokerConnection, LinkKind};
use crate::errors::BrokerError;
use crate::runtime::atomic_send::{HeldPart, resolve_all};
use crate::runtime::mailbox::ReceiverKey;
use crate::runtime::mailbox::{EntityCommand, HoldJoin, post_entity};
use crate::runtime::management::{Operation, OperationResult, SessionOperation};
use crate::runtime::registry::EntityHandle;
use crate::runtime::settlement::{outcome_of, rejected, success_echo};
use crate::runtime::transaction::{TransactionHold, TransactionWork, TxnId};

impl BrokerConnection {
    /// A send (or schedule) inside `txn`, by the transfer `(link, delivery_id)`: every target
    /// entity holds its copies and hands them back here; `answer` hears the outcome.
    pub(super) fn send_in_transaction(
        &mut self,
        txn: TxnId,
        (link, delivery_id): (LinkId, DeliveryId),
        answer: SendAnswer,
        targets: Vec<(EntityHandle, Vec<NewMessage>)>,
        connection: &mut Connection,
    ) {
        let refusal = if self.transactions.open.contains_key(&txn) {
            super::transfers::refusal(&targets)
        } else {
            Some(self.not_open(&txn))
        };
        if let Some(error) = refusal {
            self.answer_send(&txn, (link, delivery_id), answer, Err(error), connection);
            return;
        }
        if targets.is_empty() {
            self.answer_send(
                &txn,
                (link, delivery_id),
                answer,
                Ok(Vec::new()),
                connection,
            );
            return;
        }
        if let Some(transaction) = self.transactions.open.get_mut(&txn) {
            transaction.sending.insert(
                (link, delivery_id),
                PendingSend {
                    remaining: targets.len(),
                    parts: Vec::new(),
                    refusal: None,
                    answer,
                },
            );
        }
        for (entity, messages) in targets {
            let hold = TransactionHold {
                mailbox: self.mailbox.clone(),
                txn: txn.clone(),
                link,
                delivery_id,
            };
            post_entity(
                &entity.inbox,
                EntityCommand::Hold {
                    messages,
                    send: HoldJoin::Transaction(hold),
                },
            );
        }
    }

    /// An entity holds its part of a send inside `txn` (or refused it).
    pub(super) fn transaction_held(
        &mut self,
        txn: TxnId,
        transfer: (LinkId, DeliveryId),
        part: Result<HeldPart, BrokerError>,
        connection: &mut Connection,
    ) {
        let Some(transaction) = self.transactions.open.get_mut(&txn) else {
            // Rolled back meanwhile: nothing of it may appear.
            if let Ok(part) = part {
                part.resolve(false);
            }
            return;
        };
        let Some(send) = transaction.sending.get_mut(&transfer) else {
            return;
        };
        match part {
            Ok(part) => send.parts.push(part),
            Err(error) => {
                send.refusal.get_or_insert(error);
            }
        }
        send.remaining = send.remaining.saturating_sub(1);
        if send.remaining > 0 {
            return;
        }
        let Some(send) = transaction.sending.remove(&transfer) else {
            return;
        };
        let result = match send.refusal {
            Some(error) => {
                resolve_all(send.parts, false);
                Err(error)
            }
            None => {
                let sequences = send
                    .parts
                    .iter()
                    .flat_map(|part| part.sequences.clone())
                    .collect();
                transaction.parts.extend(send.parts);
                Ok(sequences)
            }
        };
        let discharge = if transaction.sending.is_empty() {
            transaction.discharge.take()
        } else {
            None
        };
        self.answer_send(&txn, transfer, send.answer, result, connection);
        if let Some(discharge) = discharge {
            self.commit(txn, discharge, connection);
        }
    }

    /// Answers a send inside `txn` with its provisional outcome (a schedule with the sequence
    /// numbers of its held copies).
    fn answer_send(
        &mut self,
        txn: &TxnId,
        (link, delivery_id): (LinkId, DeliveryId),
        answer: SendAnswer,
        result: Result<Vec<SequenceNumber>, BrokerError>,
        connection: &mut Connection,
    ) {
        let settled = match answer {
            SendAnswer::Transfer { settled } => settled,
            SendAnswer::Schedule { request, entity } => {
                let result = result.map(OperationResult::SequenceNumbers);
                self.respond_management(link, &request, &entity, result, connection);
                return;
            }
        };
        if settled {
            return;
        }
        let outcome = self.send_state(link, result.map(|_| ()));
        self.held_dispositions
            .hold(link, delivery_id, transactional(txn, outcome));
    }

    /// A settlement inside `txn` of a receive link's delivery: kept until the commit (the
    /// message stays locked meanwhile).
    pub(super) fn settle_in_transaction(
        &mut self,
        txn: &TxnId,
        delivery: Option<LinkDelivery>,
        token: LockToken,
        (entity, outcome): (&EntityHandle, Outcome),
    ) -> Result<(), BrokerError> {
        let work = TransactionWork::Settle(token, outcome);
        self.work_in_transaction(txn, delivery, entity, work)
    }

    /// A session's state set inside `txn` for the receive link `receiver` (which must hold the
    /// session at the commit); the state changes only then.
    pub(super) fn session_in_transaction(
        &mut self,
        txn: &TxnId,
        entity: &EntityHandle,
        receiver: Option<ReceiverKey>,
        operation: SessionOperation,
    ) -> Result<OperationResult, BrokerError> {
        let SessionOperation::SetState { session, state } = operation else {
            return Err(BrokerError::NotImplemented {
                operation: "this session operation inside a transaction".into(),
            });
        };
        let work = TransactionWork::SessionState {
            receiver,
            session,
            state,
        };
        self.work_in_transaction(txn, None, entity, work)
            .map(|()| OperationResult::Done)
    }

    /// Adds `work` on `entity` to `txn`, all of whose work must concern one entity.
    fn work_in_transaction(
        &mut self,
        txn: &TxnId,
        delivery: Option<LinkDelivery>,
        entity: &EntityHandle,
        work: TransactionWork,
    ) -> Result<(), BrokerError> {
        let not_open = self.not_open(txn);
        let transaction = self.transactions.open.get_mut(txn).ok_or(not_open)?;
        let settlements = transaction.settlements.get_or_insert_with(|| Settlements {
            inbox: entity.inbox.clone(),
            entity: entity.path.clone(),
            items: Vec::new(),
        });
        if !settlements.inbox.same_channel(&entity.inbox) {
            return Err(BrokerError::NotAllowed(format!(
                "Local transactions cannot span multiple top-level entities such as queue or \
                 topic: this transaction settles messages of '{}' already.",
                settlements.entity
            )));
        }
        settlements.items.push((delivery, work));
        Ok(())
    }

    /// A `$management` operation inside `txn`: settlements by lock token (deferred messages)
    /// join the transaction; Busbar does no other operation inside one.
    pub(super) fn operate_in_transaction(
        &mut self,
        txn: &TxnId,
        entity: &EntityHandle,
        operation: Operation,
    ) -> Result<OperationResult, BrokerError> {
        let Operation::Settle { tokens, outcome } = operation else {
            return Err(BrokerError::NotImplemented {
                operation: "this $management operation inside a transaction".into(),
            });
        };
        for token in tokens {
            self.settle_in_transaction(txn, None, token, (entity, outcome.clone()))?;
        }
        Ok(OperationResult::Done)
    }

    /// A receive link's disposition inside a transaction: each delivery it names is settled
    /// in the transaction, and an unsettled disposition is answered with the provisional
    /// outcome (or why not).
    pub(super) fn disposition_in_transaction(
        &mut self,
        update: &DispositionUpdate,
        state: &TransactionalState,
        connection: &mut Connection,
    ) {
        let link = update.link;
        let Some(LinkKind::Receiver(receiver)) = self.links.get(&link) else {
            return;
        };
        let entity = receiver.entity.clone();
        let named = |id: &DeliveryId| (update.first..=update.last).contains(id);
        let mut deliveries: Vec<(DeliveryId, Result<LockToken, BrokerError>)> = receiver
            .unsettled
            .iter()
            .filter(|(id, _)| named(id))
            .map(|(id, token)| (*id, Ok(*token)))
            .collect();
        if deliveries.is_empty() && update.first == update.last {
            deliveries.push((update.first, Err(BrokerError::MessageLockLost)));
        }
        let outcome = state.outcome.as_ref().and_then(outcome_of);
        for (delivery_id, token) in deliveries {
            let result = token.and_then(|token| {
                let outcome = outcome.clone().ok_or_else(|| {
                    BrokerError::Argument("a transactional settlement needs an outcome".into())
                })?;
                self.settle_in_transaction(
                    &state.txn_id,
                    Some((link, delivery_id)),
                    token,
                    (&entity, outcome),
                )
            });
            if update.settled {
                continue;
            }
            let echo = match (result, &state.outcome) {
                (Ok(()), Some(outcome)) => transactional(&state.txn_id, success_echo(outcome)),
                (Ok(()), None) => continue,
                (Err(error), _) => {
                    let wire = self.wire(&error, &entity.path);
                    rejected(wire.condition, wire.description)
                }
            };
            let _ = connection.send_disposition(link, delivery_id, delivery_id, true, Some(echo));
        }
    }
}
