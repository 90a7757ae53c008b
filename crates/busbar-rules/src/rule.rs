//! Named rules and the rule set of one subscription (add / remove / enumerate).

use crate::error::Error;
use crate::filter::Filter;
use crate::sql::SqlAction;

/// The rule every subscription created without rules gets.
pub const DEFAULT_RULE_NAME: &str = "$Default";

/// Service Bus limits rule names to 50 characters.
pub const MAX_RULE_NAME_CHARS: usize = 50;

/// A subscription rule: a filter and an optional action (`None` is Service Bus's
/// `EmptyRuleAction`).
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    name: String,
    filter: Filter,
    action: Option<SqlAction>,
}

impl Rule {
    /// Builds a rule, refusing an empty or over-long name or an empty correlation filter.
    pub fn new(name: &str, filter: Filter, action: Option<SqlAction>) -> Result<Rule, Error> {
        let invalid = |reason| Error::InvalidRuleName {
            name: name.to_owned(),
            reason,
        };
        if name.is_empty() {
            return Err(invalid("a rule name must not be empty"));
        }
        if name.chars().count() > MAX_RULE_NAME_CHARS {
            return Err(invalid("a rule name has at most 50 characters"));
        }
        if let Filter::Correlation(correlation) = &filter {
            correlation.validate()?;
        }
        Ok(Rule {
            name: name.to_owned(),
            filter,
            action,
        })
    }

    /// `$Default` with the true filter and no action.
    pub fn default_rule() -> Rule {
        Rule {
            name: DEFAULT_RULE_NAME.to_owned(),
            filter: Filter::True,
            action: None,
        }
    }

    /// The rule's name as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The rule's filter.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// The rule's action, if any.
    pub fn action(&self) -> Option<&SqlAction> {
        self.action.as_ref()
    }
}

/// The rules of one subscription, in the order they were added (the order `enumerate-rules`
/// lists them). Names are unique ignoring ASCII case, as Service Bus entity names are.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl Default for RuleSet {
    /// A new subscription's rule set: just `$Default`.
    fn default() -> RuleSet {
        RuleSet {
            rules: vec![Rule::default_rule()],
        }
    }
}

impl RuleSet {
    /// The rule set of a subscription created with `rules` (from the configuration or the
    /// create call): `$Default` alone when `rules` is empty; a repeated name is refused.
    pub fn with_rules(rules: Vec<Rule>) -> Result<RuleSet, Error> {
        if rules.is_empty() {
            return Ok(RuleSet::default());
        }
        let mut set = RuleSet {
            rules: Vec::with_capacity(rules.len()),
        };
        for rule in rules {
            set.add(rule)?;
        }
        Ok(set)
    }

    /// `add-rule`: refused with [`Error::DuplicateRule`] if the name is taken; then nothing
    /// changes.
    pub fn add(&mut self, rule: Rule) -> Result<(), Error> {
        if self.position(rule.name()).is_some() {
            return Err(Error::DuplicateRule(rule.name.clone()));
        }
        self.rules.push(rule);
        Ok(())
    }

    /// `remove-rule`: returns the removed rule, or [`Error::RuleNotFound`].
    pub fn remove(&mut self, name: &str) -> Result<Rule, Error> {
        let index = self
            .position(name)
            .ok_or_else(|| Error::RuleNotFound(name.to_owned()))?;
        Ok(self.rules.remove(index))
    }

    /// The rule with this name, if any.
    pub fn rule(&self, name: &str) -> Option<&Rule> {
        self.position(name).and_then(|index| self.rules.get(index))
    }

    /// `enumerate-rules`: every rule in order (apply `skip`/`top` with the iterator adapters).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Rule> {
        self.rules.iter()
    }

    /// How many rules there are.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether every rule has been removed (the subscription then receives nothing).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.rules
            .iter()
            .position(|rule| rule.name.eq_ignore_ascii_case(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::CorrelationFilter;

    #[test]
    fn a_new_subscription_has_only_the_default_true_rule() {
        for set in [RuleSet::default(), RuleSet::with_rules(Vec::new()).unwrap()] {
            let names: Vec<_> = set.iter().map(Rule::name).collect();
            assert_eq!(names, ["$Default"]);
            assert_eq!(set.rule("$default").unwrap().filter(), &Filter::True);
            assert!(set.rule("$Default").unwrap().action().is_none());
        }
    }

    #[test]
    fn add_remove_enumerate_keep_order_and_refuse_duplicates() {
        let mut set = RuleSet::default();
        set.add(Rule::new("b", Filter::False, None).unwrap())
            .unwrap();
        set.add(Rule::new("a", Filter::True, None).unwrap())
            .unwrap();
        let before = set.clone();
        assert_eq!(
            set.add(Rule::new("B", Filter::True, None).unwrap()),
            Err(Error::DuplicateRule("B".into()))
        );
        assert_eq!(set, before, "a refused add changes nothing");
        assert_eq!(set.remove("nope"), Err(Error::RuleNotFound("nope".into())));
        assert_eq!(set, before, "a refused remove changes nothing");
        assert_eq!(set.remove("$DEFAULT").unwrap().name(), "$Default");
        let names: Vec<_> = set.iter().map(Rule::name).collect();
        assert_eq!(names, ["b", "a"]);
        set.remove("b").unwrap();
        set.remove("a").unwrap();
        assert!(set.is_empty());
        assert_eq!(set.len(), 0);
    }

    #[test]
    fn with_rules_refuses_repeated_names() {
        let rule = Rule::new("r", Filter::True, None).unwrap();
        assert_eq!(
            RuleSet::with_rules(vec![rule.clone(), rule]),
            Err(Error::DuplicateRule("r".into()))
        );
    }

    #[test]
    fn invalid_rules_are_refused() {
        assert!(matches!(
            Rule::new("", Filter::True, None),
            Err(Error::InvalidRuleName { .. })
        ));
        let long = "x".repeat(51);
        assert!(matches!(
            Rule::new(&long, Filter::True, None),
            Err(Error::InvalidRuleName { .. })
        ));
        assert!(Rule::new(&"x".repeat(50), Filter::True, None).is_ok());
        let empty = Filter::Correlation(CorrelationFilter::default());
        assert_eq!(
            Rule::new("c", empty, None),
            Err(Error::EmptyCorrelationFilter)
        );
    }
}
