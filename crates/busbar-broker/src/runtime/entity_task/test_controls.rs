//! What an entity task does for the control interface's test controls and deletes: faults a
//! test injected (sends refused as busy, settlements lost, a receive link or its connection
//! ended, answers delayed), purging its messages, and deleting the entity.

use busbar_core::{Outcome, SubQueue};
use busbar_store::{MessageKey, Record, StoreError};

use super::{EntityTask, Pending};
use crate::errors::BrokerError;
use crate::runtime::mailbox::{ConnectionCommand, Fault};
use crate::runtime::refusals::store_error;

/// Faults still to show (test controls): how many more sends to refuse as busy, how many more
/// settlements to answer with lock lost, a link or connection to end, and answers to delay.
#[derive(Default)]
pub(super) struct Faults {
    busy_sends: u32,
    lost_settlements: u32,
    /// Ends one receive link or its connection when one exists.
    ending: Option<Ending>,
    delay: Option<(std::time::Duration, u32)>,
}

/// How a receive link is to end (test controls).
enum Ending {
    Link(String),
    Connection(String),
}

impl Faults {
    /// Takes on a fault a test asked for (replacing one of the same kind).
    pub(super) fn inject(&mut self, fault: Fault) {
        match fault {
            Fault::ServerBusy(count) => self.busy_sends = count,
            Fault::LockLost(count) => self.lost_settlements = count,
            Fault::DetachLink(condition) => self.ending = Some(Ending::Link(condition)),
            Fault::DropConnection(condition) => self.ending = Some(Ending::Connection(condition)),
            Fault::Delay { delay, count } => self.delay = Some((delay, count)),
        }
    }

    /// How late the next answer goes out, if it is delayed (counting it off).
    pub(super) fn next_delay(&mut self) -> Option<std::time::Duration> {
        let (delay, count) = self.delay.as_mut()?;
        let delay = *delay;
        if !take_one(count) {
            self.delay = None;
            return None;
        }
        Some(delay)
    }

    /// Whether the next send is refused (counting it off).
    pub(super) fn refuse_send(&mut self) -> bool {
        take_one(&mut self.busy_sends)
    }

    /// Whether the next settlement is lost (counting it off).
    pub(super) fn lose_settlement(&mut self) -> bool {
        take_one(&mut self.lost_settlements)
    }
}

fn take_one(count: &mut u32) -> bool {
    let due = *count > 0;
    *count = count.saturating_sub(1);
    due
}

impl EntityTask {
    /// `reply`, sent late if a test asked for the entity's answers to be delayed.
    pub(super) fn maybe_delayed<T: Send + 'static>(
        &mut self,
        reply: Box<dyn FnOnce(T) + Send>,
    ) -> Box<dyn FnOnce(T) + Send> {
        let Some(delay) = self.faults.next_delay() else {
            return reply;
        };
        // Answers may be sent from the store writer's thread, outside the runtime.
        let runtime = tokio::runtime::Handle::current();
        Box::new(move |answer| {
            runtime.spawn(async move {
                tokio::time::sleep(delay).await;
                reply(answer);
            });
        })
    }

    /// Ends one receive link, or its connection, if a test asked for it and one is attached.
    pub(super) fn end_a_receiver(&mut self) {
        if self.faults.ending.is_none() || self.receivers.is_empty() {
            return;
        }
        let receiver = self.receivers.remove(0);
        let command = match self.faults.ending.take() {
            Some(Ending::Link(condition)) => ConnectionCommand::DetachLink {
                link: receiver.key.link,
                condition,
            },
            Some(Ending::Connection(condition)) => ConnectionCommand::CloseConnection(condition),
            None => return,
        };
        receiver.mailbox.post(command);
    }

    /// A client's settlement, unless a test asked for it to be lost (then nothing is settled).
    pub(super) fn client_settle(
        &mut self,
        token: busbar_core::LockToken,
        outcome: Outcome,
        now: busbar_core::Timestamp,
    ) -> Result<(), BrokerError> {
        let settled = if self.faults.lose_settlement() {
            Err(BrokerError::MessageLockLost)
        } else {
            self.settle(token, outcome, now)
        };
        if matches!(settled, Err(BrokerError::MessageLockLost)) {
            self.metrics.lock_lost_answer();
        }
        settled
    }

    /// Removes every stored message (of the dead-letter sub-queue only, or of both and every
    /// session's state); returns how many went.
    pub(super) fn purge(&mut self, dead_letter_only: bool, now: busbar_core::Timestamp) -> usize {
        let core = self.entity.core_mut();
        let mut purged = core.purge(SubQueue::DeadLetter, now);
        if !dead_letter_only {
            purged += core.purge(SubQueue::Main, now);
            if let Some(sessions) = self.entity.sessions_mut() {
                sessions.clear_states();
            }
        }
        purged
    }

    /// Removes every message (answered once that is durable), detaches the receivers, and
    /// answers every later command with `error` (entity-not-found); the task ends once nothing
    /// holds its inbox any more.
    pub(super) fn delete(
        &mut self,
        error: BrokerError,
        pending: &mut Vec<Pending>,
        done: tokio::sync::oneshot::Sender<Result<(), BrokerError>>,
    ) {
        // What this batch did before goes to the store first, so no insert follows a removal.
        self.submit(std::mem::take(pending));
        let id = self.id;
        let mut removals: Vec<Record> = self
            .entity
            .core()
            .snapshot()
            .messages
            .into_iter()
            .map(|(_, message)| Record::Remove {
                key: MessageKey {
                    entity: id,
                    sequence: message.sequence.value(),
                },
            })
            .collect();
        // Session state goes too: a queue created again under the name starts without it.
        if let Some(sessions) = self.entity.sessions_mut() {
            sessions.clear_states();
        }
        removals.extend(self.entity.drain_records(id));
        for receiver in self.receivers.drain(..) {
            receiver.mailbox.post(ConnectionCommand::ReceiverEnded {
                link: receiver.key.link,
                error: error.clone(),
            });
        }
        self.deleted = Some(error);
        let completion = Box::new(move |outcome: Result<busbar_store::Lsn, StoreError>| {
            let _ = done.send(outcome.map(|_| ()).map_err(store_error));
        });
        crate::runtime::submit_from_task(&self.store, removals, completion);
    }
}
