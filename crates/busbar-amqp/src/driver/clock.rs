//! The driver's clock: wall time read once, then advanced by a monotonic clock.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

use crate::engine::Millis;

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
        self.anchor_instant + at.since(self.anchor_millis)
    }
}
