//! `FileStorage`: a directory of checksummed segment files with torn-tail recovery and
//! compaction.

mod compaction;
mod format;
mod index;
mod reader;
mod replay;
mod scan;
mod segment;
mod space;
mod summary;

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{Poison, StoreError};
use crate::reader::MessageReader;
use crate::record::{EntityId, Lsn, Record};
use crate::recovered::Recovered;
use crate::storage::{CompactionReport, MessagePart, Storage};
use format::HEADER_LEN;
use index::{LiveIndex, Location};
use reader::{FileReader, SegmentFiles};
use replay::{Rebuild, replay};
use scan::ScanMode;
use segment::SegmentId;
use summary::Summarizer;

/// Encoding-buffer capacity kept between batches: a group commit of large messages is a few
/// links' send windows (16 MiB each), and a buffer shrunk below that is grown again (copied, its
/// pages faulted in afresh) by every such group.
const KEPT_BUFFER_CAPACITY: usize = 16 << 20;
/// An inserted message at least this large is written from its own bytes (one `pwritev` with
/// the rest of the batch) instead of being copied into the encoding buffer first.
const SHARED_MESSAGE: usize = 64 * 1024;
/// How far past its data [`Storage::preallocate`] keeps the head written with zeros; it tops
/// up once less than half of this is left.
const PREALLOCATE_AHEAD: u64 = 1 << 20;

/// Tuning for [`FileStorage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileOptions {
    /// A new segment is started when an append would take the current one past this size
    /// (a single larger batch still goes whole into one segment). Compaction works one segment
    /// at a time, so this also bounds one compaction step.
    pub segment_size: u64,
    /// Compaction rewrites the oldest segment once at least this percentage of the bytes in
    /// sealed segments is dead. Segments with nothing live are deleted regardless.
    pub compact_dead_percent: u8,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            segment_size: 64 * 1024 * 1024,
            compact_dead_percent: 50,
        }
    }
}

/// A [`Storage`] in a directory of segment files.
///
/// Every record is framed with its length and a CRC32C, and each segment header carries the
/// format version and the log position of its first record. Appends go to the newest segment
/// (one `write` per batch); [`sync`](Storage::sync) is one `fdatasync`. A segment is synced
/// before the next one is created, so only the last segment can have a torn tail.
///
/// [`preallocate`](Storage::preallocate) writes zeros ahead of the head's data, so that later
/// appends overwrite blocks the file already has: their `fdatasync` then only flushes data,
/// where appending past the end of the file also commits the new size to the file system's
/// journal. Zeros never form a valid frame, so a zero tail reads as the end of the log; a
/// segment is cut back to its data before it is sealed.
///
/// An append of two or more records starts with a group frame giving the byte length of its
/// frames, so that recovery keeps all of an append or none of it.
///
/// [`open`](FileStorage::open) reads the whole journal once and keeps only the index of where
/// each live record is: a bad frame in the last segment is cut off there with the rest of its
/// append (it was never synced); anywhere else it fails with [`StoreError::Corrupt`] naming the
/// file and offset. [`recover`](Storage::recover) reads it a second time, one segment at a time.
///
/// Compaction deletes the oldest segment, after copying what is still live in it (messages as
/// an insert with their latest state, metadata entries, and each entity's sequence high-water
/// mark) to the newest segment and syncing. Working only on the oldest segment keeps every
/// removal record valid: whatever it removed is older still, so already gone. A crash between
/// copy and delete leaves both copies, and the later one wins on recovery.
#[derive(Debug)]
pub struct FileStorage {
    /// Held open for its exclusive lock: two writers on one journal would corrupt it.
    _lock: File,
    dir: PathBuf,
    options: FileOptions,
    /// Every segment on disk, oldest first; the last one is the head.
    segments: BTreeMap<SegmentId, SegmentInfo>,
    head: Head,
    index: LiveIndex,
    /// Read handles of the segments, shared with the readers.
    files: Arc<SegmentFiles>,
    /// Reused encoding buffer: one batch, written with one call.
    encoded: Vec<u8>,
    frame_lens: Vec<u64>,
    last: Lsn,
    durable: Lsn,
    poison: Poison,
    /// What summaries keep of a new message, and the thread that writes them (see
    /// [`open_with_index`](FileStorage::open_with_index)).
    index_part: Option<MessagePart>,
    summarizer: Option<Summarizer>,
    /// The recovery keeping `index_part` that `open` built, until `recover_keeping` takes it.
    opened: Option<Recovered>,
}

#[derive(Debug, Clone, Copy)]
struct SegmentInfo {
    first_lsn: Lsn,
    len: u64,
}

#[derive(Debug)]
struct Head {
    id: SegmentId,
    file: File,
    /// The file's length: its data plus any zeros preallocated after them.
    allocated: u64,
}

