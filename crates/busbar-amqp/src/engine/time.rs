//! The engine's notion of time: milliseconds since the Unix epoch, passed in by the caller.

use std::time::Duration;

/// A point in time in milliseconds since the Unix epoch; the engine never reads a clock, the
/// driver (or a test's virtual clock) hands it one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Millis(pub u64);

impl Millis {
    /// This instant moved `duration` later (saturating).
    pub fn after(self, duration: Duration) -> Self {
        let millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
        Self(self.0.saturating_add(millis))
    }

    /// Time from `earlier` to this instant, zero if `earlier` is later.
    pub fn since(self, earlier: Self) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }
}
