//! The controls' request paths, as the client builds them.

use std::fmt::Write as _;
use std::time::Duration;

use super::format_duration;

/// `POST`: brings the namespace back to its configured entities, empty.
pub const RESET_PATH: &str = "/$busbar/reset";
/// `GET`: the virtual clock.
pub const CLOCK_PATH: &str = "/$busbar/clock";

/// `POST`: purges `entity` (a queue, or `{topic}/Subscriptions/{subscription}`), only its
/// dead-letter sub-queue if `dead_letter_only`.
pub fn purge_path(entity: &str, dead_letter_only: bool) -> String {
    let path = format!("/$busbar/purge/{}", encode_entity(entity));
    if dead_letter_only {
        path + "?deadLetter=true"
    } else {
        path
    }
}

/// `POST`: advances the virtual clock `by`.
pub fn advance_clock_path(by: Duration) -> String {
    format!("/$busbar/clock/advance?by={}", format_duration(by))
}

/// `POST` with a [`Fault`](crate::control::Fault) body: arms a fault on `entity`.
pub fn fault_path(entity: &str) -> String {
    format!("/$busbar/faults/{}", encode_entity(entity))
}

/// Percent-encodes each `/`-separated segment of an entity name (names hold letters, digits,
/// `.`, `-`, `_`, `~` and `/` in practice; anything else is encoded so the path stays one).
fn encode_entity(entity: &str) -> String {
    let mut encoded = String::with_capacity(entity.len());
    for byte in entity.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(purge_path("orders", false), "/$busbar/purge/orders");
        assert_eq!(
            purge_path("t/Subscriptions/s", true),
            "/$busbar/purge/t/Subscriptions/s?deadLetter=true"
        );
        assert_eq!(purge_path("a b%", false), "/$busbar/purge/a%20b%25");
        assert_eq!(fault_path("eu/orders"), "/$busbar/faults/eu/orders");
        assert_eq!(
            advance_clock_path(Duration::from_secs(5400)),
            "/$busbar/clock/advance?by=PT1H30M"
        );
    }
}
