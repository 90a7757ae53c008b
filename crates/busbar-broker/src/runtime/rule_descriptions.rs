//! `com.microsoft:enumerate-rules` (servicebus-amqp.md §5.11): a subscription's rules as the
//! described lists the SDKs decode (descriptors as `ulong`, never symbols).

use busbar_amqp::types::{Descriptor, Value};
use busbar_rules::{Filter, Rule, RuleSet};

use super::request::Request;
use super::rules::amqp_value;

/// `com.microsoft:rule-description:list`.
const RULE_DESCRIPTION: u64 = 0x0000_0137_0000_0004;
/// `com.microsoft:sql-filter:list`.
const SQL_FILTER: u64 = 0x0000_0013_7000_0006;
/// `com.microsoft:true-filter:list`.
const TRUE_FILTER: u64 = 0x0000_0013_7000_0007;
/// `com.microsoft:false-filter:list`.
const FALSE_FILTER: u64 = 0x0000_0013_7000_0008;
/// `com.microsoft:correlation-filter:list`.
const CORRELATION_FILTER: u64 = 0x0000_0013_7000_0009;
/// `com.microsoft:empty-rule-action:list`.
const EMPTY_RULE_ACTION: u64 = 0x0000_0137_0000_0005;
/// `com.microsoft:sql-rule-action:list`.
const SQL_RULE_ACTION: u64 = 0x0000_0137_0000_0006;

/// The operation name this module answers.
pub(crate) const ENUMERATE_RULES: &str = "com.microsoft:enumerate-rules";

/// The rules an enumerate-rules request asks for (`skip`, then at most `top`), each as the
/// `{rule-description: <described list>}` map of the response's `rules` list.
pub(crate) fn enumerate(rules: &RuleSet, request: &Request) -> Vec<Value> {
    let body = request.body.as_map().unwrap_or(&[]);
    let number = |key: &str| {
        body.iter()
            .find(|(k, _)| k.is_key(key))
            .and_then(|(_, value)| match value {
                Value::Int(v) => usize::try_from(*v).ok(),
                Value::Long(v) => usize::try_from(*v).ok(),
                Value::Uint(v) => usize::try_from(*v).ok(),
                _ => None,
            })
    };
    rules
        .iter()
        .skip(number("skip").unwrap_or(0))
        .take(number("top").unwrap_or(usize::MAX))
        .map(|rule| {
            Value::Map(vec![(
                Value::from("rule-description"),
                rule_description(rule),
            )])
        })
        .collect()
}

fn described(code: u64, fields: Vec<Value>) -> Value {
    Value::described(Descriptor::Code(code), Value::List(fields))
}

fn text(value: &Option<String>) -> Value {
    value.clone().map_or(Value::Null, Value::String)
}

/// `[filter, action, rule-name]`.
fn rule_description(rule: &Rule) -> Value {
    let filter = match rule.filter() {
        Filter::True => described(TRUE_FILTER, vec![Value::from("1=1")]),
        Filter::False => described(FALSE_FILTER, vec![Value::from("1=0")]),
        Filter::Sql(sql) => described(SQL_FILTER, vec![Value::from(sql.expression())]),
        Filter::Correlation(correlation) => described(
            CORRELATION_FILTER,
            vec![
                text(&correlation.correlation_id),
                text(&correlation.message_id),
                text(&correlation.to),
                text(&correlation.reply_to),
                text(&correlation.label),
                text(&correlation.session_id),
                text(&correlation.reply_to_session_id),
                text(&correlation.content_type),
                Value::Map(
                    correlation
                        .properties
                        .iter()
                        .map(|(name, value)| (Value::from(name.as_str()), amqp_value(value)))
                        .collect(),
                ),
            ],
        ),
    };
    let action = match rule.action() {
        Some(action) => described(SQL_RULE_ACTION, vec![Value::from(action.expression())]),
        None => described(EMPTY_RULE_ACTION, Vec::new()),
    };
    described(
        RULE_DESCRIPTION,
        vec![filter, action, Value::from(rule.name())],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use busbar_rules::{CorrelationFilter, SqlAction, SqlFilter};

    fn fields(value: &Value) -> (u64, &[Value]) {
        match value {
            Value::Described(described) => match (&described.descriptor, &described.value) {
                (Descriptor::Code(code), Value::List(fields)) => (*code, fields),
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    fn request(body: Vec<(Value, Value)>) -> Request {
        Request {
            message_id: None,
            reply_to: None,
            properties: busbar_amqp::message::ApplicationProperties::default(),
            body: Value::Map(body),
        }
    }

    #[test]
    fn rules_are_described_lists_with_ulong_descriptors_and_paged_by_skip_and_top() {
        let correlation = CorrelationFilter {
            label: Some("order".into()),
            properties: vec![("priority".into(), busbar_rules::Value::Int(1))],
            ..CorrelationFilter::default()
        };
        let rules = RuleSet::with_rules(vec![
            Rule::default_rule(),
            Rule::new(
                "red",
                Filter::Sql(SqlFilter::parse("color = 'red'").unwrap()),
                Some(SqlAction::parse("SET seen = TRUE").unwrap()),
            )
            .unwrap(),
            Rule::new("orders", Filter::Correlation(correlation), None).unwrap(),
        ])
        .unwrap();
        let all = enumerate(&rules, &request(Vec::new()));
        assert_eq!(all.len(), 3);
        let description = |entry: &Value| -> Value { entry.as_map().unwrap()[0].1.clone() };

        let first = description(&all[0]);
        let (code, list) = fields(&first);
        assert_eq!(code, RULE_DESCRIPTION);
        assert_eq!(fields(&list[0]), (TRUE_FILTER, &[Value::from("1=1")][..]));
        assert_eq!(fields(&list[1]), (EMPTY_RULE_ACTION, &[][..]));
        assert_eq!(list[2], Value::from("$Default"));

        let second = description(&all[1]);
        let (_, list) = fields(&second);
        assert_eq!(
            fields(&list[0]),
            (SQL_FILTER, &[Value::from("color = 'red'")][..])
        );
        assert_eq!(
            fields(&list[1]),
            (SQL_RULE_ACTION, &[Value::from("SET seen = TRUE")][..])
        );

        let third = description(&all[2]);
        let (_, list) = fields(&third);
        let (code, correlation) = fields(&list[0]);
        assert_eq!(code, CORRELATION_FILTER);
        assert_eq!(correlation[4], Value::from("order"));
        assert_eq!(correlation[0], Value::Null);
        assert_eq!(
            correlation[8],
            Value::Map(vec![(Value::from("priority"), Value::Long(1))])
        );

        let page = enumerate(
            &rules,
            &request(vec![
                (Value::from("top"), Value::Int(1)),
                (Value::from("skip"), Value::Int(1)),
            ]),
        );
        assert_eq!(page, all[1..2]);
    }
}
