//! Segment summaries: a sealed segment's entries without the message bytes a restart does not
//! need, so that recovering a deep backlog reads a few bytes per message instead of the
//! journal.
//!
//! A summary holds every entry of one sealed segment, in order, each with where its frame lies
//! in the segment; a new message's immutable part is cut to what the storage was opened to
//! keep ([`FileStorage::open_with_index`](super::FileStorage::open_with_index)), its index
//! form. It is written by a background thread once the segment is sealed (sealed segments never
//! change), to a temporary file that is synced and renamed, and checked whole (a CRC over its
//! body, the segment's first position and length) before it is used: a summary that is missing,
//! damaged or stale only means that segment is read instead. Compaction deletes it with its
//! segment; one left behind by a crash in between is deleted at the next open.

use std::fs::{self, File};
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use bytes::{Buf, Bytes};

use crate::error::StoreError;
use crate::file::format::{self, Entry, Frame, FrameError};
use crate::file::index::Location;
use crate::file::segment::SegmentId;
use crate::record::{Lsn, Record};
use crate::storage::MessagePart;

const MAGIC: [u8; 8] = *b"BUSBARS\0";
const VERSION: u32 = 1;
/// Magic, version, the segment's first position and length, the body's length and CRC32C.
const HEADER_LEN: usize = 8 + 4 + 8 + 8 + 8 + 4;
const SUFFIX: &str = ".sum";
/// Each entry's place in the segment, before its frame: offset (u64) and length (u32).
const PLACE_LEN: usize = 12;

/// Where the summary of segment `id` is kept.
pub(crate) fn path_of(dir: &Path, id: SegmentId) -> PathBuf {
    dir.join(format!("{:016x}{SUFFIX}", id.0))
}

/// The segment a summary file name belongs to.
fn segment_of(file_name: &str) -> Option<SegmentId> {
    let hex = file_name.strip_suffix(SUFFIX)?;
    (hex.len() == 16)
        .then(|| u64::from_str_radix(hex, 16).ok().map(SegmentId))
        .flatten()
}

/// A summary read back and checked whole.
pub(crate) struct Summary {
    pub(crate) first_lsn: Lsn,
    pub(crate) segment_len: u64,
    body: Bytes,
}

impl Summary {
    /// Reads the summary of segment `id`, if there is one that is whole and matches the
    /// segment as it is on disk (its length); `None` otherwise.
    pub(crate) fn read(dir: &Path, id: SegmentId) -> Option<Summary> {
        let data = fs::read(path_of(dir, id)).ok()?;
        let mut header = data.get(..HEADER_LEN)?;
        if header.get(..8)? != MAGIC {
            return None;
        }
        header.advance(8);
        let version = header.get_u32_le();
        let first_lsn = Lsn(header.get_u64_le());
        let segment_len = header.get_u64_le();
        let body_len = usize::try_from(header.get_u64_le()).ok()?;
        let crc = header.get_u32_le();
        let body = data.get(HEADER_LEN..)?;
        if version != VERSION || body.len() != body_len || crc32c::crc32c(body) != crc {
            return None;
        }
        let on_disk = fs::metadata(id.path_in(dir)).ok()?.len();
        (on_disk == segment_len).then(|| Summary {
            first_lsn,
            segment_len,
            body: Bytes::from(data).slice(HEADER_LEN..),
        })
    }

    /// Calls `visit` with each entry in log order and where its frame lies in segment `id`.
    /// Byte fields are slices of the summary's buffer.
    pub(crate) fn for_each(
        &self,
        id: SegmentId,
        mut visit: impl FnMut(Location, Entry) -> bool,
    ) -> Result<(), FrameError> {
        let mut at = 0;
        while at < self.body.len() {
            let mut place = self
                .body
                .get(at..at + PLACE_LEN)
                .ok_or(FrameError::Truncated)?;
            let offset = place.get_u64_le();
            let len = u64::from(place.get_u32_le());
            let (entry, frame_len) = format::decode_checked_entry(&self.body, at + PLACE_LEN)?;
            let location = Location {
                segment: id,
                offset,
                len,
            };
            if !visit(location, entry) {
                return Ok(());
            }
            at += PLACE_LEN + frame_len;
        }
        Ok(())
    }
}

/// Reads the summaries of segments `ids`, in order, on a thread of `scope` a few summaries
/// ahead of the receiver, so that reading and checking one overlaps with using the one before;
/// `None` for a segment without a usable one. The thread stops once the receiver is dropped.
pub(crate) fn read_ahead<'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    dir: &'scope Path,
    ids: Vec<SegmentId>,
) -> mpsc::Receiver<Option<Summary>> {
    let (summaries, received) = mpsc::sync_channel(2);
    scope.spawn(move || {
        for id in ids {
            if summaries.send(Summary::read(dir, id)).is_err() {
                return;
            }
        }
    });
    received
}

