//! Subscription rules as far as this broker evaluates them: correlation filters (every given
//! field equal) and the match-all SQL filter `1=1`. Other SQL filters match nothing until the
//! SQL rules engine exists.

use busbar_amqp::message::{Message, MessageId};
use busbar_amqp::types::Value;

use crate::config::{CorrelationFilter, MATCH_ALL_SQL, PropertyValue, RuleConfig, RuleFilter};

/// Whether any of `rules` selects the message (a message that cannot be read matches none).
pub(crate) fn any_matches(rules: &[RuleConfig], message: &Message) -> bool {
    rules.iter().any(|rule| match &rule.filter {
        RuleFilter::Sql(expression) => expression.0.trim() == MATCH_ALL_SQL,
        RuleFilter::Correlation(filter) => correlation_matches(filter, message).unwrap_or(false),
    })
}

fn correlation_matches(
    filter: &CorrelationFilter,
    message: &Message,
) -> Result<bool, busbar_amqp::DecodeError> {
    let properties = message.properties()?.unwrap_or_default();
    let id_text = |id: &Option<MessageId>| match id {
        Some(MessageId::String(text)) => Some(text.clone()),
        Some(MessageId::Ulong(value)) => Some(value.to_string()),
        _ => None,
    };
    let content_type = properties
        .content_type
        .as_ref()
        .map(|s| s.as_str().to_owned());
    let system = [
        (&filter.content_type, content_type),
        (&filter.correlation_id, id_text(&properties.correlation_id)),
        (&filter.label, properties.subject.clone()),
        (&filter.message_id, id_text(&properties.message_id)),
        (&filter.reply_to, properties.reply_to.clone()),
        (
            &filter.reply_to_session_id,
            properties.reply_to_group_id.clone(),
        ),
        (&filter.session_id, properties.group_id.clone()),
        (&filter.to, properties.to.clone()),
    ];
    if system
        .iter()
        .any(|(wanted, actual)| wanted.is_some() && *wanted != actual)
    {
        return Ok(false);
    }
    if filter.properties.is_empty() {
        return Ok(true);
    }
    let application = message.application_properties()?.unwrap_or_default();
    Ok(filter.properties.iter().all(|(key, wanted)| {
        application
            .get(key)
            .is_some_and(|actual| property_equals(wanted, actual))
    }))
}

fn property_equals(wanted: &PropertyValue, actual: &Value) -> bool {
    let integer = match actual {
        Value::Byte(v) => Some(i64::from(*v)),
        Value::Short(v) => Some(i64::from(*v)),
        Value::Int(v) => Some(i64::from(*v)),
        Value::Long(v) => Some(*v),
        Value::Ubyte(v) => Some(i64::from(*v)),
        Value::Ushort(v) => Some(i64::from(*v)),
        Value::Uint(v) => Some(i64::from(*v)),
        Value::Ulong(v) => i64::try_from(*v).ok(),
        _ => None,
    };
    match (wanted, actual) {
        (PropertyValue::String(text), Value::String(actual)) => text == actual,
        (PropertyValue::Bool(flag), Value::Bool(actual)) => flag == actual,
        (PropertyValue::Float(number), Value::Double(actual)) => number == actual,
        (PropertyValue::Integer(number), _) => integer == Some(*number),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SqlExpression;
    use crate::names::EntityName;
    use busbar_amqp::message::{ApplicationProperties, MessageBuilder, Properties};
    use bytes::Bytes;

    fn rule(filter: RuleFilter) -> RuleConfig {
        RuleConfig {
            name: EntityName::from("r"),
            filter,
            action: None,
        }
    }

    fn message(content_type: &str, color: &str) -> Message {
        MessageBuilder::new()
            .properties(Properties {
                content_type: Some(content_type.into()),
                ..Properties::default()
            })
            .application_properties(ApplicationProperties(vec![(
                "color".into(),
                Value::from(color),
            )]))
            .data(Bytes::from_static(b"x"))
            .build()
    }

    #[test]
    fn correlation_filters_compare_system_and_user_properties() {
        let json = rule(RuleFilter::Correlation(CorrelationFilter {
            content_type: Some("application/json".into()),
            properties: vec![("color".into(), PropertyValue::String("red".into()))],
            ..CorrelationFilter::default()
        }));
        assert!(any_matches(
            std::slice::from_ref(&json),
            &message("application/json", "red")
        ));
        assert!(!any_matches(
            std::slice::from_ref(&json),
            &message("text/plain", "red")
        ));
        assert!(!any_matches(&[json], &message("application/json", "blue")));
    }

    #[test]
    fn only_the_match_all_sql_filter_matches() {
        let all = rule(RuleFilter::Sql(SqlExpression("1=1".into())));
        let other = rule(RuleFilter::Sql(SqlExpression("color = 'red'".into())));
        assert!(any_matches(&[all], &message("a", "red")));
        assert!(!any_matches(&[other], &message("a", "red")));
        assert!(!any_matches(&[], &message("a", "red")));
    }
}
