//! The entity: one queue or subscription with its dead-letter sub-queue — enqueue, receive, peek
//! and scheduling; settlement, timers, replay and inspection live in the child modules.

mod dead_letter_reports;
mod held;
mod inspect;
mod purge;
mod queue;
mod restore;
mod session;
mod session_index;
mod settle;
mod timers;

pub use held::HeldCopies;
pub use inspect::EntitySnapshot;
pub use settle::Outcome;

use crate::budget::MemoryBudget;
use crate::codec::{BodyFields, PersistedState, Record, encode_body, encode_state};
use crate::config::EntityConfig;
use crate::dedup::DuplicateWindow;
use crate::error::CoreError;
use crate::lock::{LockHolder, LockSlab};
use crate::message::{
    Delivery, DeliveryLock, EnqueueOutcome, NewMessage, Properties, Stage, StoredMessage,
};
use crate::time::{SequenceNumber, Timestamp};
use queue::Queue;
use std::collections::{BTreeSet, HashSet};

/// How many messages an entity holds, as Service Bus reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageCounts {
    /// Messages in the entity itself: available, locked or deferred.
    pub active: usize,
    /// Messages waiting for their scheduled enqueue time.
    pub scheduled: usize,
    /// Of the active ones, those deferred (and not locked by a receive-by-sequence-number now);
    /// Service Bus reports no such count, the explorer does.
    pub deferred: usize,
    /// Messages in the dead-letter sub-queue.
    pub dead_lettered: usize,
    /// Payload bytes of every message stored, in both sub-queues.
    pub size_bytes: u64,
}

/// Which sub-queue of the entity an operation addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubQueue {
    /// The entity itself.
    Main,
    /// Its dead-letter sub-queue (`<entity>/$DeadLetterQueue`).
    DeadLetter,
}

/// How a receive hands out messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReceiveMode {
    /// Lock the message; it stays stored until settled.
    PeekLock,
    /// Remove the message as it is handed out.
    ReceiveAndDelete,
}

/// The state machine of one Service Bus entity (sans-IO: every operation takes `now`).
///
/// Effects leave in three ways: results and [`Delivery`]s are returned; records to persist queue
/// up for [`drain_records`](Entity::drain_records); the next deadline is
/// [`poll_timeout`](Entity::poll_timeout), to be answered with
/// [`handle_timeout`](Entity::handle_timeout). Every operation is O(log n) in queue length and
/// held locks (plus the size of its own result). An operation that returns an error changes
/// nothing.
#[derive(Clone, Debug)]
pub struct Entity {
    config: EntityConfig,
    next_sequence: i64,
    main: Queue,
    dead_letter: Queue,
    locks: LockSlab,
    /// `(locked_until, slot)` of every held lock, for expiry in deadline order.
    lock_deadlines: BTreeSet<(Timestamp, u32)>,
    duplicates: DuplicateWindow,
    records: Vec<Record>,
    /// Messages dead-lettered since the caller last took them; `None` unless the caller asked
    /// for reports ([`report_dead_letters`](Entity::report_dead_letters)).
    dead_letter_reports: Option<Vec<SequenceNumber>>,
    /// Whether the caller evicts message bytes to the store when the memory budget is used up
    /// ([`keep_bodies_in_store`](Entity::keep_bodies_in_store)), so enqueues are not refused
    /// for memory.
    bodies_in_store: bool,
}

impl Entity {
    /// A new, empty entity. `seed` keys its lock tokens: pass fresh OS randomness in production so
    /// tokens differ across restarts; tests pass fixed seeds.
    pub fn new(config: EntityConfig, seed: u128) -> Result<Entity, CoreError> {
        config.validate()?;
        Ok(Entity::empty(config, seed))
    }

    fn empty(config: EntityConfig, seed: u128) -> Entity {
        let budget = MemoryBudget::unlimited();
        Entity {
            duplicates: DuplicateWindow::new(config.duplicate_detection_window),
            config,
            next_sequence: SequenceNumber::FIRST.0,
            main: Queue::new(true, budget.clone()),
            dead_letter: Queue::new(false, budget),
            locks: LockSlab::new(seed),
            lock_deadlines: BTreeSet::new(),
            records: Vec::new(),
            dead_letter_reports: None,
            bodies_in_store: false,
        }
    }

