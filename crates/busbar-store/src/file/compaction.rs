//! Compaction of `FileStorage`: delete the oldest segment once what is live in it has been
//! copied forward.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use bytes::Bytes;

use super::FileStorage;
use super::format::{self, Entry, Frame, HEADER_LEN};
use super::index::Location;
use super::segment::{self, SegmentId};
use super::summary;
use crate::error::StoreError;
use crate::record::{MetaKey, Record};
use crate::storage::{CompactionReport, Storage};

impl FileStorage {
    /// One step: if the oldest sealed segment is worth it, copy its live records to the head,
    /// sync, then delete it. Never touches more than one segment.
    pub(super) fn compact_step(&mut self) -> Result<CompactionReport, StoreError> {
        self.poison.check()?;
        let Some(victim) = self.worth_compacting() else {
            return Ok(CompactionReport::default());
        };
        let live = if self.index.live_bytes(victim) > 0 {
            self.live_records(victim)?
        } else {
            Vec::new()
        };
        // Every entity's high-water mark is written to the head too, so deleting the victim's
        // inserts cannot lower any entity's sequence high-water mark.
        let marks = self.index.high_water().clone();
        self.write_batch(&live, &marks)?;
        // Also makes every earlier append durable, so no removal the victim's deletion relies
        // on can be lost by a crash.
        self.sync()?;
        if let Err(error) = segment::remove(&self.dir, victim) {
            return Err(self.poison.set(error));
        }
        summary::remove(&self.dir, victim);
        let removed = self.segments.remove(&victim);
        self.index.forget(victim);
        self.files.forget(victim);
        let records_in_victim = removed.map_or(0, |info| {
            let next_first = self
                .segments
                .range(victim..)
                .next()
                .map_or(self.last.next(), |(_, next)| next.first_lsn);
            next_first.0.saturating_sub(info.first_lsn.0)
        });
        let records_rewritten = live.len() as u64;
        Ok(CompactionReport {
            records_rewritten,
            records_dropped: records_in_victim.saturating_sub(records_rewritten),
            bytes_released: removed.map_or(0, |info| info.len),
            more: self.worth_compacting().is_some(),
        })
    }

    /// The oldest sealed segment, if it holds nothing live or enough of the sealed segments is
    /// dead to be worth rewriting it.
    fn worth_compacting(&self) -> Option<SegmentId> {
        let mut sealed = self.segments.iter().filter(|(id, _)| **id != self.head.id);
        let (&oldest, _) = sealed.next()?;
        if self.index.live_bytes(oldest) == 0 {
            return Some(oldest);
        }
        let (total, live) = self
            .segments
            .iter()
            .filter(|(id, _)| **id != self.head.id)
            .fold((0u64, 0u64), |(total, live), (id, info)| {
                let data = info.len.saturating_sub(HEADER_LEN as u64);
                (total + data, live + self.index.live_bytes(*id))
            });
        let dead = total.saturating_sub(live);
        let threshold = total.saturating_mul(u64::from(self.options.compact_dead_percent));
        (dead.saturating_mul(100) >= threshold).then_some(oldest)
    }

    /// The records that carry forward what is live in `victim`: each live message inserted
    /// there as an insert with its latest state, and each current metadata entry set there.
    fn live_records(&self, victim: SegmentId) -> Result<Vec<Record>, StoreError> {
        let path = victim.path_in(&self.dir);
        let data = segment::read_all(&path)?;
        let mut live = Vec::new();
        let mut offset = HEADER_LEN;
        while offset < data.len() {
            let (frame, len) =
                format::decode_frame(&data, offset).map_err(|error| StoreError::Corrupt {
                    file: path.clone(),
                    offset: offset as u64,
                    reason: error.reason(),
                })?;
            // A sealed segment is whole: its groups' frames are read one by one.
            let Frame::Entry(entry) = frame else {
                offset += len;
                continue;
            };
            let here = Location {
                segment: victim,
                offset: offset as u64,
                len: len as u64,
            };
            let meta_key = entry.meta_key();
            match entry {
                Entry::Record(Record::Insert {
                    key,
                    message,
                    state,
                }) => {
                    if let Some(frames) = self.index.message(&key)
                        && frames.insert() == here
                    {
                        let state = match frames.update() {
                            Some(update) => self.state_at(update, victim, &data)?,
                            None => state,
                        };
                        live.push(Record::Insert {
                            key,
                            message,
                            state,
                        });
                    }
                }
                // Only reachable if an update outlived its insert's segment; kept for safety.
                Entry::Record(Record::Update { key, state }) => {
                    if let Some(frames) = self.index.message(&key)
                        && frames.update() == Some(here)
                        && frames.insert().segment != victim
                    {
                        live.push(Record::Update { key, state });
                    }
                }
                Entry::Record(record @ Record::Meta { value: Some(_), .. }) => {
                    if meta_key.is_some_and(|k: MetaKey| self.index.meta(&k) == Some(here)) {
                        live.push(record);
                    }
                }
                Entry::Record(Record::Remove { .. } | Record::Meta { value: None, .. })
                | Entry::HighWater { .. } => {}
            }
            offset += len;
        }
        Ok(live)
    }

    /// The state carried by the update frame at `location` (found in `victim_data` if it is in
    /// the segment being compacted, otherwise read from its own segment).
    fn state_at(
        &self,
        location: Location,
        victim: SegmentId,
        victim_data: &Bytes,
    ) -> Result<Bytes, StoreError> {
        let path = location.segment.path_in(&self.dir);
        let corrupt = |reason| StoreError::Corrupt {
            file: path.clone(),
            offset: location.offset,
            reason,
        };
        let (frame, offset) = if location.segment == victim {
            (victim_data.clone(), location.offset)
        } else {
            (self.read_frame(location)?, 0)
        };
        let offset = usize::try_from(offset).map_err(|_| corrupt("offset out of range"))?;
        match format::decode_entry(&frame, offset) {
            Ok((Entry::Record(Record::Update { state, .. }), _)) => Ok(state),
            Ok(_) => Err(corrupt("indexed frame is not an update")),
            Err(error) => Err(corrupt(error.reason())),
        }
    }

    fn read_frame(&self, location: Location) -> Result<Bytes, StoreError> {
        let path = location.segment.path_in(&self.dir);
        let len = usize::try_from(location.len).map_err(|_| StoreError::Corrupt {
            file: path.clone(),
            offset: location.offset,
            reason: "frame length out of range",
        })?;
        let mut buffer = vec![0u8; len];
        File::open(&path)
            .and_then(|mut file| {
                file.seek(SeekFrom::Start(location.offset))?;
                file.read_exact(&mut buffer)
            })
            .map_err(|e| StoreError::io("read", &path, e))?;
        Ok(Bytes::from(buffer))
    }
}
