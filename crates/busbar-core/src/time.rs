//! Caller-supplied time and per-entity sequence numbers: the only clock and counter the core knows.

use std::fmt;
use std::time::Duration;

/// An instant in milliseconds since the Unix epoch, supplied by the caller and never going backwards.
///
/// One clock serves everything (the driver anchors a monotonic clock to wall time), so a
/// `locked_until` or `enqueued_time` is directly the value the client sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Milliseconds since the Unix epoch.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// `self + duration`, saturating at the representable limit instead of overflowing.
    pub fn saturating_add(self, duration: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(millis(duration)))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// A message's sequence number: assigned by the entity, from 1, strictly increasing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SequenceNumber(pub i64);

impl SequenceNumber {
    /// The first sequence number an entity assigns.
    pub const FIRST: SequenceNumber = SequenceNumber(1);

    /// The raw value (`x-opt-sequence-number`).
    pub const fn value(self) -> i64 {
        self.0
    }
}

impl fmt::Display for SequenceNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A duration in whole milliseconds, saturating at `i64::MAX` (centuries, i.e. unbounded).
pub(crate) fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_a_huge_duration_saturates() {
        let t = Timestamp(1_000).saturating_add(Duration::MAX);
        assert_eq!(t, Timestamp(i64::MAX));
        assert_eq!(
            Timestamp(5).saturating_add(Duration::from_secs(1)),
            Timestamp(1_005)
        );
    }
}
