//! One task per entity: it owns a `busbar_core::Entity` (wrapped in a session entity for
//! `RequiresSession`), drains its bounded inbox in batches,
//! delivers to the receive links that have credit, and after each batch hands the entity's
//! records to the group-commit writer; replies that depend on them go out only once they are
//! durable, and new messages become deliverable only then (the writer's completion reports the
//! durable high-water mark back through a watch channel).

use std::sync::Arc;
use std::time::Duration;

use busbar_core::{EnqueueOutcome, Outcome, ReceiveMode, SubQueue};
use busbar_store::{EntityId, GroupCommitHandle, MessageKey, Record, StoreError};
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::atomic_send::{HeldPart, HeldResolution};
use super::clock::{self, Clock};
use super::dead_letter_forwarding::DeadLetterForwarding;
use super::mailbox::{ConnectionCommand, EntityCommand, HoldJoin, Mailbox, ReceiverKey};
use super::management::{Operation, OperationResult, SessionOperation};
use super::message_bodies::MessageBodies;
use super::metrics::EntityMetrics;
use super::refusals::{core_error, store_error};
use super::topic_schedule::TopicRelease;
use crate::errors::BrokerError;
use bodies::hydrate;
pub use explorer::{SessionHolder, SessionView};
pub(crate) use explorer::{SessionsAnswer, SessionsRequest};
pub(crate) use owned::{OwnedEntity, session_error};
use session_links::SessionLinks;
use test_controls::Faults;

mod bodies;
mod deleted;
mod explorer;
mod owned;
mod receive_refusal;
mod send_refusal;
mod session_links;
mod test_controls;
mod throttle;
mod transactions;

/// Commands taken from the inbox per batch.
const BATCH: usize = 256;
/// How soon a delivery held back by a full connection channel is tried again.
const RETRY_FULL: Duration = Duration::from_millis(5);

/// A receive link registered with the entity.
struct Receiver {
    key: ReceiverKey,
    sub_queue: SubQueue,
    mode: ReceiveMode,
    /// A session link: it receives only its session's messages.
    session_link: bool,
    /// Deliveries made to the link (wrapping).
    sent: u32,
    /// `sent` may grow up to this (wrapping).
    limit: u32,
    drain: bool,
    mailbox: Mailbox,
}

impl Receiver {
    fn credit(&self) -> u32 {
        let credit = self.limit.wrapping_sub(self.sent);
        // A limit behind `sent` (deliveries in flight when the flow was computed) is no credit.
        if credit > u32::MAX / 2 { 0 } else { credit }
    }
}

/// A reply waiting for the batch's records to be durable.
type Pending = Box<dyn FnOnce(Result<(), BrokerError>) + Send>;

/// The state of one entity task.
pub(crate) struct EntityTask {
    entity: OwnedEntity,
    id: EntityId,
    clock: Clock,
    store: GroupCommitHandle,
    receivers: Vec<Receiver>,
    session_links: SessionLinks,
    /// Where the next dispatch round starts, so receivers share messages fairly.
    next_receiver: usize,
    retry_at: Option<Instant>,
    /// The highest sequence number whose insert is durable, set by the writer's completions.
    durable: Arc<watch::Sender<i64>>,
    durable_seen: watch::Receiver<i64>,
    /// The highest sequence number whose insert failed to be stored, likewise.
    failed: Arc<watch::Sender<i64>>,
    failed_seen: watch::Receiver<i64>,
    /// Parts of sends to several entities held in this batch, reported after its commit.
    held_parts: Vec<(HoldJoin, Result<HeldPart, BrokerError>)>,
    /// Its counters, shared with its registry handle.
    metrics: Arc<EntityMetrics>,
    /// What became of held copies, sent by the writer's completions.
    resolutions: mpsc::UnboundedSender<HeldResolution>,
    resolved: mpsc::UnboundedReceiver<HeldResolution>,
    /// `ForwardDeadLetteredMessagesTo`, when the entity has it.
    dead_letters: Option<DeadLetterForwarding>,
    /// For a topic's scheduled messages: where they go when due.
    topic_release: Option<TopicRelease>,
    /// Deleted through the control interface: every command is answered with entity-not-found.
    deleted: Option<BrokerError>,
    /// Its status refuses receives: what receive links and settlements are refused with.
    receive_refusal: Option<BrokerError>,
    /// Changes when a virtual clock is advanced: every deadline is re-evaluated at once.
    clock_advances: Option<watch::Receiver<i64>>,
    /// Faults a test asked for, still to show.
    faults: Faults,
    /// Its inbox or the store's queue is past its bound: sends are refused as server-busy.
    overloaded: bool,
    /// Where evicted message bytes are read back from; `None`: they are never evicted.
    bodies: Option<Arc<MessageBodies>>,
}

