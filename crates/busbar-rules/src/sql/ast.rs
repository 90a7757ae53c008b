//! The syntax tree a SQL filter or action is parsed into, once, when the rule is added.

use crate::message::PropertyRef;
use crate::sql::like::LikePattern;
use crate::value::{ArithmeticOp, Value};

/// The relational operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CompareOp {
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
}

/// The pattern side of `LIKE`: compiled at parse time when it is a literal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum LikeRhs {
    Compiled(LikePattern),
    Dynamic {
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
    },
}

/// An expression or predicate.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Literal(Value<'static>),
    Property(PropertyRef),
    /// `property(name)` / `p(name)`: the name is computed.
    DynamicProperty(Box<Expr>),
    /// `newid()`.
    NewId,
    Negate(Box<Expr>),
    Arithmetic(ArithmeticOp, Box<Expr>, Box<Expr>),
    Compare(CompareOp, Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    IsNull {
        operand: Box<Expr>,
        negated: bool,
    },
    Exists(PropertyRef),
    In {
        operand: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    Like {
        operand: Box<Expr>,
        pattern: LikeRhs,
        negated: bool,
    },
}

impl Expr {
    /// Whether the node can stand where a boolean is required (`AND`/`OR`/`NOT` operands and a
    /// whole filter). Properties qualify too: a boolean property is checked at run time.
    pub(crate) fn can_be_boolean(&self) -> bool {
        match self {
            Expr::Literal(value) => matches!(value, Value::Bool(_) | Value::Null),
            Expr::Arithmetic(..) | Expr::Negate(_) | Expr::NewId => false,
            _ => true,
        }
    }
}

/// One statement of a SQL rule action.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Statement {
    Set(PropertyRef, Expr),
    Remove(PropertyRef),
}
