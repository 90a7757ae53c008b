//! One sub-queue's messages and the ordered indices that make every operation O(log n): available
//! messages by sequence number (marks in the message map), not-yet-durable ones by sequence number, scheduled ones by
//! activation time, expiring ones by expiry time, and (main queue only) messages by session id.

use super::session_index::SessionIndex;
use crate::budget::{Charge, MemoryBudget};
use crate::message::{Stage, StoredMessage};
use crate::time::{SequenceNumber, Timestamp};
use busbar_seqmap::SequenceMap;
use std::collections::BTreeSet;
use std::ops::RangeFrom;

/// A sub-queue (the main queue or its dead-letter queue).
///
/// Each message sits in exactly the index its stage names; only `insert`, `remove` and
/// `set_stage` change stages, and they keep the indices in step.
#[derive(Clone, Debug)]
pub(crate) struct Queue {
    /// Packed 64 sequence numbers to a chunk: a deep backlog's largest part (see busbar-seqmap).
    /// Its marked entries are the available index.
    messages: SequenceMap<StoredMessage>,
    pending: BTreeSet<SequenceNumber>,
    scheduled: BTreeSet<(Timestamp, SequenceNumber)>,
    expiry: BTreeSet<(Timestamp, SequenceNumber)>,
    /// Messages by session id; `None` where sessions do not apply (the dead-letter queue).
    sessions: Option<SessionIndex>,
    /// Whether messages here expire (the dead-letter queue's never do).
    expiring: bool,
    /// Payload bytes of every message here, in every stage (what counts toward the quota).
    size_bytes: u64,
    /// Bytes of every message here, in every stage, as charged to the memory budget.
    memory: Charge,
    /// Messages deferred and not locked now.
    deferred: usize,
    /// Messages whose bytes are in memory (not evicted), so eviction finds them without
    /// walking a deep backlog's evicted messages.
    resident: BTreeSet<SequenceNumber>,
}

impl Queue {
    /// A sub-queue; `main` = the entity itself (messages expire and are indexed by session),
    /// otherwise the dead-letter sub-queue; its messages are charged to `budget`.
    pub(crate) fn new(main: bool, budget: MemoryBudget) -> Queue {
        Queue {
            messages: SequenceMap::new(),
            pending: BTreeSet::new(),
            scheduled: BTreeSet::new(),
            expiry: BTreeSet::new(),
            sessions: main.then(SessionIndex::default),
            expiring: main,
            size_bytes: 0,
            memory: Charge::new(budget),
            deferred: 0,
            resident: BTreeSet::new(),
        }
    }

    /// The memory budget this sub-queue charges.
    pub(crate) fn memory_budget(&self) -> &MemoryBudget {
        self.memory.budget()
    }

    /// Charges what this sub-queue holds to `budget` instead.
    pub(crate) fn charge_to(&mut self, budget: MemoryBudget) {
        self.memory.move_to(budget);
    }

    /// Bytes of the messages here, as charged to the memory budget. O(1).
    pub(crate) fn memory_bytes(&self) -> u64 {
        self.memory.bytes()
    }

    /// The session index (main queue only).
    pub(crate) fn sessions(&self) -> Option<&SessionIndex> {
        self.sessions.as_ref()
    }

    /// The session index, mutably (to take its wake-up log).
    pub(crate) fn sessions_mut(&mut self) -> Option<&mut SessionIndex> {
        self.sessions.as_mut()
    }

    pub(crate) fn len(&self) -> usize {
        self.messages.len()
    }

    /// Payload bytes of the messages here. O(1).
    pub(crate) fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    pub(crate) fn available_len(&self) -> usize {
        self.messages.marked_len()
    }

    /// Messages waiting for their scheduled enqueue time. O(1).
    pub(crate) fn scheduled_len(&self) -> usize {
        self.scheduled.len()
    }

    /// Messages not yet durable, which nothing sees yet. O(1).
    /// Messages deferred and not locked now.
    pub(crate) fn deferred_len(&self) -> usize {
        self.deferred
    }

    pub(crate) fn pending_len(&self) -> usize {
        self.pending.len()
    }

    pub(crate) fn get(&self, sequence: SequenceNumber) -> Option<&StoredMessage> {
        self.messages.get(sequence.0)
    }

    /// Mutable access for counters and properties; the stage changes only through `set_stage`.
    pub(crate) fn message_mut(&mut self, sequence: SequenceNumber) -> Option<&mut StoredMessage> {
        self.messages.get_mut(sequence.0)
    }

