//! Topic fan-out: which subscriptions get a copy of a sent message, and with which edits.
//!
//! Service Bus semantics ("Topic filters and actions"):
//!
//! * all matching rules **without** an action together yield **one** copy (they are OR-ed);
//! * **each** matching rule **with** an action yields its own copy, edited by that action
//!   (Service Bus documents that such a copy carries a property `RuleName` naming the rule:
//!   [`RoutedCopy::rule`] gives the broker that name);
//! * a subscription no rule matches gets nothing; a message no subscription takes is dropped
//!   (the send is still accepted);
//! * when a filter or action fails to evaluate, a subscription that dead-letters on filter
//!   evaluation exceptions gets exactly one dead-lettered copy (reason
//!   [`FILTER_EXCEPTION_REASON`]) and nothing else; any other subscription treats the failing
//!   rule as not matching.

use crate::error::{EvaluationError, FILTER_EXCEPTION_REASON};
use crate::message::MessageView;
use crate::rule::RuleSet;
use crate::sql::PropertyEdit;
use crate::value::Guid;

/// One subscription as fan-out sees it.
#[derive(Debug, Clone, Copy)]
pub struct Subscription<'a> {
    /// The subscription's rules.
    pub rules: &'a RuleSet,
    /// Service Bus's `EnableDeadLetteringOnFilterEvaluationExceptions` (default true).
    pub dead_letter_on_filter_error: bool,
}

/// A copy for one subscription.
#[derive(Debug, Clone, PartialEq)]
pub struct RoutedCopy {
    /// The index of the subscription in the slice given to [`fan_out`].
    pub subscription: usize,
    /// What becomes of the copy.
    pub disposition: Disposition,
}

/// Where a copy goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Disposition {
    /// Into the subscription. `rule` names the rule whose action produced it (`None` for the
    /// single copy of the action-less rules); `edits` are that action's changes, in order.
    Deliver {
        /// The rule with an action that produced this copy.
        rule: Option<String>,
        /// The property edits to apply to this copy only.
        edits: Vec<PropertyEdit>,
    },
    /// Into the subscription's dead-letter sub-queue, unmodified.
    DeadLetter {
        /// Always [`FILTER_EXCEPTION_REASON`].
        reason: &'static str,
        /// The failing rule and the error, for `DeadLetterErrorDescription`.
        description: String,
    },
}

impl RoutedCopy {
    /// The rule name for a delivered copy made by an action, if any.
    pub fn rule(&self) -> Option<&str> {
        match &self.disposition {
            Disposition::Deliver { rule, .. } => rule.as_deref(),
            Disposition::DeadLetter { .. } => None,
        }
    }
}

/// Decides the copies of `message` for every subscription of a topic, in subscription order
/// (and, within one subscription, the action-less copy first, then rule order).
pub fn fan_out(
    subscriptions: &[Subscription<'_>],
    message: &dyn MessageView,
    new_guid: &mut dyn FnMut() -> Guid,
) -> Vec<RoutedCopy> {
    let mut copies = Vec::new();
    for (index, subscription) in subscriptions.iter().enumerate() {
        match route(subscription, message, new_guid) {
            Ok(dispositions) => {
                copies.extend(dispositions.into_iter().map(|disposition| RoutedCopy {
                    subscription: index,
                    disposition,
                }))
            }
            Err((rule, error)) => copies.push(RoutedCopy {
                subscription: index,
                disposition: Disposition::DeadLetter {
                    reason: FILTER_EXCEPTION_REASON,
                    description: format!("rule '{rule}': {error}"),
                },
            }),
        }
    }
    copies
}

/// The deliveries for one subscription, or the rule that failed and why (only when the
/// subscription dead-letters on filter errors).
fn route<'r>(
    subscription: &Subscription<'r>,
    message: &dyn MessageView,
    new_guid: &mut dyn FnMut() -> Guid,
) -> Result<Vec<Disposition>, (&'r str, EvaluationError)> {
    let mut plain_match = false;
    let mut edited = Vec::new();
    for rule in subscription.rules.iter() {
        let outcome = rule
            .filter()
            .matches(message, new_guid)
            .and_then(|matched| match (matched, rule.action()) {
                (true, Some(action)) => action.apply(message, new_guid).map(Some),
                (matched, _) => Ok(matched.then(Vec::new)),
            });
        match (outcome, rule.action()) {
            (Ok(None), _) => {}
            (Ok(Some(_)), None) => plain_match = true,
            (Ok(Some(edits)), Some(_)) => {
                edited.push(Disposition::Deliver {
                    rule: Some(rule.name().to_owned()),
                    edits,
                });
            }
            (Err(error), _) if subscription.dead_letter_on_filter_error => {
                return Err((rule.name(), error));
            }
            (Err(_), _) => {}
        }
    }
    let plain = plain_match.then(|| Disposition::Deliver {
        rule: None,
        edits: Vec::new(),
    });
    Ok(plain.into_iter().chain(edited).collect())
}
