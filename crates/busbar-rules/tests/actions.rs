//! SQL rule actions and correlation filters: the edits an action returns, its conversions and
//! errors, and correlation equality.

#![allow(clippy::unwrap_used)]

use busbar_rules::{
    CorrelationFilter, EvaluationError, Guid, Message, PropertyEdit, PropertyRef, SqlAction,
    SystemProperty, TimeSpan, Value,
};

fn message() -> Message {
    Message {
        label: Some("old".into()),
        ..Message::default()
    }
    .with_user("quantity", Value::Int(10))
    .with_user("price", Value::Float(2.5))
    .with_user("color", Value::Str("red".into()))
}

fn apply(action: &str) -> Result<Vec<PropertyEdit>, EvaluationError> {
    SqlAction::parse(action)
        .unwrap()
        .apply(&message(), &mut || Guid([0xab; 16]))
}

fn set_user(name: &str, value: Value<'static>) -> PropertyEdit {
    PropertyEdit::Set {
        property: PropertyRef::User(name.into()),
        value,
    }
}

fn set_system(property: SystemProperty, value: Value<'static>) -> PropertyEdit {
    PropertyEdit::Set {
        property: PropertyRef::System(property),
        value,
    }
}

#[test]
fn set_and_remove_produce_edits_in_order() {
    assert_eq!(
        apply("SET quantity = quantity / 2;").unwrap(),
        [set_user("quantity", Value::Int(5))]
    );
    assert_eq!(
        apply("set a = 1 remove color").unwrap(),
        [
            set_user("a", Value::Int(1)),
            PropertyEdit::Remove {
                property: PropertyRef::User("color".into())
            }
        ]
    );
    assert_eq!(
        apply("SET sys.Label = sys.Label + '-routed'; REMOVE sys.CorrelationId").unwrap(),
        [
            set_system(SystemProperty::Label, Value::Str("old-routed".into())),
            PropertyEdit::Remove {
                property: PropertyRef::System(SystemProperty::CorrelationId)
            },
        ]
    );
}

#[test]
fn later_statements_see_earlier_ones() {
    assert_eq!(
        apply("SET a = 1; SET b = a + 1; SET B = b * 10").unwrap(),
        [
            set_user("a", Value::Int(1)),
            set_user("b", Value::Int(2)),
            set_user("B", Value::Int(20))
        ]
    );
    assert_eq!(
        apply("REMOVE color; SET c = color").unwrap()[1],
        set_user("c", Value::Null),
        "a removed property reads as NULL"
    );
    assert_eq!(
        apply("SET sys.To = 'a'; SET t = sys.To").unwrap()[1],
        set_user("t", Value::Str("a".into()))
    );
}

#[test]
fn set_converts_implicitly_where_csharp_would() {
    assert_eq!(
        apply("SET sys.To = quantity").unwrap(),
        [set_system(SystemProperty::To, Value::Str("10".into()))]
    );
    assert_eq!(
        apply("SET price = 3").unwrap(),
        [set_user("price", Value::Float(3.0))]
    );
    assert_eq!(
        apply("SET fresh = 3").unwrap(),
        [set_user("fresh", Value::Int(3))]
    );
    assert_eq!(
        apply("SET sys.MessageId = newid()").unwrap(),
        [set_system(
            SystemProperty::MessageId,
            Value::Str("abababab-abab-abab-abab-abababababab".into())
        )]
    );
    assert_eq!(
        apply("SET x = missing + 1").unwrap(),
        [set_user("x", Value::Null)]
    );
    assert_eq!(
        apply("SET sys.Subject = NULL").unwrap(),
        [set_system(SystemProperty::Label, Value::Null)]
    );
}

#[test]
fn evaluation_errors_are_reported_not_swallowed() {
    assert!(matches!(
        apply("SET sys.TimeToLive = 5"),
        Err(EvaluationError::InvalidAssignment {
            property: "TimeToLive",
            found: "long"
        })
    ));
    assert_eq!(
        apply("SET x = property('sys.Nope')"),
        Err(EvaluationError::UnknownSystemProperty("Nope".into()))
    );
    assert_eq!(
        apply("SET x = quantity / 0"),
        Err(EvaluationError::DivideByZero)
    );
    let time_to_live = Message {
        time_to_live: Some(TimeSpan(5)),
        ..Message::default()
    };
    let doubled = SqlAction::parse("SET sys.TimeToLive = sys.TimeToLive + sys.TimeToLive").unwrap();
    assert_eq!(
        doubled.apply(&time_to_live, &mut || Guid([0; 16])).unwrap(),
        [set_system(
            SystemProperty::TimeToLive,
            Value::TimeSpan(TimeSpan(10))
        )]
    );
}

#[test]
fn malformed_actions_are_refused_with_a_position() {
    let cases = [
        ("", 1),
        ("SET", 4),
        ("SET a 1", 7),
        ("DELETE a", 1),
        ("SET a = ", 9),
        ("SET sys.SequenceNumber = 1", 5),
        ("REMOVE sys.EnqueuedTimeUtc", 8),
        ("SET a = 1 = 2", 11),
    ];
    for (action, position) in cases {
        match SqlAction::parse(action) {
            Err(error) => assert_eq!(error.position, position, "{action:?}: {error}"),
            Ok(parsed) => panic!("{action:?} parsed as {parsed:?}"),
        }
    }
    assert!(
        SqlAction::parse("SET a = 1; ;").is_ok(),
        "semicolons are optional separators"
    );
    let many = vec!["SET a = 1"; 33].join("; ");
    assert!(
        SqlAction::parse(&many)
            .unwrap_err()
            .message
            .contains("at most 32")
    );
    assert!(SqlAction::parse(&vec!["SET a = 1"; 32].join("; ")).is_ok());
}

#[test]
fn correlation_filters_match_on_equality_of_everything_they_name() {
    let message = Message {
        correlation_id: Some("order-1".into()),
        label: Some("created".into()),
        content_type: Some("application/json".into()),
        ..Message::default()
    }
    .with_user("Tenant", Value::Str("contoso".into()))
    .with_user("priority", Value::Float(3.0))
    .with_user("none", Value::Null);
    let filter = |f: CorrelationFilter| f.matches(&message);
    assert!(filter(CorrelationFilter {
        correlation_id: Some("order-1".into()),
        ..Default::default()
    }));
    assert!(!filter(CorrelationFilter {
        correlation_id: Some("ORDER-1".into()),
        ..Default::default()
    }));
    assert!(filter(CorrelationFilter {
        label: Some("created".into()),
        content_type: Some("application/json".into()),
        properties: vec![
            ("tenant".into(), Value::Str("contoso".into())),
            ("priority".into(), Value::Int(3))
        ],
        ..Default::default()
    }));
    assert!(!filter(CorrelationFilter {
        label: Some("created".into()),
        to: Some("anyone".into()),
        ..Default::default()
    }));
    assert!(!filter(CorrelationFilter {
        properties: vec![("tenant".into(), Value::Int(1))],
        ..Default::default()
    }));
    assert!(!filter(CorrelationFilter {
        properties: vec![("absent".into(), Value::Null)],
        ..Default::default()
    }));
    assert!(filter(CorrelationFilter {
        properties: vec![("none".into(), Value::Null)],
        ..Default::default()
    }));
    assert!(!filter(CorrelationFilter {
        session_id: Some("s".into()),
        ..Default::default()
    }));
}