impl FileStorage {
    /// Opens (creating if needed) the journal in `dir` and recovers it: a torn tail of the last
    /// segment is truncated durably; corruption elsewhere is an error.
    pub fn open(dir: impl AsRef<Path>, options: FileOptions) -> Result<FileStorage, StoreError> {
        FileStorage::open_summarizing(dir.as_ref(), options, None)
    }

    /// [`open`](FileStorage::open), keeping a summary of each sealed segment in which a new
    /// message's immutable part is what `index_part` makes of it: opening and
    /// [`recover_keeping(index_part)`](Storage::recover_keeping) then read the summaries of
    /// sealed segments instead of the segments, a few bytes per message instead of its whole
    /// body. Summaries are written in the background as segments are sealed; a segment without
    /// a whole one is read as before. The recovery keeping `index_part` is built in the same
    /// pass as the location index and handed to the first `recover_keeping(index_part)`, if
    /// nothing was appended before it.
    pub fn open_with_index(
        dir: impl AsRef<Path>,
        options: FileOptions,
        index_part: MessagePart,
    ) -> Result<FileStorage, StoreError> {
        FileStorage::open_summarizing(dir.as_ref(), options, Some(index_part))
    }

    fn open_summarizing(
        dir: &Path,
        options: FileOptions,
        index_part: Option<MessagePart>,
    ) -> Result<FileStorage, StoreError> {
        let dir = dir.to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| StoreError::io("create directory", &dir, e))?;
        let lock = segment::lock_dir(&dir)?;
        let mut index = LiveIndex::default();
        let summaries = index_part.is_some();
        // With an index part, the recovery keeping it is built in the same pass (on a thread of
        // its own), for the first `recover_keeping` to take instead of reading everything again.
        let (scan, mut opened) = std::thread::scope(|scope| {
            let mut rebuild = index_part.map(|keep| Rebuild::spawn(scope, keep));
            let scan = scan::scan(
                &dir,
                ScanMode::Repair,
                summaries,
                |_, location, entry, summarized| {
                    index.apply(&entry, location);
                    if let Some(rebuild) = rebuild.as_mut() {
                        rebuild.push(entry, summarized);
                    }
                },
            )?;
            Ok::<_, StoreError>((scan, rebuild.map(Rebuild::finish)))
        })?;
        if let Some(recovered) = opened.as_mut() {
            recovered.durable = scan.last;
        }
        let mut segments: BTreeMap<SegmentId, SegmentInfo> = scan
            .segments
            .iter()
            .map(|s| {
                let info = SegmentInfo {
                    first_lsn: s.first_lsn,
                    len: s.len,
                };
                (s.id, info)
            })
            .collect();
        let head = match scan.segments.last() {
            // The scan cut any torn or zero tail: the file ends with its data.
            Some(last) => Head {
                id: last.id,
                file: segment::open_for_writing(&last.id.path_in(&dir))?,
                allocated: last.len,
            },
            None => {
                let id = SegmentId(1);
                let first_lsn = scan.last.next();
                let file = segment::create(&dir, id, first_lsn)?;
                let len = HEADER_LEN as u64;
                segments.insert(id, SegmentInfo { first_lsn, len });
                Head {
                    id,
                    file,
                    allocated: len,
                }
            }
        };
        let files = Arc::new(SegmentFiles::new(dir.clone()));
        let summarizer = index_part.map(|keep| {
            let ids: Vec<SegmentId> = segments.keys().copied().collect();
            summary::remove_orphans(&dir, &ids);
            let summarizer = Summarizer::spawn(dir.clone(), keep);
            // Segments sealed before a crash that came before their summary.
            ids.iter()
                .filter(|&&id| id != head.id && !summary::path_of(&dir, id).exists())
                .for_each(|&id| summarizer.summarize(id));
            summarizer
        });
        Ok(FileStorage {
            _lock: lock,
            dir,
            options,
            segments,
            head,
            index,
            files,
            encoded: Vec::new(),
            frame_lens: Vec::new(),
            last: scan.last,
            durable: scan.last,
            poison: Poison::default(),
            index_part,
            summarizer,
            opened,
        })
    }

    /// The directory holding the segments.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes of headers and records in segment files (the head's preallocated zeros, at most
    /// 1 MiB, are not counted).
    pub fn disk_usage(&self) -> u64 {
        self.segments.values().map(|s| s.len).sum()
    }

    /// How many segment files exist.
    pub fn segment_count(&self) -> usize {
        self.segments.len()
    }

    fn head_len(&self) -> u64 {
        self.segments.get(&self.head.id).map_or(0, |s| s.len)
    }

    /// Encodes `records` then one high-water mark per entry of `marks`, writes them with one
    /// call (starting a new segment first if needed) and indexes them.
    fn write_batch(
        &mut self,
        records: &[Record],
        marks: &BTreeMap<EntityId, i64>,
    ) -> Result<Lsn, StoreError> {
        self.poison.check()?;
        if let Some(size) = records
            .iter()
            .map(format::payload_len)
            .find(|&size| size > format::MAX_PAYLOAD)
        {
            return Err(StoreError::RecordTooLarge {
                size,
                limit: format::MAX_PAYLOAD,
            });
        }
        self.encoded.clear();
        self.frame_lens.clear();
        // Two or more frames go under a group frame, so recovery keeps all or none of them. Its
        // place is kept here and filled in once the frames are encoded.
        let group_len = if records.len() + marks.len() > 1 {
            format::GROUP_FRAME_LEN
        } else {
            0
        };
        // Sized once for the whole batch: grown by doubling, a batch of large messages would be
        // copied again at every step and fault in fresh pages each time.
        let frames: usize = records
            .iter()
            .map(|record| format::FRAME_HEADER_LEN + format::payload_len(record))
            .sum();
        // Large messages are written from their own bytes: `shared` holds each with where it
        // goes in the encoded bytes.
        let mut shared: Vec<(usize, Bytes)> = Vec::new();
        let copied = frames.saturating_sub(
            records
                .iter()
                .map(|record| format::shared_len(record, SHARED_MESSAGE))
                .sum(),
        );
        self.encoded
            .reserve(group_len + copied + marks.len() * format::HIGH_WATER_FRAME_LEN);
        self.encoded.resize(group_len, 0);
        for record in records {
            let (len, large) =
                format::encode_record_sharing(&mut self.encoded, record, SHARED_MESSAGE);
            self.frame_lens.push(len as u64);
            shared.extend(large);
        }
        for (&entity, &sequence) in marks {
            format::encode_high_water(&mut self.encoded, entity, sequence);
        }
        let shared_len: usize = shared.iter().map(|(_, message)| message.len()).sum();
        if group_len > 0 {
            let span = (self.encoded.len() - group_len + shared_len) as u64;
            if let Some(group) = self.encoded.get_mut(..group_len) {
                group.copy_from_slice(&format::group_frame(span));
            }
        }
        if self.encoded.is_empty() {
            return Ok(self.last);
        }
        let batch_len = (self.encoded.len() + shared_len) as u64;
        let head_len = self.head_len();
        if head_len > HEADER_LEN as u64 && head_len + batch_len > self.options.segment_size {
            self.rotate()?;
        }
        let mut offset = self.head_len();
        let written = if shared.is_empty() {
            segment::write_at(&self.head.file, &self.encoded, offset)
        } else {
            let mut parts: Vec<&[u8]> = Vec::with_capacity(shared.len() * 2 + 1);
            let mut from = 0;
            for (at, message) in &shared {
                parts.push(&self.encoded[from..*at]);
                parts.push(message);
                from = *at;
            }
            parts.push(&self.encoded[from..]);
            segment::write_parts_at(&self.head.file, &parts, offset)
        };
        if let Err(error) = written {
            return Err(self.failed_write(offset, error));
        }
        // The records' frames follow the group frame.
        offset += group_len as u64;
        if let Some(head) = self.segments.get_mut(&self.head.id) {
            head.len += batch_len;
        }
        self.head.allocated = self.head.allocated.max(offset + batch_len);
        for (record, &len) in records.iter().zip(&self.frame_lens) {
            let location = Location {
                segment: self.head.id,
                offset,
                len,
            };
            self.index.apply_record(record, location);
            offset += len;
        }
        self.last = Lsn(self.last.0 + (records.len() + marks.len()) as u64);
        // One huge batch (a compaction rewrite, say) should not pin its buffer for good.
        self.encoded.shrink_to(KEPT_BUFFER_CAPACITY);
        Ok(self.last)
    }

    /// Seals the head (cut back to its data and synced, so only the newest segment can ever
    /// have a torn or zero tail) and starts a new one.
    fn rotate(&mut self) -> Result<(), StoreError> {
        let path = self.head.id.path_in(&self.dir);
        let len = self.head_len();
        if self.head.allocated > len
            && let Err(error) = self.head.file.set_len(len)
        {
            return Err(self.poison.set(StoreError::io("truncate", path, error)));
        }
        if let Err(error) = self.head.file.sync_data() {
            return Err(self.poison.set(StoreError::io("sync", path, error)));
        }
        self.head.allocated = len;
        if let Some(summarizer) = &self.summarizer {
            summarizer.summarize(self.head.id);
        }
        let id = self.head.id.next();
        let first_lsn = self.last.next();
        let file = match segment::create(&self.dir, id, first_lsn) {
            Ok(file) => file,
            Err(error) => return Err(self.failed_create(id, error)),
        };
        let len = HEADER_LEN as u64;
        self.segments.insert(id, SegmentInfo { first_lsn, len });
        self.head = Head {
            id,
            file,
            allocated: len,
        };
        Ok(())
    }
}