    pub(crate) fn messages(&self) -> impl Iterator<Item = (SequenceNumber, &StoredMessage)> {
        self.messages
            .iter()
            .map(|(sequence, message)| (SequenceNumber(sequence), message))
    }

    pub(crate) fn range(
        &self,
        from: RangeFrom<SequenceNumber>,
    ) -> impl Iterator<Item = (SequenceNumber, &StoredMessage)> {
        self.messages
            .range(from.start.0)
            .map(|(sequence, message)| (SequenceNumber(sequence), message))
    }

    pub(crate) fn first_available(&self) -> Option<SequenceNumber> {
        self.messages.first_marked().map(SequenceNumber)
    }

    pub(crate) fn next_activation(&self) -> Option<(Timestamp, SequenceNumber)> {
        self.scheduled.first().copied()
    }

    pub(crate) fn next_expiry(&self) -> Option<(Timestamp, SequenceNumber)> {
        self.expiry.first().copied()
    }

    /// Takes the lowest not-yet-durable message if its sequence number is at most `through`; the
    /// caller then moves it on.
    pub(crate) fn pop_pending_through(
        &mut self,
        through: SequenceNumber,
    ) -> Option<SequenceNumber> {
        let first = *self.pending.first()?;
        (first <= through).then(|| {
            self.pending.pop_first();
            first
        })
    }

    /// Moves the lowest not-yet-durable message, if its sequence number is at most `through`,
    /// on to the stage `next` makes of its current one, and returns its sequence number. One
    /// lookup of the message, one of the pending index.
    pub(crate) fn restage_pending_through(
        &mut self,
        through: SequenceNumber,
        next: impl FnOnce(Stage) -> Stage,
    ) -> Option<SequenceNumber> {
        let first = self
            .pending
            .first()
            .copied()
            .filter(|first| *first <= through)?;
        // Restaging takes it out of the pending index; an entry without its message (which
        // the indices never have) goes too, so that the caller's loop ends.
        if !self.restage(first, next) {
            self.pending.remove(&first);
        }
        Some(first)
    }

    /// Takes the first schedule entry due at `now`; the caller then moves the message on.
    pub(crate) fn pop_due_activation(&mut self, now: Timestamp) -> Option<SequenceNumber> {
        pop_due(&mut self.scheduled, now)
    }

    /// Takes the first expiry entry due at `now`; the caller then expires the message.
    pub(crate) fn pop_due_expiry(&mut self, now: Timestamp) -> Option<SequenceNumber> {
        pop_due(&mut self.expiry, now)
    }

    pub(crate) fn insert(&mut self, sequence: SequenceNumber, message: StoredMessage) {
        // Sequence numbers are unique per entity; keep the indices right regardless.
        self.remove(sequence);
        self.insert_new(sequence, message);
    }

    /// Inserts a message whose sequence number is not here.
    fn insert_new(&mut self, sequence: SequenceNumber, message: StoredMessage) {
        let keys = self.add_message(sequence, message);
        self.apply(keys, true);
    }

    /// Inserts a restored message whose sequence number is not here (the restore checked),
    /// leaving its scheduled and expiry keys in `later` for [`Queue::index_restored`].
    pub(crate) fn insert_restored(
        &mut self,
        sequence: SequenceNumber,
        message: StoredMessage,
        later: &mut RestoredKeys,
    ) {
        let mut keys = self.add_message(sequence, message);
        later.scheduled.extend(keys.scheduled.take());
        later.expiry.extend(keys.expiry.take());
        self.apply(keys, true);
    }

    /// Adds the keys a restore left for later, in one bulk build per ordered index: a restart
    /// of millions of messages with a time to live spent a third of its time inserting them
    /// one at a time.
    pub(crate) fn index_restored(&mut self, later: RestoredKeys) {
        for (index, keys) in [
            (&mut self.scheduled, later.scheduled),
            (&mut self.expiry, later.expiry),
        ] {
            // Collecting sorts the keys, then builds the tree bottom-up.
            let mut built: BTreeSet<_> = keys.into_iter().collect();
            index.append(&mut built);
        }
    }

    /// Puts a message whose sequence number is not here in the message map and the session
    /// index and counts it; returns the keys of the other indices it belongs in.
    fn add_message(&mut self, sequence: SequenceNumber, mut message: StoredMessage) -> IndexKeys {
        let keys = IndexKeys::of(self.expiring, sequence, &message);
        if let (Some(index), Some(session)) = (&mut self.sessions, message.body.session_name()) {
            let shared = index.add(session, sequence, keys.available.is_some());
            message.body.share_session_name(shared);
        }
        self.size_bytes += message.size_bytes();
        self.memory.add(message.memory_bytes());
        if !message.body.is_evicted() {
            self.resident.insert(sequence);
        }
        self.messages.insert(sequence.0, message);
        keys
    }

