//! Property tests: random operations of competing session receivers with time jumps, checked
//! after every step — per-session order is never violated, no two receivers ever hold one
//! session, every message is in exactly one state and none is lost, failed operations change
//! nothing, session state reads what was last set, and a restart from the persisted records
//! keeps every message (unlocked, counts kept) and every session state.
#![allow(clippy::unwrap_used)] // model driver outside #[test] functions

mod common;

use busbar_core::{
    Delivery, EnqueueOutcome, Entity, EntitySnapshot, LockToken, MessageState, Outcome, Properties,
    ReceiveMode, Record, SequenceNumber, SubQueue, Timestamp,
};
use busbar_sessions::{
    AcceptNext, LISTING_SENTINEL, ReceiverId, SessionEntity, SessionEvent, SessionId,
    SessionLimits, SessionListing, StateRecord,
};
use bytes::Bytes;
use common::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

const SESSIONS: [&str; 3] = ["a", "b", "c"];
const RECEIVERS: u64 = 3;

#[derive(Clone, Debug)]
enum Op {
    Enqueue {
        session: usize,
        count: usize,
    },
    AcceptNamed {
        receiver: u64,
        session: usize,
    },
    AcceptNext {
        receiver: u64,
        wait_ms: i64,
    },
    Receive {
        receiver: u64,
        delete: bool,
    },
    Settle {
        receiver: u64,
        pick: usize,
        outcome: u8,
    },
    ForeignSettle {
        receiver: u64,
        session: usize,
    },
    Renew {
        receiver: u64,
    },
    SetState {
        receiver: u64,
        clear: bool,
    },
    GetState {
        receiver: u64,
    },
    /// Crash and restart from the simulated store.
    Restart,
    Close {
        receiver: u64,
    },
    Advance {
        ms: i64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let receiver = 0..RECEIVERS;
    let session = 0..SESSIONS.len();
    prop_oneof![
        3 => (session.clone(), 1..4usize).prop_map(|(session, count)| Op::Enqueue { session, count }),
        2 => (receiver.clone(), session.clone())
            .prop_map(|(receiver, session)| Op::AcceptNamed { receiver, session }),
        3 => (receiver.clone(), 0..20_000i64)
            .prop_map(|(receiver, wait_ms)| Op::AcceptNext { receiver, wait_ms }),
        5 => (receiver.clone(), prop::bool::weighted(0.1))
            .prop_map(|(receiver, delete)| Op::Receive { receiver, delete }),
        5 => (receiver.clone(), any::<usize>(), 0..5u8)
            .prop_map(|(receiver, pick, outcome)| Op::Settle { receiver, pick, outcome }),
        1 => (receiver.clone(), session.clone())
            .prop_map(|(receiver, session)| Op::ForeignSettle { receiver, session }),
        1 => receiver.clone().prop_map(|receiver| Op::Renew { receiver }),
        1 => (receiver.clone(), prop::bool::weighted(0.2))
            .prop_map(|(receiver, clear)| Op::SetState { receiver, clear }),
        1 => receiver.clone().prop_map(|receiver| Op::GetState { receiver }),
        1 => Just(Op::Restart),
        2 => receiver.clone().prop_map(|receiver| Op::Close { receiver }),
        2 => (1..40_000i64).prop_map(|ms| Op::Advance { ms }),
    ]
}

/// What the test knows from the entity's answers alone.
#[derive(Default)]
struct Model {
    holding: HashMap<ReceiverId, SessionId>,
    waiting: BTreeSet<ReceiverId>,
    in_flight: HashMap<ReceiverId, Vec<LockToken>>,
    enqueued: BTreeSet<SequenceNumber>,
    removed: BTreeSet<SequenceNumber>,
    states: HashMap<SessionId, Bytes>,
}

/// What the store keeps: messages as `(message, latest state)` per sequence, the high-water
/// mark, and the entity's key/value entries.
#[derive(Default)]
struct Store {
    messages: BTreeMap<i64, (Bytes, Bytes)>,
    high_water: i64,
    meta: BTreeMap<Bytes, Bytes>,
}

impl Store {
    fn persist(&mut self, entity: &mut SessionEntity) {
        for record in entity.drain_records() {
            match record {
                Record::Insert {
                    sequence,
                    message,
                    state,
                } => {
                    self.high_water = self.high_water.max(sequence.0);
                    self.messages.insert(sequence.0, (message, state));
                }
                Record::Update { sequence, state } => {
                    self.messages.get_mut(&sequence.0).unwrap().1 = state;
                }
                Record::Remove { sequence } => {
                    self.messages.remove(&sequence.0).unwrap();
                }
            }
        }
        for record in entity.drain_state_records() {
            match record.value {
                Some(value) => self.meta.insert(record.key, value),
                None => self.meta.remove(&record.key),
            };
        }
    }

