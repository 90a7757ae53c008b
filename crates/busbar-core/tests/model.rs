//! Property tests: random operation sequences with time jumps, checked after every step against
//! the invariants, a model of accepted messages, and replay through a simulated store.
#![allow(clippy::unwrap_used)] // model driver outside #[test] functions

mod common;

use busbar_core::{
    CoreError, DeadLetterInfo, Delivery, EnqueueOutcome, Entity, EntityConfig, HeldCopies,
    LockToken, MemoryBudget, MessageState, NewMessage, Outcome, Properties, ReceiveMode,
    SequenceNumber, SubQueue, Timestamp,
};
use bytes::Bytes;
use common::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

#[derive(Clone, Debug)]
enum Op {
    Enqueue {
        count: usize,
        ttl_s: Option<u64>,
        scheduled_in_s: Option<i64>,
        id: Option<u8>,
        /// Some messages go straight to the dead-letter sub-queue (a failed topic filter).
        dead_letter: bool,
    },
    Receive {
        dead_letter: bool,
        peek_lock: bool,
    },
    Settle {
        pick: usize,
        outcome: u8,
    },
    SettleForeignToken,
    Renew {
        pick: usize,
    },
    /// `known`: pick among the messages in the right state; otherwise any number (mostly errors).
    ReceiveDeferred {
        dead_letter: bool,
        known: bool,
        pick: usize,
        peek_lock: bool,
    },
    Cancel {
        known: bool,
        pick: usize,
    },
    Advance {
        ms: i64,
    },
    HandleTimeout,
    /// Crash and restart: the entity is rebuilt from the store with a fresh seed.
    Restart,
    UpdateConfig {
        max_delivery_count: u32,
    },
    /// Evicts up to `want` bytes of message bytes to the (simulated) store.
    Evict {
        want: u64,
    },
    /// Reads back the evicted bytes of the next `max` messages of a sub-queue.
    ReadAhead {
        dead_letter: bool,
        max: usize,
    },
    Peek {
        dead_letter: bool,
        from: i64,
        max: usize,
    },
    /// The store reports inserts durable up to `lag` below the high-water mark.
    MarkDurable {
        lag: i64,
    },
    /// The write of every pending insert failed: they never reached the store.
    FailPending,
    /// One entity's part of a send to several entities: copies held, records kept aside.
    Hold {
        count: usize,
        id: Option<u8>,
        /// The second copy goes straight to the dead-letter sub-queue (a failed topic filter).
        dead_letter: bool,
    },
    /// The oldest outstanding held part is stored and released, or discarded.
    ResolveHeld {
        stored: bool,
    },
    /// A transaction: a settlement checked (and kept) while the lock is held, then committed
    /// (the settlement applied, its records stored with the oldest held part's) or rolled back
    /// (nothing changes, the held part is discarded).
    Transaction {
        pick: usize,
        outcome: u8,
        commit: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1..4usize, proptest::option::of(1..300u64), proptest::option::weighted(0.2, 0..120i64), proptest::option::of(0..6u8), proptest::bool::weighted(0.2))
            .prop_map(|(count, ttl_s, scheduled_in_s, id, dead_letter)| Op::Enqueue { count, ttl_s, scheduled_in_s, id, dead_letter }),
        4 => (any::<bool>(), any::<bool>()).prop_map(|(d, p)| Op::Receive { dead_letter: d, peek_lock: p }),
        5 => (any::<usize>(), 0..5u8).prop_map(|(pick, outcome)| Op::Settle { pick, outcome }),
        1 => Just(Op::SettleForeignToken),
        1 => any::<usize>().prop_map(|pick| Op::Renew { pick }),
        3 => (any::<bool>(), any::<bool>(), 0..40usize, any::<bool>()).prop_map(|(dead_letter, known, pick, peek_lock)| Op::ReceiveDeferred { dead_letter, known, pick, peek_lock }),
        1 => (any::<bool>(), 0..40usize).prop_map(|(known, pick)| Op::Cancel { known, pick }),
        3 => prop_oneof![0..2_000i64, 0..90_000i64, 0..400_000i64].prop_map(|ms| Op::Advance { ms }),
        1 => Just(Op::HandleTimeout),
        1 => Just(Op::Restart),
        // 0 is an invalid maximum: the update must be refused and change nothing.
        1 => (0..5u32).prop_map(|max_delivery_count| Op::UpdateConfig { max_delivery_count }),
        1 => (any::<bool>(), 0..40i64, 0..10usize).prop_map(|(dead_letter, from, max)| Op::Peek { dead_letter, from, max }),
        4 => prop_oneof![Just(0i64), 0..4i64].prop_map(|lag| Op::MarkDurable { lag }),
        2 => (1..3usize, proptest::option::of(0..6u8), any::<bool>()).prop_map(|(count, id, dead_letter)| Op::Hold { count, id, dead_letter }),
        2 => any::<bool>().prop_map(|stored| Op::ResolveHeld { stored }),
        1 => Just(Op::FailPending),
        2 => prop_oneof![Just(u64::MAX), 0..600u64].prop_map(|want| Op::Evict { want }),
        2 => (any::<bool>(), 0..10usize).prop_map(|(dead_letter, max)| Op::ReadAhead { dead_letter, max }),
        2 => (any::<usize>(), 0..5u8, any::<bool>()).prop_map(|(pick, outcome, commit)| Op::Transaction { pick, outcome, commit }),
    ]
}

