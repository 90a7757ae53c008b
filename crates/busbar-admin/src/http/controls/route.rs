//! Which control a `/$busbar/…` request asks for, as a pure function of the method, the path's
//! segments after `$busbar` (decoded) and whether the broker runs with `--test-controls`.
//! Without it the clock and faults paths do not exist, so they are 404 whatever the method.

use hyper::Method;

/// A recognised control.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Call {
    /// `POST /$busbar/purge/{entity}`.
    Purge {
        /// The entity's path segments.
        entity: Vec<String>,
    },
    /// `POST /$busbar/reset`.
    Reset,
    /// `GET /$busbar/clock`.
    Clock,
    /// `POST /$busbar/clock/advance`.
    AdvanceClock,
    /// `POST /$busbar/faults/{entity}`.
    Fault {
        /// The entity's path segments.
        entity: Vec<String>,
    },
}

/// Why no control matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unrouted {
    /// 404, with the reason shown to the user.
    NotFound(&'static str),
    /// 405; the method the control takes (its `Allow`).
    MethodNotAllowed(&'static str),
}

const NO_SUCH_PATH: &str = "no control of Busbar is at this path (there are /$busbar/purge/{entity}, /$busbar/reset, /$busbar/clock, /$busbar/clock/advance and /$busbar/faults/{entity})";
const TEST_CONTROLS_OFF: &str =
    "the clock and fault injection exist only when busbar is started with --test-controls";

/// Routes `method` on the segments after `/$busbar`.
pub(super) fn route(
    method: &Method,
    segments: &[String],
    test_controls: bool,
) -> Result<Call, Unrouted> {
    let is = |segment: &String, word: &str| segment.eq_ignore_ascii_case(word);
    let (call, allow, test_only) = match segments {
        [purge, entity @ ..] if is(purge, "purge") && !entity.is_empty() => {
            let entity = entity.to_vec();
            (Call::Purge { entity }, "POST", false)
        }
        [reset] if is(reset, "reset") => (Call::Reset, "POST", false),
        [clock] if is(clock, "clock") => (Call::Clock, "GET", true),
        [clock, advance] if is(clock, "clock") && is(advance, "advance") => {
            (Call::AdvanceClock, "POST", true)
        }
        [faults, entity @ ..] if is(faults, "faults") && !entity.is_empty() => {
            let entity = entity.to_vec();
            (Call::Fault { entity }, "POST", true)
        }
        _ => return Err(Unrouted::NotFound(NO_SUCH_PATH)),
    };
    if test_only && !test_controls {
        return Err(Unrouted::NotFound(TEST_CONTROLS_OFF));
    }
    if method.as_str() != allow {
        return Err(Unrouted::MethodNotAllowed(allow));
    }
    Ok(call)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments(path: &str) -> Vec<String> {
        path.split('/').map(str::to_owned).collect()
    }

    fn post(path: &str, test_controls: bool) -> Result<Call, Unrouted> {
        route(&Method::POST, &segments(path), test_controls)
    }

    #[test]
    fn every_control() {
        assert_eq!(
            post("purge/t/Subscriptions/s", false),
            Ok(Call::Purge {
                entity: segments("t/Subscriptions/s")
            })
        );
        assert_eq!(post("RESET", false), Ok(Call::Reset));
        assert_eq!(
            route(&Method::GET, &segments("clock"), true),
            Ok(Call::Clock)
        );
        assert_eq!(post("clock/advance", true), Ok(Call::AdvanceClock));
        assert_eq!(
            post("faults/q", true),
            Ok(Call::Fault {
                entity: segments("q")
            })
        );
    }

    #[test]
    fn the_clock_and_faults_need_test_controls_whatever_the_method() {
        for (method, path) in [
            (Method::GET, "clock"),
            (Method::POST, "clock"),
            (Method::POST, "clock/advance"),
            (Method::GET, "clock/advance"),
            (Method::POST, "faults/q"),
        ] {
            assert_eq!(
                route(&method, &segments(path), false),
                Err(Unrouted::NotFound(TEST_CONTROLS_OFF)),
                "{method} {path}"
            );
        }
    }

    #[test]
    fn unknown_paths_and_wrong_methods() {
        for path in ["", "purge", "faults", "clock/back", "reset/now", "purges/q"] {
            assert_eq!(
                post(path, true),
                Err(Unrouted::NotFound(NO_SUCH_PATH)),
                "{path:?}"
            );
        }
        assert_eq!(
            route(&Method::GET, &segments("purge/q"), true),
            Err(Unrouted::MethodNotAllowed("POST"))
        );
        assert_eq!(
            route(&Method::DELETE, &segments("reset"), false),
            Err(Unrouted::MethodNotAllowed("POST"))
        );
        assert_eq!(post("clock", true), Err(Unrouted::MethodNotAllowed("GET")));
    }
}
