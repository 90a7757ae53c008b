//! The entities the scenarios use on Busbar: the numbered queues, the fan-out topics with
//! their subscriptions and filters, and the `Config.json` (emulator format) declaring them.

use serde_json::{Value, json};

use crate::scenario::{QUEUE_COUNT, QUOTA_MEGABYTES, QUOTA_QUEUE};

/// Subscription counts of the fan-out topics (`fanout-1`, `fanout-10`, `fanout-100`).
pub(crate) const FANOUT_SUBSCRIPTIONS: [usize; 3] = [1, 10, 100];
/// The application property every fan-out message carries: its name and value.
pub(crate) const ROUTE_PROPERTY: (&str, &str) = ("route", "selected");
/// The matrix's topic (its subscriptions `sub-0` … take every message) and its
/// session-enabled queue.
pub(crate) const MATRIX_TOPIC: &str = "matrix-topic";
pub(crate) const SESSIONS_QUEUE: &str = "matrix-sessions";
/// The value the filters of the subscriptions that take no copy ask for instead.
const OTHER_ROUTE: &str = "elsewhere";

/// The name of queue `n` (the default `--address` template).
pub(crate) fn queue_name(queue: usize) -> String {
    format!("bench-{queue}")
}

/// The name of the fan-out topic with `subscriptions` subscriptions.
pub(crate) fn topic_name(subscriptions: usize) -> String {
    format!("fanout-{subscriptions}")
}

/// Whether subscription `index` of a fan-out topic selects the messages the tool sends: the
/// even-numbered ones do, so "half" is ⌈n/2⌉ (1 of 1, 5 of 10, 50 of 100).
fn selects(index: usize) -> bool {
    index.is_multiple_of(2)
}

/// How many copies a topic with `subscriptions` subscriptions stores of each message.
pub(crate) fn copies_per_message(subscriptions: usize) -> usize {
    (0..subscriptions).filter(|&index| selects(index)).count()
}

/// A Busbar `Config.json` with the queues and fan-out topics the scenarios use; the
/// slow-consumer queue has a small `MaxSizeInMegabytes`.
pub(crate) fn busbar_config() -> String {
    let queues: Vec<Value> = (0..QUEUE_COUNT)
        .map(|queue| {
            let mut entry = json!({
                "Name": queue_name(queue),
                "Properties": {
                    "DeadLetteringOnMessageExpiration": false,
                    "DefaultMessageTimeToLive": "PT1H",
                    "DuplicateDetectionHistoryTimeWindow": "PT20S",
                    "ForwardDeadLetteredMessagesTo": "",
                    "ForwardTo": "",
                    "LockDuration": "PT1M",
                    "MaxDeliveryCount": 10,
                    // The matrix's largest messages are 256 KiB of body plus their sections.
                    "MaxMessageSizeInKilobytes": 1024,
                    "RequiresDuplicateDetection": false,
                    "RequiresSession": false
                }
            });
            if queue == QUOTA_QUEUE {
                entry["Properties"]["MaxSizeInMegabytes"] = QUOTA_MEGABYTES.into();
            }
            entry
        })
        .collect();
    let mut queues = queues;
    let mut sessions = queues[0].clone();
    sessions["Name"] = SESSIONS_QUEUE.into();
    sessions["Properties"]["RequiresSession"] = true.into();
    queues.push(sessions);
    let mut topics: Vec<Value> = FANOUT_SUBSCRIPTIONS.into_iter().map(fanout_topic).collect();
    topics.push(matrix_topic());
    let config = json!({
        "UserConfig": {
            "Namespaces": [{ "Name": "sbemulatorns", "Queues": queues, "Topics": topics }],
            "Logging": { "Type": "Console" }
        }
    });
    serde_json::to_string_pretty(&config).unwrap_or_default()
}

fn fanout_topic(subscriptions: usize) -> Value {
    json!({
        "Name": topic_name(subscriptions),
        "Properties": {
            "DefaultMessageTimeToLive": "PT1H",
            "DuplicateDetectionHistoryTimeWindow": "PT20S",
            "RequiresDuplicateDetection": false
        },
        "Subscriptions": (0..subscriptions).map(fanout_subscription).collect::<Vec<_>>()
    })
}