/// Writes the summary of sealed segment `id`, keeping of each new message what `keep` makes of
/// it; durable (synced, then renamed into place) on return. The segment is read one frame at a
/// time (a whole 64 MiB segment in memory would be a spike of its own beside a small budget).
fn write(dir: &Path, id: SegmentId, keep: MessagePart) -> Result<(), StoreError> {
    let path = id.path_in(dir);
    let corrupt = |offset: u64, reason: &'static str| StoreError::Corrupt {
        file: path.clone(),
        offset,
        reason,
    };
    let file = File::open(&path).map_err(|e| StoreError::io("open", &path, e))?;
    let mut segment = BufReader::with_capacity(1 << 20, file);
    let mut header = [0; format::HEADER_LEN];
    segment
        .read_exact(&mut header)
        .map_err(|e| StoreError::io("read", &path, e))?;
    let first_lsn =
        format::decode_header(&header).map_err(|_| corrupt(0, "segment header is damaged"))?;
    let mut body = Vec::new();
    let mut offset = format::HEADER_LEN as u64;
    while let Some(frame) =
        next_frame(&mut segment).map_err(|e| StoreError::io("read", &path, e))?
    {
        let (frame, len) =
            format::decode_frame(&frame, 0).map_err(|error| corrupt(offset, error.reason()))?;
        // A group frame only says its members count together: they follow as frames of their own.
        if let Frame::Entry(entry) = frame {
            body.extend_from_slice(&offset.to_le_bytes());
            body.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_le_bytes());
            summarize_entry(&mut body, entry, keep);
        }
        offset += len as u64;
    }
    let mut header = Vec::with_capacity(HEADER_LEN);
    header.extend_from_slice(&MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&first_lsn.0.to_le_bytes());
    header.extend_from_slice(&offset.to_le_bytes());
    header.extend_from_slice(&(body.len() as u64).to_le_bytes());
    header.extend_from_slice(&crc32c::crc32c(&body).to_le_bytes());
    let target = path_of(dir, id);
    let temporary = target.with_extension("sum.tmp");
    let written = File::create(&temporary).and_then(|mut file| {
        file.write_all(&header)?;
        file.write_all(&body)?;
        file.sync_data()
    });
    written
        .and_then(|()| fs::rename(&temporary, &target))
        .map_err(|error| {
            let _ = fs::remove_file(&temporary);
            StoreError::io("write summary", &target, error)
        })
}

/// The next whole frame of a segment being read from its first frame on; `None` at its end.
fn next_frame(segment: &mut impl Read) -> std::io::Result<Option<Bytes>> {
    let mut header = [0; format::FRAME_HEADER_LEN];
    match segment.read_exact(&mut header) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    let payload_len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as usize;
    if payload_len > format::MAX_PAYLOAD {
        return Err(std::io::Error::other("frame longer than a record may be"));
    }
    let mut frame = Vec::with_capacity(format::FRAME_HEADER_LEN + payload_len);
    frame.extend_from_slice(&header);
    frame.resize(format::FRAME_HEADER_LEN + payload_len, 0);
    segment.read_exact(&mut frame[format::FRAME_HEADER_LEN..])?;
    Ok(Some(Bytes::from(frame)))
}

/// Appends `entry`'s frame to a summary's body, a new message cut to what `keep` makes of it.
fn summarize_entry(body: &mut Vec<u8>, entry: Entry, keep: MessagePart) {
    match entry {
        Entry::Record(Record::Insert {
            key,
            message,
            state,
        }) => {
            let kept = Record::Insert {
                key,
                message: keep(&message),
                state,
            };
            format::encode_record(body, &kept);
        }
        Entry::Record(record) => {
            format::encode_record(body, &record);
        }
        Entry::HighWater { entity, sequence } => {
            format::encode_high_water(body, entity, sequence);
        }
    }
}

/// Deletes the summary of segment `id`, if any.
pub(crate) fn remove(dir: &Path, id: SegmentId) {
    let _ = fs::remove_file(path_of(dir, id));
}

/// Deletes summaries (and unfinished ones) whose segment is gone: compaction removed it after
/// the summary was queued, or a crash came between the two deletions.
pub(crate) fn remove_orphans(dir: &Path, segments: &[SegmentId]) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let orphan = name.ends_with(".sum.tmp")
            || segment_of(name).is_some_and(|id| segments.binary_search(&id).is_err());
        if orphan {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The background thread that writes summaries of sealed segments, in the order they are
/// queued. Dropping it waits for the queued ones.
#[derive(Debug)]
pub(crate) struct Summarizer {
    queue: Option<mpsc::Sender<SegmentId>>,
    thread: Option<JoinHandle<()>>,
}

impl Summarizer {
    pub(crate) fn spawn(dir: PathBuf, keep: MessagePart) -> Summarizer {
        let (queue, sealed) = mpsc::channel::<SegmentId>();
        let thread = std::thread::Builder::new()
            .name("busbar-summaries".to_owned())
            .spawn(move || {
                for id in sealed {
                    // A segment compacted away meanwhile cannot be read: nothing to summarize.
                    if let Err(error) = write(&dir, id, keep)
                        && id.path_in(&dir).exists()
                    {
                        tracing::warn!(%error, "no summary for a sealed segment; a restart reads it whole");
                    }
                }
            })
            .ok();
        Summarizer {
            queue: thread.is_some().then_some(queue),
            thread,
        }
    }

    /// Queues sealed segment `id` for a summary.
    pub(crate) fn summarize(&self, id: SegmentId) {
        if let Some(queue) = &self.queue {
            let _ = queue.send(id);
        }
    }
}

impl Drop for Summarizer {
    fn drop(&mut self) {
        self.queue = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