impl EntityTask {
    /// A task for `entity` (plain or with sessions), whose records are stored under `id`.
    pub(crate) fn new(
        entity: impl Into<OwnedEntity>,
        id: EntityId,
        clock: Clock,
        store: GroupCommitHandle,
    ) -> Self {
        let entity = entity.into();
        // What the entity starts with (restored from the store, or nothing) is durable.
        let (durable, durable_seen) = watch::channel(entity.core().high_water());
        let (resolutions, resolved) = mpsc::unbounded_channel();
        let (failed, failed_seen) = watch::channel(0);
        let clock_advances = clock.advances();
        Self {
            entity,
            id,
            clock,
            store,
            receivers: Vec::new(),
            session_links: SessionLinks::default(),
            next_receiver: 0,
            retry_at: None,
            durable: Arc::new(durable),
            durable_seen,
            failed: Arc::new(failed),
            failed_seen,
            held_parts: Vec::new(),
            metrics: Arc::default(),
            resolutions,
            resolved,
            dead_letters: None,
            topic_release: None,
            deleted: None,
            receive_refusal: None,
            clock_advances,
            faults: Faults::default(),
            overloaded: false,
            bodies: None,
        }
    }

    /// Counts its traffic in `metrics` (its registry handle's).
    pub(crate) fn with_metrics(mut self, metrics: Arc<EntityMetrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Holds a topic's scheduled messages, releasing each to the topic's subscriptions when due.
    pub(crate) fn releasing_to_topic(mut self, release: TopicRelease) -> Self {
        self.topic_release = Some(release);
        self
    }

    /// Refuses receives with `refusal` from the start (its status says so).
    pub(crate) fn refusing_receives(mut self, refusal: BrokerError) -> Self {
        self.receive_refusal = Some(refusal);
        self
    }

    /// Forwards every message the entity dead-letters, beginning with those its dead-letter
    /// sub-queue already holds (left by a crash or a refusing destination before a restart).
    pub(crate) fn forwarding_dead_letters(mut self, forwarding: DeadLetterForwarding) -> Self {
        self.entity.core_mut().report_dead_letters();
        self.dead_letters = Some(forwarding);
        self
    }

    /// Runs until every sender of the inbox is gone, then submits what is left.
    pub(crate) async fn run(mut self, mut inbox: mpsc::Receiver<EntityCommand>) {
        let mut commands = Vec::with_capacity(BATCH);
        let mut resolutions = Vec::new();
        self.forward_dead_letters(self.clock.now());
        loop {
            let deadline = [
                self.entity
                    .poll_timeout()
                    .map(|at| self.clock.instant_at(at)),
                self.retry_at,
            ]
            .into_iter()
            .flatten()
            .min();
            tokio::select! {
                received = inbox.recv_many(&mut commands, BATCH) => {
                    if received == 0 {
                        break;
                    }
                }
                () = sleep_until(deadline) => {}
                () = clock::advanced(&mut self.clock_advances) => {}
                // The sender lives in `self`: the channel never closes while we run.
                _ = self.durable_seen.changed() => {}
                // Likewise (these two).
                _ = self.failed_seen.changed() => {}
                Some(resolution) = self.resolved.recv() => resolutions.push(resolution),
            }
            self.retry_at = None;
            self.overloaded = throttle::overloaded(&inbox, &self.store);
            let now = self.clock.now();
            self.entity.handle_timeout(now);
            let through = *self.durable_seen.borrow_and_update();
            // Read after `through`: a batch that failed before a later one succeeded is dropped
            // before that success reveals what lies below it.
            let failed = *self.failed_seen.borrow_and_update();
            self.entity
                .core_mut()
                .discard_pending(busbar_core::SequenceNumber(failed));
            self.entity
                .mark_durable(busbar_core::SequenceNumber(through), now);
            if let Some(bodies) = &self.bodies {
                bodies.evict_over_budget(self.entity.core_mut());
            }
            // Before the commands: a reply that a send was stored went out after its resolution.
            while let Ok(resolution) = self.resolved.try_recv() {
                resolutions.push(resolution);
            }
            for resolution in resolutions.drain(..) {
                self.entity.resolve_held(&resolution, now);
            }
            let mut pending = Vec::new();
            for command in commands.drain(..) {
                self.handle(command, now, &mut pending);
            }
            self.end_a_receiver();
            // Before dispatching, so a dead-letter receiver rarely locks what is on its way out.
            self.forward_dead_letters(now);
            self.release_due(now);
            self.read_ahead();
            self.dispatch(now);
            let lost = self.session_links.forward_events(&mut self.entity);
            self.metrics.session_locks_lost(lost);
            if let Some(sessions) = self.entity.sessions_mut() {
                self.metrics.set_open_sessions(sessions.locks_held());
            }
            self.commit(pending);
        }
    }

    fn handle(
        &mut self,
        command: EntityCommand,
        now: busbar_core::Timestamp,
        pending: &mut Vec<Pending>,
    ) {
        if let Some(error) = &self.deleted {
            deleted::refuse(command, error, &self.store);
            return;
        }
        let Some(command) = self.refuse_receive(command) else {
            return;
        };
        match command {
            EntityCommand::Counts(reply) => {
                let _ = reply.send(self.entity.core().counts());
            }
            EntityCommand::Reconfigure {
                config,
                forwarding,
                receive_refusal,
                done,
            } => {
                let applied = self
                    .entity
                    .core_mut()
                    .update_config(config, now)
                    .map_err(core_error);
                if applied.is_ok() {
                    if forwarding.is_some() {
                        self.entity.core_mut().report_dead_letters();
                    }
                    self.dead_letters = forwarding;
                    self.set_receive_refusal(receive_refusal, now);
                }
                // Ended locks write no records; the answer needs no sync.
                let _ = done.send(applied);
            }
            EntityCommand::Delete { error, done } => self.delete(error, pending, done),
            EntityCommand::Purge {
                dead_letter_only,
                done,
            } => {
                let purged = self.purge(dead_letter_only, now);
                pending.push(Box::new(move |durable| {
                    let _ = done.send(durable.map(|()| purged));
                }));
            }
            EntityCommand::InjectFault(fault) => self.faults.inject(fault),
            // Refused at once: the answer rests on nothing to be stored.
            EntityCommand::Execute {
                operation: Operation::Enqueue(_),
                reply,
                ..
            } if self.refuses_send() => reply(Err(BrokerError::ServerBusy)),
            EntityCommand::Execute {
                sub_queue,
                operation,
                reply,
            } => {
                let reply = self.maybe_delayed(reply);
                let changes_state =
                    !matches!(operation, Operation::Peek { .. } | Operation::RenewLock(_));
                let result = self.execute(sub_queue, operation, now);
                let result = self.with_payloads(result);
                if changes_state {
                    pending.push(Box::new(move |durable| reply(durable.and(result))));
                } else {
                    reply(result);
                }
            }
            EntityCommand::SettleDeliveries { settlements, reply } => {
                let reply = self.maybe_delayed(reply);
                let results: Vec<_> = settlements
                    .into_iter()
                    .map(|(token, outcome)| self.client_settle(token, outcome, now))
                    .collect();
                pending.push(Box::new(move |durable| {
                    reply(match durable {
                        Ok(()) => results,
                        Err(error) => vec![Err(error); results.len()],
                    });
                }));
            }
            EntityCommand::Hold { messages, send } => {
                let id = self.id;
                if let Some(refusal) = self.send_refusal() {
                    self.held_parts.push((send, Err(refusal)));
                    return;
                }
                let part = self.entity.hold(messages, now).map(|held| HeldPart {
                    sequences: held.sequences(),
                    records: held.records.into_iter().map(|r| tag(id, r)).collect(),
                    resolutions: self.resolutions.clone(),
                });
                self.held_parts.push((send, part));
            }
            EntityCommand::CommitTransaction(commit) => {
                self.commit_transaction(commit, now, pending)
            }
            EntityCommand::Flow {
                receiver,
                sub_queue,
                mode,
                limit,
                drain,
                mailbox,
            } => match self.receivers.iter_mut().find(|r| r.key == receiver) {
                Some(existing) => {
                    existing.limit = limit;
                    existing.drain |= drain;
                }
                // The main queue of a session entity feeds session links only (a flow
                // reordered behind its link's detach finds the link gone).
                None if sub_queue == SubQueue::Main
                    && self.entity.requires_session()
                    && !self.session_links.contains(receiver) => {}
                None => self.receivers.push(Receiver {
                    key: receiver,
                    sub_queue,
                    mode,
                    session_link: self.session_links.contains(receiver),
                    sent: 0,
                    limit,
                    drain,
                    mailbox,
                }),
            },
            EntityCommand::Detach(receiver) => {
                self.receivers.retain(|r| r.key != receiver);
                self.session_links.close(&mut self.entity, receiver, now);
            }
            EntityCommand::Release(tokens) => {
                for token in tokens {
                    // A lock that already ended has nothing to release.
                    let _ = self.settle(token, Outcome::Release, now);
                }
            }
            EntityCommand::Session {
                receiver,
                operation,
                reply,
            } => {
                let changes_state = operation.changes_state();
                let renews = matches!(operation, SessionOperation::RenewLock { .. });
                let result = self
                    .session_links
                    .execute(&mut self.entity, receiver, operation, now);
                let result = self.with_payloads(result);
                if renews && result.is_ok() {
                    self.metrics.renewed(1);
                }
                if changes_state {
                    pending.push(Box::new(move |durable| reply(durable.and(result))));
                } else {
                    reply(result);
                }
            }
            EntityCommand::ScheduledReleased { token, result } => {
                let completed = result.and_then(|()| self.settle(token, Outcome::Complete, now));
                // Left locked: the lock runs out and the message is released again.
                if let Err(error) = completed {
                    tracing::warn!(%error, "due scheduled message not released to the subscriptions; retried when its lock expires");
                }
            }
            EntityCommand::DeadLetterForwarded {
                sequence,
                result,
                done,
            } => {
                let removed = result.and_then(|()| {
                    self.entity
                        .core_mut()
                        .remove_dead_lettered(sequence)
                        .map_err(core_error)
                });
                // Kept (a receiver locked it meanwhile, or the destination refused it): it is
                // still in the dead-letter sub-queue, and the next start-up tries again.
                if let Err(error) = &removed {
                    tracing::warn!(sequence = sequence.value(), %error, "dead-lettered message kept in the dead-letter sub-queue");
                }
                if let Some(done) = done {
                    pending.push(Box::new(move |durable| {
                        let _ = done.send(durable.and(removed.map(drop)));
                    }));
                }
            }
            EntityCommand::ExploreSessions { request, reply } => {
                self.explore_sessions(request, now, pending, reply);
            }
            EntityCommand::AcceptSession {
                receiver,
                session,
                wait_until,
                mailbox,
            } => self.session_links.accept(
                &mut self.entity,
                receiver,
                session,
                wait_until,
                mailbox,
                now,
            ),
        }
    }

    fn execute(
        &mut self,
        sub_queue: SubQueue,
        operation: Operation,
        now: busbar_core::Timestamp,
    ) -> Result<OperationResult, BrokerError> {
        match operation {
            Operation::Enqueue(messages) => {
                if let Some(refusal) = self.send_refusal() {
                    return Err(refusal);
                }
                self.entity.enqueue(messages, now).map(|outcomes| {
                OperationResult::SequenceNumbers(
                    outcomes
                        .into_iter()
                        .filter_map(|outcome| match outcome {
                            EnqueueOutcome::Enqueued(sequence) => Some(sequence),
                            EnqueueOutcome::Duplicate => None,
                        })
                        .collect(),
                )
            })
            }
            Operation::Settle { tokens, outcome } => {
                // Each token settles on its own; the first failure is reported.
                let mut result = Ok(OperationResult::Done);
                for token in tokens {
                    if let Err(error) = self.client_settle(token, outcome.clone(), now) {
                        result = result.and(Err(error));
                    }
                }
                result
            }
            // A message received under a session lock has no lock of its own: the session lock
            // governs it (renew-session-lock), as in Service Bus, whose SDKs refuse the call.
            Operation::RenewLock(tokens) if tokens.iter().any(|t| self.session_links.holds(t)) => {
                Err(BrokerError::NotAllowed(
                    "a message received from a session is locked by the session: renew the session lock instead"
                        .into(),
                ))
            }
            Operation::RenewLock(tokens) => {
                let renewed = tokens
                    .into_iter()
                    .map(|token| self.entity.core_mut().renew_lock(token, now))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(core_error)?;
                self.metrics
                    .renewed(u64::try_from(renewed.len()).unwrap_or(u64::MAX));
                Ok(OperationResult::Expirations(renewed))
            }
            Operation::Peek { from, count } => Ok(OperationResult::Messages(
                self.entity.core().peek(sub_queue, from, count, now),
            )),
            Operation::ReceiveDeferred { sequences, mode } => self
                .entity
                .core_mut()
                .receive_deferred(sub_queue, &sequences, mode, now)
                .map(OperationResult::Messages)
                .map_err(core_error),
            Operation::CancelScheduled(sequences) => self
                .entity
                .core_mut()
                .cancel_scheduled(&sequences)
                .map(|()| OperationResult::Done)
                .map_err(core_error),
        }
    }

    /// Settles one message: through its session when a session link received it.
    fn settle(
        &mut self,
        token: busbar_core::LockToken,
        outcome: Outcome,
        now: busbar_core::Timestamp,
    ) -> Result<(), BrokerError> {
        settle_in(
            &mut self.session_links,
            &mut self.entity,
            token,
            outcome,
            now,
        )
    }

    /// Sends the messages dead-lettered since the last batch to `ForwardDeadLetteredMessagesTo`.
    fn forward_dead_letters(&mut self, now: busbar_core::Timestamp) {
        let Some(forwarding) = &self.dead_letters else {
            return;
        };
        let core = self.entity.core_mut();
        for sequence in core.take_dead_lettered() {
            let delivery = core
                .peek(SubQueue::DeadLetter, sequence, 1, now)
                .into_iter()
                .find(|delivery| delivery.sequence == sequence);
            if let Some(mut delivery) = delivery {
                if let Err(error) = hydrate(self.bodies.as_deref(), self.id, &mut delivery) {
                    tracing::warn!(%error, "dead-lettered message not forwarded; tried again at the next start");
                    continue;
                }
                forwarding.forward(&delivery);
            }
        }
    }

    /// Releases a topic's due scheduled messages to its subscriptions, each locked meanwhile.
    fn release_due(&mut self, now: busbar_core::Timestamp) {
        let Some(release) = &self.topic_release else {
            return;
        };
        let core = self.entity.core_mut();
        while let Some(mut delivery) = core.receive(SubQueue::Main, ReceiveMode::PeekLock, now) {
            // Left locked when it cannot be read: the lock runs out and it is tried again.
            if let Err(error) = hydrate(self.bodies.as_deref(), self.id, &mut delivery) {
                tracing::warn!(%error, "due scheduled message not read back; tried again when its lock expires");
                continue;
            }
            if let Some(lock) = &delivery.lock {
                release.release(&delivery, lock.token);
            }
        }
    }

    /// Hands available messages to receivers with credit, one per receiver per round.
    fn dispatch(&mut self, now: busbar_core::Timestamp) {
        let count = self.receivers.len();
        let mut exhausted = [false, false];
        let mut progressed = true;
        while progressed {
            progressed = false;
            for offset in 0..count {
                let index = (self.next_receiver + offset) % count;
                let Some(receiver) = self.receivers.get_mut(index) else {
                    continue;
                };
                let queue_index = usize::from(receiver.sub_queue == SubQueue::DeadLetter);
                let session_link = receiver.session_link;
                if receiver.credit() == 0 || (exhausted[queue_index] && !session_link) {
                    continue;
                }
                let permit = match receiver.mailbox.sender.try_reserve() {
                    Ok(permit) => permit,
                    Err(TrySendError::Full(())) => {
                        self.retry_at = Some(Instant::now() + RETRY_FULL);
                        continue;
                    }
                    Err(TrySendError::Closed(())) => continue,
                };
                let delivery = if session_link {
                    self.session_links
                        .receive(&mut self.entity, receiver.key, receiver.mode, now)
                } else {
                    self.entity
                        .core_mut()
                        .receive(receiver.sub_queue, receiver.mode, now)
                };
                let Some(mut delivery) = delivery else {
                    exhausted[queue_index] |= !session_link;
                    continue;
                };
                if let Err(error) = hydrate(self.bodies.as_deref(), self.id, &mut delivery) {
                    // A peek-lock delivery goes back unchanged; receive-and-delete took it.
                    tracing::error!(%error, sequence = delivery.sequence.value(), "delivery not read back from the store");
                    if let Some(lock) = delivery.lock {
                        let (links, entity) = (&mut self.session_links, &mut self.entity);
                        let _ = settle_in(links, entity, lock.token, Outcome::Release, now);
                    }
                    continue;
                }
                permit.send(ConnectionCommand::Deliver {
                    link: receiver.key.link,
                    delivery: Box::new(delivery),
                    mode: receiver.mode,
                });
                receiver.sent = receiver.sent.wrapping_add(1);
                progressed = true;
            }
            self.next_receiver = self.next_receiver.wrapping_add(1);
        }
        self.receivers.retain(|r| !r.mailbox.sender.is_closed());
        for receiver in &mut self.receivers {
            // A session link with credit left after the rounds found nothing in its session.
            let nothing_left =
                receiver.session_link || self.entity.core().available_len(receiver.sub_queue) == 0;
            if receiver.drain && (receiver.credit() == 0 || nothing_left) {
                match receiver
                    .mailbox
                    .sender
                    .try_send(ConnectionCommand::DrainDone(receiver.key.link))
                {
                    Ok(()) | Err(TrySendError::Closed(_)) => {
                        receiver.limit = receiver.sent;
                        receiver.drain = false;
                    }
                    Err(TrySendError::Full(_)) => self.retry_at = Some(Instant::now() + RETRY_FULL),
                }
            }
        }
    }

    /// Submits the batch's records, then reports the parts of sends to several entities held
    /// in it: a send's single submission, made by whichever entity reports last, so queues
    /// behind every record its copies may rest on (the original of a duplicate).
    fn commit(&mut self, pending: Vec<Pending>) {
        self.submit(pending);
        for (send, part) in std::mem::take(&mut self.held_parts) {
            send.report(part, &self.store);
        }
    }

    /// Submits the batch's records; the pending replies run once they are durable.
    fn submit(&mut self, pending: Vec<Pending>) {
        self.submit_with(pending, Vec::new());
    }

    /// Submits the batch's records and `extra` ones (a transaction's held copies, tagged
    /// already) as one submission; the pending replies run once they are durable.
    fn submit_with(&mut self, pending: Vec<Pending>, extra: Vec<Record>) {
        let id = self.id;
        // Every insert drained here has a sequence number at most this.
        let through = self.entity.core().high_water();
        let mut records = self.entity.drain_records(id);
        records.extend(extra);
        // Replies without records of their own (a duplicate send, a refused settlement) still
        // queue behind the writer: what they answer may rest on earlier records not yet durable
        // (the original of a duplicate), and once a sync has failed they must fail too.
        if records.is_empty() && pending.is_empty() {
            return;
        }
        let durable_mark = Arc::clone(&self.durable);
        let failed_mark = Arc::clone(&self.failed);
        let completion = Box::new(move |outcome: Result<busbar_store::Lsn, StoreError>| {
            // Visible before the replies go out, so a client that saw its send accepted finds
            // the message. After a failure the store is poisoned: the durable mark never moves
            // again, and the failed batch's messages are dropped (the client hears "rejected").
            let mark = if outcome.is_ok() {
                durable_mark
            } else {
                failed_mark
            };
            mark.send_if_modified(|mark| {
                let advanced = through > *mark;
                *mark = (*mark).max(through);
                advanced
            });
            let durable = outcome.map(|_| ()).map_err(store_error);
            for reply in pending {
                reply(durable.clone());
            }
        });
        super::submit_from_task(&self.store, records, completion);
    }
}

fn tag(entity: EntityId, record: busbar_core::Record) -> Record {
    let key = |sequence: busbar_core::SequenceNumber| MessageKey {
        entity,
        sequence: sequence.value(),
    };
    match record {
        busbar_core::Record::Insert {
            sequence,
            message,
            state,
        } => Record::Insert {
            key: key(sequence),
            message,
            state,
        },
        busbar_core::Record::Update { sequence, state } => Record::Update {
            key: key(sequence),
            state,
        },
        busbar_core::Record::Remove { sequence } => Record::Remove { key: key(sequence) },
    }
}

/// Settles one message: through its session when a session link received it.
fn settle_in(
    session_links: &mut SessionLinks,
    entity: &mut OwnedEntity,
    token: busbar_core::LockToken,
    outcome: Outcome,
    now: busbar_core::Timestamp,
) -> Result<(), BrokerError> {
    if session_links.holds(&token) {
        session_links.settle(entity, token, outcome, now)
    } else {
        entity
            .core_mut()
            .settle(token, outcome, now)
            .map_err(core_error)
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod held_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod throttle_tests;
#[cfg(test)]
mod transaction_tests;
