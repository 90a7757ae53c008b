//! The broker's one clock: wall time read once at start-up, then advanced by a monotonic clock,
//! so the `Timestamp`s handed to the core never go backwards.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use busbar_core::Timestamp;
use tokio::time::Instant;

/// The furthest a timer is ever armed (ten years); later deadlines are re-armed when it fires.
const MAX_WAIT_MILLIS: i64 = 10 * 365 * 24 * 3_600 * 1_000;

/// Milliseconds since the Unix epoch, anchored to wall time once and never going backwards.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    anchor_instant: Instant,
    anchor_millis: i64,
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
        }
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        let elapsed = i64::try_from(self.anchor_instant.elapsed().as_millis()).unwrap_or(i64::MAX);
        Timestamp(self.anchor_millis.saturating_add(elapsed))
    }

    /// The tokio instant at which `at` is reached (now, for instants already past).
    pub fn instant_at(&self, at: Timestamp) -> Instant {
        // Capped so a far-future deadline (a TTL of centuries) cannot overflow `Instant`.
        let offset =
            at.0.saturating_sub(self.anchor_millis)
                .clamp(0, MAX_WAIT_MILLIS);
        self.anchor_instant + Duration::from_millis(offset.unsigned_abs())
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
}