    /// Charges the messages this entity holds, now and from now on, to `budget` (shared by
    /// every entity of a broker) instead of a budget of its own that refuses nothing.
    #[must_use]
    pub fn with_memory_budget(mut self, budget: MemoryBudget) -> Entity {
        self.main.charge_to(budget.clone());
        self.dead_letter.charge_to(budget);
        self
    }

    /// Message bytes may be evicted to the store ([`evict_bodies`](Entity::evict_bodies)): the
    /// memory budget then bounds what stays in memory instead of refusing enqueues.
    pub fn keep_bodies_in_store(&mut self) {
        self.bodies_in_store = true;
    }

    /// The memory budget this entity's messages are charged to.
    pub fn memory_budget(&self) -> &MemoryBudget {
        self.main.memory_budget()
    }

    /// Evicts the bytes of durable messages, the dead-letter sub-queue's first, then the last
    /// to be received, until `want` bytes are freed or none is left that may go. Deliveries of
    /// an evicted message say [`Delivery::payload_in_store`]. Returns the bytes freed and the
    /// messages evicted.
    pub fn evict_bodies(&mut self, want: u64) -> (u64, u64) {
        let (freed, evicted) = self.dead_letter.evict_from_tail(want);
        let (more, more_evicted) = self.main.evict_from_tail(want.saturating_sub(freed));
        (freed + more, evicted + more_evicted)
    }

    /// Of the next `max` messages a receive of `queue` would hand out, those evicted, as many
    /// as `max_bytes` of payload hold (at least one).
    pub fn evicted_at_head(
        &self,
        queue: SubQueue,
        max: usize,
        max_bytes: u64,
    ) -> Vec<SequenceNumber> {
        self.queue(queue).evicted_at_head(max, max_bytes)
    }

    /// Takes evicted messages' bytes back, as the store holds them (`(sequence, immutable
    /// part)`): a read-ahead. Messages gone or not evicted meanwhile are skipped; bytes that are
    /// not the message's are refused with [`CoreError::Decode`] (those before it are taken).
    pub fn restore_bodies(
        &mut self,
        bodies: impl IntoIterator<Item = (SequenceNumber, bytes::Bytes)>,
    ) -> Result<usize, CoreError> {
        let mut restored = 0;
        for (sequence, encoded) in bodies {
            let queue = if self.main.get(sequence).is_some() {
                SubQueue::Main
            } else {
                SubQueue::DeadLetter
            };
            restored += usize::from(self.queue_mut(queue).restore_body(sequence, encoded)?);
        }
        Ok(restored)
    }

    /// Bytes of the messages held in both sub-queues, in every state (encoded, plus their
    /// bookkeeping): what this entity charges to its memory budget. O(1).
    pub fn memory_bytes(&self) -> u64 {
        self.main.memory_bytes() + self.dead_letter.memory_bytes()
    }

    /// The current configuration.
    pub fn config(&self) -> &EntityConfig {
        &self.config
    }

    /// Applies new entity properties. As in Service Bus, updating an entity loses every lock:
    /// locked messages become available again (deferred ones deferred again) without counting a
    /// delivery. New limits apply to later locks and enqueues.
    pub fn update_config(&mut self, config: EntityConfig, now: Timestamp) -> Result<(), CoreError> {
        config.validate()?;
        self.duplicates
            .set_window(config.duplicate_detection_window, now);
        self.config = config;
        for slot in self.locks.held_slots() {
            self.end_lock(slot, settle::LockEnd::Invalidated, now);
        }
        Ok(())
    }