    pub(crate) fn remove(&mut self, sequence: SequenceNumber) -> Option<StoredMessage> {
        let message = self.messages.remove(sequence.0)?;
        self.size_bytes -= message.size_bytes();
        self.memory.sub(message.memory_bytes());
        self.resident.remove(&sequence);
        self.unindex_session(sequence, &message);
        self.apply(IndexKeys::of(self.expiring, sequence, &message), false);
        Some(message)
    }

    /// Evicts the bytes of the resident messages with the highest sequence numbers (the last
    /// to be delivered) until `want` bytes are freed or none is left that may go: messages not
    /// yet durable (pending, held) stay. Returns the bytes freed and the messages evicted.
    pub(crate) fn evict_from_tail(&mut self, want: u64) -> (u64, u64) {
        let (mut freed, mut evicted) = (0u64, 0u64);
        let mut gone = Vec::new();
        for &sequence in self.resident.iter().rev() {
            if freed >= want {
                break;
            }
            let Some(message) = self.messages.get_mut(sequence.0) else {
                continue;
            };
            if matches!(message.stage, Stage::Pending { .. } | Stage::Held { .. }) {
                continue;
            }
            let before = message.memory_bytes();
            message.body.evict();
            let released = before.saturating_sub(message.memory_bytes());
            freed += released;
            evicted += 1;
            gone.push((sequence, released));
        }
        for (sequence, released) in gone {
            self.resident.remove(&sequence);
            self.memory.sub(released);
        }
        (freed, evicted)
    }

    /// Up to `max` messages at the head of the available index (the next to be received), of
    /// which those evicted, as many as `max_bytes` hold (at least one): what a read-ahead
    /// brings back.
    pub(crate) fn evicted_at_head(&self, max: usize, max_bytes: u64) -> Vec<SequenceNumber> {
        // The common case, asked before every dispatch: nothing evicted, nothing to walk.
        if self.resident.len() == self.messages.len() {
            return Vec::new();
        }
        let mut bytes = 0u64;
        self.messages
            .marked_keys()
            .map(SequenceNumber)
            .take(max)
            .filter(|sequence| !self.resident.contains(sequence))
            .take_while(|sequence| {
                let first = bytes == 0;
                bytes += self
                    .messages
                    .get(sequence.0)
                    .map_or(0, |m| m.body.encoded_len());
                first || bytes <= max_bytes
            })
            .collect()
    }

    /// Takes an evicted message's bytes back (as read from the store). False when the message
    /// is not here or not evicted; an error when the bytes are not that message's.
    pub(crate) fn restore_body(
        &mut self,
        sequence: SequenceNumber,
        encoded: bytes::Bytes,
    ) -> Result<bool, crate::error::CoreError> {
        let Some(message) = self.messages.get_mut(sequence.0) else {
            return Ok(false);
        };
        if !message.body.is_evicted() {
            return Ok(false);
        }
        let before = message.memory_bytes();
        message.body.restore(encoded)?;
        let added = message.memory_bytes().saturating_sub(before);
        self.resident.insert(sequence);
        self.memory.add(added);
        Ok(true)
    }

    fn unindex_session(&mut self, sequence: SequenceNumber, message: &StoredMessage) {
        if let (Some(index), Some(session)) = (&mut self.sessions, message.body.session_id()) {
            index.remove(session, sequence, message.stage == Stage::Available);
        }
    }

    /// Moves a message to `stage`, updating the indices; false if the message is not here.
    pub(crate) fn set_stage(&mut self, sequence: SequenceNumber, stage: Stage) -> bool {
        self.restage(sequence, |_| stage)
    }

    /// Moves a message to the stage `next` makes of its current one, updating the indices;
    /// false if the message is not here.
    pub(crate) fn restage(
        &mut self,
        sequence: SequenceNumber,
        next: impl FnOnce(Stage) -> Stage,
    ) -> bool {
        let expiring = self.expiring;
        let Some(message) = self.messages.get_mut(sequence.0) else {
            return false;
        };
        let old = IndexKeys::of(expiring, sequence, message);
        message.stage = next(message.stage);
        let new = IndexKeys::of(expiring, sequence, message);
        let now_available = new.available.is_some();
        if old.available.is_some() != now_available
            && let (Some(index), Some(session)) = (&mut self.sessions, message.body.session_id())
        {
            index.set_available(session, sequence, now_available);
        }
        self.apply(old, false);
        self.apply(new, true);
        true
    }

