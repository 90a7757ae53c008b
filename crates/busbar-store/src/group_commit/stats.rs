//! What the group commits cost, counted without a lock: how long each sync took and how many
//! submissions each group held, in fixed-bucket histograms of `AtomicU64`s that a metrics
//! endpoint reads at scrape ([`GroupCommitHandle::stats`](super::GroupCommitHandle::stats)).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the sync-latency buckets, in microseconds (from 50 µs to 5 s).
pub const SYNC_MICROS_BOUNDS: [u64; 16] = [
    50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000,
];

/// Upper bounds of the group-size buckets, in submissions.
pub const GROUP_SIZE_BOUNDS: [u64; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// A histogram of `u64` observations over fixed upper bounds, with an overflow bucket.
#[derive(Debug)]
struct AtomicHistogram<const N: usize> {
    bounds: &'static [u64; N],
    /// `buckets[i]` counts observations `<= bounds[i]` and above the previous bound;
    /// `overflow` those above the last bound.
    buckets: [AtomicU64; N],
    overflow: AtomicU64,
    sum: AtomicU64,
}

impl<const N: usize> AtomicHistogram<N> {
    fn new(bounds: &'static [u64; N]) -> Self {
        AtomicHistogram {
            bounds,
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            overflow: AtomicU64::new(0),
            sum: AtomicU64::new(0),
        }
    }

    fn observe(&self, value: u64) {
        let index = self.bounds.partition_point(|&bound| bound < value);
        let bucket = self.buckets.get(index).unwrap_or(&self.overflow);
        bucket.fetch_add(1, Ordering::Relaxed);
        self.sum.fetch_add(value, Ordering::Relaxed);
    }

    fn snapshot(&self) -> HistogramCounts {
        let mut counts: Vec<u64> = self
            .buckets
            .iter()
            .map(|bucket| bucket.load(Ordering::Relaxed))
            .collect();
        counts.push(self.overflow.load(Ordering::Relaxed));
        HistogramCounts {
            bounds: self.bounds.to_vec(),
            count: counts.iter().sum(),
            counts,
            sum: self.sum.load(Ordering::Relaxed),
        }
    }
}

/// A histogram at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HistogramCounts {
    /// The buckets' upper bounds (inclusive), ascending.
    pub bounds: Vec<u64>,
    /// Observations in each bucket (not cumulative): one per bound, then those above the last.
    pub counts: Vec<u64>,
    /// The sum of the observations.
    pub sum: u64,
    /// How many observations there were.
    pub count: u64,
}

/// The group commits' histograms at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitStatsSnapshot {
    /// How long each successful sync took, in microseconds.
    pub sync_micros: HistogramCounts,
    /// How many submissions each group commit held.
    pub group_size: HistogramCounts,
}

/// The counters one [`GroupCommit`](super::GroupCommit) keeps.
#[derive(Debug)]
pub(super) struct CommitStats {
    sync_micros: AtomicHistogram<16>,
    group_size: AtomicHistogram<11>,
}

impl Default for CommitStats {
    fn default() -> Self {
        CommitStats {
            sync_micros: AtomicHistogram::new(&SYNC_MICROS_BOUNDS),
            group_size: AtomicHistogram::new(&GROUP_SIZE_BOUNDS),
        }
    }
}

impl CommitStats {
    /// Counts one group of `submissions` synced in `took`.
    pub(super) fn synced(&self, submissions: usize, took: Duration) {
        self.sync_micros
            .observe(u64::try_from(took.as_micros()).unwrap_or(u64::MAX));
        self.group_size
            .observe(u64::try_from(submissions).unwrap_or(u64::MAX));
    }

    pub(super) fn snapshot(&self) -> CommitStatsSnapshot {
        CommitStatsSnapshot {
            sync_micros: self.sync_micros.snapshot(),
            group_size: self.group_size.snapshot(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn observations_land_in_the_first_bucket_whose_bound_they_do_not_exceed() {
        let stats = CommitStats::default();
        stats.synced(1, Duration::from_micros(50));
        stats.synced(3, Duration::from_micros(51));
        stats.synced(2000, Duration::from_secs(10));
        let snapshot = stats.snapshot();
        let sync = snapshot.sync_micros;
        assert_eq!(sync.count, 3);
        assert_eq!(sync.sum, 50 + 51 + 10_000_000);
        assert_eq!(sync.counts.len(), SYNC_MICROS_BOUNDS.len() + 1);
        assert_eq!(sync.counts[0], 1);
        assert_eq!(sync.counts[1], 1);
        assert_eq!(sync.counts[SYNC_MICROS_BOUNDS.len()], 1);
        let groups = snapshot.group_size;
        assert_eq!(groups.bounds, GROUP_SIZE_BOUNDS);
        assert_eq!(groups.counts[0], 1);
        // 3 is above 2 and within 4.
        assert_eq!(groups.counts[2], 1);
        assert_eq!(groups.counts[GROUP_SIZE_BOUNDS.len()], 1);
        assert_eq!(groups.sum, 1 + 3 + 2000);
    }
}