    /// Enqueues a batch, all or nothing; one outcome per message, in order. A message whose
    /// message-id was seen within the duplicate-detection window (earlier in this batch
    /// included) is acknowledged as [`EnqueueOutcome::Duplicate`] and not stored.
    ///
    /// A message carrying [`NewMessage::dead_letter`] goes into the dead-letter sub-queue
    /// instead (duplicate detection applies to it all the same).
    ///
    /// Refused with [`CoreError::QuotaExceeded`] when the stored messages have already reached
    /// the entity's `max_size_bytes` (as in Service Bus, the last batch accepted may go past it),
    /// and with [`CoreError::MemoryBudgetExceeded`] when the messages held by every entity
    /// sharing its [`MemoryBudget`] have reached the budget's limit.
    ///
    /// New messages are *pending*: no receive, peek or session hand-out sees them until the
    /// caller reports their insert records durable with [`mark_durable`](Entity::mark_durable),
    /// so a send whose sync fails is never delivered.
    pub fn enqueue(
        &mut self,
        messages: Vec<NewMessage>,
        now: Timestamp,
    ) -> Result<Vec<EnqueueOutcome>, CoreError> {
        let exhausted = CoreError::NotAllowed("the entity has used every sequence number");
        let count = i64::try_from(messages.len()).map_err(|_| exhausted.clone())?;
        if self.next_sequence.checked_add(count).is_none() {
            return Err(exhausted);
        }
        let size = self.size_bytes();
        if size >= self.config.max_size_bytes {
            return Err(CoreError::QuotaExceeded {
                size,
                max: self.config.max_size_bytes,
            });
        }
        let budget = self.main.memory_budget();
        if budget.is_exhausted() && !self.bodies_in_store {
            return Err(CoreError::MemoryBudgetExceeded {
                used: budget.used(),
                limit: budget.limit(),
            });
        }
        self.duplicates.forget_expired(now);
        let mut outcomes = Vec::with_capacity(messages.len());
        for message in messages {
            if let Some(id) = &message.message_id {
                if self.duplicates.contains(id, now) {
                    outcomes.push(EnqueueOutcome::Duplicate);
                    continue;
                }
                self.duplicates.remember(id.clone(), now);
            }
            let sequence = SequenceNumber(self.next_sequence);
            self.next_sequence += 1;
            // The dead-letter sub-queue schedules nothing: a copy dead-lettered on arrival is
            // active there as soon as it is durable.
            let (queue, scheduled_enqueue_time) = match message.dead_letter {
                Some(_) => (SubQueue::DeadLetter, None),
                None => (SubQueue::Main, message.scheduled_enqueue_time),
            };
            let body = encode_body(BodyFields {
                payload: &message.payload,
                message_id: message.message_id,
                session_id: message.session_id,
                accepted_time: now,
                time_to_live: self.config.effective_ttl(message.time_to_live),
                scheduled_enqueue_time,
            });
            let stage = Stage::Pending {
                scheduled: body.enqueued_time() > now,
            };
            let stored = StoredMessage {
                body,
                delivery_count: 0,
                dead_letter: message.dead_letter.map(Box::new),
                properties: Properties::new(),
                stage,
            };
            self.records.push(Record::Insert {
                sequence,
                message: stored.body.encoded().cloned().unwrap_or_default(),
                state: encode_state(&persisted_state(queue, &stored)),
            });
            self.queue_mut(queue).insert(sequence, stored);
            outcomes.push(EnqueueOutcome::Enqueued(sequence));
        }
        Ok(outcomes)
    }

    /// Reports every insert record up to sequence number `through` durable: those messages
    /// become available (or scheduled) to receive and peek. The caller passes the
    /// [`high_water`](Entity::high_water) it read when draining the records that are now
    /// durable; after a failed write it never calls this again for them, so they stay hidden.
    /// O(log n) per message moved on.
    pub fn mark_durable(&mut self, through: SequenceNumber) {
        for queue in [SubQueue::Main, SubQueue::DeadLetter] {
            let queue = self.queue_mut(queue);
            while queue.restage_pending_through(through, revealed).is_some() {}
        }
    }

    /// Moves a message that nothing could see yet (pending or held) on to where its stage says.
    fn reveal(&mut self, queue: SubQueue, sequence: SequenceNumber) {
        self.queue_mut(queue).restage(sequence, revealed);
    }

    /// Hands out the available message with the lowest sequence number, if any: locked under a
    /// new token (peek-lock) or removed (receive-and-delete). Runs due timers first, so expired
    /// messages are never delivered and expired locks make their messages available again.
    pub fn receive(
        &mut self,
        queue: SubQueue,
        mode: ReceiveMode,
        now: Timestamp,
    ) -> Option<Delivery> {
        self.handle_timeout(now);
        let sequence = self.queue(queue).first_available()?;
        let locked_until = now.saturating_add(self.config.lock_duration);
        self.deliver(queue, sequence, mode, locked_until)
    }

