//! `GET /metrics`: the broker's counts in the Prometheus text format 0.0.4, or OpenMetrics for a
//! scraper that asks for it (`Accept: application/openmetrics-text`), named after
//! Azure Monitor's Service Bus metrics (`ActiveMessages` → `servicebus_active_messages`, …),
//! each entity's labelled `entity_name` (a queue's or topic's name,
//! `{topic}/Subscriptions/{subscription}`). [`NamespaceControl::metrics`] gives a
//! [`MetricsSnapshot`]; [`render`] writes it as OpenMetrics, [`to_text_format`] converts that.
//!
//! [`NamespaceControl::metrics`]: crate::control::NamespaceControl::metrics

mod text_format;

pub use text_format::{TEXT_CONTENT_TYPE, to_text_format};

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The `Content-Type` of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The broker's counts at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsSnapshot {
    /// Each queue, topic and subscription.
    pub entities: Vec<EntityMetrics>,
    /// Connections open now.
    pub active_connections: u64,
    /// Connections accepted since start-up.
    pub connections_opened: u64,
    /// Connections ended since start-up.
    pub connections_closed: u64,
    /// Requests that failed through a fault of the broker.
    pub server_errors: u64,
    /// Requests refused for what they asked.
    pub user_errors: u64,
    /// Requests refused as server-busy.
    pub throttled_requests: u64,
    /// How long the store's syncs took, in seconds.
    pub store_sync_seconds: HistogramSnapshot,
    /// How many submissions each of the store's group commits held.
    pub store_group_size: HistogramSnapshot,
    /// Bytes of messages the broker holds in memory now.
    pub memory_used_bytes: u64,
    /// The broker's memory budget for messages, in bytes.
    pub memory_budget_bytes: u64,
    /// Deliveries and peeks whose message bytes were in memory.
    pub cache_hits: u64,
    /// Deliveries and peeks whose message bytes were read back from the store one by one.
    pub cache_misses: u64,
    /// Messages whose bytes were evicted from memory to the store.
    pub cache_evictions: u64,
    /// Bytes of messages read back from the store (read-ahead included).
    pub cache_read_bytes: u64,
}

/// A histogram at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistogramSnapshot {
    /// Each bucket's upper bound (inclusive, ascending, the last `f64::INFINITY`) and the
    /// observations in it (not cumulative: above the previous bound).
    pub buckets: Vec<(f64, u64)>,
    /// The sum of the observations.
    pub sum: f64,
    /// How many observations there were.
    pub count: u64,
}

/// A histogram written from a [`HistogramSnapshot`].
#[derive(Debug)]
struct FixedHistogram(HistogramSnapshot);

