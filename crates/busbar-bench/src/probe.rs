//! The broker process seen from outside: CPU time and resident memory from `/proc/<pid>`.

use crate::report::BrokerUsage;

/// Clock ticks per second of `/proc/<pid>/stat` times: Linux exports `USER_HZ`, which is 100
/// on every architecture it supports.
const TICKS_PER_SECOND: f64 = 100.0;

/// A broker process to observe.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BrokerProbe {
    pid: u32,
}

/// The broker's counters at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcessSample {
    /// User + system CPU time, in clock ticks.
    cpu_ticks: u64,
    /// Resident set size.
    rss_bytes: u64,
}

impl BrokerProbe {
    /// Observes process `pid`.
    pub(crate) fn new(pid: u32) -> Self {
        Self { pid }
    }

    /// The process's counters now, or `None` if it is gone or `/proc` is unreadable.
    pub(crate) fn sample(&self) -> Option<ProcessSample> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).ok()?;
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        Some(ProcessSample {
            cpu_ticks: cpu_ticks(&stat)?,
            rss_bytes: rss_bytes(&status)?,
        })
    }
}

impl ProcessSample {
    /// The resident set size at this instant.
    pub(crate) fn rss_bytes(&self) -> u64 {
        self.rss_bytes
    }

    /// What the broker spent between `self` and `later`, shared over `messages`.
    pub(crate) fn usage_until(&self, later: &ProcessSample, messages: u64) -> BrokerUsage {
        let cpu_seconds = later.cpu_ticks.saturating_sub(self.cpu_ticks) as f64 / TICKS_PER_SECOND;
        BrokerUsage {
            cpu_us_per_message: if messages == 0 {
                0.0
            } else {
                cpu_seconds * 1e6 / messages as f64
            },
            rss_bytes: later.rss_bytes,
            rss_growth_bytes: i64::try_from(later.rss_bytes).unwrap_or(i64::MAX)
                - i64::try_from(self.rss_bytes).unwrap_or(i64::MAX),
        }
    }
}

/// utime + stime (fields 14 and 15) of a `/proc/<pid>/stat` line. The command name (field 2)
/// may hold spaces and parentheses, so fields are counted after its last `)`.
fn cpu_ticks(stat: &str) -> Option<u64> {
    let (_, after_name) = stat.rsplit_once(')')?;
    let mut fields = after_name.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// `VmRSS` of `/proc/<pid>/status`, in bytes.
fn rss_bytes(status: &str) -> Option<u64> {
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_after_an_awkward_name() {
        let stat = "1234 (a) b (c) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 9 0 1 2 3";
        assert_eq!(cpu_ticks(stat), Some(300));
        assert_eq!(cpu_ticks("1234 (truncated) S 1"), None);
    }

    #[test]
    fn rss_in_bytes() {
        let status = "Name:\tbusbar\nVmPeak:\t  100 kB\nVmRSS:\t    2048 kB\n";
        assert_eq!(rss_bytes(status), Some(2 * 1024 * 1024));
        assert_eq!(rss_bytes("Name:\tx\n"), None);
    }

    #[test]
    fn usage_per_message() {
        let before = ProcessSample {
            cpu_ticks: 100,
            rss_bytes: 10_000,
        };
        let after = ProcessSample {
            cpu_ticks: 150,
            rss_bytes: 8_000,
        };
        let usage = before.usage_until(&after, 1_000);
        assert!((usage.cpu_us_per_message - 500.0).abs() < 1e-9);
        assert_eq!(usage.rss_growth_bytes, -2_000);
        assert_eq!(before.usage_until(&after, 0).cpu_us_per_message, 0.0);
    }

    #[test]
    fn own_process_is_readable() {
        let sample = BrokerProbe::new(std::process::id()).sample().unwrap();
        assert!(sample.rss_bytes > 0);
    }
}
