//! `FileReader`: reads messages' immutable parts straight from the segment files, beside the
//! writer, with adjacent frames read together.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use super::format::{self, Entry};
use super::index::{Location, SharedMessages};
use super::segment::SegmentId;
use crate::error::StoreError;
use crate::reader::MessageReader;
use crate::record::{EntityId, MessageKey, Record};

/// Frames closer than this are read with one call, the bytes between them read and dropped:
/// between two appends' inserts lie only their group frames and a few state records.
const MAX_GAP: u64 = 16 * 1024;
/// The most one read call asks for, so a read-ahead batch does not pin a huge buffer.
const MAX_RUN: u64 = 1024 * 1024;

/// Read handles of the segment files, opened on first use and shared by every reader.
///
/// A handle keeps its segment readable after compaction deletes the file, so a reader that
/// found a message's location before the message was moved still reads it; compaction
/// [`forget`](SegmentFiles::forget)s a deleted segment's handle once no index entry leads there.
#[derive(Debug)]
pub(crate) struct SegmentFiles {
    dir: PathBuf,
    open: Mutex<BTreeMap<SegmentId, Arc<File>>>,
}

impl SegmentFiles {
    pub(crate) fn new(dir: PathBuf) -> SegmentFiles {
        SegmentFiles {
            dir,
            open: Mutex::new(BTreeMap::new()),
        }
    }

    fn get(&self, segment: SegmentId) -> Result<Arc<File>, StoreError> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(file) = open.get(&segment) {
            return Ok(Arc::clone(file));
        }
        let path = segment.path_in(&self.dir);
        let file = Arc::new(File::open(&path).map_err(|e| StoreError::io("open", &path, e))?);
        open.insert(segment, Arc::clone(&file));
        Ok(file)
    }

    /// Drops the handle of a deleted segment (readers still holding it finish their reads).
    pub(crate) fn forget(&self, segment: SegmentId) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.remove(&segment);
    }
}

/// A [`MessageReader`] over a [`FileStorage`](super::FileStorage)'s live index and segments.
#[derive(Debug)]
pub(crate) struct FileReader {
    pub(crate) messages: SharedMessages,
    pub(crate) files: Arc<SegmentFiles>,
}

/// An insert frame to read: where it is and a handle of its segment.
#[derive(Clone)]
struct Located {
    location: Location,
    file: Arc<File>,
}

impl FileReader {
    /// Resolves each insert location to a handle. Called while the index is read-locked: the
    /// writer deletes a segment only after the index stopped leading there, so the file opened
    /// here exists, and its handle stays readable after.
    fn locate(&self, location: Location) -> Result<Located, StoreError> {
        Ok(Located {
            location,
            file: self.files.get(location.segment)?,
        })
    }

    /// Reads the immutable part of each located insert, in order, with one call per run of
    /// nearby frames of one segment.
    fn read_located(&self, located: &[Located]) -> Result<Vec<Bytes>, StoreError> {
        let mut messages = Vec::with_capacity(located.len());
        let mut start = 0;
        while start < located.len() {
            let end = run_end(located, start);
            let first = located[start].location;
            let last = located[end - 1].location;
            let span = last.offset + last.len - first.offset;
            let bytes = self.read_span(&located[start].file, first, span)?;
            for item in &located[start..end] {
                let at = usize::try_from(item.location.offset - first.offset).unwrap_or(0);
                messages.push(self.decode_insert(&bytes, at, item.location)?);
            }
            start = end;
        }
        Ok(messages)
    }

    fn read_span(&self, file: &File, first: Location, span: u64) -> Result<Bytes, StoreError> {
        let path = first.segment.path_in(&self.files.dir);
        let len = usize::try_from(span).map_err(|_| StoreError::Corrupt {
            file: path.clone(),
            offset: first.offset,
            reason: "frame length out of range",
        })?;
        let mut buffer = vec![0u8; len];
        file.read_exact_at(&mut buffer, first.offset)
            .map_err(|e| StoreError::io("read", &path, e))?;
        Ok(Bytes::from(buffer))
    }

    fn decode_insert(
        &self,
        bytes: &Bytes,
        at: usize,
        location: Location,
    ) -> Result<Bytes, StoreError> {
        let corrupt = |reason| StoreError::Corrupt {
            file: location.segment.path_in(&self.files.dir),
            offset: location.offset,
            reason,
        };
        match format::decode_entry(bytes, at) {
            Ok((Entry::Record(Record::Insert { message, .. }), _)) => Ok(message),
            Ok(_) => Err(corrupt("indexed frame is not an insert")),
            Err(error) => Err(corrupt(error.reason())),
        }
    }
}

/// The end (exclusive) of the run of frames starting at `start` that one read covers.
fn run_end(located: &[Located], start: usize) -> usize {
    let first = located[start].location;
    let mut end = start + 1;
    let mut reach = first.offset + first.len;
    while let Some(next) = located.get(end).map(|item| item.location) {
        let near = next.segment == first.segment
            && next.offset >= reach
            && next.offset - reach <= MAX_GAP
            && next.offset + next.len - first.offset <= MAX_RUN;
        if !near {
            break;
        }
        reach = next.offset + next.len;
        end += 1;
    }
    end
}

impl MessageReader for FileReader {
    fn read(&self, keys: &[MessageKey]) -> Result<Vec<Option<Bytes>>, StoreError> {
        let located = {
            let messages = self.messages.read();
            keys.iter()
                .map(|key| messages.get(key).map(|frames| self.locate(frames.insert())))
                .map(Option::transpose)
                .collect::<Result<Vec<_>, _>>()?
        };
        let found: Vec<Located> = located.iter().flatten().cloned().collect();
        let mut read = self.read_located(&found)?.into_iter();
        Ok(located
            .iter()
            .map(|item| item.as_ref().and_then(|_| read.next()))
            .collect())
    }

    fn scan(
        &self,
        entity: EntityId,
        from: i64,
        limit: usize,
    ) -> Result<Vec<(i64, Bytes)>, StoreError> {
        let (sequences, located): (Vec<i64>, Vec<Located>) = {
            let messages = self.messages.read();
            messages
                .scan(entity, from)
                .take(limit)
                .map(|(sequence, frames)| Ok((sequence, self.locate(frames.insert())?)))
                .collect::<Result<Vec<_>, StoreError>>()?
                .into_iter()
                .unzip()
        };
        let read = self.read_located(&located)?;
        Ok(sequences.into_iter().zip(read).collect())
    }
}
