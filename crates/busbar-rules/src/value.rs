//! The values filters and actions compute with, and how Service Bus compares and combines them.
//!
//! Service Bus documents its operators as following "C# operator binding in data type promotions
//! and implicit conversions". Concretely, here:
//!
//! * integers and floats mix by widening the integer to `f64` (C# `long` → `double`);
//! * strings compare with strings (ordinal, case-sensitive), booleans with booleans (`=`/`<>`
//!   only), timestamps with timestamps, time spans with time spans, GUIDs with GUIDs (`=`/`<>`);
//! * any other pairing has no C# operator, so it is an [`EvaluationError::TypeMismatch`]
//!   (Service Bus raises a `FilterException`), never a silent "false";
//! * `NULL` (a missing user property, or the `NULL` literal) makes the result unknown.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use crate::error::EvaluationError;

/// Milliseconds since the Unix epoch, UTC (`sys.EnqueuedTimeUtc` and friends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

/// A signed duration in milliseconds (`sys.TimeToLive`, .NET `TimeSpan`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeSpan(pub i64);

/// A GUID in the byte order it is written (`newid()`, AMQP `uuid` properties).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Guid(pub [u8; 16]);

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, byte) in self.0.iter().enumerate() {
            if matches!(index, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

/// A value during filter or action evaluation. Strings borrow from the message where they can.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// SQL `NULL`: a missing user property, an unset system property, or the literal.
    Null,
    /// `TRUE` / `FALSE`, or a boolean property.
    Bool(bool),
    /// Every AMQP integer type widens to this (.NET `long`).
    Int(i64),
    /// `float`, `double` and `decimal` properties and decimal literals (.NET `double`).
    Float(f64),
    /// A string or symbol.
    Str(Cow<'a, str>),
    /// A point in time.
    Timestamp(Timestamp),
    /// A duration.
    TimeSpan(TimeSpan),
    /// A GUID.
    Guid(Guid),
}

/// The outcome of a predicate under three-valued logic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Truth {
    /// The predicate holds.
    True,
    /// The predicate does not hold.
    False,
    /// Some operand was unknown (`NULL`); a filter matches only on [`Truth::True`].
    Unknown,
}

impl std::ops::Not for Truth {
    type Output = Truth;

    /// `NOT`: unknown stays unknown.
    fn not(self) -> Truth {
        match self {
            Truth::True => Truth::False,
            Truth::False => Truth::True,
            Truth::Unknown => Truth::Unknown,
        }
    }
}

impl Truth {
    /// `AND` as in the Service Bus table: false wins over unknown.
    pub fn and(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::False, _) | (_, Truth::False) => Truth::False,
            (Truth::True, Truth::True) => Truth::True,
            _ => Truth::Unknown,
        }
    }

    /// `OR` as in the Service Bus table: true wins over unknown.
    pub fn or(self, other: Truth) -> Truth {
        match (self, other) {
            (Truth::True, _) | (_, Truth::True) => Truth::True,
            (Truth::False, Truth::False) => Truth::False,
            _ => Truth::Unknown,
        }
    }

    /// The value this truth stands for: `NULL` when unknown.
    pub fn into_value(self) -> Value<'static> {
        match self {
            Truth::True => Value::Bool(true),
            Truth::False => Value::Bool(false),
            Truth::Unknown => Value::Null,
        }
    }
}

impl From<bool> for Truth {
    fn from(value: bool) -> Truth {
        if value { Truth::True } else { Truth::False }
    }
}

/// The result of comparing two values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// An operand was `NULL`: every relational operator yields unknown.
    Unknown,
    /// A float `NaN` was involved: only `<>` holds.
    Unordered,
    /// The operands' order.
    Ordered(Ordering),
}

/// The arithmetic operators of the grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArithmeticOp {
    /// `+` (also string concatenation, as in C#).
    Add,
    /// `-`
    Subtract,
    /// `*`
    Multiply,
    /// `/`
    Divide,
    /// `%`
    Remainder,
}

impl ArithmeticOp {
    fn symbol(self) -> &'static str {
        match self {
            ArithmeticOp::Add => "+",
            ArithmeticOp::Subtract => "-",
            ArithmeticOp::Multiply => "*",
            ArithmeticOp::Divide => "/",
            ArithmeticOp::Remainder => "%",
        }
    }
}

