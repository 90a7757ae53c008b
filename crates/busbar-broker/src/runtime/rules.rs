//! The broker's side of `busbar-rules`: configured rules compiled into rule sets, the AMQP
//! message read through [`MessageView`], and a rule action's edits written into a copy.

use std::borrow::Cow;

use busbar_amqp::DecodeError;
use busbar_amqp::message::{Message, MessageId, Properties};
use busbar_amqp::types::{Symbol, Timestamp as AmqpTimestamp, Uuid, Value as AmqpValue};
use busbar_core::NewMessage;
use busbar_rules::{
    CorrelationFilter as RulesCorrelation, Filter, Guid, MessageView, PropertyEdit, PropertyRef,
    Rule, RuleSet, SqlAction, SqlFilter, SystemProperty, Timestamp, Value, find_user_property,
};

use super::sections::Sections;
use crate::config::{CorrelationFilter, PropertyValue, RuleConfig, RuleFilter};

/// The application property naming the rule whose action made a copy ("Topic filters and
/// actions": a copy made by a rule with an action carries it).
const RULE_NAME_PROPERTY: &str = "RuleName";

/// The configured rules of one subscription, parsed once.
pub(crate) fn compile(rules: &[RuleConfig]) -> Result<RuleSet, busbar_rules::Error> {
    RuleSet::with_rules(rules.iter().map(compile_rule).collect::<Result<_, _>>()?)
}

/// One configured rule, parsed (a malformed SQL filter or action is refused with its position).
pub(crate) fn compile_rule(rule: &RuleConfig) -> Result<Rule, busbar_rules::Error> {
    let filter = match &rule.filter {
        RuleFilter::Sql(expression) => Filter::Sql(SqlFilter::parse(&expression.0)?),
        RuleFilter::Correlation(filter) => Filter::Correlation(correlation(filter)),
    };
    let action = rule
        .action
        .as_ref()
        .map(|action| SqlAction::parse(&action.0))
        .transpose()?;
    Rule::new(rule.name.as_str(), filter, action)
}

fn correlation(filter: &CorrelationFilter) -> RulesCorrelation {
    let properties = filter
        .properties
        .iter()
        .map(|(name, value)| {
            let value = match value {
                PropertyValue::String(text) => Value::Str(Cow::Owned(text.clone())),
                PropertyValue::Integer(number) => Value::Int(*number),
                PropertyValue::Float(number) => Value::Float(*number),
                PropertyValue::Bool(flag) => Value::Bool(*flag),
            };
            (name.clone(), value)
        })
        .collect();
    RulesCorrelation {
        correlation_id: filter.correlation_id.clone(),
        message_id: filter.message_id.clone(),
        to: filter.to.clone(),
        reply_to: filter.reply_to.clone(),
        label: filter.label.clone(),
        session_id: filter.session_id.clone(),
        reply_to_session_id: filter.reply_to_session_id.clone(),
        content_type: filter.content_type.clone(),
        properties,
    }
}

/// What rules read of an AMQP message: its properties section and application properties
/// (decoded once per sent message, whatever the number of subscriptions).
#[derive(Debug, Default)]
pub(crate) struct AmqpView {
    properties: Properties,
    application: Vec<(String, Value<'static>)>,
    size: i64,
}

impl AmqpView {
    /// Decodes the sections rules read.
    pub(crate) fn of(message: &Message) -> Result<Self, DecodeError> {
        let application = message
            .application_properties()?
            .unwrap_or_default()
            .0
            .into_iter()
            .map(|(key, value)| (key, rules_value(value)))
            .collect();
        Ok(Self {
            properties: message.properties()?.unwrap_or_default(),
            application,
            size: i64::try_from(message.as_bytes().len()).unwrap_or(i64::MAX),
        })
    }
}

fn id_text(id: &Option<MessageId>) -> Value<'_> {
    match id {
        Some(MessageId::String(text)) => Value::Str(Cow::Borrowed(text)),
        Some(MessageId::Ulong(number)) => Value::Str(Cow::Owned(number.to_string())),
        Some(MessageId::Uuid(uuid)) => Value::Str(Cow::Owned(Guid(uuid.0).to_string())),
        Some(MessageId::Binary(_)) | None => Value::Null,
    }
}

fn text(value: &Option<String>) -> Value<'_> {
    value
        .as_deref()
        .map_or(Value::Null, |s| Value::Str(Cow::Borrowed(s)))
}