    /// Receives deferred messages by sequence number (duplicates in the list count once), all or
    /// nothing: a number that is unknown, not deferred, locked or expired fails the whole call
    /// with [`CoreError::MessageNotFound`].
    pub fn receive_deferred(
        &mut self,
        queue: SubQueue,
        sequences: &[SequenceNumber],
        mode: ReceiveMode,
        now: Timestamp,
    ) -> Result<Vec<Delivery>, CoreError> {
        let mut wanted = Vec::with_capacity(sequences.len());
        let mut seen = HashSet::with_capacity(sequences.len());
        for &sequence in sequences {
            let deferred = self.queue(queue).get(sequence).is_some_and(|message| {
                message.stage == Stage::Deferred && !is_expired(queue, message, now)
            });
            if !deferred {
                return Err(CoreError::MessageNotFound(sequence));
            }
            if seen.insert(sequence) {
                wanted.push(sequence);
            }
        }
        if mode == ReceiveMode::PeekLock && u32::try_from(self.locks.held() + wanted.len()).is_err()
        {
            return Err(CoreError::NotAllowed("too many locks held"));
        }
        let locked_until = now.saturating_add(self.config.lock_duration);
        Ok(wanted
            .into_iter()
            .filter_map(|sequence| self.deliver(queue, sequence, mode, locked_until))
            .collect())
    }

    /// Browses up to `max` messages from sequence number `from` on, in order, without locking
    /// or counting: active, locked, deferred and scheduled alike (dead-lettered ones only on the
    /// dead-letter sub-queue). Messages already expired, and pending ones (not yet durable), are
    /// left out.
    pub fn peek(
        &self,
        queue: SubQueue,
        from: SequenceNumber,
        max: usize,
        now: Timestamp,
    ) -> Vec<Delivery> {
        self.queue(queue)
            .range(from..)
            .filter(|(_, message)| is_visible_to_peek(queue, message, now))
            .take(max)
            .map(|(sequence, message)| message.delivery(sequence, None))
            .collect()
    }

    /// Cancels scheduled messages, all or nothing: a number that is not a scheduled message of
    /// the main queue fails the call with [`CoreError::MessageNotFound`].
    pub fn cancel_scheduled(&mut self, sequences: &[SequenceNumber]) -> Result<(), CoreError> {
        for &sequence in sequences {
            let scheduled = self
                .main
                .get(sequence)
                .is_some_and(|message| message.stage == Stage::Scheduled);
            if !scheduled {
                return Err(CoreError::MessageNotFound(sequence));
            }
        }
        for &sequence in sequences {
            if self.main.remove(sequence).is_some() {
                self.records.push(Record::Remove { sequence });
            }
        }
        Ok(())
    }