fn sub_queue(dead_letter: bool) -> SubQueue {
    if dead_letter {
        SubQueue::DeadLetter
    } else {
        SubQueue::Main
    }
}

/// What the test knows independently of the entity.
struct Model {
    /// Accepted and not legitimately gone, with each message's expiry.
    live: BTreeMap<SequenceNumber, Option<Timestamp>>,
    /// Gone for good: never to be seen again.
    gone: BTreeSet<SequenceNumber>,
    /// Highest delivery count seen per message.
    counts: BTreeMap<SequenceNumber, u32>,
    tokens: Vec<LockToken>,
    dead_letter_on_expiry: bool,
    /// Inserts reported durable up to here: nothing above may be delivered or peeked...
    durable: SequenceNumber,
    /// ...except held copies released after their records were stored.
    released: BTreeSet<SequenceNumber>,
    /// Held parts not yet resolved, oldest first: their copies and insert records.
    held: Vec<HeldCopies>,
}

impl Model {
    /// A token issued earlier: half the time one of the last three (likely still valid).
    fn token(&self, pick: usize) -> LockToken {
        let len = self.tokens.len();
        let index = if pick.is_multiple_of(2) {
            len - 1 - (pick / 2) % len.min(3)
        } else {
            pick % len
        };
        self.tokens[index]
    }

    /// Whether a receive or peek may show the message: its insert is durable.
    fn may_show(&self, sequence: SequenceNumber) -> bool {
        sequence <= self.durable && !self.is_held(sequence) || self.released.contains(&sequence)
    }

    /// Bytes of the held copies not yet resolved (they count toward the quota but are left out
    /// of snapshots); every held payload is two bytes (`h0` … `h2`).
    fn held_bytes(&self) -> u64 {
        let copies: usize = self.held.iter().map(|held| held.sequences().len()).sum();
        u64::try_from(copies * 2).unwrap()
    }

    fn is_held(&self, sequence: SequenceNumber) -> bool {
        self.held
            .iter()
            .any(|part| part.sequences().contains(&sequence))
    }

    /// A message the entity took: live from now on, with its expiry.
    fn accepted(&mut self, entity: &Entity, sequence: SequenceNumber) {
        let expiry = entity
            .snapshot()
            .messages
            .iter()
            .find(|(_, d)| d.sequence == sequence)
            // Dead-lettered messages never expire.
            .and_then(|(queue, d)| d.expires_at.filter(|_| *queue == SubQueue::Main));
        assert!(self.live.insert(sequence, expiry).is_none());
    }

    fn forget(&mut self, sequence: SequenceNumber) {
        assert!(
            self.live.remove(&sequence).is_some(),
            "{sequence} removed twice"
        );
        self.gone.insert(sequence);
    }

    fn delivered(&mut self, delivery: &Delivery, mode_deletes: bool, now: Timestamp) {
        assert!(
            self.may_show(delivery.sequence),
            "message {} delivered before its insert was durable",
            delivery.sequence
        );
        assert!(
            delivery.expires_at.is_none_or(|at| at > now) || delivery.dead_letter.is_some(),
            "expired message {} delivered",
            delivery.sequence
        );
        if let Some(lock) = delivery.lock {
            self.tokens.push(lock.token);
        }
        if mode_deletes {
            self.forget(delivery.sequence);
        }
    }

