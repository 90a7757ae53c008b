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

#[test]
fn parameters_survive_a_restart_with_their_types_and_unbound_ones_are_refused() {
    use busbar_rules::{ParameterValue, TimeSpan};
    let filter = SqlFilter::with_parameters(
        "color = @c AND size > @n AND wait < @w",
        vec![
            Parameter::new("@c", ParameterValue::String("red".into())),
            Parameter::new("@n", ParameterValue::Int(3)),
            Parameter::new("@w", ParameterValue::Duration(TimeSpan(5_000))),
        ],
    )
    .unwrap();
    let action = SqlAction::with_parameters(
        "SET sys.Label = @l",
        vec![Parameter::new("@l", ParameterValue::String("seen".into()))],
    )
    .unwrap();
    let rule = Rule::new("typed", Filter::Sql(filter), Some(action)).unwrap();
    let rules = RuleChange::Add(Box::new(rule))
        .applied_to(&RuleSet::default())
        .unwrap();
    let mut storage = MemoryStorage::new();
    storage.append(&[record(EntityId(3), &rules)]).unwrap();
    storage.sync().unwrap();
    let recovered = storage.restart().recover().unwrap();
    assert_eq!(persisted(&recovered, EntityId(3)).unwrap().unwrap(), rules);

    // An add-rule whose expression names a parameter it does not bind.
    let error = add_rule("unbound", map(&[("sql-filter", sql("color = @c"))])).unwrap_err();
    assert!(
        matches!(&error, BrokerError::Argument(text) if text.contains("'@c' is not defined")),
        "{error:?}"
    );
}

/// A rule change's reply, caught for the test.
fn caught() -> (
    ChangeReply,
    std::sync::mpsc::Receiver<Result<(), BrokerError>>,
) {
    let (done, replies) = std::sync::mpsc::channel();
    let reply: ChangeReply = Box::new(move |result| {
        let _ = done.send(result);
    });
    (reply, replies)
}

fn add_red() -> RuleChange {
    add_rule("red", map(&[("sql-filter", sql("color = 'red'"))])).unwrap()
}

#[test]
fn a_rule_change_takes_effect_and_is_answered_only_once_its_record_is_durable() {
    let rules = Arc::new(LiveRules::new(RuleSet::default()));
    let mut submitted = Vec::new();
    let (reply, replies) = caught();
    rules.change(
        &add_red(),
        EntityId(3),
        |records, completion| submitted.push((records, completion)),
        reply,
    );
    let [(records, _)] = &submitted[..] else {
        panic!("one submission expected");
    };
    assert_eq!(
        records[..],
        [record(EntityId(3), &rules.latest.lock().unwrap())]
    );
    // Not yet durable: sends still see the old rules, nothing is answered.
    assert_eq!(*rules.current(), RuleSet::default());
    assert!(replies.try_recv().is_err());
    // A second change builds on the first, already submitted one.
    let (reply, second) = caught();
    rules.change(
        &RuleChange::Remove(DEFAULT_RULE_NAME.into()),
        EntityId(3),
        |records, completion| submitted.push((records, completion)),
        reply,
    );
    for (_, completion) in submitted.drain(..) {
        completion(Ok(busbar_store::Lsn(1)));
    }
    assert_eq!(replies.try_recv().unwrap(), Ok(()));
    assert_eq!(second.try_recv().unwrap(), Ok(()));
    let current = rules.current();
    let names: Vec<&str> = current.iter().map(Rule::name).collect();
    assert_eq!(names, ["red"]);
}

#[test]
fn a_refused_change_is_answered_at_once_and_submits_nothing() {
    let rules = Arc::new(LiveRules::new(RuleSet::default()));
    let (reply, replies) = caught();
    rules.change(
        &RuleChange::Remove("nope".into()),
        EntityId(3),
        |_, _| panic!("nothing to submit"),
        reply,
    );
    assert!(matches!(
        replies.try_recv().unwrap(),
        Err(BrokerError::RuleNotFound { .. })
    ));
}

#[test]
fn a_failed_sync_answers_the_store_error_and_keeps_the_old_rules() {
    let mut storage = MemoryStorage::new();
    storage.fail_next_sync();
    let writer = busbar_store::GroupCommit::spawn(storage, Default::default()).unwrap();
    let store = writer.handle();
    let rules = Arc::new(LiveRules::new(RuleSet::default()));
    let add_red_through_the_store = || {
        let (reply, replies) = caught();
        rules.change(
            &add_red(),
            EntityId(3),
            |records, completion| store.submit(records, completion),
            reply,
        );
        let answer = replies
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap();
        assert!(
            matches!(answer, Err(BrokerError::StoreUnavailable { .. })),
            "{answer:?}"
        );
        assert_eq!(*rules.current(), RuleSet::default());
    };
    add_red_through_the_store();
    // The failed change is not the base of the next one: adding it again is not a duplicate
    // (the poisoned store refuses it as well).
    add_red_through_the_store();
    let storage = writer.shutdown().unwrap();
    let recovered = storage.restart().recover().unwrap();
    assert!(persisted(&recovered, EntityId(3)).is_none());
}
