//! The in-memory index of where each live record sits, and how many live bytes each segment
//! holds: what compaction needs to decide what to copy and what to delete.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::file::format::Entry;
use crate::file::segment::SegmentId;
use crate::record::{EntityId, MessageKey, MetaKey, Record};

/// Where one frame sits in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) segment: SegmentId,
    pub(crate) offset: u64,
    /// The whole frame's length, header included.
    pub(crate) len: u64,
}

/// The frames a live message needs: its insert, and its latest update if any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MessageFrames {
    pub(crate) insert: Location,
    pub(crate) update: Option<Location>,
}

/// Where each live message's frames are, shared between the writer, which changes it, and the
/// readers, which look messages up in it.
#[derive(Debug, Default, Clone)]
pub(crate) struct SharedMessages(Arc<RwLock<BTreeMap<MessageKey, MessageFrames>>>);

impl SharedMessages {
    /// The map, for looking up (a panic elsewhere while it was held cannot leave it half
    /// changed: every change is one map operation).
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, BTreeMap<MessageKey, MessageFrames>> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, BTreeMap<MessageKey, MessageFrames>> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Which frames are live, kept current on every append and rebuilt at start-up.
///
/// Ordered maps rather than hash maps: keys mostly arrive in order (sequence numbers grow), which
/// makes B-tree inserts cache-friendly, and recovery of a large backlog is dominated by them.
#[derive(Debug, Default)]
pub(crate) struct LiveIndex {
    messages: SharedMessages,
    meta: BTreeMap<MetaKey, Location>,
    high_water: BTreeMap<EntityId, i64>,
    live_bytes: BTreeMap<SegmentId, u64>,
}

impl LiveIndex {
    /// Accounts for `entry`, written at `location`, in log order.
    pub(crate) fn apply(&mut self, entry: &Entry, location: Location) {
        match entry {
            Entry::Record(record) => self.apply_record(record, location),
            Entry::HighWater { entity, sequence } => self.raise_high_water(*entity, *sequence),
        }
    }

    /// Accounts for `record`, written at `location`, in log order.
    pub(crate) fn apply_record(&mut self, record: &Record, location: Location) {
        match record {
            Record::Insert { key, .. } => {
                self.raise_high_water(key.entity, key.sequence);
                let frames = MessageFrames {
                    insert: location,
                    update: None,
                };
                self.add_live(location);
                let old = self.messages.write().insert(*key, frames);
                if let Some(old) = old {
                    self.release_message(old);
                }
            }
            Record::Update { key, .. } => {
                let replaced = self
                    .messages
                    .write()
                    .get_mut(key)
                    .map(|frames| frames.update.replace(location));
                if let Some(old) = replaced {
                    self.add_live(location);
                    if let Some(old) = old {
                        self.release(old);
                    }
                }
            }
            Record::Remove { key } => {
                let old = self.messages.write().remove(key);
                if let Some(old) = old {
                    self.release_message(old);
                }
            }
            Record::Meta { entity, key, value } => {
                let meta_key = MetaKey {
                    entity: *entity,
                    key: key.clone(),
                };
                let old = if value.is_some() {
                    self.add_live(location);
                    self.meta.insert(meta_key, location)
                } else {
                    self.meta.remove(&meta_key)
                };
                if let Some(old) = old {
                    self.release(old);
                }
            }
        }
    }

    fn raise_high_water(&mut self, entity: EntityId, sequence: i64) {
        let mark = self.high_water.entry(entity).or_insert(sequence);
        *mark = (*mark).max(sequence);
    }

    fn add_live(&mut self, location: Location) {
        *self.live_bytes.entry(location.segment).or_default() += location.len;
    }

    fn release(&mut self, location: Location) {
        if let Some(live) = self.live_bytes.get_mut(&location.segment) {
            *live = live.saturating_sub(location.len);
        }
    }

    fn release_message(&mut self, frames: MessageFrames) {
        self.release(frames.insert);
        if let Some(update) = frames.update {
            self.release(update);
        }
    }

    /// Bytes of `segment` that live state still needs.
    pub(crate) fn live_bytes(&self, segment: SegmentId) -> u64 {
        self.live_bytes.get(&segment).copied().unwrap_or(0)
    }

    /// Forgets a deleted segment (it holds nothing live any more).
    pub(crate) fn forget(&mut self, segment: SegmentId) {
        self.live_bytes.remove(&segment);
    }

    /// The live frames of a message, if it is live.
    pub(crate) fn message(&self, key: &MessageKey) -> Option<MessageFrames> {
        self.messages.read().get(key).copied()
    }

    /// The live messages' frames, for readers on other threads.
    pub(crate) fn shared_messages(&self) -> SharedMessages {
        self.messages.clone()
    }

    /// The frame holding a metadata entry's current value, if it is set.
    pub(crate) fn meta(&self, key: &MetaKey) -> Option<Location> {
        self.meta.get(key).copied()
    }

    /// The highest sequence number ever inserted, per entity.
    pub(crate) fn high_water(&self) -> &BTreeMap<EntityId, i64> {
        &self.high_water
    }
}
