//! `RuleDescription` (§6.5): a subscription rule's filter and action, and both directions of
//! the wire form.

use super::common::DESCRIPTION_NAMESPACES;
use super::element_values::{non_empty_string, string};
use super::error::AtomError;
use super::namespaces::SERVICE_BUS;
use super::rule_value::{RuleValue, decode_key_values, encode_key_values};
use super::timestamp::Timestamp;
use super::xml_tree::Element;
use super::xml_writer::XmlWriter;

/// The name of the rule a subscription gets when it is created without a default rule, and of
/// a `DefaultRuleDescription` that has no `Name`.
pub const DEFAULT_RULE_NAME: &str = "$Default";

/// A stored rule.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleProperties {
    /// `Name`.
    pub name: String,
    /// `Filter`.
    pub filter: RuleFilter,
    /// `Action`.
    pub action: RuleAction,
}

/// A rule as a request body carries it: a `PUT …/Rules/{rule}` body, or a subscription's
/// `DefaultRuleDescription`. A missing `Filter` is the true filter, a missing `Action` none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RuleDescription {
    /// `Name`, if sent (the request path names the rule; a default rule without one is
    /// [`DEFAULT_RULE_NAME`]).
    pub name: Option<String>,
    /// `Filter`.
    pub filter: RuleFilter,
    /// `Action`.
    pub action: RuleAction,
}

impl RuleDescription {
    /// The rule stored under `name`.
    pub fn into_properties(self, name: String) -> RuleProperties {
        RuleProperties {
            name,
            filter: self.filter,
            action: self.action,
        }
    }

    /// Reads a `RuleDescription` (or `DefaultRuleDescription`) element.
    pub(crate) fn decode(description: &Element) -> Result<RuleDescription, AtomError> {
        let mut rule = RuleDescription::default();
        for element in description.children_in(SERVICE_BUS) {
            match element.local_name() {
                "Filter" => rule.filter = RuleFilter::decode(element)?,
                "Action" => rule.action = RuleAction::decode(element)?,
                "Name" => rule.name = Some(string(element)),
                // CreatedAt (Python's update re-sends it) and unknown elements.
                _ => {}
            }
        }
        Ok(rule)
    }
}

/// Which messages a rule selects.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RuleFilter {
    /// Every message (`TrueFilter`, the SQL expression `1=1`).
    #[default]
    True,
    /// No message (`FalseFilter`, `1=0`).
    False,
    /// `SqlFilter`.
    Sql(SqlExpression),
    /// `CorrelationFilter`.
    Correlation(CorrelationRuleFilter),
}

/// The SQL of a filter or action: the `SqlExpression` text as sent, and its `@parameters`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SqlExpression {
    /// `SqlExpression`.
    pub text: String,
    /// `Parameters`, in the order sent.
    pub parameters: Vec<(String, RuleValue)>,
}

/// A correlation filter: equality on system properties and user properties. Unset (or empty)
/// fields do not constrain.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CorrelationRuleFilter {
    /// `CorrelationId`.
    pub correlation_id: Option<String>,
    /// `MessageId`.
    pub message_id: Option<String>,
    /// `To`.
    pub to: Option<String>,
    /// `ReplyTo`.
    pub reply_to: Option<String>,
    /// `Label`, the wire name of `Subject`.
    pub label: Option<String>,
    /// `SessionId`.
    pub session_id: Option<String>,
    /// `ReplyToSessionId`.
    pub reply_to_session_id: Option<String>,
    /// `ContentType`.
    pub content_type: Option<String>,
    /// `Properties`: user properties, in the order sent.
    pub properties: Vec<(String, RuleValue)>,
}

/// What a rule does to the copies it selects.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RuleAction {
    /// Nothing (`EmptyRuleAction`).
    #[default]
    Empty,
    /// `SqlRuleAction`.
    Sql(SqlExpression),
}

/// The service writes the compatibility level of every SQL filter and action as 20.
const SQL_COMPATIBILITY_LEVEL: &str = "20";

impl RuleFilter {
    /// Reads a `Filter` by its `i:type`, which says what it is (.NET reads nothing else).
    /// `CompatibilityLevel` and `RequiresPreprocessing` (Python) are ignored.
    fn decode(filter: &Element) -> Result<RuleFilter, AtomError> {
        match filter.schema_type() {
            Some("TrueFilter") => Ok(RuleFilter::True),
            Some("FalseFilter") => Ok(RuleFilter::False),
            Some("SqlFilter") => Ok(RuleFilter::Sql(decode_sql(filter)?)),
            Some("CorrelationFilter") => Ok(RuleFilter::Correlation(decode_correlation(filter)?)),
            other => Err(AtomError::invalid(
                "Filter i:type",
                other.unwrap_or(""),
                "SqlFilter, CorrelationFilter, TrueFilter or FalseFilter",
            )),
        }
    }

