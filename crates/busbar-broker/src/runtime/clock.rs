//! The broker's one clock: wall time read once at start-up, then advanced by a monotonic clock,
//! so the `Timestamp`s handed to the core never go backwards. With test controls it is virtual:
//! it can be moved ahead (`advance`), as if that time had passed, and every entity task is woken
//! to re-evaluate its deadlines (scheduled messages, TTLs, locks, duplicate-detection windows).
//! Token expiry is judged on the wall clock (`wall_now`), so advancing never locks clients out.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use busbar_core::Timestamp;
use tokio::sync::watch;
use tokio::time::Instant;

/// The furthest a timer is ever armed (ten years); later deadlines are re-armed when it fires.
const MAX_WAIT_MILLIS: i64 = 10 * 365 * 24 * 3_600 * 1_000;

/// Milliseconds since the Unix epoch, anchored to wall time once and never going backwards.
#[derive(Clone, Debug)]
pub struct Clock {
    anchor_instant: Instant,
    anchor_millis: i64,
    /// How far a virtual clock was moved ahead; `None` for the real one.
    skew: Option<Arc<Skew>>,
}

/// The offset of a virtual clock, and the signal that it moved.
#[derive(Debug)]
struct Skew {
    millis: AtomicI64,
    advanced: watch::Sender<i64>,
}

impl Clock {
    /// Anchors a clock to the current wall time.
    pub fn anchored_now() -> Self {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Self {
            anchor_instant: Instant::now(),
            anchor_millis: i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX),
            skew: None,
        }
    }

    /// This clock made virtual: it starts at the same time and can be advanced.
    pub fn virtual_time(self) -> Self {
        let (advanced, _) = watch::channel(0);
        Self {
            skew: Some(Arc::new(Skew {
                millis: AtomicI64::new(0),
                advanced,
            })),
            ..self
        }
    }

    /// The current time (virtual time, when the clock is virtual).
    pub fn now(&self) -> Timestamp {
        Timestamp(self.wall_now().0.saturating_add(self.offset_millis()))
    }

    /// The current wall time, whatever a virtual clock says (for token expiry).
    pub fn wall_now(&self) -> Timestamp {
        let elapsed = i64::try_from(self.anchor_instant.elapsed().as_millis()).unwrap_or(i64::MAX);
        Timestamp(self.anchor_millis.saturating_add(elapsed))
    }

    /// The tokio instant at which `at` is reached (now, for instants already past).
    pub fn instant_at(&self, at: Timestamp) -> Instant {
        self.instant_after(at.0.saturating_sub(self.offset_millis()))
    }

    /// The tokio instant at which wall time reaches `at`, whatever a virtual clock says (for
    /// token expiry, as [`wall_now`](Self::wall_now)).
    pub fn wall_instant_at(&self, at: Timestamp) -> Instant {
        self.instant_after(at.0)
    }

    /// The instant `wall_millis` since the epoch is on the wall clock.
    fn instant_after(&self, wall_millis: i64) -> Instant {
        // Capped so a far-future deadline (a TTL of centuries) cannot overflow `Instant`.
        let offset = wall_millis
            .saturating_sub(self.anchor_millis)
            .clamp(0, MAX_WAIT_MILLIS);
        self.anchor_instant + Duration::from_millis(offset.unsigned_abs())
    }

    /// How far a virtual clock has been moved ahead; `None` for the real clock.
    pub fn offset(&self) -> Option<Duration> {
        self.skew
            .as_ref()
            .map(|_| Duration::from_millis(self.offset_millis().unsigned_abs()))
    }

    /// Moves a virtual clock ahead by `by` and wakes whoever waits on it; `None` (and nothing
    /// moves) for the real clock.
    pub fn advance(&self, by: Duration) -> Option<Timestamp> {
        let skew = self.skew.as_ref()?;
        let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        let total = skew
            .millis
            .fetch_add(by, Ordering::SeqCst)
            .saturating_add(by);
        skew.advanced.send_replace(total);
        Some(self.now())
    }

    /// Changes whenever a virtual clock is advanced; `None` for the real clock.
    pub(crate) fn advances(&self) -> Option<watch::Receiver<i64>> {
        self.skew.as_ref().map(|skew| skew.advanced.subscribe())
    }

    fn offset_millis(&self) -> i64 {
        self.skew
            .as_ref()
            .map_or(0, |skew| skew.millis.load(Ordering::SeqCst))
    }
}

/// Resolves when a virtual clock is advanced; never for the real clock.
pub(crate) async fn advanced(advances: &mut Option<watch::Receiver<i64>>) {
    match advances {
        Some(advances) => {
            if advances.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_round_trip_through_timestamps() {
        let clock = Clock::anchored_now();
        let now = clock.now();
        let later = Timestamp(now.0 + 1_500);
        let gap = clock.instant_at(later) - clock.instant_at(now);
        assert!(gap >= Duration::from_millis(1_400) && gap <= Duration::from_millis(1_500));
        assert!(clock.instant_at(Timestamp(0)) <= Instant::now());
    }

    #[test]
    fn the_real_clock_cannot_be_advanced() {
        let clock = Clock::anchored_now();
        assert_eq!(clock.advance(Duration::from_secs(60)), None);
        assert_eq!(clock.offset(), None);
        assert!(clock.advances().is_none());
    }

    #[tokio::test]
    async fn an_advanced_clock_moves_its_time_and_deadlines_and_wakes_its_waiters() {
        let clock = Clock::anchored_now().virtual_time();
        let mut advances = clock.advances();
        let copy = clock.clone();
        let hour = Duration::from_secs(3_600);
        let due = Timestamp(clock.now().0 + 3_600_000);
        assert!(clock.instant_at(due) > Instant::now() + Duration::from_secs(3_000));

        let moved = clock.advance(2 * hour).unwrap();
        advanced(&mut advances).await;
        assert!(moved.0 >= due.0 + 3_600_000);
        assert!(
            copy.now().0 >= due.0 + 3_600_000,
            "every copy shares the offset"
        );
        assert!(clock.wall_now().0 < due.0, "wall time does not move");
        assert!(clock.instant_at(due) <= Instant::now());
        assert!(clock.wall_instant_at(due) > Instant::now() + Duration::from_secs(3_000));
        assert_eq!(clock.offset(), Some(2 * hour));
    }
}
