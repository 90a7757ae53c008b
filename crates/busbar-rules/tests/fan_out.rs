//! Fan-out: examples of Service Bus's copy rules, and property tests that no subscription ever
//! loses or gets a duplicate copy, against a rule-by-rule model.

#![allow(clippy::unwrap_used)]

use busbar_rules::{
    CorrelationFilter, Disposition, FILTER_EXCEPTION_REASON, Filter, Guid, Message, PropertyEdit,
    PropertyRef, RoutedCopy, Rule, RuleSet, SqlAction, SqlFilter, Subscription, Value, fan_out,
};
use proptest::prelude::*;

fn no_guid() -> Guid {
    Guid([7; 16])
}

fn sql(expression: &str) -> Filter {
    Filter::Sql(SqlFilter::parse(expression).unwrap())
}

fn rule(name: &str, filter: Filter, action: Option<&str>) -> Rule {
    Rule::new(name, filter, action.map(|a| SqlAction::parse(a).unwrap())).unwrap()
}

fn subscribe(rules: &RuleSet) -> Subscription<'_> {
    Subscription {
        rules,
        dead_letter_on_filter_error: true,
    }
}

#[test]
fn two_default_subscriptions_each_get_one_plain_copy() {
    let (a, b) = (RuleSet::default(), RuleSet::default());
    let copies = fan_out(
        &[subscribe(&a), subscribe(&b)],
        &Message::default(),
        &mut no_guid,
    );
    let plain = Disposition::Deliver {
        rule: None,
        edits: Vec::new(),
    };
    assert_eq!(
        copies,
        [
            RoutedCopy {
                subscription: 0,
                disposition: plain.clone()
            },
            RoutedCopy {
                subscription: 1,
                disposition: plain
            },
        ]
    );
}

#[test]
fn actionless_rules_share_one_copy_and_each_action_rule_adds_one() {
    // The documented example: five matching rules, two with actions, give three copies.
    let rules = RuleSet::with_rules(vec![
        rule("plain-1", Filter::True, None),
        rule("plain-2", sql("1=1"), None),
        rule(
            "plain-3",
            Filter::Correlation(CorrelationFilter {
                label: Some("x".into()),
                ..Default::default()
            }),
            None,
        ),
        rule("act-1", Filter::True, Some("SET n = 1")),
        rule("act-2", sql("sys.Label = 'x'"), Some("SET n = 2")),
    ])
    .unwrap();
    let message = Message {
        label: Some("x".into()),
        ..Message::default()
    };
    let copies = fan_out(&[subscribe(&rules)], &message, &mut no_guid);
    let rules: Vec<_> = copies.iter().map(RoutedCopy::rule).collect();
    assert_eq!(rules, [None, Some("act-1"), Some("act-2")]);
    let set = |n| {
        vec![PropertyEdit::Set {
            property: PropertyRef::User("n".into()),
            value: Value::Int(n),
        }]
    };
    assert_eq!(
        copies[2].disposition,
        Disposition::Deliver {
            rule: Some("act-2".into()),
            edits: set(2)
        }
    );
}

#[test]
fn boolean_filters_read_as_their_sql_forms_and_agree_with_them() {
    let message = Message::default();
    for (filter, text) in [(Filter::True, "1=1"), (Filter::False, "1=0")] {
        assert_eq!(filter.sql_expression(), Some(text));
        let parsed = sql(text);
        assert_eq!(parsed.sql_expression(), Some(text));
        assert_eq!(
            filter.matches(&message, &mut no_guid),
            parsed.matches(&message, &mut no_guid)
        );
    }
    let correlation = CorrelationFilter {
        to: Some("x".into()),
        ..Default::default()
    };
    assert_eq!(Filter::Correlation(correlation).sql_expression(), None);
}

#[test]
fn no_match_means_no_copy_and_a_topic_may_drop_the_message() {
    let red = RuleSet::with_rules(vec![rule("red", sql("color = 'red'"), None)]).unwrap();
    let none = RuleSet::with_rules(vec![rule("never", Filter::False, None)]).unwrap();
    let mut emptied = RuleSet::default();
    emptied.remove("$Default").unwrap();
    let blue = Message::default().with_user("color", Value::Str("blue".into()));
    let subscriptions = [subscribe(&red), subscribe(&none), subscribe(&emptied)];
    assert!(fan_out(&subscriptions, &blue, &mut no_guid).is_empty());
}

#[test]
fn a_filter_error_dead_letters_one_copy_or_counts_as_no_match() {
    let rules = RuleSet::with_rules(vec![
        rule("all", Filter::True, None),
        rule("broken", sql("n > 1"), None),
    ])
    .unwrap();
    let message = Message::default().with_user("n", Value::Str("text".into()));
    let strict = Subscription {
        rules: &rules,
        dead_letter_on_filter_error: true,
    };
    let lenient = Subscription {
        rules: &rules,
        dead_letter_on_filter_error: false,
    };
    let copies = fan_out(&[strict, lenient], &message, &mut no_guid);
    assert_eq!(copies.len(), 2);
    match &copies[0].disposition {
        Disposition::DeadLetter {
            reason,
            description,
        } => {
            assert_eq!(*reason, FILTER_EXCEPTION_REASON);
            assert_eq!(*reason, "FilterException");
            assert!(
                description.starts_with("rule 'broken': operator '>'"),
                "{description}"
            );
        }
        other => panic!("expected a dead-letter, got {other:?}"),
    }
    assert_eq!(
        copies[1],
        RoutedCopy {
            subscription: 1,
            disposition: Disposition::Deliver {
                rule: None,
                edits: Vec::new()
            }
        }
    );
}

