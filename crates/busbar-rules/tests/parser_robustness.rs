//! The parsers on hostile input, in CI (the cargo-fuzz target goes further, off CI): random
//! token soups and random text never panic, errors point inside the input, and whatever
//! parses evaluates without panicking.

#![allow(clippy::unwrap_used)]

use busbar_rules::{Guid, Message, SqlAction, SqlFilter, Value};
use proptest::prelude::*;

const TOKENS: &[&str] = &[
    "(",
    ")",
    "NOT",
    "AND",
    "OR",
    "a",
    "s",
    "missing",
    "'x'",
    "'%'",
    "1",
    "0",
    "-1",
    "2.5",
    "1.5E3",
    "=",
    "<>",
    "<",
    ">=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "LIKE",
    "IN",
    ",",
    "sys.Label",
    "sys.SequenceNumber",
    "user.a",
    "[b c]",
    "\"q\"",
    "ESCAPE",
    "'!'",
    "IS",
    "NULL",
    "EXISTS",
    "p",
    "property",
    "newid()",
    "TRUE",
    "FALSE",
    ";",
    "SET",
    "REMOVE",
    "sys.To",
    "é",
];

fn message() -> Message {
    Message {
        label: Some("label".into()),
        sequence_number: Some(3),
        ..Message::default()
    }
    .with_user("a", Value::Int(2))
    .with_user("s", Value::Str("text".into()))
}

fn check(text: &str) {
    let message = message();
    let past_end = text.chars().count() + 1;
    match SqlFilter::parse(text) {
        Ok(filter) => {
            let _ = filter.evaluate(&message, &mut || Guid([3; 16]));
        }
        Err(error) => assert!(
            (1..=past_end.min(1025)).contains(&error.position),
            "{text:?}: {error}"
        ),
    }
    match SqlAction::parse(text) {
        Ok(action) => {
            let _ = action.apply(&message, &mut || Guid([4; 16]));
        }
        Err(error) => assert!(
            (1..=past_end.min(1025)).contains(&error.position),
            "{text:?}: {error}"
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn token_soups_never_panic(tokens in prop::collection::vec(prop::sample::select(TOKENS), 0..40)) {
        check(&tokens.join(" "));
    }

    #[test]
    fn arbitrary_text_never_panics(text in ".{0,80}") {
        check(&text);
    }
}

#[test]
fn every_prefix_of_valid_expressions_is_handled() {
    let filter = "sys.Label LIKE 'a!%' ESCAPE '!' AND (a + 1) * 2 IN (6, 7) OR NOT EXISTS([b c])";
    let action = "SET [x y] = p('a') * -2.5E1; REMOVE sys.To; SET sys.Label = newid()";
    for text in [filter, action] {
        for (end, _) in text.char_indices() {
            check(&text[..end]);
        }
        check(text);
    }
    assert!(SqlFilter::parse(filter).is_ok());
    assert!(SqlAction::parse(action).is_ok());
}
