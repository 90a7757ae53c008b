//! The `busbar` command line: a handful of flags, parsed by hand (they do not justify clap's
//! compile time), with errors that name the offending flag. `busbar ctl …` is the client of a
//! running broker's controls ([`CtlOptions`], carried out by `crate::ctl`).

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use busbar_store_postgres::{DatabaseUrl, UrlError};

use crate::memory_budget;

mod ctl_args;

use ctl_args::{CTL_COMMANDS, parse_ctl};
pub(crate) use ctl_args::{CtlCommand, CtlOptions};

/// The default AMQP listen address (plain AMQP, as the emulator).
pub(crate) const DEFAULT_LISTEN: &str = "127.0.0.1:5672";
/// The default administration API listen address (the emulator's admin port).
pub(crate) const DEFAULT_ADMIN_LISTEN: &str = "127.0.0.1:5300";
/// The default AMQPS listen address (the service's AMQP-over-TLS port).
pub(crate) const DEFAULT_TLS_LISTEN: &str = "127.0.0.1:5671";
/// The default data directory.
pub(crate) const DEFAULT_DATA_DIR: &str = "./busbar-data";
/// The usage text of `--help`.
pub(crate) const USAGE: &str = "\
Usage: busbar [OPTIONS]
       busbar ctl [--admin <URL>] [--key <NAME:KEY>] <COMMAND>
       busbar keys generate [--name <KEY NAME>]

An AMQP 1.0 message broker that speaks the Azure Service Bus dialect, so the official Service
Bus SDKs run against it unchanged (connection string with UseDevelopmentEmulator=true).

