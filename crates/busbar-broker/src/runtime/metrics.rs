//! The broker's traffic counters, named after Azure Monitor's Service Bus metrics: plain
//! `AtomicU64`s bumped on the message path without a lock, read by the control interface
//! ([`Control::metrics`](super::Control::metrics)). Broker-wide counters live in [`Metrics`]
//! (held by the connection handlers and the control state); each entity's in the
//! [`EntityMetrics`] its registry handle carries, created with the entity, so an entity
//! deleted and created again starts from zero (a counter reset, which Prometheus expects).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use busbar_core::MemoryBudget;
use busbar_store::CommitStatsSnapshot;

use crate::errors::BrokerError;

/// Broker-wide counters.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    connections_opened: AtomicU64,
    connections_closed: AtomicU64,
    server_errors: AtomicU64,
    user_errors: AtomicU64,
    throttled_requests: AtomicU64,
    /// The message-body cache's, shared with the entity tasks.
    pub(crate) cache: Arc<CacheCounters>,
}

/// The message-body cache's counters (see `message_bodies.rs`).
#[derive(Debug, Default)]
pub(crate) struct CacheCounters {
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    bytes_read: AtomicU64,
}

impl CacheCounters {
    /// Deliveries and peeks whose bytes were in memory.
    pub(crate) fn hit(&self, messages: usize) {
        add(&self.hits, messages);
    }

    /// Deliveries and peeks whose bytes were read back from the store on their own.
    pub(crate) fn missed(&self, messages: usize) {
        add(&self.misses, messages);
    }

    /// Messages whose bytes were evicted.
    pub(crate) fn evicted(&self, messages: u64) {
        self.evictions.fetch_add(messages, Ordering::Relaxed);
    }

    /// Bytes read back from the store (read-ahead and misses).
    pub(crate) fn read(&self, bytes: usize) {
        add(&self.bytes_read, bytes);
    }

    fn snapshot(&self) -> CacheSnapshot {
        CacheSnapshot {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
        }
    }
}

fn add(counter: &AtomicU64, value: usize) {
    counter.fetch_add(u64::try_from(value).unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// The message-body cache's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheSnapshot {
    /// Deliveries and peeks whose bytes were in memory.
    pub hits: u64,
    /// Deliveries and peeks whose bytes were read back from the store on their own.
    pub misses: u64,
    /// Messages whose bytes were evicted to the store.
    pub evictions: u64,
    /// Bytes read back from the store, read-ahead included.
    pub bytes_read: u64,
}

/// One entity's counters.
#[derive(Debug, Default)]
pub(crate) struct EntityMetrics {
    incoming: AtomicU64,
    outgoing: AtomicU64,
    lock_renewals: AtomicU64,
    session_locks_lost: AtomicU64,
    lock_lost_answers: AtomicU64,
    open_sessions: AtomicU64,
}

/// The counters at one moment, as the control interface reports them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Connections accepted since start-up.
    pub connections_opened: u64,
    /// Connections ended since start-up.
    pub connections_closed: u64,
    /// Requests refused because of a fault of the broker (storage, time-outs).
    pub server_errors: u64,
    /// Requests refused because of the client's request (not found, bad argument, quota, …).
    pub user_errors: u64,
    /// Requests refused as server-busy.
    pub throttled_requests: u64,
    /// Each queue, topic and subscription, by its path.
    pub entities: Vec<EntityTraffic>,
    /// The store's group commits: sync latencies and group sizes.
    pub store: CommitStatsSnapshot,
    /// Bytes of messages every entity holds in memory now (`--memory-budget`'s count).
    pub memory_used_bytes: u64,
    /// The memory budget in bytes (`u64::MAX` when unlimited).
    pub memory_budget_bytes: u64,
    /// The message-body cache.
    pub cache: CacheSnapshot,
}

impl MetricsSnapshot {
    /// Connections open now.
    #[must_use]
    pub fn active_connections(&self) -> u64 {
        self.connections_opened
            .saturating_sub(self.connections_closed)
    }
}

/// One entity's messages in and out since it was created (or the broker started).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntityTraffic {
    /// Its path as configured: `queue`, `topic`, `topic/Subscriptions/subscription`.
    pub path: String,
    /// Messages sent to it and stored (a topic's: those sent to the topic).
    pub incoming: u64,
    /// Messages delivered from it to receivers.
    pub outgoing: u64,
    /// Lock renewals that succeeded: each message lock renewed and each session lock renewed.
    pub lock_renewals: u64,
    /// Session locks that expired while a receiver held them.
    pub session_locks_lost: u64,
    /// Settlements answered with message-lock-lost (the core does not report message lock
    /// expiries; a lock that expired shows when its holder settles).
    pub lock_lost_answers: u64,
    /// Sessions locked by a receiver now (set by the entity task after each round).
    pub open_sessions: u64,
    /// Commands waiting in the entity task's inbox now.
    pub inbox_depth: u64,
}

