//! The driver's clock: wall time read once, then advanced by a monotonic clock.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::engine::Millis;

/// Stand-in for a deadline beyond what `Instant` can hold.
const FAR_FUTURE: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// Milliseconds since the Unix epoch that never go backwards (anchored to wall time at creation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Clock {
    anchor_instant: Instant,
    anchor_millis: Millis,
}

impl Clock {
    /// Anchors the clock to the current wall time.
    pub(crate) fn new() -> Self {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Self {
            anchor_instant: Instant::now(),
            anchor_millis: Millis(u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX)),
        }
    }

    /// The current time.
    pub(crate) fn now(&self) -> Millis {
        self.anchor_millis.after(self.anchor_instant.elapsed())
    }

    /// The tokio instant at which the engine time `at` is reached.
    pub(crate) fn instant_at(&self, at: Millis) -> Instant {
        // A deadline too far away to represent (an enormous configured time-out) is "never" in
        // practice: a day later is as good and cannot overflow.
        self.anchor_instant
            .checked_add(at.since(self.anchor_millis))
            .unwrap_or_else(|| Instant::now() + FAR_FUTURE)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn deadlines_map_to_instants_and_never_overflow() {
        let clock = Clock::new();
        let now = clock.now();
        let in_a_second = clock.instant_at(now.after(Duration::from_secs(1)));
        assert!(in_a_second > Instant::now());
        assert!(in_a_second <= Instant::now() + Duration::from_secs(1));
        assert!(clock.instant_at(Millis(u64::MAX)) > Instant::now());
        assert!(clock.now() >= now);
    }
}