impl EncodeMetric for FixedHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_histogram::<NoLabelSet>(self.0.sum, self.0.count, &self.0.buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// One entity's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EntityMetrics {
    /// Its name: `queue`, `topic`, `topic/Subscriptions/subscription`.
    pub name: String,
    /// Messages in the entity: available, locked or deferred.
    pub active: u64,
    /// Messages in its dead-letter sub-queue.
    pub dead_lettered: u64,
    /// Messages waiting for their scheduled time.
    pub scheduled: u64,
    /// Payload bytes it stores.
    pub size_bytes: u64,
    /// Messages sent to it since it was created (or the broker started).
    pub incoming: u64,
    /// Messages delivered from it since then.
    pub outgoing: u64,
    /// Message and session lock renewals that succeeded since then.
    pub lock_renewals: u64,
    /// Session locks that expired since then.
    pub session_locks_lost: u64,
    /// Settlements answered with message-lock-lost since then.
    pub lock_lost_answers: u64,
    /// Sessions locked by a receiver now.
    pub open_sessions: u64,
    /// Commands waiting in its task's inbox now.
    pub inbox_depth: u64,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Entity {
    entity_name: String,
}

fn gauge(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn label(entity: &EntityMetrics) -> Entity {
    Entity {
        entity_name: entity.name.clone(),
    }
}

/// Registers the gauge family `name`: `value(entity)` for each entity.
fn entity_gauges(
    registry: &mut Registry,
    name: &str,
    help: &str,
    entities: &[EntityMetrics],
    value: impl Fn(&EntityMetrics) -> u64,
) {
    let family = Family::<Entity, Gauge>::default();
    for entity in entities {
        family
            .get_or_create(&label(entity))
            .set(gauge(value(entity)));
    }
    registry.register(name, help, family);
}

/// Registers the counter family `name` (written with `_total`): `value(entity)` for each
/// entity.
fn entity_counters(
    registry: &mut Registry,
    name: &str,
    help: &str,
    entities: &[EntityMetrics],
    value: impl Fn(&EntityMetrics) -> u64,
) {
    let family = Family::<Entity, Counter>::default();
    for entity in entities {
        family.get_or_create(&label(entity)).inc_by(value(entity));
    }
    registry.register(name, help, family);
}

/// Registers the broker-wide counter `name` (written with `_total`).
fn broker_counter(registry: &mut Registry, name: &str, help: &str, value: u64) {
    let counter = Counter::<u64>::default();
    counter.inc_by(value);
    registry.register(name, help, counter);
}

/// What one metric reads of an entity.
type EntityValue = fn(&EntityMetrics) -> u64;

/// The snapshot in the Prometheus text format (the help texts get their full stop from the
/// encoder).
#[must_use]
pub fn render(snapshot: &MetricsSnapshot) -> String {
    let mut registry = Registry::default();
    let entities = &snapshot.entities;
    let gauges: [(&str, &str, EntityValue); 5] = [
        (
            "servicebus_active_messages",
            "Messages in the entity: available, locked or deferred",
            |entity| entity.active,
        ),
        (
            "servicebus_dead_lettered_messages",
            "Messages in the entity's dead-letter sub-queue",
            |entity| entity.dead_lettered,
        ),
        (
            "servicebus_scheduled_messages",
            "Messages waiting for their scheduled enqueue time",
            |entity| entity.scheduled,
        ),
        (
            "servicebus_messages",
            "Messages the entity holds: active, dead-lettered and scheduled",
            |entity| {
                entity
                    .active
                    .saturating_add(entity.dead_lettered)
                    .saturating_add(entity.scheduled)
            },
        ),
        (
            "servicebus_size_bytes",
            "Payload bytes the entity stores",
            |entity| entity.size_bytes,
        ),
    ];
    for (name, help, value) in gauges {
        entity_gauges(&mut registry, name, help, entities, value);
    }
    entity_counters(
        &mut registry,
        "servicebus_incoming_messages",
        "Messages sent to the entity and accepted",
        entities,
        |entity| entity.incoming,
    );
    entity_counters(
        &mut registry,
        "servicebus_outgoing_messages",
        "Messages delivered from the entity to receivers",
        entities,
        |entity| entity.outgoing,
    );
    entity_counters(
        &mut registry,
        "busbar_lock_renewals",
        "Message and session lock renewals that succeeded",
        entities,
        |entity| entity.lock_renewals,
    );
    entity_counters(
        &mut registry,
        "busbar_session_locks_lost",
        "Session locks that expired while a receiver held them",
        entities,
        |entity| entity.session_locks_lost,
    );
    entity_counters(
        &mut registry,
        "busbar_lock_lost_answers",
        "Settlements answered with message-lock-lost",
        entities,
        |entity| entity.lock_lost_answers,
    );
    entity_gauges(
        &mut registry,
        "busbar_open_sessions",
        "Sessions locked by a receiver now",
        entities,
        |entity| entity.open_sessions,
    );
    entity_gauges(
        &mut registry,
        "busbar_inbox_depth",
        "Commands waiting in the entity task's inbox",
        entities,
        |entity| entity.inbox_depth,
    );
    registry.register(
        "busbar_store_sync_seconds",
        "How long each sync of the store's group commits took",
        FixedHistogram(snapshot.store_sync_seconds.clone()),
    );
    registry.register(
        "busbar_store_group_size",
        "Submissions committed by each of the store's group commits",
        FixedHistogram(snapshot.store_group_size.clone()),
    );
    let broker_gauges = [
        (
            "servicebus_active_connections",
            "AMQP connections open now",
            snapshot.active_connections,
        ),
        (
            "busbar_memory_used_bytes",
            "Bytes of messages every entity holds in memory",
            snapshot.memory_used_bytes,
        ),
        (
            "busbar_memory_budget_bytes",
            "The memory budget for messages: past it their bytes are evicted to the store (with --memory, sends are refused)",
            snapshot.memory_budget_bytes,
        ),
    ];
    for (name, help, value) in broker_gauges {
        let broker_gauge = Gauge::<i64>::default();
        broker_gauge.set(gauge(value));
        registry.register(name, help, broker_gauge);
    }
    let counters = [
        (
            "servicebus_connections_opened",
            "AMQP connections accepted",
            snapshot.connections_opened,
        ),
        (
            "servicebus_connections_closed",
            "AMQP connections ended",
            snapshot.connections_closed,
        ),
        (
            "servicebus_server_errors",
            "Requests that failed through a fault of the broker",
            snapshot.server_errors,
        ),
        (
            "servicebus_user_errors",
            "Requests refused for what they asked",
            snapshot.user_errors,
        ),
        (
            "servicebus_throttled_requests",
            "Requests refused as server-busy",
            snapshot.throttled_requests,
        ),
        (
            "busbar_cache_hits",
            "Deliveries and peeks whose message bytes were in memory",
            snapshot.cache_hits,
        ),
        (
            "busbar_cache_misses",
            "Deliveries and peeks whose message bytes were read back from the store one by one",
            snapshot.cache_misses,
        ),
        (
            "busbar_cache_evictions",
            "Messages whose bytes were evicted from memory to the store",
            snapshot.cache_evictions,
        ),
        (
            "busbar_cache_read_bytes",
            "Bytes of messages read back from the store, read-ahead included",
            snapshot.cache_read_bytes,
        ),
    ];
    for (name, help, value) in counters {
        broker_counter(&mut registry, name, help, value);
    }
    let mut text = String::new();
    // Writing to a `String` cannot fail.
    let _ = encode(&mut text, &registry);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entities_and_counters_in_the_text_format() {
        let text = render(&MetricsSnapshot {
            entities: vec![EntityMetrics {
                name: "t/Subscriptions/s".into(),
                active: 2,
                dead_lettered: 1,
                scheduled: 4,
                size_bytes: 70,
                incoming: 3,
                outgoing: 1,
                lock_renewals: 6,
                session_locks_lost: 2,
                lock_lost_answers: 5,
                open_sessions: 3,
                inbox_depth: 9,
            }],
            active_connections: 1,
            connections_opened: 5,
            throttled_requests: 2,
            memory_used_bytes: 4096,
            memory_budget_bytes: 1 << 30,
            cache_hits: 11,
            cache_misses: 12,
            cache_evictions: 13,
            cache_read_bytes: 14,
            store_sync_seconds: HistogramSnapshot {
                buckets: vec![(0.001, 3), (0.01, 1), (f64::INFINITY, 0)],
                sum: 0.0125,
                count: 4,
            },
            store_group_size: HistogramSnapshot {
                buckets: vec![(1.0, 2), (f64::INFINITY, 1)],
                sum: 12.0,
                count: 3,
            },
            ..MetricsSnapshot::default()
        });
        let entity = r#"{entity_name="t/Subscriptions/s"}"#;
        for line in [
            format!("servicebus_active_messages{entity} 2"),
            format!("servicebus_dead_lettered_messages{entity} 1"),
            format!("servicebus_scheduled_messages{entity} 4"),
            format!("servicebus_messages{entity} 7"),
            format!("servicebus_size_bytes{entity} 70"),
            format!("servicebus_incoming_messages_total{entity} 3"),
            format!("servicebus_outgoing_messages_total{entity} 1"),
            "servicebus_active_connections 1".to_owned(),
            "servicebus_connections_opened_total 5".to_owned(),
            "servicebus_connections_closed_total 0".to_owned(),
            "servicebus_throttled_requests_total 2".to_owned(),
            "busbar_memory_used_bytes 4096".to_owned(),
            "busbar_memory_budget_bytes 1073741824".to_owned(),
            "busbar_cache_hits_total 11".to_owned(),
            "busbar_cache_misses_total 12".to_owned(),
            "busbar_cache_evictions_total 13".to_owned(),
            "busbar_cache_read_bytes_total 14".to_owned(),
            format!("busbar_lock_renewals_total{entity} 6"),
            format!("busbar_session_locks_lost_total{entity} 2"),
            format!("busbar_inbox_depth{entity} 9"),
            format!("busbar_lock_lost_answers_total{entity} 5"),
            format!("busbar_open_sessions{entity} 3"),
            "# TYPE busbar_store_sync_seconds histogram".to_owned(),
            r#"busbar_store_sync_seconds_bucket{le="0.001"} 3"#.to_owned(),
            r#"busbar_store_sync_seconds_bucket{le="0.01"} 4"#.to_owned(),
            r#"busbar_store_sync_seconds_bucket{le="+Inf"} 4"#.to_owned(),
            "busbar_store_sync_seconds_sum 0.0125".to_owned(),
            "busbar_store_sync_seconds_count 4".to_owned(),
            r#"busbar_store_group_size_bucket{le="1.0"} 2"#.to_owned(),
            r#"busbar_store_group_size_bucket{le="+Inf"} 3"#.to_owned(),
            "busbar_store_group_size_count 3".to_owned(),
            "# TYPE servicebus_incoming_messages counter".to_owned(),
            "# HELP servicebus_size_bytes Payload bytes the entity stores.".to_owned(),
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line:?} missing from\n{text}"
            );
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
    }
}
