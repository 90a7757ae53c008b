//! Crash test: a child process appends, syncs and compacts in a loop and reports each durable
//! step; the parent SIGKILLs it at random moments, recovers, and checks that every step reported
//! durable is there and nothing that was never written appears.
//!
//! The child is this test binary re-executed with `BUSBAR_STORE_CRASH_CHILD` naming the
//! directory; without it `crash_child_writer` does nothing. It is a binary of its own because a
//! process that forks while another test thread reopens a journal could briefly hold that
//! journal's lock in the forked child.

// The test helpers are plain functions called from `#[test]`s.
#![allow(clippy::unwrap_used)]

// Shared with the main test binary, which uses the helpers this one does not.
#[allow(dead_code)]
#[path = "store/records.rs"]
mod records;
#[allow(dead_code)]
#[path = "store/support.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use busbar_store::{FileOptions, FileStorage, Record, Storage};

use crate::records::{ENTITY, Model, insert, key, meta, remove, update};
use crate::support::TestDir;

const CHILD_ENV: &str = "BUSBAR_STORE_CRASH_CHILD";
const OPTIONS: FileOptions = FileOptions {
    segment_size: 16 * 1024,
    compact_dead_percent: 30,
};

fn body(step: i64) -> String {
    // Sizes vary so batches straddle segment boundaries at different places.
    let len = 10 + (step * 37 % 900) as usize;
    format!("{step}:").repeat(len / 4 + 1)
}

/// Step `k`'s records. Every record sets an absolute value on its own key, so applying a
/// step again after part of it was lost yields exactly the full step.
fn step_records(step: i64) -> Vec<Record> {
    let mut records = vec![insert(step, &body(step), &format!("{step}/0"))];
    if step > 1 {
        records.push(update(step - 1, &format!("{}/1", step - 1)));
    }
    if step > 3 {
        records.push(remove(step - 3));
    }
    records.push(meta("step", Some(&step.to_string())));
    records
}

/// The state after steps `1..step` and the first `partial` records of `step`. Replaying the
/// last five steps suffices: every message inserted earlier has been removed by then.
fn model(step: i64, partial: usize) -> Model {
    let mut model = Model::default();
    for k in (step - 4).max(1)..=step {
        let records = step_records(k);
        let take = if k == step { partial } else { records.len() };
        for record in records.iter().take(take) {
            model.apply(record);
        }
    }
    model
}

/// The child: continue the step sequence from what recovery finds, printing each durable step.
#[test]
fn crash_child_writer() {
    let Some(dir) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let mut store = FileStorage::open(Path::new(&dir), OPTIONS).unwrap();
    let recovered = store.recover().unwrap();
    // Redo the last step found (it may be partial), then carry on.
    let mut step = recovered
        .high_water
        .get(&ENTITY)
        .copied()
        .unwrap_or(1)
        .max(1);
    let mut stdout = std::io::stdout().lock();
    loop {
        store.append(&step_records(step)).unwrap();
        store.sync().unwrap();
        writeln!(stdout, "durable {step}").unwrap();
        stdout.flush().unwrap();
        store.compact().unwrap();
        // As the group-commit writer does when idle: kills also land in zero tails and in
        // the cutting back of a sealed segment.
        store.preallocate().unwrap();
        step += 1;
    }
}

/// Recovers `dir` and checks it holds a state the child really wrote, at least `durable`.
fn check_recovery(dir: &Path, durable: i64, seed: u64) -> i64 {
    let mut store = FileStorage::open(dir, OPTIONS).unwrap();
    let recovered = store.recover().unwrap();
    let step = recovered.high_water.get(&ENTITY).copied().unwrap_or(0);
    assert!(
        step >= durable,
        "seed {seed}: step {durable} was reported durable, recovery found only {step}"
    );
    if step == 0 {
        assert!(recovered.messages.is_empty() && recovered.meta.is_empty());
        return 0;
    }
    // The high-water mark is the whole history's, so compare it on its own.
    assert_eq!(recovered.high_water.len(), 1);
    let matches = (1..=step_records(step).len()).any(|partial| {
        let model = model(step, partial);
        model.messages == recovered.messages && model.meta == recovered.meta
    });
    assert!(
        matches,
        "seed {seed}: recovered state at step {step} matches no prefix of what was written: \
         {:?} {:?}",
        recovered.messages.keys().collect::<Vec<_>>(),
        recovered.meta
    );
    assert!(recovered.messages.contains_key(&key(step)));
    step
}

#[test]
fn sigkill_at_random_points_loses_nothing_durable() {
    let seed = Rng::seed_from_clock();
    let mut rng = Rng::new(seed);
    let dir = TestDir::new("crash");
    let exe = std::env::current_exe().unwrap();
    let started = Instant::now();
    let mut iterations = 0;
    let mut durable_so_far = 0;
    while iterations < 200 && (iterations < 10 || started.elapsed() < Duration::from_secs(12)) {
        iterations += 1;
        let mut child = Command::new(&exe)
            .args([
                "crash_child_writer",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let kill_after = rng.below(60);
        let mut durable = durable_so_far;
        let mut seen = 0;
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            // The first report shares its line with libtest's "test ... " prefix.
            if let Some((_, step)) = line.split_once("durable ") {
                durable = step.parse().unwrap();
                seen += 1;
                if seen > kill_after {
                    break;
                }
            }
        }
        child.kill().unwrap();
        child.wait().unwrap();
        durable_so_far = check_recovery(dir.path(), durable, seed);
    }
    assert!(
        durable_so_far > 0,
        "seed {seed}: the child never made progress"
    );
    eprintln!("{iterations} kills, last durable step {durable_so_far}, seed {seed}");
}

/// A small deterministic generator (xorshift64*), so tests need no extra crate.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    fn seed_from_clock() -> u64 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        nanos ^ u64::from(std::process::id()) << 32
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}
