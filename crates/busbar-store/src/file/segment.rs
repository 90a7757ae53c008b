//! Segment files: naming, listing, whole-file reads and directory syncs.

use std::fs::{self, File, OpenOptions};
use std::io::{IoSlice, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::error::StoreError;
use crate::file::format;
use crate::record::Lsn;

const SUFFIX: &str = ".seg";
/// Zeros written per call when preallocating.
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
const LOCK_FILE: &str = "LOCK";

/// Orders segments: a newer segment has a larger id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct SegmentId(pub(crate) u64);

impl SegmentId {
    pub(crate) fn next(self) -> SegmentId {
        SegmentId(self.0 + 1)
    }

    pub(crate) fn path_in(self, dir: &Path) -> PathBuf {
        dir.join(format!("{:016x}{SUFFIX}", self.0))
    }

    fn parse(file_name: &str) -> Option<SegmentId> {
        let hex = file_name.strip_suffix(SUFFIX)?;
        if hex.len() != 16 {
            return None;
        }
        u64::from_str_radix(hex, 16).ok().map(SegmentId)
    }
}

/// The segment files in `dir`, oldest first. Other files are ignored.
pub(crate) fn list(dir: &Path) -> Result<Vec<SegmentId>, StoreError> {
    let entries = fs::read_dir(dir).map_err(|e| StoreError::io("list", dir, e))?;
    let mut ids = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| StoreError::io("list", dir, e))?;
        if let Some(id) = entry.file_name().to_str().and_then(SegmentId::parse) {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// Reads a whole segment in one buffer, so recovery makes no per-record system calls.
pub(crate) fn read_all(path: &Path) -> Result<Bytes, StoreError> {
    let mut file = File::open(path).map_err(|e| StoreError::io("open", path, e))?;
    // Sized up front: growing a 64 MiB buffer by doubling would copy it several times.
    let len = file.metadata().map_or(0, |m| m.len());
    let mut data = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut data)
        .map_err(|e| StoreError::io("read", path, e))?;
    Ok(Bytes::from(data))
}

/// Creates a segment holding only its header, durable (file and directory entry) on return.
/// Writes to the returned file go to explicit offsets (see [`write_at`]).
pub(crate) fn create(dir: &Path, id: SegmentId, first_lsn: Lsn) -> Result<File, StoreError> {
    let path = id.path_in(dir);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| StoreError::io("create", &path, e))?;
    file.write_all(&format::encode_header(first_lsn))
        .map_err(|e| StoreError::io("write", &path, e))?;
    file.sync_data()
        .map_err(|e| StoreError::io("sync", &path, e))?;
    sync_dir(dir)?;
    Ok(file)
}

/// Opens an existing segment for writing at explicit offsets (see [`write_at`]).
pub(crate) fn open_for_writing(path: &Path) -> Result<File, StoreError> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| StoreError::io("open", path, e))
}

/// Writes all of `bytes` at `offset`. Offsets rather than append mode, because the head may
/// already extend past its data with preallocated zeros.
pub(crate) fn write_at(file: &File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    file.write_all_at(bytes, offset)
}

/// Most buffers one `pwritev` takes (Linux's `IOV_MAX`).
const MAX_SLICES: usize = 1024;

/// Writes `parts` one after another from `offset`, all of them (see [`write_at`]), without
/// first copying them into one buffer.
pub(crate) fn write_parts_at(file: &File, parts: &[&[u8]], offset: u64) -> std::io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = parts
        .iter()
        .filter(|part| !part.is_empty())
        .map(|part| IoSlice::new(part))
        .collect();
    let mut slices = &mut slices[..];
    let mut offset = offset;
    while !slices.is_empty() {
        let batch = &slices[..slices.len().min(MAX_SLICES)];
        let written = match rustix::io::pwritev(file, batch, offset) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => written,
            Err(rustix::io::Errno::INTR) => continue,
            Err(error) => return Err(error.into()),
        };
        offset += written as u64;
        IoSlice::advance_slices(&mut slices, written);
    }
    Ok(())
}

/// Writes zeros over `from..to` (not synced: the next sync of the file carries them).
pub(crate) fn write_zeros(file: &File, from: u64, to: u64) -> std::io::Result<()> {
    let mut offset = from;
    while offset < to {
        let len = usize::try_from(to - offset).map_or(ZEROS.len(), |len| len.min(ZEROS.len()));
        file.write_all_at(&ZEROS[..len], offset)?;
        offset += len as u64;
    }
    Ok(())
}

/// Cuts a segment at `len` bytes (dropping a torn tail) and makes the cut durable.
pub(crate) fn truncate(path: &Path, len: u64) -> Result<(), StoreError> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| StoreError::io("open", path, e))?;
    file.set_len(len)
        .map_err(|e| StoreError::io("truncate", path, e))?;
    file.sync_all().map_err(|e| StoreError::io("sync", path, e))
}

/// Deletes a segment and makes the deletion durable.
pub(crate) fn remove(dir: &Path, id: SegmentId) -> Result<(), StoreError> {
    let path = id.path_in(dir);
    fs::remove_file(&path).map_err(|e| StoreError::io("delete", &path, e))?;
    sync_dir(dir)
}

/// Takes the directory's exclusive lock (released when the returned file is closed, including
/// by the process dying), so that only one store writes a journal.
pub(crate) fn lock_dir(dir: &Path) -> Result<File, StoreError> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StoreError::io("open", &path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::InUse {
            dir: dir.to_path_buf(),
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(StoreError::io("lock", &path, e)),
    }
}

/// Makes creations, renames and deletions in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| StoreError::io("sync directory", dir, e))
}
