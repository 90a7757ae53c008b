//! Reading the journal back: segments in order, frames validated, a torn tail cut off.

use std::path::Path;

use crate::error::StoreError;
use crate::file::format::{self, Entry, HEADER_LEN, HeaderError};
use crate::file::index::Location;
use crate::file::segment::{self, SegmentId};
use crate::record::Lsn;

/// One segment as found by a scan.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScannedSegment {
    pub(crate) id: SegmentId,
    pub(crate) first_lsn: Lsn,
    /// Bytes of valid data (header included); the append position.
    pub(crate) len: u64,
}

/// What a scan found.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    pub(crate) segments: Vec<ScannedSegment>,
    /// The position of the last valid record (or the one before the first segment's first).
    pub(crate) last: Lsn,
}

/// How a scan treats the journal.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ScanMode {
    /// At start-up: cut the last segment at its first bad frame (and delete it if even its
    /// header is incomplete), durably, so new appends follow valid data.
    Repair,
    /// While running: read only, and stop after the record at this position.
    UpTo(Lsn),
}

/// Calls `visit` for every valid record in log order.
///
/// A bad frame or header in the last segment is a write that never completed (every earlier
/// segment was synced before the next one was created), so the scan stops there. Anywhere else
/// it is corruption of synced data and fails with [`StoreError::Corrupt`].
pub(crate) fn scan(
    dir: &Path,
    mode: ScanMode,
    mut visit: impl FnMut(Lsn, Location, Entry),
) -> Result<Scan, StoreError> {
    let ids = segment::list(dir)?;
    let mut found = Scan::default();
    let mut next_lsn: Option<Lsn> = None;
    for (index, &id) in ids.iter().enumerate() {
        let is_last = index + 1 == ids.len();
        let path = id.path_in(dir);
        let data = segment::read_all(&path)?;
        let first_lsn = match format::decode_header(&data) {
            Ok(first_lsn) => first_lsn,
            Err(HeaderError::Version(version)) => {
                return Err(StoreError::UnsupportedVersion {
                    file: path,
                    version,
                    supported: format::FORMAT_VERSION,
                });
            }
            // Records are only written once the header is synced, so a last segment no longer
            // than a header is a creation that never completed; anything longer is damage.
            Err(HeaderError::Invalid) if is_last && data.len() <= HEADER_LEN => {
                if let ScanMode::Repair = mode {
                    segment::remove(dir, id)?;
                }
                break;
            }
            Err(HeaderError::Invalid) => {
                return Err(StoreError::Corrupt {
                    file: path,
                    offset: 0,
                    reason: "segment header is damaged",
                });
            }
        };
        if next_lsn.is_some_and(|expected| expected != first_lsn) {
            return Err(StoreError::Corrupt {
                file: path,
                offset: 0,
                reason: "segment does not continue the previous one (a segment is missing)",
            });
        }
        let mut lsn = first_lsn;
        let mut offset = HEADER_LEN;
        while offset < data.len() {
            if let ScanMode::UpTo(limit) = mode
                && lsn > limit
            {
                found.last = Lsn(lsn.0.saturating_sub(1));
                return Ok(found);
            }
            match format::decode_frame(&data, offset) {
                Ok((entry, len)) => {
                    let location = Location {
                        segment: id,
                        offset: offset as u64,
                        len: len as u64,
                    };
                    visit(lsn, location, entry);
                    lsn = lsn.next();
                    offset += len;
                }
                Err(_) if is_last => {
                    if let ScanMode::Repair = mode {
                        segment::truncate(&path, offset as u64)?;
                    }
                    break;
                }
                Err(error) => {
                    return Err(StoreError::Corrupt {
                        file: path,
                        offset: offset as u64,
                        reason: error.reason(),
                    });
                }
            }
        }
        found.segments.push(ScannedSegment {
            id,
            first_lsn,
            len: offset as u64,
        });
        next_lsn = Some(lsn);
    }
    found.last = next_lsn.map_or(Lsn(0), |next| Lsn(next.0.saturating_sub(1)));
    Ok(found)
}