impl MessageView for AmqpView {
    /// The properties section and the size; the rest (sequence numbers, times, partition keys)
    /// is not known while a message is routed, so it reads as null.
    fn system_property(&self, property: SystemProperty) -> Value<'_> {
        let p = &self.properties;
        match property {
            SystemProperty::MessageId => id_text(&p.message_id),
            SystemProperty::CorrelationId => id_text(&p.correlation_id),
            SystemProperty::To => text(&p.to),
            SystemProperty::ReplyTo => text(&p.reply_to),
            SystemProperty::Label => text(&p.subject),
            SystemProperty::SessionId => text(&p.group_id),
            SystemProperty::ReplyToSessionId => text(&p.reply_to_group_id),
            SystemProperty::ContentType => p
                .content_type
                .as_ref()
                .map_or(Value::Null, |s| Value::Str(Cow::Borrowed(s.as_str()))),
            SystemProperty::Size => Value::Int(self.size),
            _ => Value::Null,
        }
    }

    fn user_property(&self, name: &str) -> Option<Value<'_>> {
        let pairs = self
            .application
            .iter()
            .map(|(key, value)| (key.as_str(), value));
        find_user_property(pairs, name).map(Value::reborrow)
    }
}

/// An AMQP property value as rules see it; types rules have no counterpart for read as null.
pub(crate) fn rules_value(value: AmqpValue) -> Value<'static> {
    match value {
        AmqpValue::Bool(flag) => Value::Bool(flag),
        AmqpValue::Ubyte(v) => Value::Int(i64::from(v)),
        AmqpValue::Ushort(v) => Value::Int(i64::from(v)),
        AmqpValue::Uint(v) => Value::Int(i64::from(v)),
        AmqpValue::Ulong(v) => i64::try_from(v).map_or(Value::Float(v as f64), Value::Int),
        AmqpValue::Byte(v) => Value::Int(i64::from(v)),
        AmqpValue::Short(v) => Value::Int(i64::from(v)),
        AmqpValue::Int(v) => Value::Int(i64::from(v)),
        AmqpValue::Long(v) => Value::Int(v),
        AmqpValue::Float(v) => Value::Float(f64::from(v)),
        AmqpValue::Double(v) => Value::Float(v),
        AmqpValue::Char(c) => Value::Str(Cow::Owned(c.to_string())),
        AmqpValue::String(s) => Value::Str(Cow::Owned(s)),
        AmqpValue::Symbol(s) => Value::Str(Cow::Owned(s.as_str().to_owned())),
        AmqpValue::Timestamp(t) => Value::Timestamp(Timestamp(t.0)),
        AmqpValue::Uuid(u) => Value::Guid(Guid(u.0)),
        _ => Value::Null,
    }
}

/// A rules value written into an AMQP property (a time span as its milliseconds).
pub(crate) fn amqp_value(value: &Value<'_>) -> AmqpValue {
    match value {
        Value::Null => AmqpValue::Null,
        Value::Bool(flag) => AmqpValue::Bool(*flag),
        Value::Int(number) => AmqpValue::Long(*number),
        Value::Float(number) => AmqpValue::Double(*number),
        Value::Str(text) => AmqpValue::String(text.to_string()),
        Value::Timestamp(time) => AmqpValue::Timestamp(AmqpTimestamp(time.0)),
        Value::TimeSpan(span) => AmqpValue::Long(span.0),
        Value::Guid(guid) => AmqpValue::Uuid(Uuid(guid.0)),
    }
}

