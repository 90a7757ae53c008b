//! The Service Bus SQL language: [`SqlFilter`] conditions and [`SqlAction`] property edits.

mod action;
mod ast;
mod eval;
mod lexer;
mod like;
mod parser;

pub use action::{PropertyEdit, SqlAction};

use crate::error::{EvaluationError, SyntaxError};
use crate::message::MessageView;
use crate::parameter::Parameter;
use crate::value::{Guid, Truth};

/// A SQL filter, parsed once when the rule is added and evaluated for every message.
///
/// ```
/// use busbar_rules::{Message, SqlFilter, Truth, Value};
///
/// let filter = SqlFilter::parse("sys.Label LIKE '%bus%' AND color IN ('red', 'blue')").unwrap();
/// let message = Message { label: Some("service bus".into()), ..Message::default() }
///     .with_user("color", Value::Str("red".into()));
/// assert_eq!(filter.evaluate(&message, &mut || unreachable!()), Ok(Truth::True));
/// // A missing user property is unknown, and an unknown filter does not match.
/// let other = Message { label: Some("service bus".into()), ..Message::default() };
/// assert_eq!(filter.evaluate(&other, &mut || unreachable!()), Ok(Truth::Unknown));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SqlFilter {
    expression: String,
    parameters: Vec<Parameter>,
    tree: ast::Expr,
}

impl SqlFilter {
    /// Parses a filter expression; a malformed one is refused with the position at fault.
    pub fn parse(expression: &str) -> Result<SqlFilter, SyntaxError> {
        SqlFilter::with_parameters(expression, Vec::new())
    }

    /// Parses a filter expression whose `@name`s take their values from `parameters`; one
    /// that `parameters` does not bind is refused at its position.
    ///
    /// ```
    /// use busbar_rules::{Message, Parameter, ParameterValue, SqlFilter, Truth, Value};
    ///
    /// let parameters = vec![
    ///     Parameter::new("@c", ParameterValue::String("red".into())),
    ///     Parameter::new("@n", ParameterValue::Int(3)),
    /// ];
    /// let filter = SqlFilter::with_parameters("color = @c AND size > @n", parameters).unwrap();
    /// let message = Message::default()
    ///     .with_user("color", Value::Str("red".into()))
    ///     .with_user("size", Value::Int(4));
    /// assert_eq!(filter.evaluate(&message, &mut || unreachable!()), Ok(Truth::True));
    /// assert!(SqlFilter::parse("color = @c").is_err());
    /// ```
    pub fn with_parameters(
        expression: &str,
        parameters: Vec<Parameter>,
    ) -> Result<SqlFilter, SyntaxError> {
        let tree = parser::parse_filter(expression, &parameters)?;
        Ok(SqlFilter {
            expression: expression.to_owned(),
            parameters,
            tree,
        })
    }

    /// The expression as the client wrote it (what `enumerate-rules` returns).
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The parameters as the client gave them, in order.
    pub fn parameters(&self) -> &[Parameter] {
        &self.parameters
    }

    /// Evaluates the filter; the message matches only on [`Truth::True`]. `new_guid` serves
    /// `newid()`, the only source of randomness in the language.
    pub fn evaluate(
        &self,
        message: &dyn MessageView,
        new_guid: &mut dyn FnMut() -> Guid,
    ) -> Result<Truth, EvaluationError> {
        eval::Scope { message, new_guid }.truth(&self.tree)
    }
}
