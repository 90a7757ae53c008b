//! The file store and its disk's free space: new messages are refused while less than a reserve
//! is free, so that settlements (which free space) and compaction still find room; and a write
//! the disk cannot hold is refused as [`StoreError::Full`] without poisoning the store.

use std::io;
use std::path::Path;

use crate::error::StoreError;

/// The most kept free for settlements and compaction.
const MAX_RESERVE: u64 = 64 * 1024 * 1024;
/// On a disk smaller than ten times [`MAX_RESERVE`], a tenth of it is kept instead.
const RESERVE_SHARE: u64 = 10;

/// `Err(Full)` while the disk holding `dir` has less free space than the reserve for its size.
/// A failing `statvfs` refuses nothing: the writes themselves will tell.
pub(super) fn check_room(dir: &Path) -> Result<(), StoreError> {
    let Ok(stat) = rustix::fs::statvfs(dir) else {
        return Ok(());
    };
    let available = stat.f_bavail.saturating_mul(stat.f_frsize);
    let reserve = (stat.f_blocks.saturating_mul(stat.f_frsize) / RESERVE_SHARE).min(MAX_RESERVE);
    if available >= reserve {
        return Ok(());
    }
    Err(StoreError::Full {
        detail: format!(
            "the disk holding {} has {} free, less than the {} kept for settlements; \
             new messages are refused until space is freed",
            dir.display(),
            mebibytes(available),
            mebibytes(reserve)
        ),
    })
}

/// Whether `error` says the disk, or the user's quota on it, is full.
pub(super) fn is_out_of_space(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}

/// The refusal of a `operation` on `path` that ran out of space.
pub(super) fn full(operation: &str, path: &Path, error: &io::Error) -> StoreError {
    StoreError::Full {
        detail: format!("{operation} {}: {error}", path.display()),
    }
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}
