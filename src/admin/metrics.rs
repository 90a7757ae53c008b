//! `GET /metrics` for the binary: each queue's, topic's and subscription's message counts
//! (asked of the control interface at scrape time, one answer per entity) joined by path with
//! the traffic counters the connection handlers keep, and the broker-wide counters.

use std::collections::HashMap;

use busbar_admin::metrics::{EntityMetrics, HistogramSnapshot, MetricsSnapshot};
use busbar_broker::runtime::{Control, ControlError, EntityTraffic};
use busbar_core::MessageCounts;
use busbar_store::HistogramCounts;

/// The broker's counts now.
pub(super) async fn snapshot(control: &Control) -> Result<MetricsSnapshot, ControlError> {
    let traffic = control.metrics()?;
    let mut entities = Vec::new();
    for queue in control.queues().await? {
        entities.push(counted(queue.config.name.to_string(), &queue.counts));
    }
    for topic in control.topics().await? {
        let name = topic.config.name.to_string();
        // A topic deleted meanwhile has no subscriptions left to report.
        let subscriptions = control.subscriptions(&name).await.unwrap_or_default();
        entities.push(counted(name.clone(), &topic.counts));
        for subscription in subscriptions {
            let path = format!("{name}/Subscriptions/{}", subscription.config.name);
            entities.push(counted(path, &subscription.counts));
        }
    }
    let by_path: HashMap<&str, &EntityTraffic> = traffic
        .entities
        .iter()
        .map(|entity| (entity.path.as_str(), entity))
        .collect();
    for entity in &mut entities {
        if let Some(traffic) = by_path.get(entity.name.as_str()) {
            entity.incoming = traffic.incoming;
            entity.outgoing = traffic.outgoing;
            entity.lock_renewals = traffic.lock_renewals;
            entity.session_locks_lost = traffic.session_locks_lost;
            entity.lock_lost_answers = traffic.lock_lost_answers;
            entity.open_sessions = traffic.open_sessions;
            entity.inbox_depth = traffic.inbox_depth;
        }
    }
    Ok(MetricsSnapshot {
        entities,
        active_connections: traffic.active_connections(),
        connections_opened: traffic.connections_opened,
        connections_closed: traffic.connections_closed,
        server_errors: traffic.server_errors,
        user_errors: traffic.user_errors,
        throttled_requests: traffic.throttled_requests,
        store_sync_seconds: histogram(&traffic.store.sync_micros, 1e6),
        store_group_size: histogram(&traffic.store.group_size, 1.0),
        memory_used_bytes: traffic.memory_used_bytes,
        memory_budget_bytes: traffic.memory_budget_bytes,
        cache_hits: traffic.cache.hits,
        cache_misses: traffic.cache.misses,
        cache_evictions: traffic.cache.evictions,
        cache_read_bytes: traffic.cache.bytes_read,
    })
}

/// The store's histogram `counts` with its bounds and sum divided by `divisor` (microseconds
/// to seconds), its overflow bucket under `+Inf`.
#[allow(clippy::cast_precision_loss)] // Bounds and sums far below 2^52.
fn histogram(counts: &HistogramCounts, divisor: f64) -> HistogramSnapshot {
    let bounds = counts
        .bounds
        .iter()
        .map(|&bound| bound as f64 / divisor)
        .chain(std::iter::once(f64::INFINITY));
    HistogramSnapshot {
        buckets: bounds.zip(counts.counts.iter().copied()).collect(),
        sum: counts.sum as f64 / divisor,
        count: counts.count,
    }
}

/// An entity's gauges (its traffic filled in by the caller).
fn counted(name: String, counts: &MessageCounts) -> EntityMetrics {
    let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    EntityMetrics {
        name,
        active: count(counts.active),
        dead_lettered: count(counts.dead_lettered),
        scheduled: count(counts.scheduled),
        size_bytes: counts.size_bytes,
        ..EntityMetrics::default()
    }
}
