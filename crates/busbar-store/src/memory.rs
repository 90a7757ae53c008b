//! `MemoryStorage`: the complete in-memory backend, with fault switches for failure tests.

use crate::error::{Poison, StoreError};
use crate::record::{Lsn, Record};
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
}

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
        self.synced = self.log.len();
        self.durable = self.last;
        Ok(self.durable)
    }

    fn recover(&mut self) -> Result<Recovered, StoreError> {
        self.poison.check()?;
        let mut recovered = self.base.clone();
        for record in self.log.iter().take(self.synced) {
            recovered.apply(record);
        }
        recovered.durable = self.durable;
        Ok(recovered)
    }

    /// Folds every synced record into the base state in one step (this backend is for tests and
    /// throw-away runs, where a whole-log step is cheap enough).
    fn compact(&mut self) -> Result<CompactionReport, StoreError> {
        self.poison.check()?;
        let folded = self.synced;
        for record in self.log.drain(..folded) {
            self.base.apply(&record);
        }
        self.synced = 0;
        Ok(CompactionReport {
            records_dropped: u64::try_from(folded).unwrap_or(u64::MAX),
            ..CompactionReport::default()
        })
    }
}
