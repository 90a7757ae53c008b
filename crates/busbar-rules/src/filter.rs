//! The four filter kinds a rule can hold: true, false, correlation and SQL.

use crate::error::{Error, EvaluationError};
use crate::message::{MessageView, SystemProperty};
use crate::sql::SqlFilter;
use crate::value::{Guid, Truth, Value};

/// A rule's condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    /// `TrueFilter`: every message (its SQL form is `1=1`).
    True,
    /// `FalseFilter`: no message (its SQL form is `1=0`).
    False,
    /// `CorrelationFilter`: equality on the properties it names.
    Correlation(CorrelationFilter),
    /// `SqlFilter`: a parsed SQL condition.
    Sql(SqlFilter),
}

impl Filter {
    /// The SQL text `enumerate-rules` reports for the filter (`1=1` and `1=0` for the boolean
    /// filters, as Service Bus lists them); `None` for a correlation filter.
    pub fn sql_expression(&self) -> Option<&str> {
        match self {
            Filter::True => Some("1=1"),
            Filter::False => Some("1=0"),
            Filter::Correlation(_) => None,
            Filter::Sql(filter) => Some(filter.expression()),
        }
    }

    /// Whether `message` is selected. A SQL filter selects only when its condition is
    /// [`Truth::True`]; an unknown result is not a match. Errors are evaluation failures, which
    /// the caller must not confuse with "no match".
    pub fn matches(
        &self,
        message: &dyn MessageView,
        new_guid: &mut dyn FnMut() -> Guid,
    ) -> Result<bool, EvaluationError> {
        match self {
            Filter::True => Ok(true),
            Filter::False => Ok(false),
            Filter::Correlation(filter) => Ok(filter.matches(message)),
            Filter::Sql(filter) => Ok(filter.evaluate(message, new_guid)? == Truth::True),
        }
    }
}

/// A correlation filter: every property it sets must equal the message's (logical AND).
/// String comparisons are case-sensitive; user property names match as in SQL filters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CorrelationFilter {
    /// Expected `sys.CorrelationId`.
    pub correlation_id: Option<String>,
    /// Expected `sys.MessageId`.
    pub message_id: Option<String>,
    /// Expected `sys.To`.
    pub to: Option<String>,
    /// Expected `sys.ReplyTo`.
    pub reply_to: Option<String>,
    /// Expected `sys.Label` (`Subject`).
    pub label: Option<String>,
    /// Expected `sys.SessionId`.
    pub session_id: Option<String>,
    /// Expected `sys.ReplyToSessionId`.
    pub reply_to_session_id: Option<String>,
    /// Expected `sys.ContentType`.
    pub content_type: Option<String>,
    /// Expected user properties. A `long` expectation also matches an equal `double`, as C#
    /// equality would; a [`Value::Null`] expectation matches a property present with no value.
    pub properties: Vec<(String, Value<'static>)>,
}

impl CorrelationFilter {
    /// The system properties this filter constrains, with their expected values.
    pub fn system_conditions(&self) -> impl Iterator<Item = (SystemProperty, &str)> {
        [
            (SystemProperty::CorrelationId, &self.correlation_id),
            (SystemProperty::MessageId, &self.message_id),
            (SystemProperty::To, &self.to),
            (SystemProperty::ReplyTo, &self.reply_to),
            (SystemProperty::Label, &self.label),
            (SystemProperty::SessionId, &self.session_id),
            (SystemProperty::ReplyToSessionId, &self.reply_to_session_id),
            (SystemProperty::ContentType, &self.content_type),
        ]
        .into_iter()
        .filter_map(|(property, expected)| expected.as_deref().map(|e| (property, e)))
    }

    /// Refuses a filter that sets nothing (Service Bus requires at least one property).
    pub fn validate(&self) -> Result<(), Error> {
        if self.system_conditions().next().is_none() && self.properties.is_empty() {
            return Err(Error::EmptyCorrelationFilter);
        }
        Ok(())
    }

    /// Whether every condition holds for `message`.
    pub fn matches(&self, message: &dyn MessageView) -> bool {
        let system_ok = self.system_conditions().all(|(property, expected)| {
            matches!(message.system_property(property), Value::Str(actual) if actual == expected)
        });
        system_ok
            && self
                .properties
                .iter()
                .all(|(name, expected)| match message.user_property(name) {
                    None => false,
                    Some(actual) if matches!(expected, Value::Null) => {
                        matches!(actual, Value::Null)
                    }
                    Some(actual) => actual.loosely_equals(expected),
                })
    }
}
