//! Receive-link settlement (servicebus-amqp.md §4.6): the client's outcome as a core
//! [`Outcome`], and the settled echo the client waits for — the same outcome type, a successful
//! dead-letter echoed as `rejected` without error, a lost lock as
//! `rejected{com.microsoft:message-lock-lost}`.

use busbar_amqp::performatives::{
    Accepted, AmqpError, DeliveryState, Modified, Rejected, Released,
};
use busbar_amqp::types::{Fields, Value};
use busbar_core::{DeadLetterInfo, Outcome, Properties};

use super::outbound::properties_to_modify;

const DEAD_LETTER_REASON: &str = "DeadLetterReason";
const DEAD_LETTER_DESCRIPTION: &str = "DeadLetterErrorDescription";

/// The core outcome a client's delivery state asks for; `None` for non-terminal states
/// (`received`, transactional states), which settle nothing.
pub(crate) fn outcome_of(state: &DeliveryState) -> Option<Outcome> {
    Some(match state {
        DeliveryState::Accepted(_) => Outcome::Complete,
        DeliveryState::Released(_) => Outcome::Release,
        DeliveryState::Modified(modified) => {
            let properties = modified
                .message_annotations
                .as_ref()
                .map(|annotations| {
                    properties_to_modify(
                        annotations
                            .0
                            .iter()
                            .filter_map(|(key, value)| Some((key_text(key)?, value))),
                    )
                })
                .unwrap_or_default();
            if modified.undeliverable_here == Some(true) {
                Outcome::Defer { properties }
            } else {
                Outcome::Abandon { properties }
            }
        }
        DeliveryState::Rejected(rejected) => dead_letter(
            rejected
                .error
                .as_ref()
                .and_then(|error| error.info.as_ref())
                .map(|info| info.0.iter().map(|(k, v)| (k.as_str(), v))),
        ),
        DeliveryState::Received(_)
        | DeliveryState::Declared(_)
        | DeliveryState::Transactional(_)
        | DeliveryState::Other(_) => return None,
    })
}

/// A dead-letter outcome from `DeadLetterReason` / `DeadLetterErrorDescription` and any other
/// entries (the properties to modify); null values count as absent.
fn dead_letter<'a>(entries: Option<impl Iterator<Item = (&'a str, &'a Value)>>) -> Outcome {
    let mut info = DeadLetterInfo::default();
    let mut others = Vec::new();
    for (key, value) in entries.into_iter().flatten() {
        match key {
            DEAD_LETTER_REASON => info.reason = text(value),
            DEAD_LETTER_DESCRIPTION => info.description = text(value),
            _ => others.push((key, value)),
        }
    }
    Outcome::DeadLetter {
        info,
        properties: if others.is_empty() {
            Properties::new()
        } else {
            properties_to_modify(others)
        },
    }
}

/// The settled echo of a successful settlement: the outcome type the client sent.
pub(crate) fn success_echo(state: &DeliveryState) -> DeliveryState {
    match state {
        DeliveryState::Accepted(_) => DeliveryState::Accepted(Accepted {}),
        DeliveryState::Released(_) => DeliveryState::Released(Released {}),
        DeliveryState::Modified(modified) => DeliveryState::Modified(Modified {
            delivery_failed: modified.delivery_failed,
            undeliverable_here: modified.undeliverable_here,
            message_annotations: None,
        }),
        DeliveryState::Rejected(_) => DeliveryState::Rejected(Rejected { error: None }),
        other => other.clone(),
    }
}

/// A `rejected` outcome carrying `error` (a failed send or settlement).
pub(crate) fn rejected(condition: &str, description: String) -> DeliveryState {
    DeliveryState::Rejected(Rejected {
        error: Some(AmqpError {
            condition: condition.into(),
            description: Some(description),
            // Python waits forever on an error without `info` (sdk-wire.md §11).
            info: Some(Fields::default()),
        }),
    })
}

fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Symbol(symbol) => Some(symbol.as_str().to_owned()),
        _ => None,
    }
}

fn key_text(key: &Value) -> Option<&str> {
    match key {
        Value::String(text) => Some(text),
        Value::Symbol(symbol) => Some(symbol.as_str()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use busbar_amqp::types::{Annotations, Symbol};

    fn modified(undeliverable_here: Option<bool>) -> DeliveryState {
        let mut annotations = Annotations::default();
        annotations.set("retry", Value::Int(1));
        DeliveryState::Modified(Modified {
            delivery_failed: Some(true),
            undeliverable_here,
            message_annotations: Some(annotations),
        })
    }

    #[test]
    fn outcomes_map_as_service_bus_does() {
        assert_eq!(
            outcome_of(&DeliveryState::Accepted(Accepted {})),
            Some(Outcome::Complete)
        );
        assert_eq!(
            outcome_of(&DeliveryState::Released(Released {})),
            Some(Outcome::Release)
        );
        assert!(matches!(
            outcome_of(&modified(None)),
            Some(Outcome::Abandon { properties }) if properties.as_map().contains_key("retry")
        ));
        assert!(matches!(
            outcome_of(&modified(Some(true))),
            Some(Outcome::Defer { .. })
        ));
        // Rust's bare modified{} is an abandon too.
        assert!(matches!(
            outcome_of(&DeliveryState::Modified(Modified {
                delivery_failed: None,
                undeliverable_here: None,
                message_annotations: None
            })),
            Some(Outcome::Abandon { .. })
        ));
    }

    #[test]
    fn rejected_reads_reason_and_description_from_info_with_symbol_keys() {
        let mut info = Fields::default();
        info.push(Symbol::from(DEAD_LETTER_REASON), Value::from("why"));
        info.push(Symbol::from(DEAD_LETTER_DESCRIPTION), Value::Null);
        info.push(Symbol::from("extra"), Value::Int(4));
        let state = DeliveryState::Rejected(Rejected {
            error: Some(AmqpError {
                condition: "com.microsoft:dead-letter".into(),
                description: None,
                info: Some(info),
            }),
        });
        let Some(Outcome::DeadLetter { info, properties }) = outcome_of(&state) else {
            panic!("not a dead-letter");
        };
        assert_eq!(info.reason.as_deref(), Some("why"));
        assert_eq!(info.description, None);
        assert!(properties.as_map().contains_key("extra"));
        // .NET's bare rejected{} dead-letters with no reason.
        assert_eq!(
            outcome_of(&DeliveryState::Rejected(Rejected { error: None })),
            Some(Outcome::DeadLetter {
                info: DeadLetterInfo::default(),
                properties: Properties::new()
            })
        );
        assert_eq!(
            success_echo(&state),
            DeliveryState::Rejected(Rejected { error: None })
        );
    }

    #[test]
    fn echo_keeps_the_outcome_type() {
        assert!(matches!(
            success_echo(&modified(Some(true))),
            DeliveryState::Modified(Modified {
                undeliverable_here: Some(true),
                ..
            })
        ));
        let DeliveryState::Rejected(Rejected { error: Some(error) }) =
            rejected("com.microsoft:message-lock-lost", "gone".into())
        else {
            panic!("not rejected with an error");
        };
        assert_eq!(error.condition.as_str(), "com.microsoft:message-lock-lost");
        assert!(error.info.is_some());
    }
}
