//! A transaction's commit in the entity its settlements concern: every lock (of a message, or
//! of a session whose state it sets) is checked before any of its work is applied, so a
//! transaction whose lock was lost changes nothing; then the
//! settlements' records and every held copy of the transaction's sends go to the store as one
//! submission, and the copies are released (and the commit answered) once it is durable.

use busbar_core::{Outcome, Timestamp};

use super::{EntityTask, Pending};
use crate::errors::BrokerError;
use crate::runtime::atomic_send::{resolve_all, take_records};
use crate::runtime::management::SessionOperation;
use crate::runtime::refusals::core_error;
use crate::runtime::transaction::{TransactionCommit, TransactionWork};

impl EntityTask {
    pub(super) fn commit_transaction(
        &mut self,
        commit: TransactionCommit,
        now: Timestamp,
        pending: &mut Vec<Pending>,
    ) {
        let checked = commit
            .settlements
            .iter()
            .try_for_each(|work| self.check_work(work, now));
        if let Err(error) = checked {
            if matches!(error, BrokerError::MessageLockLost) {
                self.metrics.lock_lost_answer();
            }
            commit.refuse(error);
            return;
        }
        // What this batch did before goes to the store first, in its own submission.
        self.submit(std::mem::take(pending));
        let TransactionCommit {
            settlements,
            mut parts,
            done,
        } = commit;
        // A test's delay fault holds the answer back after the commit is durable.
        let done = self.maybe_delayed(done);
        for work in settlements {
            // Checked above, in this same turn: it cannot fail now.
            if let Err(error) = self.apply_work(work, now) {
                tracing::warn!(%error, "checked transactional work failed");
            }
        }
        let records = take_records(&mut parts);
        let stored: Pending = Box::new(move |durable| {
            resolve_all(parts, durable.is_ok());
            done(durable);
        });
        self.submit_with(vec![stored], records);
    }

    /// Whether `work` would succeed now, changing nothing (but a test's lost-settlement fault).
    fn check_work(&mut self, work: &TransactionWork, now: Timestamp) -> Result<(), BrokerError> {
        match work {
            TransactionWork::Settle(token, outcome) => {
                if self.faults.lose_settlement() {
                    return Err(BrokerError::MessageLockLost);
                }
                self.check_settle(*token, outcome, now)
            }
            TransactionWork::SessionState {
                receiver, session, ..
            } => self
                .session_links
                .check_holds(&self.entity, *receiver, session),
        }
    }

    fn apply_work(&mut self, work: TransactionWork, now: Timestamp) -> Result<(), BrokerError> {
        match work {
            TransactionWork::Settle(token, outcome) => self.settle(token, outcome, now),
            TransactionWork::SessionState {
                receiver,
                session,
                state,
            } => {
                let operation = SessionOperation::SetState { session, state };
                self.session_links
                    .execute(&mut self.entity, receiver, operation, now)
                    .map(|_| ())
            }
        }
    }

    /// Whether a settlement would succeed now, changing nothing.
    fn check_settle(
        &self,
        token: busbar_core::LockToken,
        outcome: &Outcome,
        now: Timestamp,
    ) -> Result<(), BrokerError> {
        if self.session_links.holds(&token) {
            self.session_links
                .check_settle(&self.entity, token, outcome, now)
        } else {
            self.entity
                .core()
                .check_settle(token, outcome, now)
                .map_err(core_error)
        }
    }
}
