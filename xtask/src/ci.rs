//! `cargo xtask ci`: every check CI runs, in the order that fails fastest.

use crate::cargo;
use std::process::Command;

/// Crates that must stay sans-IO: no async runtime or IO crate among their normal dependencies.
const SANS_IO_CRATES: &[&str] = &["busbar-core", "busbar-sessions"];
const IO_CRATES: &[&str] = &["tokio", "mio", "async-std", "smol", "socket2"];

pub(crate) fn run() -> Result<(), String> {
    cargo(&["fmt", "--all", "--check"], &[])?;
    crate::packages::openssl_headers()?;
    let servers = crate::packages::prefetch_test_servers();
    boundary_check()?;
    cargo(
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
        &[],
    )?;
    // `--all-targets` runs criterion benches once each in test mode, sharing the test build.
    let runner: &[&str] = if nextest_available() {
        &["nextest", "run"]
    } else {
        &["test"]
    };
    let all_targets = [runner, &["--workspace", "--all-targets", "--no-fail-fast"]].concat();
    // Built first, so that the packages being installed meanwhile are there when tests start.
    let build = ["test", "--workspace", "--all-targets", "--no-run"];
    cargo(&build, &[])?;
    if let Some(installing) = servers {
        let _ = installing.join();
    }
    cargo(&all_targets, &[])?;
    crate::crash::ci()?;
    crate::kits::ci()?;
    cargo(&["test", "--workspace", "--doc"], &[])?;
    cargo(
        &["doc", "--workspace", "--no-deps"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    eprintln!("xtask ci: all checks passed");
    Ok(())
}

/// Crates with loom models (their cross-thread pieces sit behind a `sync` facade). Only these are
/// built with `--cfg loom`: other dependencies (tokio, fe2o3-amqp) do not build under it.
const LOOM_CRATES: &[&str] = &["busbar-sessions", "busbar-store"];

pub(crate) fn loom() -> Result<(), String> {
    let mut args = vec!["test", "--lib", "--release"];
    for krate in LOOM_CRATES {
        args.extend(["-p", krate]);
    }
    args.push("loom");
    cargo(
        &args,
        &[
            ("RUSTFLAGS", "--cfg loom"),
            ("CARGO_TARGET_DIR", "target/loom"),
        ],
    )
}

fn nextest_available() -> bool {
    Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|out| out.status.success())
}

/// The sans-IO crates must not pull in an async runtime or IO crate as a normal dependency.
fn boundary_check() -> Result<(), String> {
    for krate in SANS_IO_CRATES {
        eprintln!("$ cargo tree -p {krate} -e normal");
        let out = Command::new("cargo")
            .args(["tree", "-p", krate, "-e", "normal", "--prefix", "none"])
            .output()
            .map_err(|e| format!("cannot run cargo tree: {e}"))?;
        if !out.status.success() {
            return Err(format!("cargo tree -p {krate} failed"));
        }
        let tree = String::from_utf8_lossy(&out.stdout);
        for line in tree.lines() {
            let name = line.split_whitespace().next().unwrap_or_default();
            if IO_CRATES.contains(&name) {
                return Err(format!("{krate} must stay sans-IO but depends on {name}"));
            }
        }
    }
    Ok(())
}