impl<'a> Value<'a> {
    /// The type name used in error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Int(_) => "long",
            Value::Float(_) => "double",
            Value::Str(_) => "string",
            Value::Timestamp(_) => "datetime",
            Value::TimeSpan(_) => "timespan",
            Value::Guid(_) => "guid",
        }
    }

    /// Detaches the value from the message it borrows from.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(b),
            Value::Int(i) => Value::Int(i),
            Value::Float(f) => Value::Float(f),
            Value::Str(s) => Value::Str(Cow::Owned(s.into_owned())),
            Value::Timestamp(t) => Value::Timestamp(t),
            Value::TimeSpan(t) => Value::TimeSpan(t),
            Value::Guid(g) => Value::Guid(g),
        }
    }

    /// Borrows the value again without copying a string.
    pub fn reborrow(&self) -> Value<'_> {
        match self {
            Value::Null => Value::Null,
            Value::Bool(b) => Value::Bool(*b),
            Value::Int(i) => Value::Int(*i),
            Value::Float(f) => Value::Float(*f),
            Value::Str(s) => Value::Str(Cow::Borrowed(s.as_ref())),
            Value::Timestamp(t) => Value::Timestamp(*t),
            Value::TimeSpan(t) => Value::TimeSpan(*t),
            Value::Guid(g) => Value::Guid(*g),
        }
    }

    /// Compares two values for the relational operator spelled `operator`.
    ///
    /// `ordered` is false for `=`/`<>`/`IN`, which also accept booleans and GUIDs.
    pub fn compare(
        &self,
        other: &Value<'_>,
        operator: &'static str,
        ordered: bool,
    ) -> Result<Comparison, EvaluationError> {
        let ordering = match (self, other) {
            (Value::Null, _) | (_, Value::Null) => return Ok(Comparison::Unknown),
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
            (Value::Int(a), Value::Float(b)) => (*a as f64).partial_cmp(b),
            (Value::Float(a), Value::Int(b)) => a.partial_cmp(&(*b as f64)),
            (Value::Float(a), Value::Float(b)) => a.partial_cmp(b),
            (Value::Str(a), Value::Str(b)) => Some(a.as_ref().cmp(b.as_ref())),
            (Value::Timestamp(a), Value::Timestamp(b)) => Some(a.cmp(b)),
            (Value::TimeSpan(a), Value::TimeSpan(b)) => Some(a.cmp(b)),
            (Value::Bool(a), Value::Bool(b)) if !ordered => Some(a.cmp(b)),
            (Value::Guid(a), Value::Guid(b)) if !ordered => Some(a.0.cmp(&b.0)),
            _ => return Err(self.mismatch(other, operator)),
        };
        Ok(ordering.map_or(Comparison::Unordered, Comparison::Ordered))
    }

    /// Equality as correlation filters use it: like `=`, but a pairing of types that cannot be
    /// equal is simply unequal rather than an error.
    pub fn loosely_equals(&self, other: &Value<'_>) -> bool {
        matches!(
            self.compare(other, "=", false),
            Ok(Comparison::Ordered(Ordering::Equal))
        )
    }

    /// Applies an arithmetic operator with C#'s promotions; `NULL` in, `NULL` out.
    pub fn arithmetic(
        self,
        op: ArithmeticOp,
        other: Value<'_>,
    ) -> Result<Value<'a>, EvaluationError> {
        use ArithmeticOp::{Add, Subtract};
        Ok(match (self, other) {
            (Value::Null, _) | (_, Value::Null) => Value::Null,
            (Value::Int(a), Value::Int(b)) => Value::Int(integer_arithmetic(op, a, b)?),
            (Value::Int(a), Value::Float(b)) => Value::Float(float_arithmetic(op, a as f64, b)),
            (Value::Float(a), Value::Int(b)) => Value::Float(float_arithmetic(op, a, b as f64)),
            (Value::Float(a), Value::Float(b)) => Value::Float(float_arithmetic(op, a, b)),
            (Value::Str(a), Value::Str(b)) if op == Add => {
                Value::Str(Cow::Owned(a.into_owned() + &b))
            }
            (Value::Timestamp(t), Value::TimeSpan(d)) if matches!(op, Add | Subtract) => {
                let delta = if op == Add { d.0 } else { d.0.wrapping_neg() };
                Value::Timestamp(Timestamp(checked(t.0.checked_add(delta), op)?))
            }
            (Value::Timestamp(a), Value::Timestamp(b)) if op == Subtract => {
                Value::TimeSpan(TimeSpan(checked(a.0.checked_sub(b.0), op)?))
            }
            (Value::TimeSpan(a), Value::TimeSpan(b)) if matches!(op, Add | Subtract) => {
                let result = if op == Add {
                    a.0.checked_add(b.0)
                } else {
                    a.0.checked_sub(b.0)
                };
                Value::TimeSpan(TimeSpan(checked(result, op)?))
            }
            (left, right) => return Err(left.mismatch(&right, op.symbol())),
        })
    }

    /// Unary minus; `NULL` stays `NULL`.
    pub fn negate(self) -> Result<Value<'a>, EvaluationError> {
        match self {
            Value::Null => Ok(Value::Null),
            Value::Int(i) => Ok(Value::Int(i.wrapping_neg())),
            Value::Float(f) => Ok(Value::Float(-f)),
            Value::TimeSpan(t) => Ok(Value::TimeSpan(TimeSpan(t.0.wrapping_neg()))),
            other => Err(EvaluationError::TypeMismatch {
                operator: "unary -",
                left: other.type_name(),
                right: "none",
            }),
        }
    }

    /// The value as a string, for the conversions C# would do implicitly when an action sets
    /// a string system property; `None` for `NULL`. Booleans read `True`/`False` as in .NET;
    /// timestamps and time spans are written as their milliseconds (not .NET's date format).
    pub fn to_text(&self) -> Option<String> {
        Some(match self {
            Value::Null => return None,
            Value::Bool(b) => if *b { "True" } else { "False" }.to_owned(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => f.to_string(),
            Value::Str(s) => s.to_string(),
            Value::Timestamp(t) => t.0.to_string(),
            Value::TimeSpan(t) => t.0.to_string(),
            Value::Guid(g) => g.to_string(),
        })
    }

    fn mismatch(&self, other: &Value<'_>, operator: &'static str) -> EvaluationError {
        EvaluationError::TypeMismatch {
            operator,
            left: self.type_name(),
            right: other.type_name(),
        }
    }
}

