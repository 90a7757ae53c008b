//! What an entity holds per message once the message's bytes are in the store: its *index*
//! (ids, times, sizes, state). A counting allocator measures the heap an entity keeps for a
//! backlog of evicted messages, built both ways a backlog arises: sent and evicted, and
//! recovered from the store's index form after a restart. The design bound is 100 bytes.
#![cfg(not(target_env = "msvc"))]
#![allow(clippy::unwrap_used)] // test helpers outside #[test] functions

mod common;

use busbar_core::{Entity, EntityConfig, NewMessage, SequenceNumber, SubQueue, index_part};
use bytes::Bytes;
use common::*;
use std::sync::Mutex;
use tikv_jemalloc_ctl::{epoch, stats};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Measurements share one counter: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

const MESSAGES: i64 = 65_536;
const BOUND_BYTES_PER_MESSAGE: i64 = 100;

/// Bytes the allocator has handed out and not had back.
fn allocated() -> i64 {
    epoch::advance().unwrap();
    i64::try_from(stats::allocated::read().unwrap()).unwrap()
}

/// A 1 KiB message with a GUID-sized message-id, as the SDKs send them.
fn sent(n: i64) -> NewMessage {
    NewMessage {
        payload: Bytes::from(vec![b'x'; 1024]),
        message_id: Some(Bytes::from(format!("{n:036}"))),
        ..NewMessage::default()
    }
}

/// Enqueues `MESSAGES` messages, makes them durable and hands back the inserts the store keeps.
fn backlog(entity: &mut Entity) -> Vec<(i64, Bytes, Bytes)> {
    (0..MESSAGES)
        .flat_map(|n| enqueue_durably(entity, vec![sent(n)], at(n)))
        .collect()
}

fn report(how: &str, bytes: i64) -> i64 {
    let per_message = bytes / MESSAGES;
    println!("index cost, {how}: {per_message} bytes per message ({MESSAGES} messages)");
    per_message
}

#[test]
fn a_backlog_sent_and_evicted_costs_at_most_the_bound_per_message() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut entity = entity(EntityConfig::default());
    entity.keep_bodies_in_store();
    let before = allocated();
    let inserts = backlog(&mut entity);
    drop(inserts);
    entity.evict_bodies(u64::MAX);
    let per_message = report("sent then evicted", allocated() - before);
    assert_eq!(entity.len(SubQueue::Main), MESSAGES as usize);
    assert!(per_message <= BOUND_BYTES_PER_MESSAGE, "{per_message} B");
}

#[test]
fn a_backlog_recovered_from_the_index_form_costs_at_most_the_bound_per_message() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut sender = entity(EntityConfig::default());
    let index: Vec<_> = backlog(&mut sender)
        .into_iter()
        .map(|(sequence, message, state)| (sequence, index_part(&message), state))
        .collect();
    drop(sender);
    // The first clone of a `Bytes` made from a vector allocates its shared header: take it
    // here, outside the measurement.
    drop(index.clone());
    let before = allocated();
    let recovered = Entity::restore(
        EntityConfig::default(),
        SEED,
        MESSAGES,
        index.iter().cloned(),
        at(MESSAGES),
    )
    .unwrap();
    let per_message = report("recovered", allocated() - before);
    assert_eq!(recovered.len(SubQueue::Main), MESSAGES as usize);
    let head = recovered.peek(SubQueue::Main, SequenceNumber::FIRST, 1, at(MESSAGES));
    assert!(head[0].payload_in_store);
    assert!(per_message <= BOUND_BYTES_PER_MESSAGE, "{per_message} B");
}
