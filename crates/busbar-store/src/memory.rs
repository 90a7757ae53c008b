//! `MemoryStorage`: the complete in-memory backend, with fault switches for failure tests.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use crate::error::{Poison, StoreError};
use crate::reader::MessageReader;
use crate::record::{EntityId, Lsn, MessageKey, Record};
use crate::recovered::Recovered;
use crate::storage::{CompactionReport, Storage};

/// A [`Storage`] that keeps everything in memory and models a disk: records become durable
/// only at [`sync`](Storage::sync), and [`restart`](MemoryStorage::restart) keeps exactly the
/// synced ones.
///
/// A [`volatile`](MemoryStorage::volatile) store keeps no records at all, only the positions:
/// for a broker that never recovers (`busbar --memory`), so that each queued message lives once,
/// in its entity, and not a second time in the store's log and replay map.
///
/// Fault switches make failure paths testable without a disk: [`fail_next_append`],
/// [`fail_next_sync`] and [`crash_after_records`]. Each failure poisons the store like a real
/// one.
///
/// [`fail_next_append`]: MemoryStorage::fail_next_append
/// [`fail_next_sync`]: MemoryStorage::fail_next_sync
/// [`crash_after_records`]: MemoryStorage::crash_after_records
#[derive(Debug, Default)]
pub struct MemoryStorage {
    /// Whether records are dropped after counting (recover and restart find nothing).
    volatile: bool,
    /// The state of the records folded away by compaction (all of them synced).
    base: Recovered,
    /// Records appended after `base`; the first `synced` of them are durable.
    log: Vec<Record>,
    synced: usize,
    last: Lsn,
    durable: Lsn,
    poison: Poison,
    faults: Faults,
    syncs: u64,
    /// The immutable parts of the messages live at the last sync, shared with the readers.
    readable: Readable,
}

/// What [`MemoryReader`]s see: each live message's immutable part as of the last sync.
type Readable = Arc<Mutex<BTreeMap<MessageKey, Bytes>>>;

#[derive(Debug, Default)]
struct Faults {
    fail_next_append: bool,
    fail_next_sync: bool,
    /// Records still accepted before the simulated crash.
    crash_after: Option<usize>,
}

impl MemoryStorage {
    /// An empty store that keeps what is appended, for [`recover`](Storage::recover) and
    /// [`restart`](MemoryStorage::restart).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty store that keeps nothing: appends and syncs only advance the positions (the
    /// fault switches still apply), and [`recover`](Storage::recover) finds an empty state.
    pub fn volatile() -> Self {
        Self {
            volatile: true,
            ..Self::default()
        }
    }

    /// The next [`append`](Storage::append) fails without storing anything and poisons the store.
    pub fn fail_next_append(&mut self) {
        self.faults.fail_next_append = true;
    }

    /// The next [`sync`](Storage::sync) fails, makes nothing durable and poisons the store.
    pub fn fail_next_sync(&mut self) {
        self.faults.fail_next_sync = true;
    }

    /// Simulates a crash once `records` more records have been appended: the append that
    /// crosses the limit keeps only the records before it and fails, poisoning the store.
    /// Whatever was not synced is lost at [`restart`](MemoryStorage::restart).
    pub fn crash_after_records(&mut self, records: usize) {
        self.faults.crash_after = Some(records);
    }

    /// How many times [`sync`](Storage::sync) was called (successful or not).
    pub fn sync_count(&self) -> u64 {
        self.syncs
    }

    /// What a process restart would find: the synced records only, no poison, no fault armed.
    pub fn restart(self) -> MemoryStorage {
        let mut log = self.log;
        log.truncate(self.synced);
        MemoryStorage {
            volatile: self.volatile,
            base: self.base,
            synced: log.len(),
            log,
            last: self.durable,
            durable: self.durable,
            poison: Poison::default(),
            faults: Faults::default(),
            syncs: self.syncs,
            readable: self.readable,
        }
    }
}

impl Storage for MemoryStorage {
    fn append(&mut self, records: &[Record]) -> Result<Lsn, StoreError> {
        self.poison.check()?;
        if std::mem::take(&mut self.faults.fail_next_append) {
            return Err(self.poison.set(StoreError::InjectedFault("append failed")));
        }
        let accepted = match self.faults.crash_after {
            Some(left) if left < records.len() => left,
            _ => records.len(),
        };
        if let Some(left) = self.faults.crash_after.as_mut() {
            *left -= accepted;
        }
        for record in records.iter().take(accepted) {
            if !self.volatile {
                self.log.push(record.clone());
            }
            self.last = self.last.next();
        }
        if accepted < records.len() {
            return Err(self
                .poison
                .set(StoreError::InjectedFault("crashed mid-append")));
        }
        Ok(self.last)
    }

    fn is_volatile(&self) -> bool {
        self.volatile
    }

    fn sync(&mut self) -> Result<Lsn, StoreError> {
        self.syncs += 1;
        self.poison.check()?;
        if std::mem::take(&mut self.faults.fail_next_sync) {
            return Err(self.poison.set(StoreError::InjectedFault("sync failed")));
        }
        let mut readable = self.readable.lock().unwrap_or_else(PoisonError::into_inner);
        for record in self.log.get(self.synced..).unwrap_or_default() {
            match record {
                Record::Insert { key, message, .. } => {
                    readable.insert(*key, message.clone());
                }
                Record::Remove { key } => {
                    readable.remove(key);
                }
                Record::Update { .. } | Record::Meta { .. } => {}
            }
        }
        drop(readable);
        self.synced = self.log.len();
        self.durable = self.last;
        Ok(self.durable)
    }

    fn recover(&mut self) -> Result<Recovered, StoreError> {
        self.poison.check()?;
        let mut recovered = self.base.clone();
        for record in self.log.iter().take(self.synced) {
            recovered.apply(record.clone());
        }
        recovered.durable = self.durable;
        Ok(recovered)
    }

    fn reader(&self) -> Result<Arc<dyn MessageReader>, StoreError> {
        Ok(Arc::new(MemoryReader {
            readable: Arc::clone(&self.readable),
        }))
    }

    /// Folds every synced record into the base state in one step (this backend is for tests and
    /// throw-away runs, where a whole-log step is cheap enough).
    fn compact(&mut self) -> Result<CompactionReport, StoreError> {
        self.poison.check()?;
        let folded = self.synced;
        for record in self.log.drain(..folded) {
            self.base.apply(record);
        }
        self.synced = 0;
        Ok(CompactionReport {
            records_dropped: u64::try_from(folded).unwrap_or(u64::MAX),
            ..CompactionReport::default()
        })
    }
}

/// Reads a [`MemoryStorage`]'s messages as of its last sync (a volatile one's: none).
#[derive(Debug)]
struct MemoryReader {
    readable: Readable,
}

impl MessageReader for MemoryReader {
    fn read(&self, keys: &[MessageKey]) -> Result<Vec<Option<Bytes>>, StoreError> {
        let readable = self.readable.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(keys.iter().map(|key| readable.get(key).cloned()).collect())
    }

    fn scan(
        &self,
        entity: EntityId,
        from: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Bytes)>, StoreError> {
        let readable = self.readable.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(readable
            .range(MessageKey::from_on(entity, from))
            .take(limit)
            .map(|(key, message)| (key.sequence, message.clone()))
            .collect())
    }
}
