//! `busbar ctl …`: the command line of the client of a running broker's test controls (carried
//! out by `crate::ctl`). Flags go anywhere after `ctl`; the command's words come in order.

use std::ffi::OsString;
use std::time::Duration;

use busbar_admin::control::Fault;
use busbar_admin::test_controls::parse_duration;
use busbar_broker::auth::{DEFAULT_KEY, DEFAULT_KEY_NAME};

use super::{CliError, Command, set_once};

/// The administration API `busbar ctl` talks to by default.
pub(super) const DEFAULT_ADMIN_URL: &str = "http://127.0.0.1:5300";
/// The commands of `busbar ctl`, for errors.
pub(super) const CTL_COMMANDS: &str = "purge ENTITY [--dead-letter], reset, clock show, \
     clock advance DURATION, fault ENTITY server-busy|lock-lost [--count N], \
     fault ENTITY detach-link|drop-connection CONDITION, fault ENTITY delay DURATION [--count N]";

/// What `busbar ctl` asks of a running broker, and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CtlOptions {
    /// `--admin`: the administration API's `http://` URL, without a trailing `/`.
    pub(crate) admin: String,
    /// `--key`: the name of the shared access key that signs the requests,
    pub(crate) key_name: String,
    /// and the key.
    pub(crate) key: String,
    /// The command.
    pub(crate) command: CtlCommand,
}

/// A `busbar ctl` command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CtlCommand {
    /// `purge ENTITY [--dead-letter]`.
    Purge {
        /// A queue, or `topic/Subscriptions/subscription`.
        entity: String,
        /// `--dead-letter`.
        dead_letter_only: bool,
    },
    /// `reset`.
    Reset,
    /// `clock show`.
    ClockShow,
    /// `clock advance DURATION`.
    ClockAdvance(Duration),
    /// `fault ENTITY server-busy|lock-lost [--count N]`.
    Fault {
        /// A queue, topic, or `topic/Subscriptions/subscription`.
        entity: String,
        /// The fault and how many times.
        fault: Fault,
    },
}

/// Parses the arguments after `ctl`: flags anywhere, the command's words in order.
pub(super) fn parse_ctl(mut args: impl Iterator<Item = OsString>) -> Result<Command, CliError> {
    let mut admin: Option<String> = None;
    let mut key: Option<(String, String)> = None;
    let mut count: Option<u32> = None;
    let mut dead_letter = false;
    let mut words: Vec<String> = Vec::new();
    while let Some(arg) = args.next() {
        let text = arg
            .to_str()
            .ok_or_else(|| CliError::NotUnicode(arg.to_string_lossy().into_owned()))?;
        let (name, inline_value) = match text.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (text, None),
        };
        let mut value = |flag, placeholder| flag_value(inline_value, &mut args, flag, placeholder);
        match name {
            "-h" | "--help" => return Ok(Command::Help),
            "--admin" => set_once(
                &mut admin,
                "--admin",
                admin_url(&value("--admin", "<URL>")?)?,
            )?,
            "--key" => {
                let text = value("--key", "<NAME:KEY>")?;
                let (name, key_value) = (text.split_once(':'))
                    .filter(|(name, key)| !name.is_empty() && !key.is_empty())
                    .ok_or(CliError::InvalidKey)?;
                set_once(&mut key, "--key", (name.to_owned(), key_value.to_owned()))?;
            }
            "--count" => {
                let text = value("--count", "<N>")?;
                let parsed = text.parse().map_err(|_| CliError::InvalidCount(text))?;
                set_once(&mut count, "--count", parsed)?;
            }
            "--dead-letter" if inline_value.is_some() => {
                return Err(CliError::UnexpectedValue("--dead-letter"));
            }
            "--dead-letter" if dead_letter => return Err(CliError::Repeated("--dead-letter")),
            "--dead-letter" => dead_letter = true,
            flag if flag.starts_with("--") => {
                return Err(CliError::UnknownArgument(text.to_owned()));
            }
            _ => words.push(text.to_owned()),
        }
    }
    let command = ctl_command(&words, dead_letter, count)?;
    let (key_name, key) =
        key.unwrap_or_else(|| (DEFAULT_KEY_NAME.to_owned(), DEFAULT_KEY.to_owned()));
    Ok(Command::Ctl(CtlOptions {
        admin: admin.unwrap_or_else(|| DEFAULT_ADMIN_URL.to_owned()),
        key_name,
        key,
        command,
    }))
}

