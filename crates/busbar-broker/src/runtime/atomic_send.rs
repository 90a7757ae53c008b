//! A send to several entities (a topic with two or more selected subscriptions, `ForwardTo`
//! chains ending in one) as one operation: every entity holds its copies invisibly and hands
//! back their insert records; the last to answer submits all records to the writer as one
//! submission, and once that is durable every entity releases its copies (or, if anything
//! failed, discards them) before the client hears the outcome.

use std::sync::{Arc, Mutex};

use busbar_core::SequenceNumber;
use busbar_store::{GroupCommitHandle, Record};
use tokio::sync::mpsc;

use super::mailbox::Reply;
use super::management::OperationResult;
use super::refusals::store_error;
use crate::errors::BrokerError;

/// What became of one entity's held copies, sent back to its task.
#[derive(Debug)]
pub(crate) struct HeldResolution {
    /// The held copies.
    pub(crate) sequences: Vec<SequenceNumber>,
    /// Stored durably (release them) or not (discard them).
    pub(crate) stored: bool,
}

/// One entity's part of the send: its held copies and their insert records, tagged for the
/// store.
#[derive(Debug)]
pub(crate) struct HeldPart {
    /// The held copies.
    pub(crate) sequences: Vec<SequenceNumber>,
    /// Their insert records.
    pub(crate) records: Vec<Record>,
    /// Where the entity's task learns what became of them.
    pub(crate) resolutions: mpsc::UnboundedSender<HeldResolution>,
}

impl HeldPart {
    /// Tells the entity its copies were stored (release them) or not (discard them).
    pub(crate) fn resolve(self, stored: bool) {
        // A task that has ended has nothing left to release.
        let _ = self.resolutions.send(HeldResolution {
            sequences: self.sequences,
            stored,
        });
    }
}

/// The parts of one send still outstanding; cheap to clone, one clone per target entity.
#[derive(Clone)]
pub(crate) struct AtomicSend {
    join: Arc<Mutex<Join>>,
}

struct Join {
    remaining: usize,
    parts: Vec<HeldPart>,
    error: Option<BrokerError>,
    reply: Option<Reply>,
}

impl AtomicSend {
    /// A send to `targets` entities, answered through `reply` once all of it is decided.
    pub(crate) fn new(targets: usize, reply: Reply) -> Self {
        AtomicSend {
            join: Arc::new(Mutex::new(Join {
                remaining: targets,
                parts: Vec::with_capacity(targets),
                error: None,
                reply: Some(reply),
            })),
        }
    }

    /// One entity's answer: its held part, or why it refused the copies. The last answer
    /// decides: if any entity refused, every held copy is discarded and the first refusal is
    /// the reply; otherwise all records go to `store` as one submission (the store recovers an
    /// append all or nothing), and its outcome releases or discards every copy, then replies.
    ///
    /// Called on an entity task's thread after that task submitted its own batch, so the
    /// submission queues behind every record the copies may rest on (the original of a
    /// duplicate). May block while the writer's queue is full.
    pub(crate) fn report(&self, part: Result<HeldPart, BrokerError>, store: &GroupCommitHandle) {
        let mut join = self
            .join
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match part {
            Ok(part) => join.parts.push(part),
            Err(error) => {
                join.error.get_or_insert(error);
            }
        }
        join.remaining = join.remaining.saturating_sub(1);
        if join.remaining > 0 {
            return;
        }
        let parts = std::mem::take(&mut join.parts);
        let error = join.error.take();
        let Some(reply) = join.reply.take() else {
            return;
        };
        drop(join);
        if let Some(error) = error {
            resolve_all(parts, false);
            reply(Err(error));
            return;
        }
        store_parts(parts, store, move |stored| {
            reply(stored.map(|()| OperationResult::Done));
        });
    }
}

/// Releases (`stored`) or discards every copy of `parts`.
pub(crate) fn resolve_all(parts: impl IntoIterator<Item = HeldPart>, stored: bool) {
    for part in parts {
        part.resolve(stored);
    }
}

/// Takes the insert records out of `parts` for one submission; the copies stay held.
pub(crate) fn take_records(parts: &mut [HeldPart]) -> Vec<Record> {
    parts
        .iter_mut()
        .flat_map(|part| std::mem::take(&mut part.records))
        .collect()
}

/// Stores the records of `parts` as one submission; once its outcome is known every copy is
/// released or discarded, and then `done` hears it.
pub(crate) fn store_parts(
    mut parts: Vec<HeldPart>,
    store: &GroupCommitHandle,
    done: impl FnOnce(Result<(), BrokerError>) + Send + 'static,
) {
    let records = take_records(&mut parts);
    let completion = Box::new(move |outcome: Result<busbar_store::Lsn, _>| {
        // Released before the reply goes out, so a client that saw its send accepted finds
        // every copy (each task takes resolutions before its next commands).
        resolve_all(parts, outcome.is_ok());
        done(outcome.map(|_| ()).map_err(store_error));
    });
    super::submit_from_task(store, records, completion);
}
