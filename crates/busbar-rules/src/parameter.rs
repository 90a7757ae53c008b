//! The `@name` parameters of a SQL filter or action: typed values bound when the rule is
//! created (the administration API's `Parameters`), kept with their declared type so the rule
//! reads back as it was written.

use crate::value::{TimeSpan, Timestamp, Value};

/// A parameter's value, in the types the administration API declares (`xs:` names).
#[derive(Debug, Clone, PartialEq)]
pub enum ParameterValue {
    /// `string`.
    String(String),
    /// `int`.
    Int(i32),
    /// `long`.
    Long(i64),
    /// `double`.
    Double(f64),
    /// `boolean`.
    Boolean(bool),
    /// `dateTime`.
    DateTime(Timestamp),
    /// `duration`.
    Duration(TimeSpan),
}

impl ParameterValue {
    /// The value an expression computes with (`int` and `long` are both integers there).
    pub fn value(&self) -> Value<'static> {
        match self {
            ParameterValue::String(text) => Value::Str(text.clone().into()),
            ParameterValue::Int(number) => Value::Int(i64::from(*number)),
            ParameterValue::Long(number) => Value::Int(*number),
            ParameterValue::Double(number) => Value::Float(*number),
            ParameterValue::Boolean(flag) => Value::Bool(*flag),
            ParameterValue::DateTime(at) => Value::Timestamp(*at),
            ParameterValue::Duration(span) => Value::TimeSpan(*span),
        }
    }
}

/// One parameter: its key as sent, `@` included, and its value.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// The key, e.g. `@color`.
    pub name: String,
    /// The value bound to it.
    pub value: ParameterValue,
}

impl Parameter {
    /// A parameter named `name` (`@` included) bound to `value`.
    pub fn new(name: &str, value: ParameterValue) -> Parameter {
        Parameter {
            name: name.to_owned(),
            value,
        }
    }
}

/// The value bound to `@name` in `parameters`: keys match ignoring ASCII case, as the
/// language's identifiers do.
pub(crate) fn bound(parameters: &[Parameter], name: &str) -> Option<Value<'static>> {
    parameters
        .iter()
        .find(|parameter| parameter.name.eq_ignore_ascii_case(name))
        .map(|parameter| parameter.value.value())
}