    /// Takes the records queued for the store, oldest first.
    pub fn drain_records(&mut self) -> std::vec::Drain<'_, Record> {
        self.records.drain(..)
    }

    /// Whether records are waiting to be drained.
    pub fn has_records(&self) -> bool {
        !self.records.is_empty()
    }

    /// The highest sequence number ever assigned (0 before the first enqueue).
    pub fn high_water(&self) -> i64 {
        self.next_sequence - 1
    }

    /// Messages stored in a sub-queue, in every state.
    pub fn len(&self, queue: SubQueue) -> usize {
        self.queue(queue).len()
    }

    /// Whether a sub-queue holds no message.
    pub fn is_empty(&self, queue: SubQueue) -> bool {
        self.len(queue) == 0
    }

    /// Messages of a sub-queue a receive could hand out now (before running due timers).
    pub fn available_len(&self, queue: SubQueue) -> usize {
        self.queue(queue).available_len()
    }

    /// Bytes of the messages stored in both sub-queues, in every state (scheduled, deferred,
    /// locked, dead-lettered and not yet durable alike): what counts toward the size quota. O(1).
    pub fn size_bytes(&self) -> u64 {
        self.main.size_bytes() + self.dead_letter.size_bytes()
    }

    /// The message counts Service Bus reports for an entity (its runtime properties). Messages
    /// still pending (not yet durable) are left out; copies held for a send to several entities
    /// count from the moment they are held until they are released. O(1), whatever the entity
    /// holds.
    pub fn counts(&self) -> MessageCounts {
        let visible = |queue: &Queue| queue.len().saturating_sub(queue.pending_len());
        let scheduled = self.main.scheduled_len();
        MessageCounts {
            // Available, locked and deferred messages are all active to Service Bus.
            active: visible(&self.main).saturating_sub(scheduled),
            scheduled,
            deferred: self.main.deferred_len(),
            dead_lettered: visible(&self.dead_letter),
            size_bytes: self.size_bytes(),
        }
    }

    /// Peek-locks held across both sub-queues.
    pub fn locks_held(&self) -> usize {
        self.locks.held()
    }

    fn queue(&self, queue: SubQueue) -> &Queue {
        match queue {
            SubQueue::Main => &self.main,
            SubQueue::DeadLetter => &self.dead_letter,
        }
    }

    fn queue_mut(&mut self, queue: SubQueue) -> &mut Queue {
        match queue {
            SubQueue::Main => &mut self.main,
            SubQueue::DeadLetter => &mut self.dead_letter,
        }
    }

    /// Hands out one available or deferred message, a peek-lock lasting until `locked_until`;
    /// `None` only if it vanished or 2^32 locks are held.
    fn deliver(
        &mut self,
        queue: SubQueue,
        sequence: SequenceNumber,
        mode: ReceiveMode,
        locked_until: Timestamp,
    ) -> Option<Delivery> {
        match mode {
            ReceiveMode::ReceiveAndDelete => {
                let message = self.queue_mut(queue).remove(sequence)?;
                self.records.push(Record::Remove { sequence });
                Some(message.delivery(sequence, None))
            }
            ReceiveMode::PeekLock => {
                let deferred = self.queue(queue).get(sequence)?.stage == Stage::Deferred;
                let (slot, token) = self.locks.acquire(LockHolder { queue, sequence })?;
                self.lock_deadlines.insert((locked_until, slot));
                let stage = Stage::Locked {
                    slot,
                    until: locked_until,
                    deferred,
                };
                self.queue_mut(queue).set_stage(sequence, stage);
                let message = self.queue(queue).get(sequence)?;
                Some(message.delivery(
                    sequence,
                    Some(DeliveryLock {
                        token,
                        locked_until,
                    }),
                ))
            }
        }
    }

    /// Queues an update record with the message's current persisted state.
    fn persist(&mut self, queue: SubQueue, sequence: SequenceNumber) {
        if let Some(message) = self.queue(queue).get(sequence) {
            let state = encode_state(&persisted_state(queue, message));
            self.records.push(Record::Update { sequence, state });
        }
    }
}

/// The persisted view of a stored message (its lock, being volatile, is not part of it).
fn persisted_state(queue: SubQueue, message: &StoredMessage) -> PersistedState {
    PersistedState {
        queue,
        state: message.stage.message_state(),
        delivery_count: message.delivery_count,
        dead_letter: message.dead_letter.as_deref().cloned(),
        properties: message.properties.clone(),
    }
}

/// Whether peek shows a message: locked ones always (they stay settle-able), pending and held
/// ones (not yet durable) never, others until they expire.
fn is_visible_to_peek(queue: SubQueue, message: &StoredMessage, now: Timestamp) -> bool {
    match message.stage {
        Stage::Locked { .. } => true,
        Stage::Pending { .. } | Stage::Held { .. } => false,
        _ => !is_expired(queue, message, now),
    }
}

/// Whether a message's time to live has run out (dead-lettered messages never expire).
fn is_expired(queue: SubQueue, message: &StoredMessage, now: Timestamp) -> bool {
    queue == SubQueue::Main && message.body.expires_at().is_some_and(|at| at <= now)
}

/// Where a message nothing could see yet (pending or held) goes once it may be seen: scheduled
/// if it was sent for later (an activation time already past fires at the next timer run),
/// otherwise available.
fn revealed(stage: Stage) -> Stage {
    match stage {
        Stage::Pending { scheduled: true } | Stage::Held { scheduled: true } => Stage::Scheduled,
        _ => Stage::Available,
    }
}