impl FileStorage {
    /// A write of the head at `offset` failed. Out of space, the file is cut back to `offset`
    /// and the cut synced (a crash must not leave frames of a refused append to be read back),
    /// and the append is refused without poisoning the store; any other failure poisons it.
    fn failed_write(&mut self, offset: u64, error: io::Error) -> StoreError {
        let path = self.head.id.path_in(&self.dir);
        if !space::is_out_of_space(&error) {
            return self.poison.set(StoreError::io("write", path, error));
        }
        let cut = self
            .head
            .file
            .set_len(offset)
            .and_then(|()| self.head.file.sync_data());
        if let Err(cut) = cut {
            return self.poison.set(StoreError::io("truncate", path, cut));
        }
        self.head.allocated = offset;
        space::full("write", &path, &error)
    }

    /// Creating segment `id` failed. Out of space, what was created of it is deleted and the
    /// head stays as it is (sealed: the next append tries again); any other failure poisons.
    fn failed_create(&mut self, id: SegmentId, error: StoreError) -> StoreError {
        let out_of_space =
            matches!(&error, StoreError::Io { source, .. } if space::is_out_of_space(source));
        if !out_of_space {
            return self.poison.set(error);
        }
        match segment::remove(&self.dir, id) {
            Ok(()) => {}
            Err(StoreError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {}
            Err(removal) => return self.poison.set(removal),
        }
        let path = id.path_in(&self.dir);
        StoreError::Full {
            detail: format!("cannot create {}: {error}", path.display()),
        }
    }
}

impl FileStorage {
    /// The recovery `open` built if it is still current, or reads the journal again.
    fn rescan(&mut self, keep: Option<MessagePart>) -> Result<Recovered, StoreError> {
        self.poison.check()?;
        let mut recovered = Recovered::default();
        // Summaries hold what `index_part` keeps: they serve a recovery keeping the same.
        let summaries = self
            .index_part
            .zip(keep)
            .is_some_and(|(summarized, keep)| std::ptr::fn_addr_eq(summarized, keep));
        // What `open` built is current while nothing was appended since.
        if let Some(opened) = self.opened.take()
            && summaries
            && opened.durable == self.last
        {
            return Ok(opened);
        }
        let mode = ScanMode::UpTo(self.durable);
        scan::scan(&self.dir, mode, summaries, |_, _, entry, summarized| {
            replay(&mut recovered, entry, keep, summarized);
        })?;
        recovered.durable = self.durable;
        Ok(recovered)
    }
}

impl Storage for FileStorage {
    fn append(&mut self, records: &[Record]) -> Result<Lsn, StoreError> {
        self.write_batch(records, &BTreeMap::new())
    }

