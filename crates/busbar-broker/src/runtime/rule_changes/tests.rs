//! Tests of rule-change requests and the persisted rule set.

use super::*;
use busbar_store::{MemoryStorage, Storage};

fn request(operation: &str, body: Vec<(Value, Value)>) -> Request {
    Request {
        message_id: None,
        reply_to: None,
        properties: busbar_amqp::message::ApplicationProperties(vec![(
            "operation".to_owned(),
            Value::from(operation),
        )]),
        body: Value::Map(body),
    }
}

fn map(entries: &[(&str, Value)]) -> Value {
    Value::Map(
        entries
            .iter()
            .map(|(k, v)| (Value::from(*k), v.clone()))
            .collect(),
    )
}

fn add_rule(name: &str, description: Value) -> Result<RuleChange, BrokerError> {
    parse(&request(
        ADD_RULE,
        vec![
            (Value::from("rule-name"), Value::from(name)),
            (Value::from("rule-description"), description),
        ],
    ))
    .unwrap()
}

fn sql(expression: &str) -> Value {
    map(&[("expression", Value::from(expression))])
}

#[test]
fn add_rule_reads_sql_and_correlation_filters_with_an_optional_action() {
    let RuleChange::Add(rule) = add_rule(
        "red",
        map(&[
            ("sql-filter", sql("color = 'red'")),
            ("sql-rule-action", sql("SET seen = TRUE")),
            ("rule-name", Value::from("red")),
        ]),
    )
    .unwrap() else {
        panic!("not an add");
    };
    assert_eq!(rule.filter().sql_expression(), Some("color = 'red'"));
    assert_eq!(rule.action().unwrap().expression(), "SET seen = TRUE");

    let RuleChange::Add(rule) = add_rule(
        "orders",
        map(&[
            (
                "correlation-filter",
                map(&[
                    ("label", Value::from("order")),
                    ("to", Value::Null),
                    ("properties", map(&[("priority", Value::Int(1))])),
                ]),
            ),
            ("sql-rule-action", Value::Null),
        ]),
    )
    .unwrap() else {
        panic!("not an add");
    };
    let Filter::Correlation(filter) = rule.filter() else {
        panic!("not a correlation filter");
    };
    assert_eq!(filter.label.as_deref(), Some("order"));
    assert_eq!(filter.to, None);
    assert_eq!(
        filter.properties,
        vec![("priority".to_owned(), busbar_rules::Value::Int(1))]
    );
    assert!(rule.action().is_none());
}

#[test]
fn malformed_requests_are_argument_errors_and_sql_errors_name_the_position() {
    let error = add_rule("bad", map(&[("sql-filter", sql("color = "))])).unwrap_err();
    assert!(
        matches!(&error, BrokerError::Argument(text) if text.contains("position")),
        "{error:?}"
    );
    assert!(matches!(
        add_rule("none", map(&[])),
        Err(BrokerError::Argument(_))
    ));
    assert!(matches!(
        parse(&request(REMOVE_RULE, Vec::new())),
        Some(Err(BrokerError::Argument(_)))
    ));
    assert!(parse(&request("com.microsoft:peek-message", Vec::new())).is_none());
}

#[test]
fn duplicates_and_unknown_names_are_refused_leaving_the_rules_unchanged() {
    let rules = RuleSet::default();
    let duplicate = add_rule(DEFAULT_RULE_NAME, map(&[("sql-filter", sql("1=1"))])).unwrap();
    assert!(matches!(
        duplicate.applied_to(&rules),
        Err(BrokerError::EntityAlreadyExists { name }) if name == DEFAULT_RULE_NAME
    ));
    assert!(matches!(
        RuleChange::Remove("nope".into()).applied_to(&rules),
        Err(BrokerError::RuleNotFound { name }) if name == "nope"
    ));
    let removed = RuleChange::Remove(DEFAULT_RULE_NAME.into())
        .applied_to(&rules)
        .unwrap();
    assert!(removed.is_empty());
    assert_eq!(rules, RuleSet::default());
}

#[test]
fn a_changed_rule_set_survives_a_restart_of_the_store() {
    let added = add_rule(
        "orders",
        map(&[
            (
                "correlation-filter",
                map(&[
                    ("label", Value::from("order")),
                    ("properties", map(&[("priority", Value::Long(2))])),
                ]),
            ),
            ("sql-rule-action", sql("SET seen = 1")),
        ]),
    )
    .unwrap();
    let with_orders = added.applied_to(&RuleSet::default()).unwrap();
    let emptied = RuleChange::Remove(DEFAULT_RULE_NAME.into())
        .applied_to(&RuleSet::default())
        .unwrap();

    let mut storage = MemoryStorage::new();
    storage
        .append(&[
            record(EntityId(3), &with_orders),
            record(EntityId(4), &emptied),
        ])
        .unwrap();
    storage.sync().unwrap();
    let mut restarted = storage.restart();
    let recovered = restarted.recover().unwrap();
    assert_eq!(
        persisted(&recovered, EntityId(3)).unwrap().unwrap(),
        with_orders
    );
    assert!(
        persisted(&recovered, EntityId(4))
            .unwrap()
            .unwrap()
            .is_empty()
    );
    assert!(persisted(&recovered, EntityId(5)).is_none());
}
