//! The JSON answers of the controls. A fault's request body is
//! [`Fault`](crate::control::Fault) itself; empty answers are `{}`.

use serde::{Deserialize, Serialize};

use super::format_duration;
use crate::control::ClockState;

/// `POST /$busbar/purge/…`: how many messages were removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PurgeAnswer {
    /// Messages removed.
    pub purged: u64,
}

/// `GET /$busbar/clock` and `POST /$busbar/clock/advance`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockAnswer {
    /// The broker's time, `2026-01-02T05:04:05.0000000Z`.
    pub now: String,
    /// How far the clock has been advanced in all, ISO 8601 (`PT2H`).
    pub offset: String,
}

impl From<ClockState> for ClockAnswer {
    fn from(state: ClockState) -> ClockAnswer {
        ClockAnswer {
            now: state.now.to_precise_string(),
            offset: format_duration(state.offset),
        }
    }
}

/// Every failure's body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorAnswer {
    /// What went wrong, for a person.
    pub error: String,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::atom::Timestamp;
    use crate::control::Fault;

    #[test]
    fn wire_forms() {
        let clock = ClockAnswer::from(ClockState {
            now: Timestamp::from_unix_millis(1_767_326_645_000),
            offset: Duration::from_secs(7200),
        });
        assert_eq!(
            serde_json::to_string(&clock).unwrap(),
            r#"{"now":"2026-01-02T04:04:05.0000000Z","offset":"PT2H"}"#
        );
        assert_eq!(
            serde_json::to_string(&PurgeAnswer { purged: 3 }).unwrap(),
            r#"{"purged":3}"#
        );
        assert_eq!(
            serde_json::to_string(&Fault::LockLost { count: 2 }).unwrap(),
            r#"{"kind":"lock-lost","count":2}"#
        );
        assert_eq!(
            serde_json::from_str::<Fault>(r#"{"count":1,"kind":"server-busy"}"#).unwrap(),
            Fault::ServerBusy { count: 1 }
        );
        for refused in [
            r#"{"kind":"server-busy"}"#,
            r#"{"kind":"busy","count":1}"#,
            r#"{"kind":"lock-lost","count":-1}"#,
            r#"{"kind":"lock-lost","count":1,"entity":"q"}"#,
            r#"{"count":1}"#,
        ] {
            assert!(serde_json::from_str::<Fault>(refused).is_err(), "{refused}");
        }
    }
}