    fn apply(&mut self, keys: IndexKeys, add: bool) {
        fn edit<K: Ord>(set: &mut BTreeSet<K>, key: Option<K>, add: bool) {
            if let Some(key) = key {
                if add {
                    set.insert(key);
                } else {
                    set.remove(&key);
                }
            }
        }
        if let Some(sequence) = keys.available {
            self.messages.mark(sequence.0, add);
        }
        edit(&mut self.pending, keys.pending, add);
        edit(&mut self.scheduled, keys.scheduled, add);
        edit(&mut self.expiry, keys.expiry, add);
        if keys.deferred {
            if add {
                self.deferred += 1;
            } else {
                self.deferred -= 1;
            }
        }
    }

    /// Checks that each index holds exactly the messages whose stage puts them there, and that
    /// the sizes counted are the sums over the messages.
    pub(crate) fn check_indices(&self) -> Result<(), String> {
        let mut expected = Queue::new(self.expiring, MemoryBudget::unlimited());
        for (sequence, message) in self.messages() {
            expected.insert_new(sequence, message.clone());
        }
        let sessions_agree = match (&expected.sessions, &self.sessions) {
            (Some(expected), Some(actual)) => expected.same_entries(actual),
            (None, None) => true,
            _ => false,
        };
        if !sessions_agree {
            return Err("session index out of step with message stages".to_owned());
        }
        if !expected
            .messages
            .marked_keys()
            .eq(self.messages.marked_keys())
        {
            return Err("available index out of step with message stages".to_owned());
        }
        if expected.pending != self.pending {
            return Err("pending index out of step with message stages".to_owned());
        }
        if expected.scheduled != self.scheduled {
            return Err("schedule index out of step with message stages".to_owned());
        }
        if expected.expiry != self.expiry {
            return Err("expiry index out of step with message stages".to_owned());
        }
        if expected.deferred != self.deferred {
            return Err(format!(
                "{} deferred counted, {} stored",
                self.deferred, expected.deferred
            ));
        }
        if expected.size_bytes != self.size_bytes {
            return Err(format!(
                "{} bytes counted, {} stored",
                self.size_bytes, expected.size_bytes
            ));
        }
        if expected.resident != self.resident {
            return Err("resident index out of step with the messages' bytes".to_owned());
        }
        if expected.memory.bytes() != self.memory.bytes() {
            return Err(format!(
                "{} bytes charged to the memory budget, {} held",
                self.memory.bytes(),
                expected.memory.bytes()
            ));
        }
        Ok(())
    }
}

fn pop_due(
    index: &mut BTreeSet<(Timestamp, SequenceNumber)>,
    now: Timestamp,
) -> Option<SequenceNumber> {
    let (at, sequence) = *index.first()?;
    (at <= now).then(|| {
        index.pop_first();
        sequence
    })
}

/// The ordered-index keys of restored messages, added in bulk once all are in.
#[derive(Debug, Default)]
pub(crate) struct RestoredKeys {
    scheduled: Vec<(Timestamp, SequenceNumber)>,
    expiry: Vec<(Timestamp, SequenceNumber)>,
}

/// The index entries a message's stage calls for.
struct IndexKeys {
    available: Option<SequenceNumber>,
    pending: Option<SequenceNumber>,
    scheduled: Option<(Timestamp, SequenceNumber)>,
    expiry: Option<(Timestamp, SequenceNumber)>,
    deferred: bool,
}

impl IndexKeys {
    fn of(expiring: bool, sequence: SequenceNumber, message: &StoredMessage) -> IndexKeys {
        let expires_at = message.body.expires_at().filter(|_| expiring);
        // Locked messages leave the expiry index: they stay settle-able until the lock ends.
        // Pending ones join it once durable (an expiry already past then fires at once).
        let (available, scheduled, expiry) = match message.stage {
            Stage::Available => (Some(sequence), None, expires_at),
            Stage::Deferred => (None, None, expires_at),
            Stage::Scheduled => (None, Some(message.body.enqueued_time()), None),
            Stage::Locked { .. } | Stage::Pending { .. } | Stage::Held { .. } => (None, None, None),
        };
        IndexKeys {
            available,
            pending: matches!(message.stage, Stage::Pending { .. }).then_some(sequence),
            scheduled: scheduled.map(|at| (at, sequence)),
            expiry: expiry.map(|at| (at, sequence)),
            deferred: message.stage == Stage::Deferred,
        }
    }
}
