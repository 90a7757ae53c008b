//! Property tests: parsers of client and file input never panic, and round trips hold.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use busbar_broker::EntityName;
use busbar_broker::auth::{PutTokenOutcome, SasKeys, SasToken, put_token, sign_token};
use busbar_broker::config::{self, parse_duration};
use busbar_broker::{Address, EntityPath};
use proptest::prelude::*;

const EMULATOR_CONFIG: &str = include_str!("fixtures/emulator-config.json");

/// Address-like text built from the pieces that matter, so that many cases parse.
fn address_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("q".to_owned()),
        Just("Orders.EU".to_owned()),
        Just("/".to_owned()),
        Just("Subscriptions".to_owned()),
        Just("$DeadLetterQueue".to_owned()),
        Just("$Transfer".to_owned()),
        Just("$management".to_owned()),
        Just("$cbs".to_owned()),
        Just("amqps://localhost:5673/".to_owned()),
        Just("%2F".to_owned()),
        Just("%24".to_owned()),
        Just("%z".to_owned()),
        Just("%".to_owned()),
        "[a-z0-9.-]{1,6}",
        "\\PC{0,3}",
    ];
    prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn address_parsing_never_panics_and_canonical_forms_round_trip(text in address_text()) {
        if let Ok(address) = Address::parse(&text) {
            let canonical = address.to_string();
            prop_assert_eq!(Address::parse(&canonical), Ok(address.clone()), "{} -> {}", text, canonical);
            let with_uri = format!("amqps://localhost:5673/{canonical}");
            prop_assert_eq!(Address::parse(&with_uri), Ok(address));
        }
    }

    #[test]
    fn arbitrary_text_is_never_a_panic(text in "\\PC{0,64}") {
        let _ = Address::parse(&text);
        let _ = SasToken::parse(&text);
        let _ = SasToken::parse(&format!("SharedAccessSignature {text}"));
        let _ = parse_duration(&text);
        let _ = config::parse(&text, "config.json");
        let _ = SasKeys::emulator().authenticate_plain(text.as_bytes());
        // With an entity rule everywhere, so arbitrary text reaches that path too.
        let entity_rules = |_: &EntityName| Some(Arc::new(SasKeys::new([("entity-rule", "k")])));
        let outcome = put_token(&SasKeys::emulator(), &text, &text, 0, |_: &EntityPath| true, entity_rules);
        let accepted = matches!(outcome, PutTokenOutcome::Accepted { .. });
        prop_assert!(!accepted, "accepted {:?}", text);
    }

    #[test]
    fn signed_tokens_verify_for_any_audience_and_key(
        audience in "\\PC{0,40}",
        key_name in "[A-Za-z][A-Za-z0-9 &=%+]{0,12}",
        key in "\\PC{1,40}",
        expiry in 1u64..4_000_000_000,
    ) {
        let token = SasToken::parse(&sign_token(&audience, &key_name, &key, expiry)).unwrap();
        prop_assert_eq!(token.audience(), audience.as_str());
        prop_assert_eq!(token.key_name(), key_name.as_str());
        let keys = SasKeys::new([(key_name.as_str(), key.as_str())]);
        let now = i64::try_from(expiry).unwrap() * 1000;
        prop_assert_eq!(keys.verify(&token, now - 1), Ok(()));
        prop_assert!(keys.verify(&token, now).is_err());
    }

    #[test]
    fn mutated_config_files_are_refused_or_accepted_but_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, "[{}\\[\\]\",:/*a-zA-Z0-9 ]{0,3}"), 1..4),
    ) {
        let mut text = EMULATOR_CONFIG.to_owned();
        for (position, removed, inserted) in edits {
            let mut at = position.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + removed).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.replace_range(at..end, &inserted);
        }
        if let Err(error) = config::parse(&text, "config.json") {
            prop_assert!(error.to_string().starts_with("config.json: "));
        }
    }

    #[test]
    fn durations_from_components_parse_to_their_sum(
        days in prop::option::of(0u64..400),
        hours in prop::option::of(0u64..48),
        minutes in prop::option::of(0u64..120),
        seconds in prop::option::of(0u64..120),
        millis in prop::option::of(0u32..1000),
    ) {
        prop_assume!(days.is_some() || hours.is_some() || minutes.is_some() || seconds.is_some());
        let mut text = "P".to_owned();
        if let Some(days) = days {
            text += &format!("{days}D");
        }
        let has_time = hours.is_some() || minutes.is_some() || seconds.is_some();
        if has_time {
            text += "T";
        }
        if let Some(hours) = hours {
            text += &format!("{hours}H");
        }
        if let Some(minutes) = minutes {
            text += &format!("{minutes}M");
        }
        let fraction = if seconds.is_some() { millis } else { None };
        if let Some(seconds) = seconds {
            match fraction {
                Some(millis) => text += &format!("{seconds}.{millis:03}S"),
                None => text += &format!("{seconds}S"),
            }
        }
        let expected = Duration::from_secs(
            days.unwrap_or(0) * 86_400 + hours.unwrap_or(0) * 3_600 + minutes.unwrap_or(0) * 60 + seconds.unwrap_or(0),
        ) + Duration::from_millis(u64::from(fraction.unwrap_or(0)));
        prop_assert_eq!(parse_duration(&text), Ok(expected), "{}", text);
    }
}
