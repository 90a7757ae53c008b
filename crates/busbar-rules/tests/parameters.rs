//! `@name` parameters of SQL filters and actions: bound when the rule is created, typed, kept as
//! given, matched ignoring case; an unbound one is refused at its position.

#![allow(clippy::unwrap_used)]

use busbar_rules::{
    Message, Parameter, ParameterValue, PropertyEdit, PropertyRef, SqlAction, SqlFilter,
    SystemProperty, TimeSpan, Timestamp, Truth, Value,
};

fn evaluate(filter: &SqlFilter, message: &Message) -> Truth {
    filter.evaluate(message, &mut || unreachable!()).unwrap()
}

#[test]
fn a_filter_compares_with_its_typed_parameters() {
    let parameters = vec![
        Parameter::new("@c", ParameterValue::String("red".into())),
        Parameter::new("@n", ParameterValue::Int(3)),
        Parameter::new("@big", ParameterValue::Long(1 << 40)),
        Parameter::new("@ratio", ParameterValue::Double(0.5)),
        Parameter::new("@urgent", ParameterValue::Boolean(true)),
        Parameter::new("@since", ParameterValue::DateTime(Timestamp(1_000))),
        Parameter::new("@wait", ParameterValue::Duration(TimeSpan(60_000))),
    ];
    let expression = "color = @c AND size > @n AND total < @big AND ratio >= @ratio \
                      AND urgent = @urgent AND at > @since AND wait = @wait";
    let filter = SqlFilter::with_parameters(expression, parameters.clone()).unwrap();
    assert_eq!(filter.expression(), expression);
    assert_eq!(filter.parameters(), &parameters[..]);
    let message = Message::default()
        .with_user("color", Value::Str("red".into()))
        .with_user("size", Value::Int(4))
        .with_user("total", Value::Int(7))
        .with_user("ratio", Value::Float(0.5))
        .with_user("urgent", Value::Bool(true))
        .with_user("at", Value::Timestamp(Timestamp(2_000)))
        .with_user("wait", Value::TimeSpan(TimeSpan(60_000)));
    assert_eq!(evaluate(&filter, &message), Truth::True);
    let small = message.clone().with_user("size", Value::Int(3));
    assert_eq!(evaluate(&filter, &small), Truth::False);
}

#[test]
fn parameters_stand_wherever_a_value_may() {
    let parameters = vec![
        Parameter::new("@a", ParameterValue::String("x".into())),
        Parameter::new("@b", ParameterValue::String("y".into())),
        Parameter::new("@pattern", ParameterValue::String("re%".into())),
        Parameter::new("@one", ParameterValue::Int(1)),
    ];
    let filter = SqlFilter::with_parameters(
        "kind IN (@a, @b) AND color LIKE @pattern AND -@one < 0 AND @ONE + 1 = 2",
        parameters,
    )
    .unwrap();
    let message = Message::default()
        .with_user("kind", Value::Str("y".into()))
        .with_user("color", Value::Str("red".into()));
    assert_eq!(evaluate(&filter, &message), Truth::True);
}

#[test]
fn an_action_sets_properties_from_its_parameters() {
    let parameters = vec![
        Parameter::new("@l", ParameterValue::String("routed".into())),
        Parameter::new("@n", ParameterValue::Long(5)),
    ];
    let action =
        SqlAction::with_parameters("SET sys.Label = @l; SET count = @n", parameters.clone())
            .unwrap();
    assert_eq!(action.parameters(), &parameters[..]);
    let edits = action
        .apply(&Message::default(), &mut || unreachable!())
        .unwrap();
    assert_eq!(
        edits,
        [
            PropertyEdit::Set {
                property: PropertyRef::System(SystemProperty::Label),
                value: Value::Str("routed".into()),
            },
            PropertyEdit::Set {
                property: PropertyRef::User("count".into()),
                value: Value::Int(5),
            },
        ]
    );
}

#[test]
fn an_unbound_parameter_is_refused_at_its_position() {
    let bound = vec![Parameter::new("@c", ParameterValue::String("red".into()))];
    let error = SqlFilter::with_parameters("color = @c AND size > @n", bound.clone()).unwrap_err();
    assert_eq!(error.position, 23);
    assert_eq!(
        error.message,
        "the parameter '@n' is not defined in the expression's parameters"
    );
    let error = SqlAction::with_parameters("SET a = @missing", bound).unwrap_err();
    assert_eq!(error.position, 9);
    assert!(SqlFilter::parse("color = @c").is_err());
    let error = SqlFilter::parse("color = @").unwrap_err();
    assert_eq!(
        (error.position, error.message.as_str()),
        (9, "expected a parameter name after '@'")
    );
}