Options:
  --config <FILE>        Service Bus emulator Config.json (comments allowed) to load;
                         without it, the emulator's shipped default configuration is used
  --data-dir <DIR>       Where messages are stored [default: ./busbar-data]
  --memory               Keep messages in memory only (nothing survives a restart)
  --storage <URL>        Keep messages in PostgreSQL: postgres://USER[:PASSWORD]@HOST:PORT/DB
                         (password from the URL or PGPASSWORD). Several brokers may share
                         one database: one serves, the others print `standby: waiting for
                         the lease` and take over when it dies. Not with --memory or
                         --data-dir
  --memory-budget <SIZE> Bytes of messages all entities together may hold in memory, e.g.
                         2GiB, 512MB: past it the bytes of the messages last in line stay
                         in the store only, read back when their turn comes (with --memory,
                         sends are refused with amqp:resource-limit-exceeded instead)
                         [default: a quarter of the machine's memory, or of the cgroup's limit]
  --listen <ADDR:PORT>   AMQP listen address [default: 127.0.0.1:5672]
  --tls-listen <ADDR:PORT|none>
                         AMQPS listen address, or none for no separate one
                         [default: 127.0.0.1:5671]
  --admin-listen <ADDR:PORT|none>
                         Administration API listen address, or none for no separate one
                         [default: 127.0.0.1:5300]
                         Every port serves every protocol, told apart by the first bytes:
                         AMQP, AMQP over TLS, the administration API over HTTP and https,
                         and AMQP over WebSockets (GET /$servicebus/websocket)
  --tls-cert <FILE>      The TLS certificate chain (PEM, leaf first)
  --tls-key <FILE>       and its private key (PEM). Both or neither: without them,
                         Busbar creates a development CA and a certificate it signs for
                         localhost, 127.0.0.1 and ::1 in <data-dir>/tls on first start,
                         reuses them afterwards, and prints the line
                         `tls ca: <path of ca.crt>`: trust that file in the client.
                         With --memory or --storage they go to ./busbar-data/tls (nothing else is
                         written there), so the CA trusted once is the same for runs
                         with and without --memory from the same directory
  --policies <FILE>      The namespace's shared-access rules, JSON:
                         {\"SharedAccessPolicies\": [{\"KeyName\", \"PrimaryKey\",
                         \"SecondaryKey\", \"Rights\": [\"Manage\"|\"Send\"|\"Listen\"]}]};
                         a key written \"env:NAME\" is read from the environment. Without
                         it only the emulator's key RootManageSharedAccessKey=SAS_KEY_VALUE
                         is accepted, and only on loopback listeners. SIGHUP re-reads
                         the file (keys rotated without a restart)
  --test-controls        For test suites only: a virtual clock (`busbar ctl clock advance`)
                         and fault injection (`busbar ctl fault`), on the admin port
  -h, --help             Print this help
  -V, --version          Print the version

Logging goes to standard error; filter it with RUST_LOG (e.g. RUST_LOG=busbar=debug).

busbar ctl controls a running broker through its administration API:
  purge <ENTITY> [--dead-letter]
                         Remove every message of a queue, or of a subscription named
                         <topic>/Subscriptions/<subscription>, with its sessions and their
                         state; with --dead-letter, only those of its dead-letter queue
  reset                  Bring the namespace back to its configured entities, no messages
  clock show             The broker's virtual clock (needs --test-controls)
  clock advance <DURATION>
                         Move the virtual clock forward: ISO 8601 (PT2H, PT1H30M) or
                         90s, 2h, 15m, 500ms (needs --test-controls)
  fault <ENTITY> server-busy|lock-lost [--count <N>]
                         Refuse the next N sends to the entity with
                         com.microsoft:server-busy, or answer the next N settlements with
                         lock lost [default N: 1] (needs --test-controls)
  fault <ENTITY> detach-link|drop-connection <CONDITION>
                         Detach one receive link of the entity, or close its connection,
                         with that AMQP condition (needs --test-controls)
  fault <ENTITY> delay <DURATION> [--count <N>]
                         Send the entity's next N answers that late (needs --test-controls)
  --admin <URL>          The administration API, plain http [default: http://127.0.0.1:5300]
  --key <NAME:KEY>       The shared access key that signs the requests
                         [default: RootManageSharedAccessKey:SAS_KEY_VALUE]
It prints what the broker did, e.g. `purged 3 messages from orders`.

busbar keys generate prints a fresh 256-bit key, a policies file with a rule of every right
using it (key name RootManageSharedAccessKey unless --name), and its connection strings.

Exit status: 0 for --help, --version and after a clean shutdown (SIGINT or SIGTERM), 1 for an
invalid configuration, 2 for a usage error, 3 when the broker cannot start or fails. busbar ctl:
0 when the broker did it, 1 when it refused or could not be reached, 2 for a usage error.";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// Run the broker with these options.
    Serve(ServeOptions),
    /// `busbar ctl`: ask a running broker.
    Ctl(CtlOptions),
    /// `busbar keys generate`: print a fresh key for a rule of this key name.
    GenerateKey(String),
    /// Print the usage text.
    Help,
    /// Print the version.
    Version,
}

/// Options of a broker run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServeOptions {
    /// `--config`: the configuration file, or `None` for the built-in default.
    pub(crate) config: Option<PathBuf>,
    /// `--data-dir` or `--memory`.
    pub(crate) storage: StorageChoice,
    /// `--listen`.
    pub(crate) listen: SocketAddr,
    /// `--admin-listen`; `None` when turned off.
    pub(crate) admin_listen: Option<SocketAddr>,
    /// `--tls-listen`; `None` when turned off.
    pub(crate) tls_listen: Option<SocketAddr>,
    /// `--tls-cert` and `--tls-key`; `None` for the development CA.
    pub(crate) tls: Option<TlsFiles>,
    /// `--test-controls`: a virtual clock and fault injection, for test suites.
    pub(crate) test_controls: bool,
    /// `--memory-budget` in bytes; `None` for the default computed from the machine's memory.
    pub(crate) memory_budget: Option<u64>,
    /// `--policies`: the shared-access rules, or `None` for the emulator's key.
    pub(crate) policies: Option<PathBuf>,
}

/// The administration API's own certificate chain and key (`--tls-cert`, `--tls-key`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsFiles {
    /// The certificate chain, PEM, leaf first.
    pub(crate) cert: PathBuf,
    /// The private key, PEM.
    pub(crate) key: PathBuf,
}

/// Where messages are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StorageChoice {
    /// Durable storage in this directory.
    Directory(PathBuf),
    /// In memory only.
    Memory,
    /// In a PostgreSQL database (`--storage`; the URL was checked when parsed).
    Postgres(String),
}

