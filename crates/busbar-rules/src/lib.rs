//! Service Bus subscription rules as a pure library: the SQL filter language, correlation
//! filters, SQL rule actions, per-subscription rule sets and topic fan-out.
//!
//! Nothing here does IO, reads a clock or draws random numbers: the broker adapts its AMQP
//! message to a [`MessageView`], parses rules once when they are added ([`SqlFilter::parse`],
//! [`SqlAction::parse`], [`RuleSet::add`]), and asks [`fan_out`] which subscriptions get a copy
//! of each sent message and which [`PropertyEdit`]s to apply to each copy. `newid()` takes its
//! GUIDs from a caller-supplied function.
//!
//! # Semantics, and where they come from
//!
//! From the Service Bus documentation ("SQL filter syntax", "SQL rule action syntax", "Topic
//! filters and actions", "Dead-letter queues"):
//!
//! * keywords and property names are case-insensitive; string values compare case-sensitively;
//!   a missing user property is unknown, an unknown system property is an error (refused at
//!   parse time when written literally, an [`EvaluationError`] through `property('sys.X')`);
//! * three-valued logic with the documented `AND`/`OR` tables; `NOT unknown` is unknown; a
//!   filter matches only when true; `IS NULL` is true for a missing or null property;
//! * integer literals are `long`, decimal and scientific ones `double`; expressions and actions
//!   are capped at 1024 characters and actions at 32 statements (Service Bus quotas);
//! * matching action-less rules yield one copy, each matching rule with an action one more
//!   ([`fan_out`]); an evaluation failure dead-letters with reason [`FILTER_EXCEPTION_REASON`].
//!
//! Interpretations of "operators follow C# implicit conversion semantics" (not confirmed
//! against the service): `long`/`double` mix by widening; a comparison or arithmetic between
//! types C# has no operator for (string vs number, ordering booleans, …) is an evaluation
//! error, not a silent false; strings order ordinally; `+` concatenates two strings; integer
//! `+ - *` wrap; `IN` follows SQL-92 (no match and a `NULL` in the list ⇒ unknown); `AND`/`OR`
//! evaluate left to right and stop once the result is settled; rule names are unique ignoring
//! ASCII case. Parameters (`@name`) are bound when the rule is created
//! ([`SqlFilter::with_parameters`], [`SqlAction::with_parameters`]; keys match ignoring ASCII
//! case, like identifiers) and parsed in as literals; an unbound one is refused at its position.
//!
//! ```
//! use busbar_rules::{fan_out, Disposition, Filter, Message, Rule, RuleSet, SqlFilter, Subscription, Value};
//!
//! let all = RuleSet::default(); // `$Default`: the true filter
//! let red = RuleSet::with_rules(vec![Rule::new(
//!     "red",
//!     Filter::Sql(SqlFilter::parse("color = 'red'").unwrap()),
//!     None,
//! ).unwrap()]).unwrap();
//! let subscriptions = [
//!     Subscription { rules: &all, dead_letter_on_filter_error: true },
//!     Subscription { rules: &red, dead_letter_on_filter_error: true },
//! ];
//! let blue = Message::default().with_user("color", Value::Str("blue".into()));
//! let copies = fan_out(&subscriptions, &blue, &mut || unreachable!());
//! assert_eq!(copies.len(), 1);
//! assert_eq!(copies[0].subscription, 0);
//! assert!(matches!(copies[0].disposition, Disposition::Deliver { .. }));
//! ```

#![forbid(unsafe_code)]

mod error;
mod fan_out;
mod filter;
mod message;
mod parameter;
mod rule;
mod sql;
mod value;

pub use error::{Error, EvaluationError, FILTER_EXCEPTION_REASON, SyntaxError};
pub use fan_out::{Disposition, RoutedCopy, Subscription, fan_out};
pub use filter::{CorrelationFilter, Filter};
pub use message::{Message, MessageView, PropertyRef, SystemProperty, find_user_property};
pub use parameter::{Parameter, ParameterValue};
pub use rule::{DEFAULT_RULE_NAME, MAX_RULE_NAME_CHARS, Rule, RuleSet};
pub use sql::{PropertyEdit, SqlAction, SqlFilter};
pub use value::{ArithmeticOp, Comparison, Guid, TimeSpan, Timestamp, Truth, Value};
