//! `cargo xtask`: the single front door for developer tasks (what CI runs, loom, fuzzing,
//! benchmarks, packages).

use std::process::{Command, ExitCode};

mod bench;
mod ci;
mod crash;
mod dist;
mod fuzz;
mod kits;
mod packages;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::run(),
        Some("loom") => ci::loom(),
        Some("fuzz") => fuzz::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("crash") => crash::run(&args[1..]),
        Some("dist") => dist::run(&args[1..]),
        Some("kits") => kits::ci(),
        _ => {
            eprintln!("usage: cargo xtask <ci | loom | fuzz | bench | crash | dist | kits>");
            eprintln!(
                "  ci    fmt, clippy -D warnings, tests (benches in test mode), docs, boundary checks"
            );
            eprintln!("  loom  the loom model-checking tests (RUSTFLAGS=--cfg loom)");
            eprintln!("  fuzz  <target> [--seconds N]: a cargo-fuzz target of fuzz/ (nightly)");
            eprintln!(
                "  bench [--quick] [--matrix] [--peer rabbitmq|rabbitmq4|artemis]… [--baseline BINARY] \
                 [--storage memory|file|both|none] [--rounds N]: load scenarios or the comparison matrix"
            );
            eprintln!(
                "  crash [--rounds N] [--seed S] [--max-ms M] [--debug]: SIGKILL the broker under load \
                 N times, each restart checked against what the client knows"
            );
            eprintln!(
                "  dist  [--binary PATH] [--out DIR] [--maven-repo DIR]: the packages carrying the binary (release \
                 build unless --binary), into target/dist"
            );
            eprintln!(
                "  kits  each package installed from its file into a fresh project, its test kit's \
                 suite run there (needs the debug binary: cargo build)"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `cargo` with the given arguments and extra environment, failing on a non-zero exit.
pub(crate) fn cargo(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("$ cargo {}", args.join(" "));
    let status = Command::new(cargo)
        .args(args)
        .envs(env.iter().copied())
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo {}` failed ({status})", args.join(" ")))
    }
}
