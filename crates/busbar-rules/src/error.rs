//! The crate's errors: [`Error`] when a rule is defined, [`EvaluationError`] when one runs.

use thiserror::Error as ThisError;

/// The dead-letter reason Service Bus gives a message whose subscription rule failed to
/// evaluate. Service Bus documents the reason as the .NET exception's type name
/// (`exception.GetType().Name`), and names the exception its filters throw `FilterException`;
/// the description is the exception's message (here, [`EvaluationError`]'s `Display`).
pub const FILTER_EXCEPTION_REASON: &str = "FilterException";

/// Why a rule or rule set operation was refused. Every variant is a client error that the
/// broker reports on `$management` (or at configuration load); none changes any state.
#[derive(Debug, Clone, PartialEq, Eq, ThisError)]
pub enum Error {
    /// A SQL filter or action expression is malformed.
    #[error("{0}")]
    Syntax(#[from] SyntaxError),
    /// `add-rule` with a name the subscription already has (Service Bus answers 409
    /// `com.microsoft:entity-already-exists`).
    #[error("a rule named '{0}' already exists on this subscription")]
    DuplicateRule(String),
    /// `remove-rule` with a name the subscription does not have (404).
    #[error("no rule named '{0}' exists on this subscription")]
    RuleNotFound(String),
    /// The rule name is empty or longer than Service Bus allows.
    #[error("invalid rule name '{name}': {reason}")]
    InvalidRuleName {
        /// The refused name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A correlation filter that names no property at all (Service Bus refuses it).
    #[error("a correlation filter must set at least one property")]
    EmptyCorrelationFilter,
}

/// A malformed SQL expression, with the place it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, ThisError)]
#[error("syntax error at position {position}: {message}")]
pub struct SyntaxError {
    /// 1-based position of the offending character, counted in characters (not bytes).
    pub position: usize,
    /// What was expected or found there.
    pub message: String,
}

/// Why evaluating a filter or an action failed at run time. This is distinct from "no match":
/// the broker dead-letters the message on the subscription with reason
/// [`FILTER_EXCEPTION_REASON`] (when the subscription asks for it) and this as description.
#[derive(Debug, Clone, PartialEq, Eq, ThisError)]
pub enum EvaluationError {
    /// An operator was applied to types C# has no operator for (e.g. `'abc' > 5`).
    #[error("operator '{operator}' cannot be applied to operands of type '{left}' and '{right}'")]
    TypeMismatch {
        /// The operator's spelling.
        operator: &'static str,
        /// The left (or only) operand's type.
        left: &'static str,
        /// The right operand's type.
        right: &'static str,
    },
    /// Integer division or remainder by zero.
    #[error("attempted to divide by zero")]
    DivideByZero,
    /// An integer or date/time result out of range.
    #[error("arithmetic operation '{operator}' resulted in an overflow")]
    Overflow {
        /// The operator's spelling.
        operator: &'static str,
    },
    /// `property('sys.X')` with a name that is not a system property.
    #[error("the system property '{0}' does not exist")]
    UnknownSystemProperty(String),
    /// The operand of `LIKE` / `ESCAPE` / `property()` was not a string, or the escape was
    /// not exactly one character.
    #[error("{0}")]
    InvalidOperand(String),
    /// A boolean was expected (an operand of `AND`, `OR`, `NOT`, or the whole filter).
    #[error("expected a boolean, found a value of type '{0}'")]
    NotBoolean(&'static str),
    /// An action sets a system property to a value it cannot hold.
    #[error("cannot set system property '{property}' to a value of type '{found}'")]
    InvalidAssignment {
        /// The system property's name.
        property: &'static str,
        /// The value's type.
        found: &'static str,
    },
}