/// A command line that cannot be obeyed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CliError {
    /// An argument that is not a known flag.
    #[error("unknown argument {0:?}")]
    UnknownArgument(String),
    /// A flag that needs a value got none.
    #[error("{flag} needs a value: {flag} {placeholder}")]
    MissingValue {
        /// The flag.
        flag: &'static str,
        /// What the value looks like.
        placeholder: &'static str,
    },
    /// A flag without a value was given one (`--memory=yes`).
    #[error("{0} takes no value")]
    UnexpectedValue(&'static str),
    /// The same flag twice.
    #[error("{0} is given more than once")]
    Repeated(&'static str),
    /// `--listen` is not an address with a port.
    #[error("--listen {0:?} is not an ADDR:PORT such as 127.0.0.1:5672 or [::1]:5672")]
    InvalidListen(String),
    /// `--admin-listen` or `--tls-listen` is neither an address with a port nor `none`.
    #[error("{flag} {value:?} is not an ADDR:PORT such as 127.0.0.1:5300, or none")]
    InvalidOptionalListen {
        /// The flag.
        flag: &'static str,
        /// What it was given.
        value: String,
    },
    /// `--tls-cert` without `--tls-key`, or the reverse.
    #[error("{given} needs {missing} too: give both, or neither for the development CA")]
    TlsHalf {
        /// The flag given.
        given: &'static str,
        /// The flag missing.
        missing: &'static str,
    },
    /// `--storage` is not a usable PostgreSQL URL (the text is not repeated: it may hold a
    /// password).
    #[error("--storage needs a postgres://USER@HOST:PORT/DB URL: {0}")]
    InvalidStorage(UrlError),
    /// `--storage` with `--memory` or `--data-dir`.
    #[error("--storage cannot be combined with {0}: each names where messages are kept")]
    StorageCombined(&'static str),
    /// `--memory-budget` is not a size.
    #[error("--memory-budget {0:?} is not a size such as 2GiB, 512MB or 1073741824")]
    InvalidMemoryBudget(String),
    /// `--memory` and `--data-dir` together.
    #[error("--memory and --data-dir cannot be combined: --memory keeps no data directory")]
    MemoryWithDataDir,
    /// An argument that is not valid UTF-8 where text is needed.
    #[error("{0} is not valid UTF-8")]
    NotUnicode(String),
    /// `busbar ctl` without a command.
    #[error("ctl needs a command: {CTL_COMMANDS}")]
    MissingCtlCommand,
    /// `busbar ctl` words that are no command.
    #[error("\"ctl {0}\" is not a command; the commands are {CTL_COMMANDS}")]
    UnknownCtlCommand(String),
    /// `--admin` is not an `http://` URL.
    #[error(
        "--admin {0:?} is not an http:// URL such as http://127.0.0.1:5300 (busbar ctl speaks \
         plain http, which the admin port serves next to https)"
    )]
    InvalidAdmin(String),
    /// `--key` is not `NAME:KEY` (the text is not repeated: it holds a secret).
    #[error("--key is not NAME:KEY, such as RootManageSharedAccessKey:SAS_KEY_VALUE")]
    InvalidKey,
    /// `--count` is not a whole number.
    #[error("--count {0:?} is not a whole number of at most 4294967295")]
    InvalidCount(String),
    /// `clock advance` got no duration it understands.
    #[error(
        "{0:?} is not a duration: write ISO 8601 (PT2H, PT1H30M) or a number and unit \
         (90s, 2h, 15m, 500ms)"
    )]
    InvalidDuration(String),
    /// A fault that does not exist.
    #[error("{0:?} is not a fault: server-busy, lock-lost, detach-link, drop-connection or delay")]
    UnknownFault(String),
    /// A ctl flag given to a command that does not take it.
    #[error("{flag} goes only with {command}")]
    FlagNotFor {
        /// The flag.
        flag: &'static str,
        /// The command that takes it.
        command: &'static str,
    },
}

