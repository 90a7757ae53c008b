//! Entity, subscription and rule names as Service Bus accepts them (admin-api.md §7): queue
//! and topic names up to 260 characters, `/` allowed between segments; subscription and rule
//! names up to 50, no `/`. Neither may contain `\`, `@`, `?`, `#` or `*`.

use super::{NameKind, ValidationError};

/// Longest queue or topic name (.NET `QueueNameMaximumLength`, `TopicNameMaximumLength`).
const MAX_ENTITY_NAME_CHARS: usize = 260;
/// Longest subscription or rule name.
const MAX_CHILD_NAME_CHARS: usize = 50;
/// Characters no name may hold (.NET `InvalidEntityPathCharacters`, plus `\`, which .NET turns
/// into `/` before it ever reaches the wire).
const FORBIDDEN: [char; 5] = ['@', '?', '#', '*', '\\'];
/// Longest excerpt of a refused name quoted back.
const MAX_QUOTED_CHARS: usize = 64;

/// Checks a queue or topic name. Besides the service's rules, a path segment may not start
/// with `$`: Busbar addresses sub-queues (`q/$DeadLetterQueue`) and its own routes
/// (`$Resources`) that way, so such a queue could never be reached.
pub fn entity_name(name: &str) -> Result<(), ValidationError> {
    check(name, NameKind::Entity, MAX_ENTITY_NAME_CHARS).and_then(|()| {
        if name.starts_with('/') || name.ends_with('/') {
            return Err(refuse(name, NameKind::Entity, "it starts or ends with '/'"));
        }
        if name.split('/').any(str::is_empty) {
            return Err(refuse(
                name,
                NameKind::Entity,
                "it has an empty segment ('//')",
            ));
        }
        if name.split('/').any(|segment| segment.starts_with('$')) {
            return Err(refuse(
                name,
                NameKind::Entity,
                "segments starting with '$' are reserved",
            ));
        }
        Ok(())
    })
}

/// Checks a subscription name.
pub fn subscription_name(name: &str) -> Result<(), ValidationError> {
    child_name(name, NameKind::Subscription)
}

/// Checks a rule name (`$Default` is one).
pub fn rule_name(name: &str) -> Result<(), ValidationError> {
    child_name(name, NameKind::Rule)
}

fn child_name(name: &str, kind: NameKind) -> Result<(), ValidationError> {
    check(name, kind, MAX_CHILD_NAME_CHARS)?;
    if name.contains('/') {
        return Err(refuse(name, kind, "it contains '/'"));
    }
    Ok(())
}

/// The rules every kind of name shares.
fn check(name: &str, kind: NameKind, max_chars: usize) -> Result<(), ValidationError> {
    if name.trim().is_empty() {
        return Err(refuse(name, kind, "it is empty"));
    }
    if name.chars().count() > max_chars {
        let reason = format!("it is longer than {max_chars} characters");
        return Err(refuse(name, kind, &reason));
    }
    if let Some(forbidden) = name.chars().find(|c| FORBIDDEN.contains(c)) {
        let reason = format!("it contains {forbidden:?}");
        return Err(refuse(name, kind, &reason));
    }
    if name.chars().any(char::is_control) {
        return Err(refuse(name, kind, "it contains a control character"));
    }
    Ok(())
}

fn refuse(name: &str, kind: NameKind, reason: &str) -> ValidationError {
    ValidationError::Name {
        kind,
        name: name.chars().take(MAX_QUOTED_CHARS).collect(),
        reason: reason.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_bus_accepts_what_the_emulator_pattern_does_not() {
        // Names the emulator's Config.json pattern refuses but Service Bus takes.
        for name in [
            "orders/eu/de",
            "-q",
            "q.",
            "Q_1",
            "a b",
            "é",
            "x".repeat(260).as_str(),
        ] {
            assert_eq!(entity_name(name), Ok(()), "{name}");
        }
        for name in ["s-full", "$Default", "-s", "S.1", &"s".repeat(50)] {
            assert_eq!(subscription_name(name), Ok(()), "{name}");
            assert_eq!(rule_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn entity_names_refused() {
        for name in [
            "",
            "  ",
            "/q",
            "q/",
            "a//b",
            "q@x",
            "q?",
            "q#",
            "q*",
            "a\\b",
            "q\u{1}",
            "$Resources",
            "q/$DeadLetterQueue",
            &"x".repeat(261),
        ] {
            assert!(
                matches!(
                    entity_name(name),
                    Err(ValidationError::Name {
                        kind: NameKind::Entity,
                        ..
                    })
                ),
                "{name:?}"
            );
        }
    }

    #[test]
    fn child_names_refused() {
        for name in ["", "a/b", "s@", "s*", &"s".repeat(51)] {
            assert!(subscription_name(name).is_err(), "{name:?}");
            assert!(rule_name(name).is_err(), "{name:?}");
        }
    }

    #[test]
    fn errors_quote_a_short_excerpt_and_the_reason() {
        let Err(error) = entity_name(&"x".repeat(1000)) else {
            panic!("too long")
        };
        let message = error.to_string();
        assert!(message.contains("longer than 260 characters"), "{message}");
        assert!(message.len() < 200, "{message}");
    }
}
