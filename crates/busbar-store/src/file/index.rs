//! The in-memory index of where each live record sits, and how many live bytes each segment
//! holds: what compaction needs to decide what to copy and what to delete.

use busbar_seqmap::SequenceMap;
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

/// The frames a live message needs: its insert, and its latest update if any. One per live
/// message, so packed: a frame's length fits in 32 bits (`MAX_PAYLOAD`), and no update is a
/// length of zero (a frame has at least its header).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MessageFrames {
    insert_segment: u64,
    insert_offset: u64,
    update_segment: u64,
    update_offset: u64,
    insert_len: u32,
    update_len: u32,
}

fn frame_len(location: Location) -> u32 {
    u32::try_from(location.len).unwrap_or(u32::MAX)
}

impl MessageFrames {
    fn new(insert: Location) -> MessageFrames {
        MessageFrames {
            insert_segment: insert.segment.0,
            insert_offset: insert.offset,
            update_segment: 0,
            update_offset: 0,
            insert_len: frame_len(insert),
            update_len: 0,
        }
    }

    pub(crate) fn insert(&self) -> Location {
        Location {
            segment: SegmentId(self.insert_segment),
            offset: self.insert_offset,
            len: u64::from(self.insert_len),
        }
    }

    pub(crate) fn update(&self) -> Option<Location> {
        (self.update_len != 0).then(|| Location {
            segment: SegmentId(self.update_segment),
            offset: self.update_offset,
            len: u64::from(self.update_len),
        })
    }

    /// Records `update` as the latest update, returning the one it replaces.
    fn replace_update(&mut self, update: Location) -> Option<Location> {
        let old = self.update();
        self.update_segment = update.segment.0;
        self.update_offset = update.offset;
        self.update_len = frame_len(update).max(1);
        old
    }
}

/// Each live message's frames, by entity and sequence number (packed 64 to a chunk: the store's
/// part of a deep backlog's per-message memory).
#[derive(Debug, Default)]
pub(crate) struct MessageLocations(BTreeMap<EntityId, SequenceMap<MessageFrames>>);

impl MessageLocations {
    pub(crate) fn get(&self, key: &MessageKey) -> Option<&MessageFrames> {
        self.0.get(&key.entity)?.get(key.sequence)
    }

    fn get_mut(&mut self, key: &MessageKey) -> Option<&mut MessageFrames> {
        self.0.get_mut(&key.entity)?.get_mut(key.sequence)
    }

    fn insert(&mut self, key: MessageKey, frames: MessageFrames) -> Option<MessageFrames> {
        self.0
            .entry(key.entity)
            .or_default()
            .insert(key.sequence, frames)
    }

    fn remove(&mut self, key: &MessageKey) -> Option<MessageFrames> {
        let messages = self.0.get_mut(&key.entity)?;
        let removed = messages.remove(key.sequence);
        if messages.is_empty() {
            self.0.remove(&key.entity);
        }
        removed
    }

    /// `entity`'s live messages from sequence number `from` on, in order.
    pub(crate) fn scan(
        &self,
        entity: EntityId,
        from: i64,
    ) -> impl Iterator<Item = (i64, &MessageFrames)> {
        self.0
            .get(&entity)
            .into_iter()
            .flat_map(move |messages| messages.range(from))
    }
}

/// Where each live message's frames are, shared between the writer, which changes it, and the
/// readers, which look messages up in it.
#[derive(Debug, Default, Clone)]
pub(crate) struct SharedMessages(Arc<RwLock<MessageLocations>>);

impl SharedMessages {
    /// The map, for looking up (a panic elsewhere while it was held cannot leave it half
    /// changed: every change is one map operation).
    pub(crate) fn read(&self) -> RwLockReadGuard<'_, MessageLocations> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, MessageLocations> {
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
                let frames = MessageFrames::new(location);
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
                    .map(|frames| frames.replace_update(location));
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
        self.release(frames.insert());
        if let Some(update) = frames.update() {
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
