//! `busbar ctl`: a running broker's controls from the command line. Each command is one request
//! to the administration API (`/$busbar/…`, the contract `busbar_admin::test_controls`
//! describes), signed with the key given ([`request`]); the JSON answer is printed in words.

mod request;

use busbar_admin::control::Fault;
use busbar_admin::test_controls::{
    CLOCK_PATH, ClockAnswer, PurgeAnswer, RESET_PATH, advance_clock_path, fault_path,
    format_duration, purge_path,
};
use hyper::Method;

use crate::cli::{CtlCommand, CtlOptions};
pub(crate) use request::CtlError;

/// Carries out `options.command` against the broker; what it did, in a line.
pub(crate) fn run(options: &CtlOptions) -> Result<String, CtlError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CtlError::Runtime)?;
    let (method, path, body) = match &options.command {
        CtlCommand::Purge {
            entity,
            dead_letter_only,
        } => (Method::POST, purge_path(entity, *dead_letter_only), None),
        CtlCommand::Reset => (Method::POST, RESET_PATH.to_owned(), None),
        CtlCommand::ClockShow => (Method::GET, CLOCK_PATH.to_owned(), None),
        CtlCommand::ClockAdvance(by) => (Method::POST, advance_clock_path(*by), None),
        CtlCommand::Fault { entity, fault } => {
            // A plain enum of counts always serializes.
            let body = serde_json::to_string(fault).unwrap_or_default();
            (Method::POST, fault_path(entity), Some(body))
        }
    };
    let answer = runtime.block_on(request::send(options, method, &path, body))?;
    describe(&options.command, &answer)
}

/// What the broker's answer to `command` means, in words.
fn describe(command: &CtlCommand, answer: &[u8]) -> Result<String, CtlError> {
    let line = match command {
        CtlCommand::Purge {
            entity,
            dead_letter_only,
        } => {
            let PurgeAnswer { purged } =
                serde_json::from_slice(answer).map_err(|error| unexpected(error, answer))?;
            let messages = match purged {
                1 => "1 message".to_owned(),
                n => format!("{n} messages"),
            };
            if *dead_letter_only {
                format!("purged {messages} from the dead-letter queue of {entity}")
            } else {
                format!("purged {messages} from {entity}")
            }
        }
        CtlCommand::Reset => {
            "reset the namespace: its configured entities, without messages".to_owned()
        }
        CtlCommand::ClockShow => {
            let ClockAnswer { now, offset } =
                serde_json::from_slice(answer).map_err(|error| unexpected(error, answer))?;
            format!("clock: {now} (advanced by {offset} in all)")
        }
        CtlCommand::ClockAdvance(by) => {
            let ClockAnswer { now, offset } =
                serde_json::from_slice(answer).map_err(|error| unexpected(error, answer))?;
            let by = format_duration(*by);
            format!("clock: {now} (advanced by {by}, {offset} in all)")
        }
        CtlCommand::Fault { entity, fault } => match fault {
            Fault::ServerBusy { count } => format!(
                "the next {} to {entity} will be refused with com.microsoft:server-busy",
                next(*count, "send")
            ),
            Fault::LockLost { count } => format!(
                "the next {} on {entity} will be answered with lock lost",
                next(*count, "settlement")
            ),
            Fault::DetachLink { condition } => {
                format!("a receive link of {entity} will be detached with {condition}")
            }
            Fault::DropConnection { condition } => format!(
                "the connection of a receive link of {entity} will be closed with {condition}"
            ),
            Fault::Delay { millis, count } => format!(
                "the next {} of {entity} will go out {millis} ms late",
                next(*count, "answer")
            ),
        },
    };
    Ok(line)
}

/// "send", "3 sends": the next how many.
fn next(count: u32, what: &str) -> String {
    match count {
        1 => what.to_owned(),
        n => format!("{n} {what}s"),
    }
}

/// An answer that is not the JSON expected.
fn unexpected(error: serde_json::Error, answer: &[u8]) -> CtlError {
    let excerpt = String::from_utf8_lossy(&answer[..answer.len().min(200)]).into_owned();
    CtlError::Answer(format!("{error}: {excerpt}"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn said(command: CtlCommand, answer: &str) -> String {
        describe(&command, answer.as_bytes()).unwrap()
    }

    #[test]
    fn answers_in_words() {
        let purge = |dead_letter_only| CtlCommand::Purge {
            entity: "orders".to_owned(),
            dead_letter_only,
        };
        assert_eq!(
            said(purge(false), r#"{"purged":3}"#),
            "purged 3 messages from orders"
        );
        assert_eq!(
            said(purge(true), r#"{"purged":1}"#),
            "purged 1 message from the dead-letter queue of orders"
        );
        assert_eq!(
            said(CtlCommand::Reset, "{}"),
            "reset the namespace: its configured entities, without messages"
        );
        let clock = r#"{"now":"2026-01-01T02:00:00.0000000Z","offset":"PT2H"}"#;
        assert_eq!(
            said(CtlCommand::ClockShow, clock),
            "clock: 2026-01-01T02:00:00.0000000Z (advanced by PT2H in all)"
        );
        assert_eq!(
            said(CtlCommand::ClockAdvance(Duration::from_secs(5400)), clock),
            "clock: 2026-01-01T02:00:00.0000000Z (advanced by PT1H30M, PT2H in all)"
        );
        let fault = |fault| CtlCommand::Fault {
            entity: "t/Subscriptions/s".to_owned(),
            fault,
        };
        assert_eq!(
            said(fault(Fault::ServerBusy { count: 1 }), "{}"),
            "the next send to t/Subscriptions/s will be refused with com.microsoft:server-busy"
        );
        assert_eq!(
            said(fault(Fault::LockLost { count: 3 }), "{}"),
            "the next 3 settlements on t/Subscriptions/s will be answered with lock lost"
        );
    }

    #[test]
    fn an_unexpected_answer_is_an_error() {
        let error = describe(&CtlCommand::ClockShow, b"<Error/>").unwrap_err();
        assert!(error.to_string().contains("<Error/>"), "{error}");
    }
}