/// Parses the arguments after the program name. `--help` and `--version` win as soon as they
/// are seen; `--flag value` and `--flag=value` are both accepted.
pub(crate) fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, CliError> {
    let mut args = args.into_iter().peekable();
    if args
        .next_if(|first| first.to_str() == Some("ctl"))
        .is_some()
    {
        return parse_ctl(args);
    }
    if args
        .next_if(|first| first.to_str() == Some("keys"))
        .is_some()
    {
        return parse_keys(args);
    }
    let mut config: Option<PathBuf> = None;
    let mut policies: Option<PathBuf> = None;
    let mut data_dir: Option<PathBuf> = None;
    let mut memory = false;
    let mut storage_url: Option<String> = None;
    let mut test_controls = false;
    let mut listen: Option<SocketAddr> = None;
    let mut admin_listen: Option<Option<SocketAddr>> = None;
    let mut tls_listen: Option<Option<SocketAddr>> = None;
    let mut tls_cert: Option<PathBuf> = None;
    let mut tls_key: Option<PathBuf> = None;
    let mut memory_budget: Option<u64> = None;
    while let Some(arg) = args.next() {
        let text = arg
            .to_str()
            .ok_or_else(|| CliError::NotUnicode(arg.to_string_lossy().into_owned()))?;
        let (name, inline_value) = match text.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(OsString::from(value))),
            _ => (text, None),
        };
        let mut value = |flag: &'static str, placeholder: &'static str| {
            inline_value
                .clone()
                .or_else(|| {
                    args.next()
                        .filter(|next| !next.to_string_lossy().starts_with("--"))
                })
                .filter(|value| !value.is_empty())
                .ok_or(CliError::MissingValue { flag, placeholder })
        };
        match name {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--config" => set_once(
                &mut config,
                "--config",
                PathBuf::from(value("--config", "<FILE>")?),
            )?,
            "--policies" => set_once(
                &mut policies,
                "--policies",
                PathBuf::from(value("--policies", "<FILE>")?),
            )?,
            "--data-dir" => set_once(
                &mut data_dir,
                "--data-dir",
                PathBuf::from(value("--data-dir", "<DIR>")?),
            )?,
            "--storage" => {
                let text = value("--storage", "<URL>")?;
                let text = text.to_string_lossy().into_owned();
                DatabaseUrl::parse(&text).map_err(CliError::InvalidStorage)?;
                set_once(&mut storage_url, "--storage", text)?;
            }
            "--tls-cert" => set_once(
                &mut tls_cert,
                "--tls-cert",
                PathBuf::from(value("--tls-cert", "<FILE>")?),
            )?,
            "--tls-key" => set_once(
                &mut tls_key,
                "--tls-key",
                PathBuf::from(value("--tls-key", "<FILE>")?),
            )?,
            "--admin-listen" => {
                let text = value("--admin-listen", "<ADDR:PORT|none>")?;
                let address = parse_optional_listen("--admin-listen", &text.to_string_lossy())?;
                set_once(&mut admin_listen, "--admin-listen", address)?;
            }
            "--tls-listen" => {
                let text = value("--tls-listen", "<ADDR:PORT|none>")?;
                let address = parse_optional_listen("--tls-listen", &text.to_string_lossy())?;
                set_once(&mut tls_listen, "--tls-listen", address)?;
            }
            "--listen" => {
                let text = value("--listen", "<ADDR:PORT>")?;
                let address = parse_listen(&text.to_string_lossy())?;
                set_once(&mut listen, "--listen", address)?;
            }
            "--memory-budget" => {
                let text = value("--memory-budget", "<SIZE>")?;
                let text = text.to_string_lossy();
                let bytes = memory_budget::parse_size(&text)
                    .ok_or_else(|| CliError::InvalidMemoryBudget(text.into_owned()))?;
                set_once(&mut memory_budget, "--memory-budget", bytes)?;
            }
            "--memory" if inline_value.is_some() => {
                return Err(CliError::UnexpectedValue("--memory"));
            }
            "--memory" if memory => return Err(CliError::Repeated("--memory")),
            "--memory" => memory = true,
            "--test-controls" if inline_value.is_some() => {
                return Err(CliError::UnexpectedValue("--test-controls"));
            }
            "--test-controls" => test_controls = true,
            _ => return Err(CliError::UnknownArgument(text.to_owned())),
        }
    }
    let storage = match (memory, data_dir, storage_url) {
        (true, Some(_), _) => return Err(CliError::MemoryWithDataDir),
        (true, None, Some(_)) => return Err(CliError::StorageCombined("--memory")),
        (false, Some(_), Some(_)) => return Err(CliError::StorageCombined("--data-dir")),
        (false, None, Some(url)) => StorageChoice::Postgres(url),
        (true, None, None) => StorageChoice::Memory,
        (false, dir, None) => {
            StorageChoice::Directory(dir.unwrap_or_else(|| PathBuf::from(DEFAULT_DATA_DIR)))
        }
    };
    let listen = match listen {
        Some(address) => address,
        None => parse_listen(DEFAULT_LISTEN)?,
    };
    let admin_listen = match admin_listen {
        Some(address) => address,
        None => Some(parse_listen(DEFAULT_ADMIN_LISTEN)?),
    };
    let tls_listen = match tls_listen {
        Some(address) => address,
        None => Some(parse_listen(DEFAULT_TLS_LISTEN)?),
    };
    let tls = match (tls_cert, tls_key) {
        (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
        (None, None) => None,
        (Some(_), None) => {
            return Err(CliError::TlsHalf {
                given: "--tls-cert",
                missing: "--tls-key",
            });
        }
        (None, Some(_)) => {
            return Err(CliError::TlsHalf {
                given: "--tls-key",
                missing: "--tls-cert",
            });
        }
    };
    Ok(Command::Serve(ServeOptions {
        config,
        storage,
        listen,
        admin_listen,
        tls_listen,
        tls,
        test_controls,
        memory_budget,
        policies,
    }))
}

