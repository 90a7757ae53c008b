//! Evaluates a parsed expression against a message, with Service Bus's three-valued logic.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::error::EvaluationError;
use crate::message::{MessageView, PropertyRef, SystemProperty};
use crate::sql::ast::{CompareOp, Expr, LikeRhs};
use crate::sql::like::LikePattern;
use crate::value::{Comparison, Guid, Truth, Value};

/// What an evaluation reads: the message, and where `newid()` gets its GUIDs (the library
/// draws no randomness itself).
pub(crate) struct Scope<'a, 'g> {
    pub(crate) message: &'a dyn MessageView,
    pub(crate) new_guid: &'g mut dyn FnMut() -> Guid,
}

impl<'a> Scope<'a, '_> {
    /// The value of `expr`. The parser bounds the tree's depth, so the recursion is bounded.
    pub(crate) fn value(&mut self, expr: &'a Expr) -> Result<Value<'a>, EvaluationError> {
        Ok(match expr {
            Expr::Literal(value) => value.reborrow(),
            Expr::Property(property) => self.property(property),
            Expr::DynamicProperty(name) => {
                let name = self.value(name)?;
                self.dynamic_property(name)?
            }
            Expr::NewId => Value::Guid((self.new_guid)()),
            Expr::Negate(operand) => self.value(operand)?.negate()?,
            Expr::Arithmetic(op, left, right) => {
                let left = self.value(left)?;
                let right = self.value(right)?;
                left.arithmetic(*op, right)?
            }
            predicate => self.truth(predicate)?.into_value(),
        })
    }

    /// The truth of a predicate (or of a boolean-valued property or literal).
    pub(crate) fn truth(&mut self, expr: &'a Expr) -> Result<Truth, EvaluationError> {
        match expr {
            Expr::Not(operand) => Ok(!self.truth(operand)?),
            // Left to right, short-circuiting once the result is settled (a false left side of
            // AND, a true left side of OR): cheaper, and it lets `EXISTS(x) AND x > 1` guard.
            Expr::And(left, right) => match self.truth(left)? {
                Truth::False => Ok(Truth::False),
                left => Ok(left.and(self.truth(right)?)),
            },
            Expr::Or(left, right) => match self.truth(left)? {
                Truth::True => Ok(Truth::True),
                left => Ok(left.or(self.truth(right)?)),
            },
            Expr::Compare(op, left, right) => {
                let left = self.value(left)?;
                let right = self.value(right)?;
                compare(*op, &left, &right)
            }
            Expr::IsNull { operand, negated } => {
                let is_null = matches!(self.value(operand)?, Value::Null);
                Ok(Truth::from(is_null != *negated))
            }
            Expr::Exists(property) => Ok(Truth::from(match property {
                PropertyRef::System(system) => {
                    !matches!(self.message.system_property(*system), Value::Null)
                }
                PropertyRef::User(name) => self.message.user_property(name).is_some(),
            })),
            Expr::In {
                operand,
                list,
                negated,
            } => {
                let truth = self.in_list(operand, list)?;
                Ok(if *negated { !truth } else { truth })
            }
            Expr::Like {
                operand,
                pattern,
                negated,
            } => {
                let truth = self.like(operand, pattern)?;
                Ok(if *negated { !truth } else { truth })
            }
            value => match self.value(value)? {
                Value::Bool(b) => Ok(Truth::from(b)),
                Value::Null => Ok(Truth::Unknown),
                other => Err(EvaluationError::NotBoolean(other.type_name())),
            },
        }
    }

    fn property(&self, property: &PropertyRef) -> Value<'a> {
        match property {
            PropertyRef::System(system) => self.message.system_property(*system),
            PropertyRef::User(name) => self.message.user_property(name).unwrap_or(Value::Null),
        }
    }

    /// `property(name)`: `sys.X` and `user.X` prefixes select the scope, as in the grammar; an
    /// unknown system name is the evaluation-time error Service Bus documents.
    fn dynamic_property(&self, name: Value<'_>) -> Result<Value<'a>, EvaluationError> {
        let name = match name {
            Value::Null => return Ok(Value::Null),
            Value::Str(name) => name,
            other => {
                return Err(EvaluationError::InvalidOperand(format!(
                    "property() expects a string name, found '{}'",
                    other.type_name()
                )));
            }
        };
        let (scope, rest) = name.split_once('.').unwrap_or(("", &name));
        if scope.eq_ignore_ascii_case("sys") {
            let system = SystemProperty::from_name(rest)
                .ok_or_else(|| EvaluationError::UnknownSystemProperty(rest.to_owned()))?;
            return Ok(self.message.system_property(system));
        }
        let user = if scope.eq_ignore_ascii_case("user") {
            rest
        } else {
            &name
        };
        Ok(self.message.user_property(user).unwrap_or(Value::Null))
    }

    /// `IN`: unknown when the operand is `NULL`; true on a match; otherwise unknown if the list
    /// held a `NULL`, else false (SQL-92).
    fn in_list(&mut self, operand: &'a Expr, list: &'a [Expr]) -> Result<Truth, EvaluationError> {
        let operand = self.value(operand)?;
        if matches!(operand, Value::Null) {
            return Ok(Truth::Unknown);
        }
        let mut saw_null = false;
        for item in list {
            match operand.compare(&self.value(item)?, "IN", false)? {
                Comparison::Ordered(Ordering::Equal) => return Ok(Truth::True),
                Comparison::Unknown => saw_null = true,
                Comparison::Ordered(_) | Comparison::Unordered => {}
            }
        }
        Ok(if saw_null {
            Truth::Unknown
        } else {
            Truth::False
        })
    }

    fn like(&mut self, operand: &'a Expr, rhs: &'a LikeRhs) -> Result<Truth, EvaluationError> {
        let operand = self.value(operand)?;
        let compiled;
        let pattern = match rhs {
            LikeRhs::Compiled(pattern) => pattern,
            LikeRhs::Dynamic { pattern, escape } => {
                let Some(text) = like_text(self.value(pattern)?, "pattern")? else {
                    return Ok(Truth::Unknown);
                };
                let escape = match escape {
                    None => None,
                    Some(escape) => match escape_char(self.value(escape)?)? {
                        None => return Ok(Truth::Unknown),
                        escape => escape,
                    },
                };
                compiled = LikePattern::compile(&text, escape)?;
                &compiled
            }
        };
        Ok(match like_text(operand, "operand")? {
            Some(text) => Truth::from(pattern.matches(&text)),
            None => Truth::Unknown,
        })
    }
}

