//! `cargo xtask crash`: builds `busbar` and `busbar-bench` (release unless `--debug`) and runs
//! the crash campaign (`busbar-bench crash`) on file storage in a fresh temporary directory,
//! removed when the campaign passes and kept for inspection when it fails.

use std::path::PathBuf;
use std::process::Command;

use crate::bench::workspace_root;
use crate::cargo;

const USAGE: &str = "usage: cargo xtask crash [--rounds N] [--seed S] [--max-ms M] [--debug]";

/// Rounds of CI's short campaign (debug build, a few seconds each).
const CI_ROUNDS: &str = "3";

/// CI's short campaign on the debug build: the same targets as the test step, so cargo reuses
/// its build (with the dev-dependencies' features) and only links the binaries.
pub(crate) fn ci() -> Result<(), String> {
    cargo(&["build", "--workspace", "--all-targets"], &[])?;
    campaign("debug", &["--rounds".to_owned(), CI_ROUNDS.to_owned()])
}

/// Runs `cargo xtask crash`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut debug = false;
    let mut forwarded: Vec<String> = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--debug" => debug = true,
            "--rounds" | "--seed" | "--max-ms" => {
                let value = args.next().ok_or(format!("{arg} needs a value\n{USAGE}"))?;
                forwarded.extend([arg.clone(), value.clone()]);
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    let profile = if debug { "debug" } else { "release" };
    let mut build = vec!["build", "-p", "busbar", "-p", "busbar-bench"];
    if !debug {
        build.push("--release");
    }
    cargo(&build, &[])?;
    campaign(profile, &forwarded)
}

/// Runs `busbar-bench crash` with the binaries of `profile` in a fresh temporary directory.
fn campaign(profile: &str, forwarded: &[String]) -> Result<(), String> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or(workspace_root().join("target"), PathBuf::from)
        .join(profile);
    let dir = std::env::temp_dir().join(format!("busbar-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let status = Command::new(target.join("busbar-bench"))
        .arg("crash")
        .arg("--busbar")
        .arg(target.join("busbar"))
        .arg("--dir")
        .arg(&dir)
        .args(forwarded)
        .status()
        .map_err(|e| format!("cannot run busbar-bench: {e}"))?;
    if status.success() {
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    } else {
        Err(format!(
            "the crash campaign failed ({status}); the data directory and the broker's log are in {}",
            dir.display()
        ))
    }
}
