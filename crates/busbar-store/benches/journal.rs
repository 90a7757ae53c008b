//! Criterion benches of `FileStorage`: append+sync throughput by batch and record size,
//! group-commit throughput by number of concurrent submitters, and recovery time.
//!
//! In test mode (`cargo test --all-targets`, debug build) the sizes shrink so it stays quick.

#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use busbar_store::{
    EntityId, FileOptions, FileStorage, GroupCommit, GroupCommitOptions, MessageKey, Record,
    Storage,
};
use bytes::Bytes;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const QUICK: bool = cfg!(debug_assertions);

/// A scratch directory removed on drop.
struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new(name: &str) -> ScratchDir {
        let path =
            std::env::temp_dir().join(format!("busbar-store-bench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        ScratchDir(path)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn key(sequence: i64) -> MessageKey {
    MessageKey {
        entity: EntityId(1),
        sequence,
    }
}

fn append_sync(c: &mut Criterion) {
    let mut group = c.benchmark_group("append_sync");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(if QUICK { 1 } else { 3 }));
    for size in [128usize, 4096] {
        for per_sync in [1i64, 16, 256] {
            group.throughput(Throughput::Elements(per_sync as u64));
            let id = BenchmarkId::new(format!("{size}B"), format!("{per_sync}_per_sync"));
            group.bench_function(id, |b| {
                let dir = ScratchDir::new("append");
                let mut store = FileStorage::open(&dir.0, FileOptions::default()).unwrap();
                let body = Bytes::from(vec![7u8; size]);
                let mut next = 0i64;
                b.iter_custom(|iterations| {
                    let mut timed = Duration::ZERO;
                    for iteration in 0..iterations {
                        let started = Instant::now();
                        for _ in 0..per_sync {
                            let record = Record::Insert {
                                key: key(next),
                                message: body.clone(),
                                state: Bytes::from_static(b"state"),
                            };
                            store.append(&[record]).unwrap();
                            next += 1;
                        }
                        store.sync().unwrap();
                        timed += started.elapsed();
                        // Untimed: settle what was written and let compaction keep the disk
                        // use bounded over long runs.
                        let removals: Vec<Record> = (next - per_sync..next)
                            .map(|sequence| Record::Remove { key: key(sequence) })
                            .collect();
                        store.append(&removals).unwrap();
                        if iteration % 64 == 63 {
                            store.sync().unwrap();
                            while store.compact().unwrap().more {}
                        }
                    }
                    timed
                });
            });
        }
    }
    group.finish();
}

fn group_commit(c: &mut Criterion) {
    let mut group = c.benchmark_group("group_commit_128B");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(if QUICK { 1 } else { 3 }));
    for submitters in [1usize, 16, 256] {
        group.throughput(Throughput::Elements(submitters as u64));
        let id = BenchmarkId::new("submitters", submitters);
        group.bench_function(id, |b| {
            let dir = ScratchDir::new("group");
            let store = FileStorage::open(&dir.0, FileOptions::default()).unwrap();
            let writer = GroupCommit::spawn(store, GroupCommitOptions::default()).unwrap();
            let handle = writer.handle();
            let body = Bytes::from(vec![7u8; 128]);
            let mut next = 0i64;
            // Each iteration: every submitter has one submission in flight at once (as
            // concurrent senders would), and the iteration ends when all are durable.
            b.iter(|| {
                let (sender, done) = mpsc::channel();
                for _ in 0..submitters {
                    let sender = sender.clone();
                    let record = Record::Insert {
                        key: key(next),
                        message: body.clone(),
                        state: Bytes::new(),
                    };
                    next += 1;
                    handle.submit(
                        vec![record],
                        Box::new(move |outcome| {
                            let _ = sender.send(outcome.is_ok());
                        }),
                    );
                }
                drop(sender);
                assert!(done.iter().all(|ok| ok));
            });
            drop(handle);
            writer.shutdown().unwrap();
        });
    }
    group.finish();
}

fn recovery(c: &mut Criterion) {
    let records: i64 = if QUICK { 2_000 } else { 1_000_000 };
    let dir = ScratchDir::new("recovery");
    {
        let mut store = FileStorage::open(&dir.0, FileOptions::default()).unwrap();
        let body = Bytes::from(vec![7u8; 64]);
        for chunk in (0..records).collect::<Vec<_>>().chunks(1000) {
            let batch: Vec<Record> = chunk
                .iter()
                .map(|&sequence| Record::Insert {
                    key: key(sequence),
                    message: body.clone(),
                    state: Bytes::from_static(b"state"),
                })
                .collect();
            store.append(&batch).unwrap();
        }
        store.sync().unwrap();
    }
    let mut group = c.benchmark_group("recovery");
    group.sample_size(10);
    group.throughput(Throughput::Elements(records as u64));
    group.bench_function(BenchmarkId::new("open_and_recover", records), |b| {
        b.iter(|| {
            let mut store = FileStorage::open(&dir.0, FileOptions::default()).unwrap();
            let recovered = store.recover().unwrap();
            assert_eq!(recovered.messages.len(), records as usize);
        });
    });
    group.finish();
}

criterion_group!(benches, append_sync, group_commit, recovery);
criterion_main!(benches);
