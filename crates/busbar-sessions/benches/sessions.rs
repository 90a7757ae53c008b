//! Per-message cost of a session entity with 1, 100 and 10,000 sessions interleaved in one
//! queue: enqueue, accept the next available session, receive, complete, release. The figure
//! should not grow with the number of sessions.
//!
//! Wall-clock figures on a shared machine are noisy; instruction counts are not. To count the
//! instructions of one message's life in the steady state:
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect='*one_message_cycle*' \
//!     target/release/deps/sessions-<hash> --bench 'steady_state_one_message/100_sessions$' \
//!     --profile-time 3
//! ```
//!
//! then divide the collected total by the `calls=` count of `one_message_cycle` in the output.
#![allow(clippy::unwrap_used)]

use busbar_core::{
    Entity, EntityConfig, NewMessage, Outcome, ReceiveMode, SequenceNumber, Timestamp,
};
use busbar_sessions::{AcceptNext, ReceiverId, SessionEntity, SessionId, SessionLimits};
use bytes::Bytes;
use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const NOW: Timestamp = Timestamp(1_700_000_000_000);

/// Messages per drain run; smaller in debug so `cargo test --all-targets` stays fast.
fn messages_per_run() -> usize {
    if cfg!(debug_assertions) {
        1_000
    } else {
        10_000
    }
}

fn session_counts() -> [usize; 3] {
    [1, 100, 10_000]
}

fn message(session: &str) -> NewMessage {
    NewMessage {
        payload: Bytes::from_static(&[0u8; 128]),
        session_id: Some(session.to_owned()),
        ..NewMessage::default()
    }
}

fn empty_entity() -> SessionEntity {
    SessionEntity::new(
        Entity::new(EntityConfig::default(), 1).unwrap(),
        SessionLimits::default(),
        [],
    )
}

/// Accepts the next session, receives and completes `per_session` messages, releases it.
fn serve_one_session(entity: &mut SessionEntity, owner: ReceiverId, per_session: usize) {
    let AcceptNext::Accepted(lock) = entity.accept_next(owner, NOW, NOW).unwrap() else {
        panic!("a session should be available");
    };
    for _ in 0..per_session {
        let delivery = entity
            .receive(owner, &lock.session, ReceiveMode::PeekLock, NOW)
            .unwrap()
            .unwrap();
        let token = delivery.lock.unwrap().token;
        entity
            .settle(owner, &lock.session, token, Outcome::Complete, NOW)
            .unwrap();
    }
    entity.close_receiver(owner, NOW);
}

/// Enqueue N messages round-robin over S sessions, then drain every session: per-message cost
/// of the whole life (enqueue + accept/receive + complete + release) with S sessions in play.
fn drain(c: &mut Criterion) {
    let total = messages_per_run();
    let mut group = c.benchmark_group("sessions/drain_interleaved");
    group.throughput(Throughput::Elements(total as u64));
    group.sample_size(10);
    for sessions in session_counts() {
        let sessions = sessions.min(total);
        let ids: Vec<String> = (0..sessions).map(|i| format!("session-{i}")).collect();
        group.bench_function(format!("{sessions}_sessions"), |b| {
            b.iter_batched(
                empty_entity,
                |mut entity| {
                    for i in 0..total {
                        entity
                            .enqueue(vec![message(&ids[i % sessions])], NOW)
                            .unwrap();
                    }
                    entity.mark_durable(SequenceNumber(entity.core().high_water()), NOW);
                    for owner in 0..sessions {
                        serve_one_session(&mut entity, ReceiverId(owner as u64), total / sessions);
                    }
                    black_box(entity.drain_records().count());
                    entity
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

/// Steady state with the same number of messages stored, spread over S sessions: one message
/// in, the next session accepted, one message received and completed, the session released (it
/// goes to the back of the line), the records drained as the broker would.
fn steady_state(c: &mut Criterion) {
    let stored = messages_per_run();
    let mut group = c.benchmark_group("sessions/steady_state_one_message");
    group.throughput(Throughput::Elements(1));
    for sessions in session_counts() {
        let sessions = sessions.min(stored);
        let ids: Vec<SessionId> = (0..sessions)
            .map(|i| SessionId::new(format!("session-{i}")).unwrap())
            .collect();
        let mut entity = empty_entity();
        for i in 0..stored {
            entity
                .enqueue(vec![message(ids[i % sessions].as_str())], NOW)
                .unwrap();
        }
        entity.drain_records().for_each(drop);
        entity.mark_durable(SequenceNumber(entity.core().high_water()), NOW);
        let mut next = 0usize;
        let mut owner = 0u64;
        group.bench_function(format!("{sessions}_sessions"), |b| {
            b.iter(|| {
                next += 1;
                owner += 1;
                one_message_cycle(&mut entity, &ids[next % sessions], ReceiverId(owner));
            });
        });
    }
    group.finish();
}

/// One message's whole life in the steady state. Not inlined, so an instruction profiler can
/// count it per call (`valgrind --tool=callgrind --toggle-collect='*one_message_cycle*'`).
#[inline(never)]
fn one_message_cycle(entity: &mut SessionEntity, session: &SessionId, owner: ReceiverId) {
    entity
        .enqueue(vec![message(session.as_str())], NOW)
        .unwrap();
    entity.mark_durable(SequenceNumber(entity.core().high_water()), NOW);
    serve_one_session(entity, owner, 1);
    black_box(entity.drain_records().count());
}

criterion_group!(benches, drain, steady_state);
criterion_main!(benches);