    fn sync(&mut self) -> Result<Lsn, StoreError> {
        self.poison.check()?;
        if self.durable == self.last {
            return Ok(self.durable);
        }
        if let Err(error) = self.head.file.sync_data() {
            let path = self.head.id.path_in(&self.dir);
            return Err(self.poison.set(StoreError::io("sync", path, error)));
        }
        self.durable = self.last;
        Ok(self.durable)
    }

    fn recover(&mut self) -> Result<Recovered, StoreError> {
        self.rescan(None)
    }

    /// Reads the journal one segment at a time, each segment's buffer gone once it is read.
    fn recover_keeping(&mut self, keep: MessagePart) -> Result<Recovered, StoreError> {
        self.rescan(Some(keep))
    }

    fn reader(&self) -> Result<Arc<dyn MessageReader>, StoreError> {
        Ok(Arc::new(FileReader {
            messages: self.index.shared_messages(),
            files: Arc::clone(&self.files),
        }))
    }

    fn compact(&mut self) -> Result<CompactionReport, StoreError> {
        self.compact_step()
    }

    fn check_room(&mut self) -> Result<(), StoreError> {
        space::check_room(&self.dir)
    }

    /// Tops the head's zeros up to `PREALLOCATE_AHEAD` past its data (never past
    /// `segment_size`). A failure leaves at most some extra zeros, which read as the end of the
    /// log, so it does not poison the store.
    fn preallocate(&mut self) -> Result<(), StoreError> {
        self.poison.check()?;
        let len = self.head_len();
        let target = (len + PREALLOCATE_AHEAD).min(self.options.segment_size);
        if self.head.allocated >= target.min(len + PREALLOCATE_AHEAD / 2) {
            return Ok(());
        }
        let from = self.head.allocated.max(len);
        if let Err(error) = segment::write_zeros(&self.head.file, from, target) {
            let path = self.head.id.path_in(&self.dir);
            return Err(StoreError::io("preallocate", path, error));
        }
        self.head.allocated = target;
        Ok(())
    }
}