/// `keys generate [--name NAME]`.
fn parse_keys(args: impl Iterator<Item = OsString>) -> Result<Command, CliError> {
    let args: Vec<String> = args.map(|arg| arg.to_string_lossy().into_owned()).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["generate"] => Ok(Command::GenerateKey(
            busbar_broker::auth::DEFAULT_KEY_NAME.to_owned(),
        )),
        ["generate", "--name", name] if !name.is_empty() => {
            Ok(Command::GenerateKey((*name).to_owned()))
        }
        _ => Err(CliError::UnknownArgument(format!(
            "keys {}",
            args.join(" ")
        ))),
    }
}

/// An address with a port, or `none`.
fn parse_optional_listen(flag: &'static str, text: &str) -> Result<Option<SocketAddr>, CliError> {
    if text == "none" {
        return Ok(None);
    }
    parse_listen(text)
        .map(Some)
        .map_err(|_| CliError::InvalidOptionalListen {
            flag,
            value: text.to_owned(),
        })
}

fn set_once<T>(slot: &mut Option<T>, flag: &'static str, value: T) -> Result<(), CliError> {
    if slot.replace(value).is_some() {
        return Err(CliError::Repeated(flag));
    }
    Ok(())
}

/// An IP address and port; `localhost:PORT` means the IPv4 loopback, as in the connection string.
fn parse_listen(text: &str) -> Result<SocketAddr, CliError> {
    let invalid = || CliError::InvalidListen(text.to_owned());
    match text.strip_prefix("localhost:") {
        Some(port) => Ok(SocketAddr::from((
            [127, 0, 0, 1],
            port.parse().map_err(|_| invalid())?,
        ))),
        None => text.parse().map_err(|_| invalid()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Command, CliError> {
        parse(args.iter().map(OsString::from))
    }

    fn serve(config: Option<&str>, storage: StorageChoice, listen: &str) -> Command {
        Command::Serve(ServeOptions {
            config: config.map(PathBuf::from),
            storage,
            listen: listen.parse().unwrap(),
            admin_listen: Some(DEFAULT_ADMIN_LISTEN.parse().unwrap()),
            tls_listen: Some(DEFAULT_TLS_LISTEN.parse().unwrap()),
            tls: None,
            test_controls: false,
            memory_budget: None,
            policies: None,
        })
    }

    fn default_dir() -> StorageChoice {
        StorageChoice::Directory(PathBuf::from(DEFAULT_DATA_DIR))
    }

    #[test]
    fn no_arguments_serve_the_defaults() {
        assert_eq!(
            parse_args(&[]),
            Ok(serve(None, default_dir(), "127.0.0.1:5672"))
        );
    }

    #[test]
    fn the_amqps_listener_moves_or_is_turned_off() {
        let Ok(Command::Serve(moved)) = parse_args(&["--tls-listen", "127.0.0.1:0"]) else {
            panic!("not a serve command");
        };
        assert_eq!(moved.tls_listen, Some("127.0.0.1:0".parse().unwrap()));
        let Ok(Command::Serve(off)) = parse_args(&["--tls-listen=none"]) else {
            panic!("not a serve command");
        };
        assert_eq!(off.tls_listen, None);
        assert_eq!(
            parse_args(&["--tls-listen", "5671"]),
            Err(CliError::InvalidOptionalListen {
                flag: "--tls-listen",
                value: "5671".into()
            })
        );
    }

    #[test]
    fn test_controls_are_off_unless_asked_for() {
        let Ok(Command::Serve(on)) = parse_args(&["--test-controls"]) else {
            panic!("not a serve command");
        };
        assert!(on.test_controls);
        assert_eq!(
            parse_args(&["--test-controls=yes"]),
            Err(CliError::UnexpectedValue("--test-controls"))
        );
    }

    #[test]
    fn the_memory_budget_is_a_size() {
        let Ok(Command::Serve(options)) = parse_args(&["--memory-budget", "2GiB"]) else {
            panic!("not a serve command");
        };
        assert_eq!(options.memory_budget, Some(2 << 30));
        assert_eq!(
            parse_args(&["--memory-budget=lots"])
                .unwrap_err()
                .to_string(),
            r#"--memory-budget "lots" is not a size such as 2GiB, 512MB or 1073741824"#
        );
        assert_eq!(
            parse_args(&["--memory-budget", "1MB", "--memory-budget", "2MB"]),
            Err(CliError::Repeated("--memory-budget"))
        );
    }

    #[test]
    fn the_admin_listener_moves_or_is_turned_off() {
        let Ok(Command::Serve(moved)) = parse_args(&["--admin-listen", "localhost:0"]) else {
            panic!("not a serve command");
        };
        assert_eq!(moved.admin_listen, Some("127.0.0.1:0".parse().unwrap()));
        let Ok(Command::Serve(off)) = parse_args(&["--admin-listen=none"]) else {
            panic!("not a serve command");
        };
        assert_eq!(off.admin_listen, None);
        assert_eq!(
            parse_args(&["--admin-listen", "nowhere"]),
            Err(CliError::InvalidOptionalListen {
                flag: "--admin-listen",
                value: "nowhere".into()
            })
        );
    }

    #[test]
    fn the_admin_certificate_and_key_come_together() {
        let expected = Some(TlsFiles {
            cert: PathBuf::from("/etc/busbar/admin.crt"),
            key: PathBuf::from("/etc/busbar/admin.key"),
        });
        for args in [
            &[
                "--tls-cert",
                "/etc/busbar/admin.crt",
                "--tls-key",
                "/etc/busbar/admin.key",
            ][..],
            &[
                "--tls-key=/etc/busbar/admin.key",
                "--tls-cert=/etc/busbar/admin.crt",
            ],
        ] {
            let Ok(Command::Serve(options)) = parse_args(args) else {
                panic!("not a serve command: {args:?}");
            };
            assert_eq!(options.tls, expected, "{args:?}");
        }
    }

    #[test]
    fn every_flag_in_both_spellings() {
        let expected = serve(
            Some("/etc/busbar/Config.json"),
            StorageChoice::Directory(PathBuf::from("/var/lib/busbar")),
            "0.0.0.0:5673",
        );
        let separate = [
            "--config",
            "/etc/busbar/Config.json",
            "--data-dir",
            "/var/lib/busbar",
            "--listen",
            "0.0.0.0:5673",
        ];
        assert_eq!(parse_args(&separate), Ok(expected.clone()));
        let inline = [
            "--listen=0.0.0.0:5673",
            "--data-dir=/var/lib/busbar",
            "--config=/etc/busbar/Config.json",
        ];
        assert_eq!(parse_args(&inline), Ok(expected));
        assert_eq!(
            parse_args(&["--memory"]),
            Ok(serve(None, StorageChoice::Memory, "127.0.0.1:5672"))
        );
        let url = "postgres://busbar@db.example:5432/broker";
        for args in [&["--storage", url][..], &[&format!("--storage={url}")]] {
            assert_eq!(
                parse_args(args),
                Ok(serve(
                    None,
                    StorageChoice::Postgres(url.to_owned()),
                    "127.0.0.1:5672"
                ))
            );
        }
        assert_eq!(
            parse_args(&["--listen", "[::1]:5672"]),
            Ok(serve(None, default_dir(), "[::1]:5672"))
        );
        assert_eq!(
            parse_args(&["--listen", "localhost:6000"]),
            Ok(serve(None, default_dir(), "127.0.0.1:6000"))
        );
    }

    #[test]
    fn help_and_version_win() {
        assert_eq!(parse_args(&["--help"]), Ok(Command::Help));
        assert_eq!(parse_args(&["-h", "--bogus"]), Ok(Command::Help));
        assert_eq!(parse_args(&["--memory", "--version"]), Ok(Command::Version));
        assert_eq!(parse_args(&["-V"]), Ok(Command::Version));
    }

    #[test]
    fn errors_name_the_flag() {
        let table: &[(&[&str], &str)] = &[
            (&["--bogus"], r#"unknown argument "--bogus""#),
            (&["config.json"], r#"unknown argument "config.json""#),
            (&["--config"], "--config needs a value: --config <FILE>"),
            (
                &["--config", "--memory"],
                "--config needs a value: --config <FILE>",
            ),
            (&["--config="], "--config needs a value: --config <FILE>"),
            (
                &["--data-dir"],
                "--data-dir needs a value: --data-dir <DIR>",
            ),
            (
                &["--listen"],
                "--listen needs a value: --listen <ADDR:PORT>",
            ),
            (
                &["--listen", "5672"],
                r#"--listen "5672" is not an ADDR:PORT such as 127.0.0.1:5672 or [::1]:5672"#,
            ),
            (
                &["--listen", "localhost:x"],
                r#"--listen "localhost:x" is not an ADDR:PORT such as 127.0.0.1:5672 or [::1]:5672"#,
            ),
            (
                &["--listen=example.com:5672"],
                r#"--listen "example.com:5672" is not an ADDR:PORT such as 127.0.0.1:5672 or [::1]:5672"#,
            ),
            (
                &["--config", "a", "--config", "b"],
                "--config is given more than once",
            ),
            (
                &["--memory", "--memory"],
                "--memory is given more than once",
            ),
            (&["--memory=yes"], "--memory takes no value"),
            (
                &["--tls-cert", "a.crt"],
                "--tls-cert needs --tls-key too: give both, or neither for the development CA",
            ),
            (
                &["--tls-key=a.key", "--memory"],
                "--tls-key needs --tls-cert too: give both, or neither for the development CA",
            ),
            (
                &["--tls-cert", "--tls-key", "a.key"],
                "--tls-cert needs a value: --tls-cert <FILE>",
            ),
            (
                &["--tls-key", "a", "--tls-key", "b", "--tls-cert", "c"],
                "--tls-key is given more than once",
            ),
            (
                &["--memory", "--data-dir", "d"],
                "--memory and --data-dir cannot be combined: --memory keeps no data directory",
            ),
            (
                &["--storage", "postgres://u@h/d", "--memory"],
                "--storage cannot be combined with --memory: each names where messages are kept",
            ),
            (
                &["--data-dir", "d", "--storage", "postgres://u@h/d"],
                "--storage cannot be combined with --data-dir: each names where messages are kept",
            ),
            (
                &["--storage", "mysql://u:secret@h/d"],
                "--storage needs a postgres://USER@HOST:PORT/DB URL: not a postgres:// URL",
            ),
            (
                &["--storage", "postgres://h/d"],
                "--storage needs a postgres://USER@HOST:PORT/DB URL: the URL names no user: \
                 write postgres://USER@HOST:PORT/DB",
            ),
            (&["--storage"], "--storage needs a value: --storage <URL>"),
        ];
        for (args, message) in table {
            assert_eq!(
                parse_args(args).unwrap_err().to_string(),
                *message,
                "{args:?}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn non_unicode_arguments_are_refused() {
        use std::os::unix::ffi::OsStringExt;
        let arg = OsString::from_vec(vec![b'-', b'-', 0xff]);
        assert!(matches!(parse([arg]), Err(CliError::NotUnicode(_))));
    }
}