/// The copy a rule with an action makes: `edits` applied in order to the properties and
/// application properties, and `RuleName` set to the rule. System properties outside the
/// properties section (partition keys, scheduling, time to live) are left unchanged.
pub(crate) fn edited_copy(
    message: &NewMessage,
    rule: &str,
    edits: &[PropertyEdit],
) -> Result<NewMessage, DecodeError> {
    let mut sections = Sections::decode(&Message::from_bytes(message.payload.clone()))?;
    let mut copy = message.clone();
    let properties = sections.properties.get_or_insert_with(Properties::default);
    let application = &mut sections
        .application_properties
        .get_or_insert_with(Default::default)
        .0;
    let set_user = |application: &mut Vec<(String, AmqpValue)>, name: &str, value| {
        application.retain(|(key, _)| !key.eq_ignore_ascii_case(name));
        application.push((name.to_owned(), value));
    };
    for edit in edits {
        let (property, value) = match edit {
            PropertyEdit::Set { property, value } => (property, value.to_text()),
            PropertyEdit::Remove { property } => (property, None),
        };
        match (property, edit) {
            (PropertyRef::User(name), PropertyEdit::Set { value, .. }) => {
                set_user(application, name, amqp_value(value));
            }
            (PropertyRef::User(name), PropertyEdit::Remove { .. }) => {
                application.retain(|(key, _)| !key.eq_ignore_ascii_case(name));
            }
            (PropertyRef::System(system), _) => match system {
                SystemProperty::MessageId => properties.message_id = value.map(MessageId::String),
                SystemProperty::CorrelationId => {
                    properties.correlation_id = value.map(MessageId::String);
                }
                SystemProperty::To => properties.to = value,
                SystemProperty::ReplyTo => properties.reply_to = value,
                SystemProperty::Label => properties.subject = value,
                SystemProperty::SessionId => {
                    copy.session_id.clone_from(&value);
                    properties.group_id = value;
                }
                SystemProperty::ReplyToSessionId => properties.reply_to_group_id = value,
                SystemProperty::ContentType => properties.content_type = value.map(Symbol::new),
                _ => {}
            },
        }
    }
    set_user(
        application,
        RULE_NAME_PROPERTY,
        AmqpValue::String(rule.to_owned()),
    );
    copy.payload = sections.encode().into_bytes();
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SqlExpression;
    use crate::names::EntityName;
    use busbar_amqp::message::{ApplicationProperties, MessageBuilder};
    use busbar_rules::{Disposition, Subscription, fan_out};
    use bytes::Bytes;

    fn rule(name: &str, filter: RuleFilter, action: Option<&str>) -> RuleConfig {
        RuleConfig {
            name: EntityName::from(name),
            filter,
            action: action.map(|a| SqlExpression(a.to_owned())),
        }
    }

    fn sql(expression: &str) -> RuleFilter {
        RuleFilter::Sql(SqlExpression(expression.to_owned()))
    }

    fn message(content_type: &str, color: &str) -> NewMessage {
        let payload = MessageBuilder::new()
            .properties(Properties {
                content_type: Some(content_type.into()),
                subject: Some("greeting".into()),
                ..Properties::default()
            })
            .application_properties(ApplicationProperties(vec![
                ("color".into(), AmqpValue::from(color)),
                ("quantity".into(), AmqpValue::Int(10)),
            ]))
            .data(Bytes::from_static(b"x"))
            .build()
            .into_bytes();
        NewMessage {
            payload,
            ..NewMessage::default()
        }
    }

    fn matches(rules: &[RuleConfig], message: &NewMessage) -> bool {
        let set = compile(rules).unwrap();
        let view = AmqpView::of(&Message::from_bytes(message.payload.clone())).unwrap();
        let subscription = Subscription {
            rules: &set,
            dead_letter_on_filter_error: true,
        };
        !fan_out(&[subscription], &view, &mut || Guid([0; 16])).is_empty()
    }

    #[test]
    fn correlation_and_sql_filters_read_system_and_user_properties() {
        let json = rule(
            "json",
            RuleFilter::Correlation(CorrelationFilter {
                content_type: Some("application/json".into()),
                properties: vec![("color".into(), PropertyValue::String("red".into()))],
                ..CorrelationFilter::default()
            }),
            None,
        );
        let red_json = message("application/json", "red");
        assert!(matches(std::slice::from_ref(&json), &red_json));
        assert!(!matches(
            std::slice::from_ref(&json),
            &message("text/plain", "red")
        ));
        assert!(!matches(&[json], &message("application/json", "blue")));

        let filter = rule(
            "f",
            sql("sys.Label = 'greeting' AND quantity > 5 AND color IN ('red', 'green')"),
            None,
        );
        assert!(matches(std::slice::from_ref(&filter), &red_json));
        assert!(!matches(&[filter], &message("a", "blue")));
        assert!(!matches(
            &[rule("missing", sql("nothing = 1"), None)],
            &red_json
        ));
    }

    #[test]
    fn a_malformed_expression_is_refused_with_its_position() {
        let error = compile(&[rule("bad", sql("color = = 'red'"), None)]).unwrap_err();
        assert!(error.to_string().contains("position 9"), "{error}");
        let error = compile(&[rule("bad", sql("1=1"), Some("SET"))]).unwrap_err();
        assert!(error.to_string().contains("position"), "{error}");
    }

    #[test]
    fn an_action_edits_only_the_copy_and_names_its_rule() {
        let original = message("application/json", "red");
        let set = compile(&[rule(
            "halve",
            sql("1=1"),
            Some("SET quantity = quantity / 2; SET sys.Label = 'edited'; REMOVE color"),
        )])
        .unwrap();
        let view = AmqpView::of(&Message::from_bytes(original.payload.clone())).unwrap();
        let subscription = Subscription {
            rules: &set,
            dead_letter_on_filter_error: true,
        };
        let copies = fan_out(&[subscription], &view, &mut || Guid([0; 16]));
        let [copy] = &copies[..] else {
            panic!("{copies:?}")
        };
        let Disposition::Deliver {
            rule: Some(rule),
            edits,
        } = &copy.disposition
        else {
            panic!("{copy:?}")
        };
        let edited = edited_copy(&original, rule, edits).unwrap();
        let edited = Message::from_bytes(edited.payload);
        let application = edited.application_properties().unwrap().unwrap();
        assert_eq!(application.get("quantity"), Some(&AmqpValue::Long(5)));
        assert_eq!(application.get("color"), None);
        assert_eq!(application.get("RuleName"), Some(&AmqpValue::from("halve")));
        let properties = edited.properties().unwrap().unwrap();
        assert_eq!(properties.subject.as_deref(), Some("edited"));
        assert_eq!(properties.content_type, Some("application/json".into()));
        let untouched = Message::from_bytes(original.payload);
        let application = untouched.application_properties().unwrap().unwrap();
        assert_eq!(application.get("quantity"), Some(&AmqpValue::Int(10)));
    }
}
