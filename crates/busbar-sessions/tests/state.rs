//! Session state (set / get / clear, size limit, persistence across a restart) and session
//! enumeration with paging and the last-updated filter.

mod common;

use busbar_core::{Entity, Outcome, Timestamp};
use busbar_sessions::{
    ReceiverId, SessionEntity, SessionError, SessionLimits, SessionListing, StateRecord,
};
use bytes::Bytes;
use common::*;

#[test]
fn session_state_is_set_read_cleared_and_persisted() {
    let mut entity = entity();
    send(&mut entity, "m", "s", at(0));
    let lock = accept_next(&mut entity, 1, at(0));
    let (owner, session) = (lock.owner, lock.session.clone());
    assert_eq!(entity.session_state(owner, &session, at(1)), Ok(None));
    let state = Bytes::from_static(b"step-2");
    entity
        .set_session_state(owner, &session, Some(state.clone()), at(2))
        .unwrap();
    assert_eq!(
        entity.session_state(owner, &session, at(3)),
        Ok(Some(state.clone()))
    );
    let records: Vec<_> = entity.drain_state_records().collect();
    assert_eq!(records.len(), 1);
    let (decoded_session, stored) =
        StateRecord::decode(&records[0].key, records[0].value.as_ref().unwrap())
            .unwrap()
            .unwrap();
    assert_eq!(
        (decoded_session, stored.state, stored.updated),
        (session.clone(), state, at(2))
    );
    // Another receiver cannot touch it.
    assert_eq!(
        entity.session_state(ReceiverId(2), &session, at(3)),
        Err(SessionError::LockLost(session.clone()))
    );
    entity
        .set_session_state(owner, &session, None, at(4))
        .unwrap();
    assert_eq!(entity.session_state(owner, &session, at(5)), Ok(None));
    let records: Vec<_> = entity.drain_state_records().collect();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].value, None);
}

#[test]
fn every_session_state_can_be_cleared_at_once() {
    let mut entity = entity();
    for session in ["a", "b"] {
        send(&mut entity, "m", session, at(0));
    }
    let mut locks = Vec::new();
    for receiver in [1, 2] {
        let lock = accept_next(&mut entity, receiver, at(0));
        let state = Some(Bytes::from_static(b"kept"));
        entity
            .set_session_state(lock.owner, &lock.session, state, at(1))
            .unwrap();
        locks.push(lock);
    }
    entity.drain_state_records().for_each(drop);
    entity.clear_states();
    let mut removals: Vec<StateRecord> = entity.drain_state_records().collect();
    removals.sort_by(|x, y| x.key.cmp(&y.key));
    let expected = ["a", "b"].map(|session| StateRecord::new(&sid(session), None));
    assert_eq!(removals, expected);
    for lock in locks {
        assert_eq!(
            entity.session_state(lock.owner, &lock.session, at(2)),
            Ok(None)
        );
    }
}

#[test]
fn oversized_session_state_is_refused() {
    let core = Entity::new(config(), SEED).unwrap();
    let limits = SessionLimits { max_state_size: 4 };
    let mut entity = SessionEntity::new(core, limits, []);
    let lock = entity.accept_named(ReceiverId(1), sid("s"), at(0)).unwrap();
    assert_eq!(
        entity.set_session_state(
            lock.owner,
            &lock.session,
            Some(Bytes::from_static(b"12345")),
            at(0)
        ),
        Err(SessionError::StateTooLarge { size: 5, max: 4 })
    );
    assert_eq!(entity.drain_state_records().count(), 0);
    entity
        .set_session_state(
            lock.owner,
            &lock.session,
            Some(Bytes::from_static(b"1234")),
            at(0),
        )
        .unwrap();
}

