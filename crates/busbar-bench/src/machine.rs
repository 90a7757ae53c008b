//! `machine-probe`: a quick reading of the machine a run is on — what one durable write costs on
//! the disk under a directory, and what a round trip between two sleeping threads costs. Both
//! move by the hour on a shared virtual machine, and durable and low-concurrency figures move
//! with them, so `cargo xtask bench` takes a reading before every round.

use std::fmt;
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::client::latency_histogram;
use crate::report::LatencySummary;

/// Timed writes per size; round trips between the threads.
const SAMPLES: usize = 500;
/// Sizes of the timed writes: a small record, and a page.
const SMALL: usize = 200;
const PAGE: usize = 4096;

/// The median and the 99th percentile of a set of timings, from the run's latency histogram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Spread(LatencySummary);

impl Spread {
    fn of(timings: impl IntoIterator<Item = Duration>) -> Spread {
        let mut histogram = latency_histogram();
        for timing in timings {
            let micros = u64::try_from(timing.as_micros()).unwrap_or(u64::MAX);
            // Saturates rather than fails past the histogram's ten minutes.
            histogram.saturating_record(micros.max(1));
        }
        Spread(LatencySummary::from_histogram(&histogram))
    }
}

impl fmt::Display for Spread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "p50 {} µs / p99 {} µs", self.0.p50_us, self.0.p99_us)
    }
}

/// One reading of the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reading {
    /// A 200 B write plus `fdatasync`, over zeros already written and synced (as the file
    /// store's preallocated head segment is).
    sync_small: Spread,
    /// The same with a 4 KiB write.
    sync_page: Spread,
    /// A message to another thread blocked on a channel and its answer back.
    round_trip: Spread,
}

impl fmt::Display for Reading {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "write + fdatasync 200 B {}, 4 KiB {}; thread round trip {}",
            self.sync_small, self.sync_page, self.round_trip
        )
    }
}

/// Takes a reading with the disk under `dir` (a scratch file is written there and removed).
pub(crate) fn probe(dir: &Path) -> io::Result<Reading> {
    probe_with(dir, SAMPLES)
}

fn probe_with(dir: &Path, samples: usize) -> io::Result<Reading> {
    let path = dir.join("machine-probe.dat");
    let syncs = time_syncs(&path, samples);
    // Removed whatever the outcome; a failure to remove it is not the probe's concern.
    let _ = std::fs::remove_file(&path);
    let (sync_small, sync_page) = syncs?;
    Ok(Reading {
        sync_small,
        sync_page,
        round_trip: time_round_trips(samples),
    })
}

fn time_syncs(path: &Path, samples: usize) -> io::Result<(Spread, Spread)> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    let zeros = vec![0u8; samples * (SMALL + PAGE)];
    file.write_all_at(&zeros, 0)?;
    file.sync_all()?;
    let mut offset = 0u64;
    let mut timed = |size: usize| -> io::Result<Spread> {
        let data = vec![0x5au8; size];
        let mut timings = Vec::with_capacity(samples);
        for _ in 0..samples {
            let started = Instant::now();
            file.write_all_at(&data, offset)?;
            file.sync_data()?;
            timings.push(started.elapsed());
            offset += size as u64;
        }
        Ok(Spread::of(timings))
    };
    Ok((timed(SMALL)?, timed(PAGE)?))
}

fn time_round_trips(samples: usize) -> Spread {
    let (to_echo, echo_inbox) = mpsc::channel::<()>();
    let (to_main, main_inbox) = mpsc::channel::<()>();
    let echo = std::thread::spawn(move || {
        while echo_inbox.recv().is_ok() {
            if to_main.send(()).is_err() {
                break;
            }
        }
    });
    let mut timings = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        if to_echo.send(()).is_err() || main_inbox.recv().is_err() {
            break;
        }
        timings.push(started.elapsed());
    }
    drop(to_echo);
    let _ = echo.join();
    Spread::of(timings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_reports_the_median_and_the_99th_percentile_in_microseconds() {
        // Below 2 048 µs the histogram's three significant figures are exact.
        let spread = Spread::of((1..=100).rev().map(Duration::from_micros));
        assert_eq!(spread.0.p50_us, 50);
        assert_eq!(spread.0.p99_us, 99);
        assert_eq!(spread.to_string(), "p50 50 µs / p99 99 µs");
        assert_eq!(Spread::of(Vec::new()).0.p99_us, 0);
    }

    #[test]
    fn probe_times_syncs_and_round_trips_and_leaves_no_file() {
        let dir = std::env::temp_dir().join(format!("busbar-machine-probe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let reading = probe_with(&dir, 20).unwrap();
        for Spread(summary) in [reading.sync_small, reading.sync_page, reading.round_trip] {
            assert_eq!(summary.samples, 20, "{reading}");
            assert!(summary.p50_us > 0, "{reading}");
            assert!(summary.p50_us <= summary.p99_us, "{reading}");
        }
        assert!(
            reading
                .to_string()
                .starts_with("write + fdatasync 200 B p50 "),
            "{reading}"
        );
        assert!(!dir.join("machine-probe.dat").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn probe_reports_a_missing_directory() {
        let missing = std::env::temp_dir().join("busbar-machine-probe-missing/nowhere");
        assert!(probe_with(&missing, 1).is_err());
    }
}
