//! Rebuilding the recovered state from journal entries in log order: one entry at a time
//! ([`replay`]), or on a thread of its own beside the scan that builds the location index
//! ([`Rebuild`]), so that a restart builds its two maps on two cores (each was about as long
//! as the other; with millions of messages, the open's largest parts).

use std::sync::mpsc;
use std::thread::{Scope, ScopedJoinHandle};

use bytes::Bytes;

use super::format::Entry;
use crate::record::Record;
use crate::recovered::Recovered;
use crate::storage::MessagePart;

/// Entries handed to the rebuilding thread at once.
const BATCH: usize = 1024;
/// Batches the scan may run ahead of the rebuilding thread.
const BATCHES_AHEAD: usize = 8;

/// Applies one journal entry to the state being rebuilt. With `keep`, a new message's
/// immutable part is what `keep` makes of it and every other byte field a copy, so nothing
/// refers to the segment's read buffer any more; without, they are slices of it.
///
/// An entry read from a summary already holds the kept form, in a buffer of its own.
pub(super) fn replay(
    recovered: &mut Recovered,
    entry: Entry,
    keep: Option<MessagePart>,
    summarized: bool,
) {
    let keep = keep.filter(|_| !summarized);
    let Some(keep) = keep else {
        match entry {
            Entry::Record(record) => recovered.apply(record),
            Entry::HighWater { entity, sequence } => recovered.raise_high_water(entity, sequence),
        }
        return;
    };
    let copy = |bytes: Bytes| Bytes::copy_from_slice(&bytes);
    let record = match entry {
        Entry::HighWater { entity, sequence } => {
            recovered.raise_high_water(entity, sequence);
            return;
        }
        Entry::Record(Record::Insert {
            key,
            message,
            state,
        }) => Record::Insert {
            key,
            message: keep(&message),
            state: copy(state),
        },
        Entry::Record(Record::Update { key, state }) => Record::Update {
            key,
            state: copy(state),
        },
        Entry::Record(Record::Meta { entity, key, value }) => Record::Meta {
            entity,
            key: copy(key),
            value: value.map(copy),
        },
        Entry::Record(record @ Record::Remove { .. }) => record,
    };
    recovered.apply(record);
}

/// The recovered state keeping `keep`, built from the entries [`push`](Rebuild::push)ed to it
/// on a scoped thread.
pub(super) struct Rebuild<'scope> {
    batch: Vec<(Entry, bool)>,
    batches: mpsc::SyncSender<Vec<(Entry, bool)>>,
    builder: ScopedJoinHandle<'scope, Recovered>,
}

impl<'scope> Rebuild<'scope> {
    /// Starts the rebuilding thread in `scope`.
    pub(super) fn spawn<'env>(scope: &'scope Scope<'scope, 'env>, keep: MessagePart) -> Self {
        let (batches, received) = mpsc::sync_channel::<Vec<(Entry, bool)>>(BATCHES_AHEAD);
        let builder = scope.spawn(move || {
            let mut recovered = Recovered::default();
            for batch in received {
                for (entry, summarized) in batch {
                    replay(&mut recovered, entry, Some(keep), summarized);
                }
            }
            recovered
        });
        Rebuild {
            batch: Vec::with_capacity(BATCH),
            batches,
            builder,
        }
    }

    /// Hands on the next entry in log order (`summarized`: read from a segment summary).
    pub(super) fn push(&mut self, entry: Entry, summarized: bool) {
        self.batch.push((entry, summarized));
        if self.batch.len() == BATCH {
            self.send();
        }
    }

    fn send(&mut self) {
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        // The thread only stops early by panicking, which `finish` passes on.
        let _ = self.batches.send(batch);
    }

    /// The state built from every entry pushed.
    pub(super) fn finish(mut self) -> Recovered {
        if !self.batch.is_empty() {
            self.send();
        }
        drop(self.batches);
        self.builder
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}