    /// Compares the entity's messages with the model after a step.
    fn check(&mut self, entity: &Entity, budget: &MemoryBudget, now: Timestamp) {
        entity.check_invariants().unwrap();
        // check_invariants sums the held messages' bytes; the shared budget must agree, however
        // earlier entities (restarts, clones taken by failed operations) ended.
        assert_eq!(
            budget.used(),
            entity.memory_bytes(),
            "the memory budget is not the sum over held messages"
        );
        let snapshot = entity.snapshot();
        let stored: usize = snapshot
            .messages
            .iter()
            .map(|(_, d)| {
                assert_eq!(
                    d.payload_in_store,
                    d.payload.is_empty(),
                    "an evicted payload shown"
                );
                d.payload.len()
            })
            .sum();
        let evicted: Vec<SequenceNumber> = snapshot
            .messages
            .iter()
            .filter(|(_, d)| d.payload_in_store)
            .map(|(_, d)| d.sequence)
            .collect();
        // Every payload is two bytes (see `config`): an evicted one counts as much.
        assert_eq!(
            entity.size_bytes(),
            u64::try_from(stored + 2 * evicted.len()).unwrap() + self.held_bytes(),
            "the size counted is not the sum over stored and held messages"
        );
        let present: BTreeSet<_> = snapshot.messages.iter().map(|(_, d)| d.sequence).collect();
        for sequence in &present {
            assert!(
                self.live.contains_key(sequence),
                "{sequence} came back or was never accepted"
            );
        }
        let vanished: Vec<_> = self
            .live
            .iter()
            .filter(|(sequence, _)| !present.contains(sequence))
            .map(|(sequence, expiry)| (*sequence, *expiry))
            .collect();
        for (sequence, expiry) in vanished {
            // The only silent removal: expiry without dead-lettering on expiration.
            assert!(!self.dead_letter_on_expiry, "{sequence} lost");
            assert!(
                expiry.is_some_and(|at| at <= now),
                "{sequence} lost before expiring"
            );
            self.forget(sequence);
        }
        for (_, delivery) in &snapshot.messages {
            let last = self.counts.entry(delivery.sequence).or_insert(0);
            assert!(
                delivery.delivery_count >= *last,
                "delivery count of {} decreased",
                delivery.sequence
            );
            *last = delivery.delivery_count;
        }
    }
}

/// A sequence number to address: a message of `queue` in `state` when `known` (and one exists),
/// otherwise `pick` itself.
fn choose(
    entity: &Entity,
    queue: SubQueue,
    state: MessageState,
    known: bool,
    pick: usize,
) -> SequenceNumber {
    let candidates: Vec<_> = entity
        .snapshot()
        .messages
        .into_iter()
        .filter(|(q, d)| *q == queue && d.state == state && d.lock.is_none())
        .map(|(_, d)| d.sequence)
        .collect();
    match candidates.len() {
        len if known && len > 0 => candidates[pick % len],
        _ => SequenceNumber(i64::try_from(pick).unwrap()),
    }
}

fn outcome(code: u8, pick: usize) -> Outcome {
    let properties = if pick.is_multiple_of(3) {
        let mut map = BTreeMap::new();
        map.insert(
            format!("k{}", pick % 5),
            Bytes::from(vec![(pick % 251) as u8]),
        );
        Properties::from(map)
    } else {
        Properties::new()
    };
    match code {
        0 => Outcome::Complete,
        1 => Outcome::Abandon { properties },
        2 => Outcome::Defer { properties },
        3 => Outcome::DeadLetter {
            info: DeadLetterInfo {
                reason: Some("test".to_owned()),
                description: pick.is_multiple_of(2).then(|| "why".to_owned()),
            },
            properties,
        },
        _ => Outcome::Release,
    }
}

/// Fills in an evicted delivery's payload from the store, as the broker does.
fn hydrate(store: &SimulatedStore, delivery: &mut Delivery) {
    if delivery.payload_in_store {
        let stored = store.messages[&delivery.sequence.0].0.clone();
        delivery.fill_from_store(stored).unwrap();
    }
}

/// Runs a fallible operation; on error the entity must be exactly as before.
fn guarded<T>(
    entity: &mut Entity,
    operation: impl FnOnce(&mut Entity) -> Result<T, CoreError>,
) -> Result<T, CoreError> {
    let before = entity.snapshot();
    let result = operation(entity);
    if result.is_err() {
        assert_eq!(
            entity.snapshot(),
            before,
            "a failed operation changed state"
        );
        assert!(!entity.has_records(), "a failed operation emitted records");
    }
    result
}