/// The command the words of `busbar ctl` name, with `--dead-letter` (purge only) and
/// `--count` (fault only).
fn ctl_command(
    words: &[String],
    dead_letter: bool,
    count: Option<u32>,
) -> Result<CtlCommand, CliError> {
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let command = match words[..] {
        [] => return Err(CliError::MissingCtlCommand),
        ["purge", entity] => CtlCommand::Purge {
            entity: entity.to_owned(),
            dead_letter_only: dead_letter,
        },
        ["reset"] => CtlCommand::Reset,
        ["clock", "show"] => CtlCommand::ClockShow,
        ["clock", "advance", by] => CtlCommand::ClockAdvance(
            parse_duration(by).ok_or_else(|| CliError::InvalidDuration(by.to_owned()))?,
        ),
        ["fault", entity, kind] => {
            let count = count.unwrap_or(1);
            let fault = match kind {
                "server-busy" => Fault::ServerBusy { count },
                "lock-lost" => Fault::LockLost { count },
                other => return Err(CliError::UnknownFault(other.to_owned())),
            };
            CtlCommand::Fault {
                entity: entity.to_owned(),
                fault,
            }
        }
        ["fault", entity, kind, argument] => {
            let fault = match kind {
                "detach-link" => Fault::DetachLink {
                    condition: argument.to_owned(),
                },
                "drop-connection" => Fault::DropConnection {
                    condition: argument.to_owned(),
                },
                "delay" => {
                    let delay = parse_duration(argument)
                        .ok_or_else(|| CliError::InvalidDuration(argument.to_owned()))?;
                    Fault::Delay {
                        millis: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        count: count.unwrap_or(1),
                    }
                }
                other => return Err(CliError::UnknownFault(other.to_owned())),
            };
            CtlCommand::Fault {
                entity: entity.to_owned(),
                fault,
            }
        }
        _ => return Err(CliError::UnknownCtlCommand(words.join(" "))),
    };
    if dead_letter && !matches!(command, CtlCommand::Purge { .. }) {
        return Err(CliError::FlagNotFor {
            flag: "--dead-letter",
            command: "purge",
        });
    }
    if count.is_some() && !matches!(command, CtlCommand::Fault { .. }) {
        return Err(CliError::FlagNotFor {
            flag: "--count",
            command: "fault",
        });
    }
    Ok(command)
}

/// A ctl flag's value: after `=`, or the next argument unless that is a flag.
fn flag_value(
    inline_value: Option<&str>,
    args: &mut impl Iterator<Item = OsString>,
    flag: &'static str,
    placeholder: &'static str,
) -> Result<String, CliError> {
    let value = match inline_value {
        Some(value) => value.to_owned(),
        None => args
            .next()
            .map(|next| next.to_string_lossy().into_owned())
            .filter(|next| !next.starts_with("--"))
            .unwrap_or_default(),
    };
    if value.is_empty() {
        return Err(CliError::MissingValue { flag, placeholder });
    }
    Ok(value)
}

