//! `GET /metrics`: the broker's counts in the Prometheus text format (OpenMetrics), named after
//! Azure Monitor's Service Bus metrics (`ActiveMessages` → `servicebus_active_messages`, …),
//! each entity's labelled `entity_name` (a queue's or topic's name,
//! `{topic}/Subscriptions/{subscription}`). [`NamespaceControl::metrics`] gives a
//! [`MetricsSnapshot`]; [`render`] writes it.
//!
//! [`NamespaceControl::metrics`]: crate::control::NamespaceControl::metrics

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// The `Content-Type` of [`render`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The broker's counts at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    let active = Gauge::<i64>::default();
    active.set(gauge(snapshot.active_connections));
    registry.register(
        "servicebus_active_connections",
        "AMQP connections open now",
        active,
    );
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
            }],
            active_connections: 1,
            connections_opened: 5,
            throttled_requests: 2,
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