fn run(config: EntityConfig, ops: Vec<Op>) {
    let budget = MemoryBudget::unlimited();
    let mut entity = Entity::new(config.clone(), SEED)
        .unwrap()
        .with_memory_budget(budget.clone());
    let mut config = config;
    let mut store = SimulatedStore::default();
    let mut model = Model {
        live: BTreeMap::new(),
        gone: BTreeSet::new(),
        counts: BTreeMap::new(),
        tokens: Vec::new(),
        dead_letter_on_expiry: config.dead_lettering_on_message_expiration,
        durable: SequenceNumber(0),
        released: BTreeSet::new(),
        held: Vec::new(),
    };
    let mut now = at(0);
    let mut restarts = 0u128;
    for op in ops {
        match op {
            Op::Enqueue {
                count,
                ttl_s,
                scheduled_in_s,
                id,
                dead_letter,
            } => {
                let messages: Vec<_> = (0..count)
                    .map(|i| NewMessage {
                        payload: Bytes::from(format!("m{i}")),
                        message_id: id.map(|id| Bytes::from(vec![id])),
                        // Some messages carry sessions so the session index is checked too.
                        session_id: (i % 2 == 0).then(|| format!("s{}", i % 3)),
                        time_to_live: ttl_s.map(Duration::from_secs),
                        scheduled_enqueue_time: scheduled_in_s
                            .map(|s| Timestamp(now.0 + s * 1_000)),
                        dead_letter: (dead_letter && i % 2 == 1).then(|| DeadLetterInfo {
                            reason: Some("FilterException".to_owned()),
                            description: None,
                        }),
                    })
                    .collect();
                let size = entity.size_bytes();
                let full = size >= config.max_size_bytes;
                let result = guarded(&mut entity, |e| e.enqueue(messages, now));
                let refusal = CoreError::QuotaExceeded {
                    size,
                    max: config.max_size_bytes,
                };
                assert_eq!(result.as_ref().err(), full.then_some(&refusal));
                for outcome in result.unwrap_or_default() {
                    if let EnqueueOutcome::Enqueued(sequence) = outcome {
                        model.accepted(&entity, sequence);
                    }
                }
            }
            Op::Receive {
                dead_letter,
                peek_lock,
            } => {
                let mode = if peek_lock {
                    ReceiveMode::PeekLock
                } else {
                    ReceiveMode::ReceiveAndDelete
                };
                if let Some(mut delivery) = entity.receive(sub_queue(dead_letter), mode, now) {
                    // An evicted message is read back whole from the store.
                    hydrate(&store, &mut delivery);
                    assert_eq!(delivery.payload.len(), 2);
                    if let Some(lock) = delivery.lock {
                        assert_eq!(lock.locked_until, now.saturating_add(config.lock_duration));
                    }
                    model.delivered(&delivery, !peek_lock, now);
                }
            }
            Op::Settle {
                pick,
                outcome: code,
            } => {
                if model.tokens.is_empty() {
                    continue;
                }
                let token = model.token(pick);
                let sequence = entity
                    .snapshot()
                    .messages
                    .iter()
                    .find(|(_, d)| d.lock.is_some_and(|l| l.token == token))
                    .map(|(_, d)| d.sequence);
                let result = guarded(&mut entity, |e| e.settle(token, outcome(code, pick), now));
                // Only a token of a lock held right now may settle (never one from before a restart).
                assert!(
                    result.is_err() || sequence.is_some(),
                    "a stale token settled"
                );
                if result.is_ok() && code == 0 {
                    model.forget(sequence.unwrap());
                }
            }
            Op::SettleForeignToken => {
                let result = guarded(&mut entity, |e| {
                    e.settle(LockToken::from_bytes([0x42; 16]), Outcome::Complete, now)
                });
                assert_eq!(result, Err(CoreError::LockLost));
            }
            Op::Renew { pick } => {
                if model.tokens.is_empty() {
                    continue;
                }
                let token = model.token(pick);
                if let Ok(until) = guarded(&mut entity, |e| e.renew_lock(token, now)) {
                    assert_eq!(until, now.saturating_add(config.lock_duration));
                }
            }
            Op::ReceiveDeferred {
                dead_letter,
                known,
                pick,
                peek_lock,
            } => {
                let mode = if peek_lock {
                    ReceiveMode::PeekLock
                } else {
                    ReceiveMode::ReceiveAndDelete
                };
                let queue = sub_queue(dead_letter);
                let wanted = [choose(&entity, queue, MessageState::Deferred, known, pick)];
                if let Ok(deliveries) = guarded(&mut entity, |e| {
                    e.receive_deferred(queue, &wanted, mode, now)
                }) {
                    for delivery in &deliveries {
                        model.delivered(delivery, !peek_lock, now);
                    }
                }
            }
            Op::Cancel { known, pick } => {
                let sequence = choose(
                    &entity,
                    SubQueue::Main,
                    MessageState::Scheduled,
                    known,
                    pick,
                );
                if guarded(&mut entity, |e| e.cancel_scheduled(&[sequence])).is_ok() {
                    model.forget(sequence);
                }
            }
            Op::Advance { ms } => now = Timestamp(now.0 + ms),
            Op::HandleTimeout => entity.handle_timeout(now),
            Op::Restart => {
                restarts += 1;
                store.apply(entity.drain_records());
                entity = store
                    .restore_with_seed(config.clone(), SEED + restarts, now)
                    .with_memory_budget(budget.clone());
                // Held parts never stored were never accepted; they end with the process (and
                // their numbers may be used again).
                model.held.clear();
                // Replay marks everything the store kept durable.
                model.durable = SequenceNumber(entity.high_water());
            }
            Op::MarkDurable { lag } => {
                let through = SequenceNumber(entity.high_water() - lag);
                entity.mark_durable(through);
                model.durable = model.durable.max(through);
            }
            Op::FailPending => {
                // Pending: accepted by the entity, above the durable mark, not a released copy.
                let failed: Vec<SequenceNumber> = model
                    .live
                    .keys()
                    .filter(|&&sequence| sequence > model.durable)
                    .filter(|sequence| !model.released.contains(sequence))
                    .copied()
                    .collect();
                entity.discard_pending(SequenceNumber(entity.high_water()));
                for sequence in failed {
                    // Never stored, never acknowledged: not lost, just not accepted.
                    model.live.remove(&sequence);
                    assert!(store.messages.remove(&sequence.0).is_some());
                }
                // The store never saw those inserts: its high-water mark may stay below.
            }
            Op::UpdateConfig { max_delivery_count } => {
                let update = EntityConfig {
                    max_delivery_count,
                    ..config.clone()
                };
                let result = guarded(&mut entity, |e| e.update_config(update.clone(), now));
                assert_eq!(result.is_ok(), max_delivery_count > 0);
                if result.is_ok() {
                    config = update;
                }
            }
            Op::Evict { want } => {
                // What the broker evicts is in the store: the records go there first.
                store.apply(entity.drain_records());
                let before = entity.memory_bytes();
                let (freed, _) = entity.evict_bodies(want);
                assert_eq!(entity.memory_bytes(), before - freed);
            }
            Op::ReadAhead { dead_letter, max } => {
                let queue = sub_queue(dead_letter);
                let missing = entity.evicted_at_head(queue, max, u64::MAX);
                assert!(missing.len() <= max);
                let bodies = missing
                    .iter()
                    .map(|sequence| (*sequence, store.messages[&sequence.0].0.clone()));
                assert_eq!(entity.restore_bodies(bodies).unwrap(), missing.len());
                assert!(entity.evicted_at_head(queue, max, u64::MAX).is_empty());
            }
            Op::Peek {
                dead_letter,
                from,
                max,
            } => {
                let peeked = entity.peek(sub_queue(dead_letter), SequenceNumber(from), max, now);
                assert!(peeked.len() <= max);
                assert!(peeked.windows(2).all(|w| w[0].sequence < w[1].sequence));
                assert!(
                    peeked
                        .iter()
                        .all(|d| d.lock.is_none() && d.sequence.0 >= from)
                );
                assert!(peeked.iter().all(|d| model.may_show(d.sequence)));
            }
            Op::Hold {
                count,
                id,
                dead_letter,
            } => {
                let messages = (0..count)
                    .map(|i| NewMessage {
                        payload: Bytes::from(format!("h{i}")),
                        message_id: id.map(|id| Bytes::from(vec![id])),
                        session_id: (i % 2 == 0).then(|| format!("s{}", i % 3)),
                        dead_letter: (dead_letter && i == 1).then(DeadLetterInfo::default),
                        ..NewMessage::default()
                    })
                    .collect();
                let size = entity.size_bytes();
                let result = guarded(&mut entity, |e| e.hold(messages, now));
                if size >= config.max_size_bytes {
                    assert!(matches!(result, Err(CoreError::QuotaExceeded { .. })));
                    continue;
                }
                let held = result.unwrap();
                assert_eq!(held.records.len(), held.sequences().len());
                assert!(!entity.has_records(), "held inserts were queued");
                model.held.push(held);
            }
            Op::Transaction {
                pick,
                outcome: code,
                commit,
            } => {
                if model.tokens.is_empty() {
                    continue;
                }
                let token = model.token(pick);
                let settlement = outcome(code, pick);
                let before = entity.snapshot();
                let checked = entity.check_settle(token, &settlement, now);
                assert_eq!(entity.snapshot(), before, "a check changed the entity");
                let held = (!model.held.is_empty()).then(|| model.held.remove(0));
                if !(commit && checked.is_ok()) {
                    // Rolled back: the message stays exactly as it was; the copies go.
                    if let Some(held) = held {
                        entity.discard_held(&held.sequences());
                    }
                    continue;
                }
                let sequence = before
                    .messages
                    .iter()
                    .find(|(_, d)| d.lock.is_some_and(|l| l.token == token))
                    .map(|(_, d)| d.sequence);
                let settled = entity.settle(token, settlement, now);
                assert_eq!(settled, checked, "the check foretold another result");
                if code == 0 {
                    model.forget(sequence.unwrap());
                }
                // One submission: the settlement's records and the held copies together.
                let mut records: Vec<_> = entity.drain_records().collect();
                if let Some(held) = held {
                    let sequences = held.sequences();
                    records.extend(held.records);
                    store.apply(records);
                    entity.release_held(&sequences);
                    for sequence in sequences {
                        model.accepted(&entity, sequence);
                        model.released.insert(sequence);
                    }
                } else {
                    store.apply(records);
                }
            }
            Op::ResolveHeld { stored } => {
                if model.held.is_empty() {
                    continue;
                }
                let held = model.held.remove(0);
                let sequences = held.sequences();
                if stored {
                    store.apply(held.records);
                    entity.release_held(&sequences);
                    for sequence in sequences {
                        model.accepted(&entity, sequence);
                        model.released.insert(sequence);
                    }
                } else {
                    entity.discard_held(&sequences);
                }
            }
        }
        model.check(&entity, &budget, now);
        store.apply(entity.drain_records());
        let restored = store.restore(config.clone(), now);
        restored.check_invariants().unwrap();
        assert_eq!(
            restored.size_bytes() + model.held_bytes(),
            entity.size_bytes(),
            "restart recounts what was stored"
        );
        let (restored, mut live) = (restored.snapshot(), entity.snapshot().without_locks());
        for (_, delivery) in &mut live.messages {
            hydrate(&store, delivery);
        }
        assert_eq!(restored.messages, live.messages, "replay differs");
        // Numbers of held copies are used but stored only once released.
        assert!(restored.high_water <= live.high_water);
    }
}

fn config() -> impl Strategy<Value = EntityConfig> {
    (
        5..40u64,
        1..5u32,
        proptest::option::of(20..400u64),
        any::<bool>(),
        proptest::option::of(1..60u64),
        // Payloads are 2 bytes: small quotas are reached within a few enqueues.
        prop_oneof![4..40u64, Just(busbar_core::DEFAULT_MAX_SIZE_BYTES)],
    )
        .prop_map(
            |(
                lock_s,
                max_delivery_count,
                ttl_s,
                dead_letter_on_expiry,
                window_s,
                max_size_bytes,
            )| EntityConfig {
                lock_duration: Duration::from_secs(lock_s),
                max_delivery_count,
                default_message_ttl: ttl_s.map(Duration::from_secs),
                dead_lettering_on_message_expiration: dead_letter_on_expiry,
                duplicate_detection_window: window_s.map(Duration::from_secs),
                max_size_bytes,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn random_operations_keep_every_invariant(config in config(), ops in proptest::collection::vec(op(), 1..80)) {
        run(config, ops);
    }
}