fn checked(result: Option<i64>, op: ArithmeticOp) -> Result<i64, EvaluationError> {
    result.ok_or(EvaluationError::Overflow {
        operator: op.symbol(),
    })
}

/// C# `long` arithmetic: unchecked wrap-around for `+ - *`, exceptions for division by zero
/// and for `long.MinValue / -1`.
fn integer_arithmetic(op: ArithmeticOp, a: i64, b: i64) -> Result<i64, EvaluationError> {
    match op {
        ArithmeticOp::Add => Ok(a.wrapping_add(b)),
        ArithmeticOp::Subtract => Ok(a.wrapping_sub(b)),
        ArithmeticOp::Multiply => Ok(a.wrapping_mul(b)),
        ArithmeticOp::Divide | ArithmeticOp::Remainder if b == 0 => {
            Err(EvaluationError::DivideByZero)
        }
        ArithmeticOp::Divide => checked(a.checked_div(b), op),
        ArithmeticOp::Remainder => checked(a.checked_rem(b), op),
    }
}

fn float_arithmetic(op: ArithmeticOp, a: f64, b: f64) -> f64 {
    match op {
        ArithmeticOp::Add => a + b,
        ArithmeticOp::Subtract => a - b,
        ArithmeticOp::Multiply => a * b,
        ArithmeticOp::Divide => a / b,
        ArithmeticOp::Remainder => a % b,
    }
}

#[cfg(test)]
mod tests {
    use super::Truth::{self, False as F, True as T, Unknown as U};

    #[test]
    fn and_or_not_follow_the_service_bus_tables() {
        // Rows and columns in the documented order T, F, U.
        let and = [[T, F, U], [F, F, F], [U, F, U]];
        let or = [[T, T, T], [T, F, U], [T, U, U]];
        let all = [T, F, U];
        for (row, left) in all.into_iter().enumerate() {
            for (column, right) in all.into_iter().enumerate() {
                assert_eq!(left.and(right), and[row][column], "{left:?} AND {right:?}");
                assert_eq!(left.or(right), or[row][column], "{left:?} OR {right:?}");
            }
        }
        assert_eq!([!T, !F, !U], [F, T, U]);
        assert_eq!(Truth::from(true), T);
    }
}
