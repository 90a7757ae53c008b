//! SQL rule actions: `SET`/`REMOVE` statements turned into the property edits for one copy.

use crate::error::{EvaluationError, SyntaxError};
use crate::message::{MessageView, PropertyRef, SystemProperty, same_name};
use crate::parameter::Parameter;
use crate::sql::ast::Statement;
use crate::sql::eval::Scope;
use crate::sql::parser;
use crate::value::{Guid, Value};

/// One change a rule action makes to the subscription's copy of a message. The broker applies
/// the edits in order; later statements of the same action already see earlier ones.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyEdit {
    /// Create or replace the property. For a string system property the value is already
    /// converted to text; a `NULL` value clears a system property and stores a null user
    /// property.
    Set {
        /// The property written.
        property: PropertyRef,
        /// Its new value.
        value: Value<'static>,
    },
    /// Remove a user property, or clear a system property.
    Remove {
        /// The property removed.
        property: PropertyRef,
    },
}

impl PropertyEdit {
    fn property(&self) -> &PropertyRef {
        match self {
            PropertyEdit::Set { property, .. } | PropertyEdit::Remove { property } => property,
        }
    }

    fn value(&self) -> Value<'_> {
        match self {
            PropertyEdit::Set { value, .. } => value.reborrow(),
            PropertyEdit::Remove { .. } => Value::Null,
        }
    }
}

/// A SQL rule action, parsed once when the rule is added.
///
/// ```
/// use busbar_rules::{Message, MessageView, PropertyEdit, PropertyRef, SqlAction, Value};
///
/// let action = SqlAction::parse("SET quantity = quantity / 2; REMOVE secret").unwrap();
/// let message = Message::default()
///     .with_user("quantity", Value::Int(10))
///     .with_user("secret", Value::Str("x".into()));
/// let edits = action.apply(&message, &mut || unreachable!()).unwrap();
/// assert_eq!(edits[0], PropertyEdit::Set {
///     property: PropertyRef::User("quantity".into()),
///     value: Value::Int(5),
/// });
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SqlAction {
    expression: String,
    parameters: Vec<Parameter>,
    statements: Vec<Statement>,
}

impl SqlAction {
    /// Parses an action expression; a malformed one is refused with the position at fault.
    pub fn parse(expression: &str) -> Result<SqlAction, SyntaxError> {
        SqlAction::with_parameters(expression, Vec::new())
    }

    /// Parses an action expression whose `@name`s take their values from `parameters`; one
    /// that `parameters` does not bind is refused at its position.
    pub fn with_parameters(
        expression: &str,
        parameters: Vec<Parameter>,
    ) -> Result<SqlAction, SyntaxError> {
        let statements = parser::parse_action(expression, &parameters)?;
        Ok(SqlAction {
            expression: expression.to_owned(),
            parameters,
            statements,
        })
    }

    /// The expression as the client wrote it.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The parameters as the client gave them, in order.
    pub fn parameters(&self) -> &[Parameter] {
        &self.parameters
    }

    /// Runs the statements against `message` and returns the edits for its copy. The message
    /// itself is untouched: the changes are private to the copy this rule produces.
    pub fn apply(
        &self,
        message: &dyn MessageView,
        new_guid: &mut dyn FnMut() -> Guid,
    ) -> Result<Vec<PropertyEdit>, EvaluationError> {
        let mut edits: Vec<PropertyEdit> = Vec::with_capacity(self.statements.len());
        for statement in &self.statements {
            let edit = {
                let view = Edited {
                    base: message,
                    edits: &edits,
                };
                match statement {
                    Statement::Set(property, expr) => {
                        let value = Scope {
                            message: &view,
                            new_guid: &mut *new_guid,
                        }
                        .value(expr)?;
                        let value = convert_for(property, value, &view)?;
                        PropertyEdit::Set {
                            property: property.clone(),
                            value,
                        }
                    }
                    Statement::Remove(property) => PropertyEdit::Remove {
                        property: property.clone(),
                    },
                }
            };
            edits.push(edit);
        }
        Ok(edits)
    }
}

/// The implicit conversions of `SET`: text for string system properties, the declared type for
/// the others, and `long` → `double` when the user property being replaced is a `double`.
fn convert_for(
    property: &PropertyRef,
    value: Value<'_>,
    current: &dyn MessageView,
) -> Result<Value<'static>, EvaluationError> {
    let mismatch = |system: SystemProperty, value: &Value<'_>| EvaluationError::InvalidAssignment {
        property: system.name(),
        found: value.type_name(),
    };
    Ok(match property {
        PropertyRef::System(system) if system.is_string() => value
            .to_text()
            .map_or(Value::Null, |text| Value::Str(text.into())),
        PropertyRef::System(system @ SystemProperty::TimeToLive) => match value {
            Value::Null | Value::TimeSpan(_) => value.into_owned(),
            other => return Err(mismatch(*system, &other)),
        },
        PropertyRef::System(system) => match value {
            Value::Null | Value::Timestamp(_) => value.into_owned(),
            other => return Err(mismatch(*system, &other)),
        },
        PropertyRef::User(name) => match (current.user_property(name), value) {
            (Some(Value::Float(_)), Value::Int(i)) => Value::Float(i as f64),
            (_, value) => value.into_owned(),
        },
    })
}

/// The message as the action's earlier statements left it.
struct Edited<'a> {
    base: &'a dyn MessageView,
    edits: &'a [PropertyEdit],
}

impl MessageView for Edited<'_> {
    fn system_property(&self, property: SystemProperty) -> Value<'_> {
        let edited = self
            .edits
            .iter()
            .rev()
            .find(|e| e.property() == &PropertyRef::System(property));
        edited.map_or_else(|| self.base.system_property(property), PropertyEdit::value)
    }

    fn user_property(&self, name: &str) -> Option<Value<'_>> {
        let edited = self
            .edits
            .iter()
            .rev()
            .find(|e| matches!(e.property(), PropertyRef::User(key) if same_name(key, name)));
        match edited {
            Some(PropertyEdit::Set { value, .. }) => Some(value.reborrow()),
            Some(PropertyEdit::Remove { .. }) => None,
            None => self.base.user_property(name),
        }
    }
}