    fn restart(&self, seed: u128, now: Timestamp) -> SessionEntity {
        let messages = self
            .messages
            .iter()
            .map(|(sequence, (message, state))| (*sequence, message.clone(), state.clone()));
        let core = Entity::restore(config(), seed, self.high_water, messages, now).unwrap();
        let states = self
            .meta
            .iter()
            .filter_map(|(key, value)| StateRecord::decode(key, value).unwrap());
        SessionEntity::new(core, SessionLimits::default(), states)
    }
}

/// The comparable state of the entity: the core's snapshot and who holds what.
fn observable(entity: &SessionEntity) -> (EntitySnapshot, Vec<Option<SessionId>>, usize) {
    let holders = (0..RECEIVERS)
        .map(|r| entity.session_of(ReceiverId(r)).cloned())
        .collect();
    (entity.core().snapshot(), holders, entity.waiting_len())
}

fn apply_events(entity: &mut SessionEntity, model: &mut Model) {
    while let Some(event) = entity.poll_event() {
        entity_event_into_model(model, event);
    }
}

/// A delivery of session `s` is in order iff no earlier message of `s` is still available.
fn check_order(entity: &SessionEntity, delivery: &Delivery) {
    let session = delivery.session_id.as_deref();
    for (queue, message) in entity.core().snapshot().messages {
        let earlier_available = queue == SubQueue::Main
            && message.session_id.as_deref() == session
            && message.sequence < delivery.sequence
            && message.state == MessageState::Active
            && message.lock.is_none();
        assert!(
            !earlier_available,
            "delivered {} of session {session:?} while {} was available",
            delivery.sequence, message.sequence
        );
    }
}

fn check(entity: &SessionEntity, model: &Model) {
    entity.check_invariants().unwrap();
    // No two receivers hold one session, and the entity agrees with what receivers were told.
    let held: BTreeSet<_> = model.holding.values().collect();
    assert_eq!(held.len(), model.holding.len(), "a session has two holders");
    for r in 0..RECEIVERS {
        let receiver = ReceiverId(r);
        assert_eq!(entity.session_of(receiver), model.holding.get(&receiver));
    }
    assert_eq!(entity.waiting_len(), model.waiting.len());
    // Every message accepted on send is stored exactly once or was removed by its receiver.
    let stored: BTreeSet<_> = entity
        .core()
        .snapshot()
        .messages
        .iter()
        .map(|(_, message)| message.sequence)
        .collect();
    assert!(stored.is_disjoint(&model.removed));
    let known: BTreeSet<_> = stored.union(&model.removed).copied().collect();
    assert_eq!(known, model.enqueued);
}

fn run(ops: Vec<Op>) {
    let mut entity = entity();
    let mut model = Model::default();
    let mut store = Store::default();
    let mut restarts = 0u128;
    let mut now = 0i64;
    for op in ops {
        // What the entity looks like once due timers ran (every operation runs them first):
        // a failed operation must leave exactly this.
        let mut twin = entity.clone();
        twin.handle_timeout(at(now));
        let twin_events: Vec<_> = std::iter::from_fn(|| twin.poll_event()).collect();
        let before = observable(&twin);
        let failed = match op {
            Op::Enqueue { session, count } => {
                let batch = (0..count).map(|i| in_session(&format!("m{i}"), SESSIONS[session]));
                for outcome in entity.enqueue(batch.collect(), at(now)).unwrap() {
                    if let EnqueueOutcome::Enqueued(sequence) = outcome {
                        model.enqueued.insert(sequence);
                    }
                }
                let through = SequenceNumber(entity.core().high_water());
                entity.mark_durable(through, at(now));
                false
            }
            Op::AcceptNamed { receiver, session } => {
                let receiver = ReceiverId(receiver);
                match entity.accept_named(receiver, sid(SESSIONS[session]), at(now)) {
                    Ok(lock) => {
                        model.holding.insert(receiver, lock.session);
                        false
                    }
                    Err(_) => true,
                }
            }
            Op::AcceptNext { receiver, wait_ms } => {
                let receiver = ReceiverId(receiver);
                match entity.accept_next(receiver, at(now + wait_ms), at(now)) {
                    Ok(AcceptNext::Accepted(lock)) => {
                        model.holding.insert(receiver, lock.session);
                        false
                    }
                    Ok(AcceptNext::Waiting) => {
                        model.waiting.insert(receiver);
                        false
                    }
                    Err(_) => true,
                }
            }
            Op::Receive { receiver, delete } => {
                let receiver = ReceiverId(receiver);
                let session = model
                    .holding
                    .get(&receiver)
                    .cloned()
                    .unwrap_or_else(|| sid("a"));
                let mode = if delete {
                    ReceiveMode::ReceiveAndDelete
                } else {
                    ReceiveMode::PeekLock
                };
                match entity.receive(receiver, &session, mode, at(now)) {
                    Ok(Some(delivery)) => {
                        assert_eq!(delivery.session_id.as_deref(), Some(session.as_str()));
                        check_order(&entity, &delivery);
                        match delivery.lock {
                            Some(lock) => model
                                .in_flight
                                .entry(receiver)
                                .or_default()
                                .push(lock.token),
                            None => {
                                model.removed.insert(delivery.sequence);
                            }
                        }
                        false
                    }
                    Ok(None) => false,
                    Err(_) => true,
                }
            }
            Op::Settle {
                receiver,
                pick,
                outcome,
            } => {
                let receiver = ReceiverId(receiver);
                let tokens = model.in_flight.get(&receiver).cloned().unwrap_or_default();
                match (
                    tokens.get(pick % tokens.len().max(1)),
                    model.holding.get(&receiver),
                ) {
                    (Some(&token), Some(session)) => {
                        let outcome = match outcome {
                            0 => Outcome::Complete,
                            1 => Outcome::Abandon {
                                properties: Properties::new(),
                            },
                            2 => Outcome::Defer {
                                properties: Properties::new(),
                            },
                            3 => Outcome::DeadLetter {
                                info: busbar_core::DeadLetterInfo::default(),
                                properties: Properties::new(),
                            },
                            _ => Outcome::Release,
                        };
                        let complete = outcome == Outcome::Complete;
                        let sequence = entity
                            .core()
                            .snapshot()
                            .messages
                            .iter()
                            .find(|(_, m)| m.lock.is_some_and(|lock| lock.token == token))
                            .map(|(_, m)| m.sequence);
                        let result =
                            entity.settle(receiver, &session.clone(), token, outcome, at(now));
                        if let Some(tokens) = model.in_flight.get_mut(&receiver) {
                            tokens.retain(|t| *t != token);
                        }
                        match (result, sequence) {
                            (Ok(()), Some(sequence)) => {
                                if complete {
                                    model.removed.insert(sequence);
                                }
                                false
                            }
                            (Ok(()), None) => panic!("settled a token that locked nothing"),
                            (Err(_), _) => true,
                        }
                    }
                    _ => false,
                }
            }
            Op::ForeignSettle { receiver, session } => {
                // Another receiver's token, or this one's under a session it does not hold.
                let token = model
                    .in_flight
                    .iter()
                    .find(|(owner, tokens)| owner.0 != receiver && !tokens.is_empty())
                    .and_then(|(_, tokens)| tokens.first().copied());
                match token {
                    Some(token) => {
                        let result = entity.settle(
                            ReceiverId(receiver),
                            &sid(SESSIONS[session]),
                            token,
                            Outcome::Complete,
                            at(now),
                        );
                        assert!(result.is_err(), "a foreign token settled");
                        true
                    }
                    None => false,
                }
            }
            Op::Renew { receiver } => {
                let receiver = ReceiverId(receiver);
                let session = model
                    .holding
                    .get(&receiver)
                    .cloned()
                    .unwrap_or_else(|| sid("b"));
                entity.renew(receiver, &session, at(now)).is_err()
            }
            Op::SetState { receiver, clear } => {
                let receiver = ReceiverId(receiver);
                let session = model
                    .holding
                    .get(&receiver)
                    .cloned()
                    .unwrap_or_else(|| sid("c"));
                let state = (!clear).then(|| Bytes::from(format!("state@{now}")));
                match entity.set_session_state(receiver, &session, state.clone(), at(now)) {
                    Ok(()) => {
                        match state {
                            Some(state) => model.states.insert(session, state),
                            None => model.states.remove(&session),
                        };
                        false
                    }
                    Err(_) => true,
                }
            }
            Op::GetState { receiver } => {
                let receiver = ReceiverId(receiver);
                let session = model
                    .holding
                    .get(&receiver)
                    .cloned()
                    .unwrap_or_else(|| sid("a"));
                match entity.session_state(receiver, &session, at(now)) {
                    Ok(state) => {
                        assert_eq!(state.as_ref(), model.states.get(&session));
                        false
                    }
                    Err(_) => true,
                }
            }
            Op::Restart => {
                store.persist(&mut entity);
                let listing = SessionListing::from_request(LISTING_SENTINEL, 0, 100);
                let sessions_before = entity.list_sessions(listing);
                let messages_before = entity.core().snapshot().without_locks();
                restarts += 1;
                entity = store.restart(SEED ^ restarts, at(now));
                // Locks are volatile and every connection is gone.
                model.holding.clear();
                model.waiting.clear();
                model.in_flight.clear();
                assert_eq!(entity.core().snapshot(), messages_before);
                assert_eq!(entity.list_sessions(listing), sessions_before);
                false
            }
            Op::Close { receiver } => {
                let receiver = ReceiverId(receiver);
                entity.close_receiver(receiver, at(now));
                model.holding.remove(&receiver);
                model.waiting.remove(&receiver);
                model.in_flight.remove(&receiver);
                false
            }
            Op::Advance { ms } => {
                now += ms;
                entity.handle_timeout(at(now));
                false
            }
        };
        if failed {
            let events: Vec<_> = std::iter::from_fn(|| entity.poll_event()).collect();
            assert_eq!(events, twin_events, "a failed operation emitted events");
            assert_eq!(
                observable(&entity),
                before,
                "a failed operation changed the entity"
            );
            for event in events {
                entity_event_into_model(&mut model, event);
            }
        }
        apply_events(&mut entity, &mut model);
        check(&entity, &model);
        store.persist(&mut entity);
        if let Some(deadline) = entity.poll_timeout() {
            assert!(deadline > Timestamp(0));
        }
    }
}

/// Applies an event, checking it fits what the receivers were told before.
fn entity_event_into_model(model: &mut Model, event: SessionEvent) {
    match event {
        SessionEvent::Accepted(lock) => {
            assert!(
                model.waiting.remove(&lock.owner),
                "{} was not waiting",
                lock.owner
            );
            assert!(
                model.holding.insert(lock.owner, lock.session).is_none(),
                "a receiver got a second session"
            );
        }
        SessionEvent::AcceptTimedOut { owner } => {
            assert!(model.waiting.remove(&owner), "{owner} was not waiting");
        }
        SessionEvent::LockLost { owner, session } => {
            assert_eq!(model.holding.remove(&owner), Some(session));
            model.in_flight.remove(&owner);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn sessions_keep_order_exclusivity_and_every_message(ops in prop::collection::vec(op(), 1..80)) {
        run(ops);
    }
}