/// A `LIKE` operand or pattern: `None` for `NULL`, an error for anything but a string.
fn like_text<'v>(value: Value<'v>, role: &str) -> Result<Option<Cow<'v, str>>, EvaluationError> {
    match value {
        Value::Null => Ok(None),
        Value::Str(text) => Ok(Some(text)),
        other => Err(EvaluationError::InvalidOperand(format!(
            "the LIKE {role} must be a string, found '{}'",
            other.type_name()
        ))),
    }
}

/// The `ESCAPE` operand: `None` for `NULL`, else exactly one character.
fn escape_char(value: Value<'_>) -> Result<Option<char>, EvaluationError> {
    let Some(text) = like_text(value, "escape")? else {
        return Ok(None);
    };
    let mut chars = text.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => Ok(Some(c)),
        _ => Err(EvaluationError::InvalidOperand(
            "the ESCAPE character must be a string of length 1".to_owned(),
        )),
    }
}

fn compare(op: CompareOp, left: &Value<'_>, right: &Value<'_>) -> Result<Truth, EvaluationError> {
    let (symbol, ordered) = match op {
        CompareOp::Equal => ("=", false),
        CompareOp::NotEqual => ("<>", false),
        CompareOp::Less => ("<", true),
        CompareOp::LessEqual => ("<=", true),
        CompareOp::Greater => (">", true),
        CompareOp::GreaterEqual => (">=", true),
    };
    let ordering = match left.compare(right, symbol, ordered)? {
        Comparison::Unknown => return Ok(Truth::Unknown),
        // A NaN is unequal to everything and neither less nor greater than anything.
        Comparison::Unordered => return Ok(Truth::from(op == CompareOp::NotEqual)),
        Comparison::Ordered(ordering) => ordering,
    };
    Ok(Truth::from(match op {
        CompareOp::Equal => ordering == Ordering::Equal,
        CompareOp::NotEqual => ordering != Ordering::Equal,
        CompareOp::Less => ordering == Ordering::Less,
        CompareOp::LessEqual => ordering != Ordering::Greater,
        CompareOp::Greater => ordering == Ordering::Greater,
        CompareOp::GreaterEqual => ordering != Ordering::Less,
    }))
}