/// The matrix's topic: [`TOPIC_SUBSCRIPTIONS`](crate::matrix::TOPIC_SUBSCRIPTIONS)
/// subscriptions without rules (each takes a copy of every message).
fn matrix_topic() -> Value {
    let mut topic = fanout_topic(0);
    topic["Name"] = MATRIX_TOPIC.into();
    topic["Subscriptions"] = (0..crate::matrix::TOPIC_SUBSCRIPTIONS)
        .map(|index| {
            let mut subscription = fanout_subscription(index);
            if let Some(fields) = subscription.as_object_mut() {
                fields.remove("Rules");
            }
            subscription
        })
        .collect();
    topic
}

/// Subscription `index` with one rule on [`ROUTE_PROPERTY`]. The filter kind alternates in
/// pairs (SQL, SQL, correlation, correlation, …) so that each kind both selects and misses.
fn fanout_subscription(index: usize) -> Value {
    let (name, value) = (
        ROUTE_PROPERTY.0,
        if selects(index) {
            ROUTE_PROPERTY.1
        } else {
            OTHER_ROUTE
        },
    );
    let filter = if (index / 2).is_multiple_of(2) {
        json!({ "FilterType": "Sql", "SqlFilter": { "SqlExpression": format!("{name} = '{value}'") } })
    } else {
        json!({ "FilterType": "Correlation", "CorrelationFilter": { "Properties": { name: value } } })
    };
    json!({
        "Name": format!("sub-{index}"),
        "Properties": {
            "DeadLetteringOnMessageExpiration": false,
            "DefaultMessageTimeToLive": "PT1H",
            "ForwardDeadLetteredMessagesTo": "",
            "ForwardTo": "",
            "LockDuration": "PT1M",
            "MaxDeliveryCount": 10,
            "RequiresSession": false
        },
        "Rules": [{ "Name": "route", "Properties": filter }]
    })
}

#[cfg(test)]
mod tests {
    use busbar_broker::config::{self, PropertyValue, RuleFilter};
    use busbar_rules::{Guid, Message, SqlFilter, Truth, Value};

    use super::*;

    /// Whether a configured rule selects a message carrying [`ROUTE_PROPERTY`]: SQL filters
    /// are evaluated by the rules engine, correlation filters compared property by property.
    fn selects_sent_message(filter: &RuleFilter) -> bool {
        let (name, value) = ROUTE_PROPERTY;
        match filter {
            RuleFilter::Sql(expression) => {
                let message = Message::default().with_user(name, Value::Str(value.into()));
                let filter = SqlFilter::parse(&expression.0).unwrap();
                filter.evaluate(&message, &mut || Guid([0; 16])).unwrap() == Truth::True
            }
            RuleFilter::Correlation(filter) => {
                assert_eq!(filter.properties.len(), 1);
                filter.properties[0] == (name.to_owned(), PropertyValue::String(value.to_owned()))
            }
        }
    }

    #[test]
    fn busbar_accepts_the_config_and_half_the_subscriptions_select_each_message() {
        let config = config::parse(&busbar_config(), "Config.json").unwrap();
        let namespace = &config.namespace;
        assert_eq!(namespace.queues.len(), QUEUE_COUNT + 1);
        assert!(namespace.queues[QUEUE_COUNT].delivery.requires_session);
        assert_eq!(namespace.queues[16].name.as_str(), "bench-16");
        let topics: Vec<(&str, usize)> = namespace
            .topics
            .iter()
            .map(|topic| (topic.name.as_str(), topic.subscriptions.len()))
            .collect();
        assert_eq!(
            topics,
            [
                ("fanout-1", 1),
                ("fanout-10", 10),
                ("fanout-100", 100),
                (MATRIX_TOPIC, crate::matrix::TOPIC_SUBSCRIPTIONS)
            ]
        );
        let mut kinds = [0; 2];
        for topic in namespace
            .topics
            .iter()
            .filter(|t| t.name.as_str() != MATRIX_TOPIC)
        {
            let mut selecting = 0;
            for subscription in &topic.subscriptions {
                let [rule] = &subscription.rules[..] else {
                    panic!("{}: one rule expected", subscription.name.as_str());
                };
                kinds[usize::from(matches!(rule.filter, RuleFilter::Correlation(_)))] += 1;
                selecting += usize::from(selects_sent_message(&rule.filter));
            }
            assert_eq!(
                selecting,
                copies_per_message(topic.subscriptions.len()),
                "{}",
                topic.name.as_str()
            );
        }
        assert_eq!(copies_per_message(1), 1);
        assert_eq!(copies_per_message(10), 5);
        assert_eq!(copies_per_message(100), 50);
        // Both filter kinds are exercised: 1 + 6 + 50 SQL, 4 + 50 correlation.
        assert_eq!(kinds, [57, 54]);
    }
}
