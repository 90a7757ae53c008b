//! Criterion benches of the entity's hot paths: enqueue (alone, and reported durable), lock +
//! complete with 1 / 1k / 100k locks outstanding, the TTL expiry sweep, and a restart's restore
//! of a backlog from the index form the store keeps (with a time-to-live and a message-id on
//! every message, as the SDKs and a queue with a default TTL make them). In debug builds
//! (`cargo test --all-targets`) the sizes shrink so each bench runs once quickly.
#![allow(clippy::unwrap_used)]

#[path = "../tests/common/mod.rs"]
mod common;

use busbar_core::{
    Entity, EntityConfig, NewMessage, Outcome, ReceiveMode, SequenceNumber, SubQueue, Timestamp,
    index_part,
};
use bytes::Bytes;
use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};

const NOW: Timestamp = Timestamp(1_700_000_000_000);
const PAYLOAD: &[u8] = &[0x5a; 256];

fn message() -> NewMessage {
    NewMessage {
        payload: Bytes::from_static(PAYLOAD),
        ..NewMessage::default()
    }
}

fn empty_entity() -> Entity {
    Entity::new(EntityConfig::default(), 7).unwrap()
}

/// Sizes, shrunk a hundredfold in debug builds where only a smoke run is wanted.
fn size(full: usize) -> usize {
    if cfg!(debug_assertions) {
        (full / 100).max(1)
    } else {
        full
    }
}

fn enqueue(c: &mut Criterion) {
    let mut group = c.benchmark_group("enqueue");
    group.throughput(Throughput::Elements(1));
    for stored in [0, 100_000].map(size) {
        // As the broker does: each enqueue is reported durable once its batch is stored
        // ("+ durable"), or (the plain rows) the stored messages all stay pending.
        for mark_durable in [false, true] {
            let mut base = empty_entity();
            base.enqueue(vec![message(); stored], NOW).unwrap();
            base.drain_records().for_each(drop);
            let name = if mark_durable {
                durable(&mut base);
                "256 B + durable, messages stored"
            } else {
                "256 B, messages stored"
            };
            group.bench_with_input(BenchmarkId::new(name, stored), &base, |b, base| {
                b.iter_custom(|iters| {
                    let mut entity = base.clone();
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(entity.enqueue(vec![message()], NOW).unwrap());
                        entity.drain_records().for_each(drop);
                        if mark_durable {
                            durable(&mut entity);
                        }
                    }
                    start.elapsed()
                });
            });
        }
    }
    group.finish();
}

/// An entity with `held` messages locked and nothing available.
fn entity_with_locks(held: usize) -> Entity {
    let mut entity = empty_entity();
    entity.enqueue(vec![message(); held], NOW).unwrap();
    durable(&mut entity);
    for _ in 0..held {
        entity
            .receive(SubQueue::Main, ReceiveMode::PeekLock, NOW)
            .unwrap();
    }
    entity.drain_records().for_each(drop);
    entity
}

/// Reports every insert durable, as the broker does once the store synced them.
fn durable(entity: &mut Entity) {
    entity.mark_durable(SequenceNumber(entity.high_water()));
}

fn lock_complete(c: &mut Criterion) {
    let mut group = c.benchmark_group("lock+complete");
    group.throughput(Throughput::Elements(1));
    for held in [1, 1_000, 100_000].map(size) {
        let base = entity_with_locks(held);
        group.bench_with_input(BenchmarkId::new("locks held", held), &base, |b, base| {
            b.iter_custom(|iters| {
                let mut entity = base.clone();
                let batch = usize::try_from(iters).unwrap();
                entity.enqueue(vec![message(); batch], NOW).unwrap();
                entity.drain_records().for_each(drop);
                durable(&mut entity);
                let start = Instant::now();
                for _ in 0..iters {
                    let delivery = entity
                        .receive(SubQueue::Main, ReceiveMode::PeekLock, NOW)
                        .unwrap();
                    let token = delivery.lock.unwrap().token;
                    entity.settle(token, Outcome::Complete, NOW).unwrap();
                    entity.drain_records().for_each(drop);
                }
                start.elapsed()
            });
        });
    }
    group.finish();
}

fn expiry_sweep(c: &mut Criterion) {
    let mut group = c.benchmark_group("expiry sweep");
    let expiring = size(10_000);
    let config = EntityConfig {
        default_message_ttl: Some(Duration::from_secs(60)),
        ..EntityConfig::default()
    };
    let mut base = Entity::new(config, 7).unwrap();
    base.enqueue(vec![message(); expiring], NOW).unwrap();
    base.drain_records().for_each(drop);
    durable(&mut base);
    let later = Timestamp(NOW.0 + 60_000);
    group.throughput(Throughput::Elements(expiring as u64));
    group.bench_function(BenchmarkId::new("messages expiring", expiring), |b| {
        b.iter_batched(
            || base.clone(),
            |mut entity| {
                entity.handle_timeout(later);
                assert!(entity.is_empty(SubQueue::Main));
                entity.drain_records().count()
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

/// A queue whose messages live a day, as a backlog's queue usually is.
fn expiring_config() -> EntityConfig {
    EntityConfig {
        default_message_ttl: Some(Duration::from_secs(86_400)),
        ..EntityConfig::default()
    }
}

/// The index forms of `count` durable messages, as a restart reads them from the store.
fn index_forms(count: usize) -> Vec<(i64, Bytes, Bytes)> {
    let mut entity = Entity::new(expiring_config(), 7).unwrap();
    let mut forms = Vec::with_capacity(count);
    for first in (0..count).step_by(1000) {
        let batch = (first..count.min(first + 1000))
            .map(|n| NewMessage {
                message_id: Some(Bytes::from(format!("{n:036}"))),
                ..message()
            })
            .collect();
        let inserts = common::enqueue_durably(&mut entity, batch, NOW);
        forms.extend(
            inserts
                .into_iter()
                .map(|(sequence, message, state)| (sequence, index_part(&message), state)),
        );
    }
    forms
}

fn restore(c: &mut Criterion) {
    let mut group = c.benchmark_group("restore");
    let count = size(1_000_000);
    let forms = index_forms(count);
    let high_water = i64::try_from(count).unwrap();
    group.throughput(Throughput::Elements(count as u64));
    group.sample_size(10);
    group.bench_function(BenchmarkId::new("messages", count), |b| {
        b.iter_with_large_drop(|| {
            Entity::restore(expiring_config(), 7, high_water, forms.iter().cloned(), NOW).unwrap()
        });
    });
    group.finish();
}

criterion_group!(benches, enqueue, lock_complete, expiry_sweep, restore);
criterion_main!(benches);