/// `--admin`: an `http://` URL (`http://` is added to a bare `host:port`), without trailing `/`.
fn admin_url(text: &str) -> Result<String, CliError> {
    let url = if text.contains("://") {
        text.to_owned()
    } else {
        format!("http://{text}")
    };
    let invalid = || CliError::InvalidAdmin(text.to_owned());
    let rest = url.strip_prefix("http://").ok_or_else(invalid)?;
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() || rest.contains(['?', '#', ' ']) {
        return Err(invalid());
    }
    Ok(url.trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::parse;

    fn parse_args(args: &[&str]) -> Result<Command, CliError> {
        parse(args.iter().map(OsString::from))
    }

    fn ctl(command: CtlCommand) -> Command {
        Command::Ctl(CtlOptions {
            admin: DEFAULT_ADMIN_URL.to_owned(),
            key_name: DEFAULT_KEY_NAME.to_owned(),
            key: DEFAULT_KEY.to_owned(),
            command,
        })
    }

    fn purge(entity: &str, dead_letter_only: bool) -> CtlCommand {
        CtlCommand::Purge {
            entity: entity.to_owned(),
            dead_letter_only,
        }
    }

    fn fault(entity: &str, fault: Fault) -> CtlCommand {
        CtlCommand::Fault {
            entity: entity.to_owned(),
            fault,
        }
    }

    #[test]
    fn ctl_commands_with_their_flags_anywhere() {
        let table: &[(&[&str], CtlCommand)] = &[
            (&["ctl", "purge", "orders"], purge("orders", false)),
            (
                &["ctl", "purge", "t/Subscriptions/s", "--dead-letter"],
                purge("t/Subscriptions/s", true),
            ),
            (
                &["ctl", "--dead-letter", "purge", "orders"],
                purge("orders", true),
            ),
            (&["ctl", "reset"], CtlCommand::Reset),
            (&["ctl", "clock", "show"], CtlCommand::ClockShow),
            (
                &["ctl", "clock", "advance", "PT1H30M"],
                CtlCommand::ClockAdvance(Duration::from_secs(5400)),
            ),
            (
                &["ctl", "clock", "advance", "90s"],
                CtlCommand::ClockAdvance(Duration::from_secs(90)),
            ),
            (
                &["ctl", "clock", "advance", "500ms"],
                CtlCommand::ClockAdvance(Duration::from_millis(500)),
            ),
            (
                &["ctl", "fault", "orders", "server-busy"],
                fault("orders", Fault::ServerBusy { count: 1 }),
            ),
            (
                &[
                    "ctl",
                    "fault",
                    "t/Subscriptions/s",
                    "lock-lost",
                    "--count",
                    "3",
                ],
                fault("t/Subscriptions/s", Fault::LockLost { count: 3 }),
            ),
            (
                &["ctl", "--count=2", "fault", "orders", "server-busy"],
                fault("orders", Fault::ServerBusy { count: 2 }),
            ),
        ];
        for (args, command) in table {
            assert_eq!(parse_args(args), Ok(ctl(command.clone())), "{args:?}");
        }
        assert_eq!(parse_args(&["ctl", "--help"]), Ok(Command::Help));
        assert_eq!(parse_args(&["ctl", "reset", "-h"]), Ok(Command::Help));
    }

    #[test]
    fn ctl_admin_url_and_key() {
        let expected = Command::Ctl(CtlOptions {
            admin: "http://localhost:5301".to_owned(),
            key_name: "Listen".to_owned(),
            key: "c2VjcmV0=".to_owned(),
            command: CtlCommand::Reset,
        });
        for args in [
            &[
                "ctl",
                "--admin",
                "http://localhost:5301/",
                "--key=Listen:c2VjcmV0=",
                "reset",
            ][..],
            &[
                "ctl",
                "reset",
                "--key",
                "Listen:c2VjcmV0=",
                "--admin=localhost:5301",
            ],
        ] {
            assert_eq!(parse_args(args), Ok(expected.clone()), "{args:?}");
        }
    }

    #[test]
    fn ctl_faults_that_end_links_or_delay_answers() {
        let parsed = |words: &[&str]| match parse_args(words) {
            Ok(Command::Ctl(options)) => options.command,
            other => panic!("not a ctl command: {other:?}"),
        };
        assert_eq!(
            parsed(&[
                "ctl",
                "fault",
                "q",
                "detach-link",
                "amqp:link:detach-forced"
            ]),
            fault(
                "q",
                Fault::DetachLink {
                    condition: "amqp:link:detach-forced".into()
                }
            )
        );
        assert_eq!(
            parsed(&[
                "ctl",
                "fault",
                "q",
                "drop-connection",
                "amqp:connection:forced"
            ]),
            fault(
                "q",
                Fault::DropConnection {
                    condition: "amqp:connection:forced".into()
                }
            )
        );
        assert_eq!(
            parsed(&["ctl", "fault", "q", "delay", "2s", "--count", "3"]),
            fault(
                "q",
                Fault::Delay {
                    millis: 2_000,
                    count: 3
                }
            )
        );
    }

    #[test]
    fn ctl_errors_say_what_is_wrong() {
        let commands = "purge ENTITY [--dead-letter], reset, clock show, clock advance \
                        DURATION, fault ENTITY server-busy|lock-lost [--count N], fault ENTITY \
                        detach-link|drop-connection CONDITION, fault ENTITY delay DURATION \
                        [--count N]";
        let not_a_duration = "is not a duration: write ISO 8601 (PT2H, PT1H30M) or a number \
                              and unit (90s, 2h, 15m, 500ms)";
        let table: &[(&[&str], String)] = &[
            (&["ctl"], format!("ctl needs a command: {commands}")),
            (
                &["ctl", "purge"],
                format!(r#""ctl purge" is not a command; the commands are {commands}"#),
            ),
            (
                &["ctl", "clock"],
                format!(r#""ctl clock" is not a command; the commands are {commands}"#),
            ),
            (
                &["ctl", "clock", "advance", "soon"],
                format!(r#""soon" {not_a_duration}"#),
            ),
            (
                &["ctl", "clock", "advance", "1.5h"],
                format!(r#""1.5h" {not_a_duration}"#),
            ),
            (
                &["ctl", "fault", "q", "slow"],
                r#""slow" is not a fault: server-busy, lock-lost, detach-link, drop-connection or delay"#.to_owned(),
            ),
            (
                &["ctl", "fault", "q", "lock-lost", "--count", "-1"],
                r#"--count "-1" is not a whole number of at most 4294967295"#.to_owned(),
            ),
            (
                &["ctl", "reset", "--count", "2"],
                "--count goes only with fault".to_owned(),
            ),
            (
                &["ctl", "fault", "q", "lock-lost", "--dead-letter"],
                "--dead-letter goes only with purge".to_owned(),
            ),
            (
                &["ctl", "purge", "q", "--dead-letter", "--dead-letter"],
                "--dead-letter is given more than once".to_owned(),
            ),
            (
                &["ctl", "--admin", "https://localhost:5300", "reset"],
                r#"--admin "https://localhost:5300" is not an http:// URL such as http://127.0.0.1:5300 (busbar ctl speaks plain http, which the admin port serves next to https)"#.to_owned(),
            ),
            (
                &["ctl", "--admin"],
                "--admin needs a value: --admin <URL>".to_owned(),
            ),
            (
                &["ctl", "--key", "RootManageSharedAccessKey", "reset"],
                "--key is not NAME:KEY, such as RootManageSharedAccessKey:SAS_KEY_VALUE".to_owned(),
            ),
            (
                &["ctl", "--key=:secret", "reset"],
                "--key is not NAME:KEY, such as RootManageSharedAccessKey:SAS_KEY_VALUE".to_owned(),
            ),
            (
                &["ctl", "--memory", "reset"],
                r#"unknown argument "--memory""#.to_owned(),
            ),
            (
                &["--memory", "ctl", "reset"],
                r#"unknown argument "ctl""#.to_owned(),
            ),
        ];
        for (args, message) in table {
            assert_eq!(
                parse_args(args).unwrap_err().to_string(),
                *message,
                "{args:?}"
            );
        }
    }
}