#[test]
fn an_action_error_is_a_filter_evaluation_error_too() {
    let rules = RuleSet::with_rules(vec![rule(
        "act",
        Filter::True,
        Some("SET x = p('sys.Nope')"),
    )])
    .unwrap();
    let copies = fan_out(&[subscribe(&rules)], &Message::default(), &mut no_guid);
    assert!(matches!(
        &copies[..],
        [RoutedCopy {
            subscription: 0,
            disposition: Disposition::DeadLetter { .. }
        }]
    ));
}

// ---- property tests against a model -------------------------------------------------------

/// The pool rules are drawn from: filters that match, miss, are unknown, or fail on some
/// messages (`n > 1` fails when `n` is a string), with and without actions.
fn pool_rule(index: usize, choice: u8) -> Rule {
    let name = format!("r{index}");
    let (filter, action) = match choice % 8 {
        0 => (Filter::True, None),
        1 => (Filter::False, None),
        2 => (sql("color = 'red'"), None),
        3 => (sql("n > 1"), None),
        4 => (sql("n IN (1, 2) OR color = 'blue'"), Some("SET tag = 'x'")),
        5 => (
            Filter::Correlation(CorrelationFilter {
                properties: vec![("color".into(), Value::Str("blue".into()))],
                ..Default::default()
            }),
            None,
        ),
        6 => (sql("EXISTS(n)"), Some("SET n2 = n * 2")),
        _ => (Filter::True, Some("REMOVE color")),
    };
    rule(&name, filter, action)
}

fn message_for(color: u8, n: u8) -> Message {
    let mut message = Message::default();
    match color % 3 {
        0 => message = message.with_user("color", Value::Str("red".into())),
        1 => message = message.with_user("color", Value::Str("blue".into())),
        _ => {}
    }
    match n % 4 {
        0 => message,
        1 => message.with_user("n", Value::Int(1)),
        2 => message.with_user("n", Value::Int(5)),
        _ => message.with_user("n", Value::Str("text".into())),
    }
}

/// Expected copies for one subscription, evaluating rule by rule: `Err` = one dead-letter.
fn model(rules: &RuleSet, dead_letter: bool, message: &Message) -> Result<(bool, Vec<String>), ()> {
    let mut plain = false;
    let mut actions = Vec::new();
    for rule in rules.iter() {
        let matched = rule.filter().matches(message, &mut no_guid);
        let applied = match (&matched, rule.action()) {
            (Ok(true), Some(action)) => action.apply(message, &mut no_guid).map(|_| ()),
            _ => Ok(()),
        };
        match (matched, applied) {
            (Err(_), _) | (_, Err(_)) if dead_letter => return Err(()),
            (Ok(true), Ok(())) if rule.action().is_none() => plain = true,
            (Ok(true), Ok(())) => actions.push(rule.name().to_owned()),
            _ => {}
        }
    }
    Ok((plain, actions))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn fan_out_never_loses_or_duplicates_a_copy(
        subscriptions in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..6), any::<bool>()), 0..8),
        color in any::<u8>(),
        n in any::<u8>(),
    ) {
        let message = message_for(color, n);
        let rule_sets: Vec<RuleSet> = subscriptions
            .iter()
            .map(|(choices, _)| {
                let rules = choices.iter().enumerate().map(|(i, c)| pool_rule(i, *c)).collect();
                RuleSet::with_rules(rules).unwrap()
            })
            .collect();
        let targets: Vec<Subscription<'_>> = rule_sets
            .iter()
            .zip(&subscriptions)
            .map(|(rules, (_, dead_letter))| Subscription { rules, dead_letter_on_filter_error: *dead_letter })
            .collect();
        let copies = fan_out(&targets, &message, &mut no_guid);

        // Copies come grouped by subscription, in subscription order.
        prop_assert!(copies.windows(2).all(|w| w[0].subscription <= w[1].subscription));
        for (index, target) in targets.iter().enumerate() {
            let mine: Vec<&RoutedCopy> = copies.iter().filter(|c| c.subscription == index).collect();
            match model(target.rules, target.dead_letter_on_filter_error, &message) {
                Err(()) => {
                    prop_assert_eq!(mine.len(), 1);
                    let is_dead_letter = matches!(mine[0].disposition, Disposition::DeadLetter { .. });
                    prop_assert!(is_dead_letter);
                }
                Ok((plain, actions)) => {
                    prop_assert_eq!(mine.len(), usize::from(plain) + actions.len());
                    let plain_copies = mine.iter().filter(|c| matches!(&c.disposition, Disposition::Deliver { rule: None, .. })).count();
                    prop_assert_eq!(plain_copies, usize::from(plain));
                    let rule_copies: Vec<String> = mine.iter().filter_map(|c| c.rule().map(str::to_owned)).collect();
                    prop_assert_eq!(rule_copies, actions);
                }
            }
        }
        prop_assert!(copies.iter().all(|c| c.subscription < targets.len()));
    }

    #[test]
    fn fan_out_is_deterministic_and_leaves_rule_sets_alone(
        choices in prop::collection::vec(any::<u8>(), 0..6),
        color in any::<u8>(),
        n in any::<u8>(),
    ) {
        let message = message_for(color, n);
        let rules = RuleSet::with_rules(choices.iter().enumerate().map(|(i, c)| pool_rule(i, *c)).collect()).unwrap();
        let before = rules.clone();
        let first = fan_out(&[subscribe(&rules)], &message, &mut no_guid);
        let second = fan_out(&[subscribe(&rules)], &message, &mut no_guid);
        prop_assert_eq!(first, second);
        prop_assert_eq!(rules, before);
    }
}