impl Metrics {
    pub(crate) fn connection_opened(&self) {
        self.connections_opened.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn connection_closed(&self) {
        self.connections_closed.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request refused with `error`: throttled, the broker's fault, or the user's.
    pub(crate) fn refused(&self, error: &BrokerError) {
        let counter = match error {
            BrokerError::ServerBusy => &self.throttled_requests,
            BrokerError::Timeout { .. } | BrokerError::StoreUnavailable { .. } => {
                &self.server_errors
            }
            _ => &self.user_errors,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The broker-wide counters, with `entities`, the `store`'s commit stats and the `memory`
    /// budget's use.
    pub(crate) fn snapshot(
        &self,
        entities: Vec<EntityTraffic>,
        store: CommitStatsSnapshot,
        memory: &MemoryBudget,
    ) -> MetricsSnapshot {
        MetricsSnapshot {
            connections_opened: self.connections_opened.load(Ordering::Relaxed),
            connections_closed: self.connections_closed.load(Ordering::Relaxed),
            server_errors: self.server_errors.load(Ordering::Relaxed),
            user_errors: self.user_errors.load(Ordering::Relaxed),
            throttled_requests: self.throttled_requests.load(Ordering::Relaxed),
            entities,
            store,
            memory_used_bytes: memory.used(),
            memory_budget_bytes: memory.limit(),
            cache: self.cache.snapshot(),
        }
    }
}

impl EntityMetrics {
    /// Counts `messages` stored by a send.
    pub(crate) fn received(&self, messages: u64) {
        self.incoming.fetch_add(messages, Ordering::Relaxed);
    }

    /// Counts one delivery sent to a receiver.
    pub(crate) fn delivered(&self) {
        self.outgoing.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `renewals` lock renewals that succeeded.
    pub(crate) fn renewed(&self, renewals: u64) {
        self.lock_renewals.fetch_add(renewals, Ordering::Relaxed);
    }

    /// Counts `lost` session locks that expired.
    pub(crate) fn session_locks_lost(&self, lost: u64) {
        self.session_locks_lost.fetch_add(lost, Ordering::Relaxed);
    }

    /// Counts a settlement answered with message-lock-lost.
    pub(crate) fn lock_lost_answer(&self) {
        self.lock_lost_answers.fetch_add(1, Ordering::Relaxed);
    }

    /// Sets the sessions locked by a receiver now.
    pub(crate) fn set_open_sessions(&self, held: usize) {
        let held = u64::try_from(held).unwrap_or(u64::MAX);
        self.open_sessions.store(held, Ordering::Relaxed);
    }

    /// The entity's counters under `path`, with `inbox_depth` commands waiting in its inbox.
    pub(crate) fn traffic(&self, path: &str, inbox_depth: usize) -> EntityTraffic {
        EntityTraffic {
            path: path.to_owned(),
            incoming: self.incoming.load(Ordering::Relaxed),
            outgoing: self.outgoing.load(Ordering::Relaxed),
            lock_renewals: self.lock_renewals.load(Ordering::Relaxed),
            session_locks_lost: self.session_locks_lost.load(Ordering::Relaxed),
            lock_lost_answers: self.lock_lost_answers.load(Ordering::Relaxed),
            open_sessions: self.open_sessions.load(Ordering::Relaxed),
            inbox_depth: u64::try_from(inbox_depth).unwrap_or(u64::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_count_and_classify() {
        let metrics = Metrics::default();
        metrics.connection_opened();
        metrics.connection_opened();
        metrics.connection_closed();
        metrics.refused(&BrokerError::ServerBusy);
        metrics.refused(&BrokerError::Argument("bad".into()));
        metrics.refused(&BrokerError::MessageLockLost);
        let entity = EntityMetrics::default();
        entity.received(3);
        entity.delivered();
        entity.renewed(2);
        entity.renewed(1);
        entity.session_locks_lost(1);
        entity.lock_lost_answer();
        entity.set_open_sessions(2);
        let snapshot = metrics.snapshot(
            vec![entity.traffic("q", 4)],
            CommitStatsSnapshot::default(),
            &MemoryBudget::new(100),
        );
        assert_eq!(snapshot.active_connections(), 1);
        assert_eq!(
            snapshot,
            MetricsSnapshot {
                connections_opened: 2,
                connections_closed: 1,
                server_errors: 0,
                user_errors: 2,
                throttled_requests: 1,
                entities: vec![EntityTraffic {
                    path: "q".into(),
                    incoming: 3,
                    outgoing: 1,
                    lock_renewals: 3,
                    session_locks_lost: 1,
                    lock_lost_answers: 1,
                    open_sessions: 2,
                    inbox_depth: 4,
                }],
                store: CommitStatsSnapshot::default(),
                memory_used_bytes: 0,
                memory_budget_bytes: 100,
                cache: CacheSnapshot::default(),
            }
        );
    }
}
