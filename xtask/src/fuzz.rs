//! `cargo xtask fuzz <target> [--seconds N]`: runs a cargo-fuzz target of `fuzz/` for a bounded
//! time, or says how to install what it needs (a nightly toolchain and cargo-fuzz).

use std::path::PathBuf;
use std::process::Command;

/// Fuzz targets defined in `fuzz/Cargo.toml`.
const TARGETS: [&str; 4] = [
    "frame_decoder",
    "message_sections",
    "sql_filter",
    "admin_entry",
];
const DEFAULT_SECONDS: u64 = 60;

/// Parses `<target> [--seconds N]` and runs the target.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let (target, seconds) = parse(args)?;
    if !tool_works(&["+nightly", "--version"]) {
        return Err(
            "no nightly toolchain: install it with `rustup toolchain install nightly --profile minimal`"
                .to_owned(),
        );
    }
    if !tool_works(&["+nightly", "fuzz", "--version"]) {
        return Err("cargo-fuzz is missing: install it with `cargo install cargo-fuzz`".to_owned());
    }
    let fuzz_dir = workspace_root().join("fuzz");
    let max_time = format!("-max_total_time={seconds}");
    eprintln!(
        "$ cargo +nightly fuzz run {target} -- {max_time}   (in {})",
        fuzz_dir.display()
    );
    let status = Command::new("cargo")
        .args(["+nightly", "fuzz", "run", target, "--", &max_time])
        .current_dir(&fuzz_dir)
        // The workspace's target dir would mix nightly sanitizer builds with stable ones.
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "fuzz target {target} failed ({status}); see fuzz/artifacts/{target}/"
        ))
    }
}

fn parse(args: &[String]) -> Result<(&'static str, u64), String> {
    let usage = || {
        format!(
            "usage: cargo xtask fuzz <{}> [--seconds N]",
            TARGETS.join(" | ")
        )
    };
    let name = args.first().ok_or_else(usage)?;
    let target = TARGETS.into_iter().find(|t| t == name).ok_or_else(usage)?;
    let seconds = match &args[1..] {
        [] => DEFAULT_SECONDS,
        [flag, n] if flag == "--seconds" => n.parse().map_err(|_| usage())?,
        _ => return Err(usage()),
    };
    Ok((target, seconds))
}

/// Whether `cargo <args>` runs and exits successfully (rustup answers for `+nightly`).
fn tool_works(args: &[&str]) -> bool {
    Command::new("cargo")
        .args(args)
        .output()
        .is_ok_and(|output| output.status.success())
}

fn workspace_root() -> PathBuf {
    let xtask_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    xtask_dir.parent().map_or(xtask_dir.clone(), PathBuf::from)
}
