//! Shared test helpers: a session entity with fixed seed and clock, message builders, and
//! shorthands for accepting, receiving and settling.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

use busbar_core::{
    Delivery, EnqueueOutcome, Entity, EntityConfig, NewMessage, Outcome, Properties, ReceiveMode,
    SequenceNumber, Timestamp,
};
use busbar_sessions::{
    AcceptNext, ReceiverId, SessionEntity, SessionId, SessionLimits, SessionLock,
};
use bytes::Bytes;
use std::time::Duration;

pub const SEED: u128 = 0x5e55_1045;
pub const T0: Timestamp = Timestamp(1_700_000_000_000);
/// The lock duration of test entities.
pub const LOCK_MS: i64 = 30_000;

pub fn at(offset_ms: i64) -> Timestamp {
    Timestamp(T0.0 + offset_ms)
}

pub fn config() -> EntityConfig {
    EntityConfig {
        lock_duration: Duration::from_millis(LOCK_MS as u64),
        max_delivery_count: 3,
        ..EntityConfig::default()
    }
}

pub fn entity() -> SessionEntity {
    SessionEntity::new(
        Entity::new(config(), SEED).unwrap(),
        SessionLimits::default(),
        [],
    )
}

pub fn sid(id: &str) -> SessionId {
    SessionId::new(id).unwrap()
}

pub fn in_session(payload: &str, session: &str) -> NewMessage {
    NewMessage {
        payload: Bytes::from(payload.to_owned()),
        session_id: Some(session.to_owned()),
        ..NewMessage::default()
    }
}

pub fn send(
    entity: &mut SessionEntity,
    payload: &str,
    session: &str,
    now: Timestamp,
) -> SequenceNumber {
    match entity
        .enqueue(vec![in_session(payload, session)], now)
        .unwrap()[..]
    {
        [EnqueueOutcome::Enqueued(sequence)] => {
            entity.mark_durable(sequence, now);
            sequence
        }
        ref other => panic!("expected one enqueued message, got {other:?}"),
    }
}

/// Accepts the next available session, which must be free now.
pub fn accept_next(entity: &mut SessionEntity, owner: u64, now: Timestamp) -> SessionLock {
    match entity
        .accept_next(ReceiverId(owner), Timestamp(now.0 + 60_000), now)
        .unwrap()
    {
        AcceptNext::Accepted(lock) => lock,
        AcceptNext::Waiting => panic!("no session was free"),
    }
}

pub fn receive(entity: &mut SessionEntity, lock: &SessionLock, now: Timestamp) -> Option<Delivery> {
    entity
        .receive(lock.owner, &lock.session, ReceiveMode::PeekLock, now)
        .unwrap()
}

pub fn settle(
    entity: &mut SessionEntity,
    lock: &SessionLock,
    delivery: &Delivery,
    outcome: Outcome,
    now: Timestamp,
) {
    let token = delivery.lock.unwrap().token;
    entity
        .settle(lock.owner, &lock.session, token, outcome, now)
        .unwrap();
}

pub fn abandon() -> Outcome {
    Outcome::Abandon {
        properties: Properties::new(),
    }
}

pub fn text(delivery: &Delivery) -> String {
    String::from_utf8(delivery.payload.to_vec()).unwrap()
}
