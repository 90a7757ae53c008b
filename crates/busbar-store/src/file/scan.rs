//! Reading the journal back: segments in order, frames validated, a torn tail cut off.

use std::path::Path;
use std::sync::mpsc;

use crate::error::StoreError;
use bytes::Bytes;

use crate::file::format::{self, Entry, Frame, FrameError, HEADER_LEN, HeaderError};
use crate::file::index::Location;
use crate::file::segment::{self, SegmentId};
use crate::file::summary::{self, Summary};
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

/// Calls `visit` for every valid record in log order, with whether it was read from a segment
/// summary (see `summary.rs`; only with `summaries`, for sealed segments that have a whole one:
/// a new message's immutable part is then its kept form) rather than from the segment.
///
/// A bad frame or header in the last segment is a write that never completed (every earlier
/// segment was synced before the next one was created), so the scan stops there. Anywhere else
/// it is corruption of synced data and fails with [`StoreError::Corrupt`].
pub(crate) fn scan(
    dir: &Path,
    mode: ScanMode,
    summaries: bool,
    visit: impl FnMut(Lsn, Location, Entry, bool),
) -> Result<Scan, StoreError> {
    let ids = segment::list(dir)?;
    std::thread::scope(|scope| {
        // Only sealed segments have summaries: the last one may still grow.
        let sealed = match ids.split_last() {
            Some((_, sealed)) if summaries => sealed.to_vec(),
            _ => Vec::new(),
        };
        let summaries = summaries.then(|| summary::read_ahead(scope, dir, sealed));
        scan_segments(dir, mode, &ids, summaries, visit)
    })
}

/// [`scan`] of segments `ids`, with the summaries of all but the last as `summaries` gives them.
fn scan_segments(
    dir: &Path,
    mode: ScanMode,
    ids: &[SegmentId],
    summaries: Option<mpsc::Receiver<Option<Summary>>>,
    mut visit: impl FnMut(Lsn, Location, Entry, bool),
) -> Result<Scan, StoreError> {
    let mut found = Scan::default();
    let mut next_lsn: Option<Lsn> = None;
    for (index, &id) in ids.iter().enumerate() {
        let is_last = index + 1 == ids.len();
        let path = id.path_in(dir);
        if !is_last && let Some(summary) = summaries.as_ref().and_then(|ahead| ahead.recv().ok()?) {
            if next_lsn.is_some_and(|expected| expected != summary.first_lsn) {
                return Err(StoreError::Corrupt {
                    file: path,
                    offset: 0,
                    reason: "segment does not continue the previous one (a segment is missing)",
                });
            }
            let mut lsn = summary.first_lsn;
            let mut stopped = false;
            summary
                .for_each(id, |location, entry| {
                    if let ScanMode::UpTo(limit) = mode
                        && lsn > limit
                    {
                        stopped = true;
                        return false;
                    }
                    visit(lsn, location, entry, true);
                    lsn = lsn.next();
                    true
                })
                .map_err(|error| StoreError::Corrupt {
                    file: summary::path_of(dir, id),
                    offset: 0,
                    reason: error.reason(),
                })?;
            if stopped {
                found.last = Lsn(lsn.0.saturating_sub(1));
                return Ok(found);
            }
            found.segments.push(ScannedSegment {
                id,
                first_lsn: summary.first_lsn,
                len: summary.segment_len,
            });
            next_lsn = Some(lsn);
            continue;
        }
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
            match read_unit(&data, offset) {
                Ok((unit, len)) => {
                    for Located { at, len, entry } in unit.single.into_iter().chain(unit.group) {
                        if let ScanMode::UpTo(limit) = mode
                            && lsn > limit
                        {
                            found.last = Lsn(lsn.0.saturating_sub(1));
                            return Ok(found);
                        }
                        let location = Location {
                            segment: id,
                            offset: at as u64,
                            len: len as u64,
                        };
                        visit(lsn, location, entry, false);
                        lsn = lsn.next();
                    }
                    offset += len;
                }
                Err(_) if is_last => {
                    if let ScanMode::Repair = mode {
                        segment::truncate(&path, offset as u64)?;
                    }
                    break;
                }
                Err((at, error)) => {
                    return Err(StoreError::Corrupt {
                        file: path,
                        offset: at as u64,
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

/// One frame where a scan found it.
struct Located {
    at: usize,
    len: usize,
    entry: Entry,
}

/// What one append left: a single frame, or the frames of a group, which count only together.
struct Unit {
    single: Option<Located>,
    group: Vec<Located>,
}

/// Reads the unit starting at `offset` and returns it with its length in bytes; a bad frame
/// anywhere in it fails the whole unit, with the offset of the bad frame.
fn read_unit(data: &Bytes, offset: usize) -> Result<(Unit, usize), (usize, FrameError)> {
    let (frame, len) = format::decode_frame(data, offset).map_err(|error| (offset, error))?;
    let span = match frame {
        Frame::Entry(entry) => {
            let single = Some(Located {
                at: offset,
                len,
                entry,
            });
            return Ok((
                Unit {
                    single,
                    group: Vec::new(),
                },
                len,
            ));
        }
        Frame::Group { len: span } => span,
    };
    let start = offset + len;
    let end = usize::try_from(span)
        .ok()
        .and_then(|span| start.checked_add(span))
        .filter(|&end| end <= data.len())
        .ok_or((offset, FrameError::Truncated))?;
    let mut group = Vec::new();
    let mut at = start;
    while at < end {
        let (entry, len) = format::decode_entry(data, at).map_err(|error| (at, error))?;
        group.push(Located { at, len, entry });
        at += len;
    }
    if at != end {
        // The last frame runs past the group's announced end.
        return Err((offset, FrameError::Malformed));
    }
    Ok((
        Unit {
            single: None,
            group,
        },
        end - offset,
    ))
}