    fn encode(&self, writer: &mut XmlWriter) {
        match self {
            RuleFilter::True => encode_sql(writer, "Filter", "TrueFilter", "1=1", &[]),
            RuleFilter::False => encode_sql(writer, "Filter", "FalseFilter", "1=0", &[]),
            RuleFilter::Sql(sql) => {
                encode_sql(writer, "Filter", "SqlFilter", &sql.text, &sql.parameters);
            }
            RuleFilter::Correlation(correlation) => encode_correlation(writer, correlation),
        }
    }
}

impl RuleAction {
    /// Reads an `Action` by its `i:type`; one without a type is taken as empty.
    fn decode(action: &Element) -> Result<RuleAction, AtomError> {
        match action.schema_type() {
            None | Some("EmptyRuleAction") => Ok(RuleAction::Empty),
            Some("SqlRuleAction") => Ok(RuleAction::Sql(decode_sql(action)?)),
            Some(other) => Err(AtomError::invalid(
                "Action i:type",
                other,
                "SqlRuleAction or EmptyRuleAction",
            )),
        }
    }

    /// Always writes an `Action`: Python raises on a rule entry without one (§6.5).
    fn encode(&self, writer: &mut XmlWriter) {
        match self {
            RuleAction::Empty => writer.empty("Action", &[("i:type", "EmptyRuleAction")]),
            RuleAction::Sql(sql) => {
                encode_sql(
                    writer,
                    "Action",
                    "SqlRuleAction",
                    &sql.text,
                    &sql.parameters,
                );
            }
        }
    }
}

fn decode_sql(element: &Element) -> Result<SqlExpression, AtomError> {
    let expression = element
        .child(SERVICE_BUS, "SqlExpression")
        .and_then(non_empty_string)
        .ok_or(AtomError::MissingElement {
            element: "SqlExpression",
        })?;
    let parameters = match element.child(SERVICE_BUS, "Parameters") {
        Some(list) => decode_key_values(list)?,
        None => Vec::new(),
    };
    Ok(SqlExpression {
        text: expression,
        parameters,
    })
}

fn decode_correlation(filter: &Element) -> Result<CorrelationRuleFilter, AtomError> {
    let mut correlation = CorrelationRuleFilter::default();
    for element in filter.children_in(SERVICE_BUS) {
        let field = match element.local_name() {
            "CorrelationId" => &mut correlation.correlation_id,
            "MessageId" => &mut correlation.message_id,
            "To" => &mut correlation.to,
            "ReplyTo" => &mut correlation.reply_to,
            "Label" => &mut correlation.label,
            "SessionId" => &mut correlation.session_id,
            "ReplyToSessionId" => &mut correlation.reply_to_session_id,
            "ContentType" => &mut correlation.content_type,
            "Properties" => {
                correlation.properties = decode_key_values(element)?;
                continue;
            }
            _ => continue,
        };
        *field = non_empty_string(element);
    }
    Ok(correlation)
}

/// A SQL-shaped filter or action: expression, parameters if any, compatibility level.
fn encode_sql(
    writer: &mut XmlWriter,
    element: &str,
    schema_type: &str,
    expression: &str,
    parameters: &[(String, RuleValue)],
) {
    writer.start(element, &[("i:type", schema_type)]);
    writer.leaf("SqlExpression", expression);
    if !parameters.is_empty() {
        encode_key_values(writer, "Parameters", parameters);
    }
    writer.leaf("CompatibilityLevel", SQL_COMPATIBILITY_LEVEL);
    writer.end(element);
}

/// A correlation filter in .NET's order, unset fields left out, `Properties` always present.
fn encode_correlation(writer: &mut XmlWriter, correlation: &CorrelationRuleFilter) {
    writer.start("Filter", &[("i:type", "CorrelationFilter")]);
    for (name, value) in [
        ("CorrelationId", &correlation.correlation_id),
        ("MessageId", &correlation.message_id),
        ("To", &correlation.to),
        ("ReplyTo", &correlation.reply_to),
        ("Label", &correlation.label),
        ("SessionId", &correlation.session_id),
        ("ReplyToSessionId", &correlation.reply_to_session_id),
        ("ContentType", &correlation.content_type),
    ] {
        writer.optional_leaf(name, value.as_deref().filter(|text| !text.is_empty()));
    }
    encode_key_values(writer, "Properties", &correlation.properties);
    writer.end("Filter");
}

/// Writes a `RuleDescription` in the live service's order: `Filter`, `Action`, `CreatedAt`,
/// `Name`.
pub(crate) fn encode(writer: &mut XmlWriter, rule: &RuleProperties, created_at: Timestamp) {
    writer.start("RuleDescription", &DESCRIPTION_NAMESPACES);
    rule.filter.encode(writer);
    rule.action.encode(writer);
    writer.leaf("CreatedAt", &created_at.to_precise_string());
    writer.leaf("Name", &rule.name);
    writer.end("RuleDescription");
}