#[test]
fn state_and_messages_survive_a_restart_and_state_outlives_the_messages() {
    let mut entity = entity();
    send(&mut entity, "m1", "kept", at(0));
    send(&mut entity, "m2", "done", at(0));
    let lock = entity
        .accept_named(ReceiverId(1), sid("done"), at(0))
        .unwrap();
    let delivery = receive(&mut entity, &lock, at(0)).unwrap();
    settle(&mut entity, &lock, &delivery, Outcome::Complete, at(0));
    entity
        .set_session_state(
            lock.owner,
            &lock.session,
            Some(Bytes::from_static(b"cursor")),
            at(1),
        )
        .unwrap();
    let mut messages = std::collections::BTreeMap::new();
    let mut high_water = 0;
    for record in entity.drain_records() {
        match record {
            busbar_core::Record::Insert {
                sequence,
                message,
                state,
            } => {
                high_water = high_water.max(sequence.0);
                messages.insert(sequence.0, (message, state));
            }
            busbar_core::Record::Update { sequence, state } => {
                if let Some(entry) = messages.get_mut(&sequence.0) {
                    entry.1 = state;
                }
            }
            busbar_core::Record::Remove { sequence } => {
                messages.remove(&sequence.0);
            }
        }
    }
    let meta: Vec<_> = entity
        .drain_state_records()
        .filter_map(|record| Some((record.key, record.value?)))
        .chain([(Bytes::from_static(b"unrelated"), Bytes::from_static(b"x"))])
        .collect();
    let core = Entity::restore(
        config(),
        SEED ^ 1,
        high_water,
        messages
            .into_iter()
            .map(|(seq, (message, state))| (seq, message, state)),
        at(2),
    )
    .unwrap();
    let states = meta
        .iter()
        .filter_map(|(key, value)| StateRecord::decode(key, value).unwrap());
    let mut restarted = SessionEntity::new(core, SessionLimits::default(), states);
    restarted.check_invariants().unwrap();
    // Locks are volatile: the session held before the restart is free now.
    let lock = restarted
        .accept_named(ReceiverId(5), sid("done"), at(3))
        .unwrap();
    assert_eq!(
        restarted.session_state(lock.owner, &lock.session, at(3)),
        Ok(Some(Bytes::from_static(b"cursor")))
    );
    assert!(receive(&mut restarted, &lock, at(3)).is_none());
    let next = accept_next(&mut restarted, 6, at(3));
    assert_eq!(next.session, sid("kept"));
    let listed = restarted.list_sessions(SessionListing::from_request(
        busbar_sessions::LISTING_SENTINEL,
        0,
        100,
    ));
    assert_eq!(listed.sessions, [sid("done"), sid("kept")]);
}

#[test]
fn listing_pages_and_filters_by_last_state_update() {
    let mut entity = entity();
    for session in ["c", "a", "b", "d"] {
        send(&mut entity, "m", session, at(0));
    }
    let lock = entity
        .accept_named(ReceiverId(1), sid("stateful"), at(0))
        .unwrap();
    entity
        .set_session_state(
            lock.owner,
            &lock.session,
            Some(Bytes::from_static(b"s")),
            at(100),
        )
        .unwrap();
    let lock_b = entity.accept_named(ReceiverId(2), sid("b"), at(0)).unwrap();
    entity
        .set_session_state(
            lock_b.owner,
            &lock_b.session,
            Some(Bytes::from_static(b"s")),
            at(50),
        )
        .unwrap();
    let page = |entity: &SessionEntity, updated: Timestamp, skip, top| {
        entity.list_sessions(SessionListing::from_request(updated, skip, top))
    };
    let all = page(&entity, busbar_sessions::LISTING_SENTINEL, 0, 100);
    assert_eq!(all.sessions, ["a", "b", "c", "d", "stateful"].map(sid));
    assert_eq!(all.next_skip, 5);
    let second = page(&entity, busbar_sessions::LISTING_SENTINEL, 2, 2);
    assert_eq!(second.sessions, ["c", "d"].map(sid));
    assert_eq!(second.next_skip, 4);
    assert!(
        page(&entity, busbar_sessions::LISTING_SENTINEL, 5, 2)
            .sessions
            .is_empty()
    );
    assert_eq!(page(&entity, at(60), 0, 100).sessions, [sid("stateful")]);
    assert_eq!(
        page(&entity, at(10), 0, 100).sessions,
        ["b", "stateful"].map(sid)
    );
    assert!(page(&entity, at(100), 0, 100).sessions.is_empty());
    assert_eq!(page(&entity, at(0), -1, -1).sessions, []);
}
