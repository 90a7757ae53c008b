//! The `busbar` binary: command line, configuration, logging, the broker runtime, and the
//! `busbar ctl` client of a running broker's controls.

mod active_node;
mod admin;
mod allocator;
mod cli;
mod ctl;
mod gateway;
mod memory_budget;
mod policies;
mod serve;
mod summary;

use std::io::IsTerminal as _;
use std::process::ExitCode;

use busbar_broker::auth::KeyRing;
use busbar_broker::config::{self, Config};
use tracing_subscriber::EnvFilter;

use crate::cli::{Command, CtlOptions, ServeOptions};

/// Exit status for an invalid configuration.
const EXIT_INVALID_CONFIG: u8 = 1;
/// Exit status for a command line that cannot be obeyed.
const EXIT_USAGE: u8 = 2;
/// Exit status when the broker cannot start or fails while serving.
const EXIT_FAILED: u8 = 3;
/// Exit status of `busbar ctl` when the broker refused the command or could not be asked.
const EXIT_CTL_FAILED: u8 = 1;

fn main() -> ExitCode {
    match cli::parse(std::env::args_os().skip(1)) {
        Ok(Command::Help) => {
            println!("{}", cli::USAGE);
            ExitCode::SUCCESS
        }
        Ok(Command::Version) => {
            println!("busbar {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        Ok(Command::Serve(options)) => serve(&options),
        Ok(Command::Ctl(options)) => ctl(&options),
        Ok(Command::GenerateKey(name)) => match policies::generate(&name) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("busbar: {error}");
                ExitCode::from(EXIT_FAILED)
            }
        },
        Err(error) => {
            eprintln!("busbar: {error}\nRun `busbar --help` for usage.");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

fn serve(options: &ServeOptions) -> ExitCode {
    init_logging();
    allocator::purge_in_background();
    let loaded = match &options.config {
        Some(path) => config::load_file(path),
        None => Ok(Config::emulator_default()),
    };
    let mut config = match loaded {
        Ok(config) => config,
        Err(error) => {
            eprintln!("busbar: {error}");
            return ExitCode::from(EXIT_INVALID_CONFIG);
        }
    };
    if let Some(path) = &options.policies {
        match policies::load(path) {
            Ok(keys) => config.keys = KeyRing::new(keys),
            Err(error) => {
                eprintln!("busbar: {error}");
                return ExitCode::from(EXIT_INVALID_CONFIG);
            }
        }
    }
    let listeners = policies::listen_addresses(options);
    if let Err(error) = policies::check_exposure(&config.keys.current(), listeners) {
        eprintln!("busbar: {error}");
        return ExitCode::from(EXIT_USAGE);
    }
    config.memory_budget_bytes = Some(
        options
            .memory_budget
            .unwrap_or_else(memory_budget::default_bytes),
    );
    tracing::info!(
        namespace = %config.namespace.name,
        queues = config.namespace.queues.len(),
        topics = config.namespace.topics.len(),
        "configuration loaded"
    );
    print!("{}", summary::describe(&config, options));
    match serve::serve(&config, options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("busbar: {error}");
            ExitCode::from(EXIT_FAILED)
        }
    }
}

/// `busbar ctl`: prints what the broker did, or why it did not.
fn ctl(options: &CtlOptions) -> ExitCode {
    match ctl::run(options) {
        Ok(done) => {
            println!("{done}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("busbar ctl: {error}");
            ExitCode::from(EXIT_CTL_FAILED)
        }
    }
}

/// Logs to standard error, filtered by `RUST_LOG` (default `info`), coloured only on a terminal.
fn init_logging() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
