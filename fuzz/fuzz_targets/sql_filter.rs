//! Fuzz target: the SQL filter and rule action parsers on arbitrary text. Besides never
//! panicking (nor overflowing the stack), an error must point inside the input (or just past
//! it), and whatever parses must evaluate against a message without panicking.
#![no_main]

use busbar_rules::{Guid, Message, SqlAction, SqlFilter, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let message = Message { label: Some("label".into()), sequence_number: Some(1), ..Message::default() }
        .with_user("a", Value::Int(1))
        .with_user("s", Value::Str("text".into()))
        .with_user("f", Value::Float(0.5));
    let last_position = text.chars().count() + 1;
    match SqlFilter::parse(text) {
        Ok(filter) => {
            let _ = filter.evaluate(&message, &mut || Guid([1; 16]));
        }
        Err(error) => assert!((1..=last_position).contains(&error.position)),
    }
    match SqlAction::parse(text) {
        Ok(action) => {
            let _ = action.apply(&message, &mut || Guid([2; 16]));
        }
        Err(error) => assert!((1..=last_position).contains(&error.position)),
    }
});
