//! What the official-SDK suites (`python_sdk.rs`, `js_sdk.rs`, `go_sdk.rs`) share: a dependency
//! cache under the target directory that is only trusted once fully installed, running a command
//! that must succeed, a tool's version, and a guard that kills a suite which outlives its time
//! limit.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// How often the guard looks at the running suite.
const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// Written into a cache directory once everything is installed, so an interrupted
/// installation is redone rather than trusted.
const READY_MARKER: &str = "busbar-ready";

/// A directory under the target directory keyed by `key_parts`: returns it and whether it is
/// already complete. An incomplete one (no ready marker) is removed first.
pub(crate) fn cache_dir(prefix: &str, key_parts: &[&[u8]]) -> (PathBuf, bool) {
    let key = fnv1a(&key_parts.concat());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{prefix}-{key:016x}"));
    if dir.join(READY_MARKER).is_file() {
        return (dir, true);
    }
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap_or_else(|error| {
            panic!("cannot remove the incomplete {}: {error}", dir.display())
        });
    }
    (dir, false)
}

/// Marks a directory from [`cache_dir`] as complete.
pub(crate) fn mark_ready(dir: &Path) {
    fs::write(dir.join(READY_MARKER), b"")
        .unwrap_or_else(|error| panic!("cannot write to {}: {error}", dir.display()));
}

/// Runs `command`, failing the test with `what` if it cannot start or does not succeed.
pub(crate) fn run(command: &mut Command, what: &str) {
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("cannot run {what}: {error}"));
    assert!(status.success(), "{what} failed ({status})");
}

/// The version line `program --version` prints, or `program version` for tools whose version is
/// a subcommand (Go), or a failure that says what to install.
pub(crate) fn version_of(program: &str, needed_for: &str) -> String {
    let version_output = |argument: &str| {
        Command::new(program)
            .arg(argument)
            .output()
            .unwrap_or_else(|error| {
                panic!("{program} is needed to run {needed_for} but cannot be started: {error}")
            })
    };
    let mut output = version_output("--version");
    if !output.status.success() {
        output = version_output("version");
    }
    assert!(
        output.status.success(),
        "neither `{program} --version` nor `{program} version` works ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    // Older Python interpreters print the version on stderr.
    let mut version = String::from_utf8_lossy(&output.stdout).into_owned();
    version.push_str(&String::from_utf8_lossy(&output.stderr));
    version
}

/// Waits for `child`, killing it if it outlives `limit`.
pub(crate) fn wait_with_guard(mut child: Child, limit: Duration, suite: &str) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL_INTERVAL),
            Ok(None) => {
                // Killing may race with a natural exit; either way the suite is over.
                let _ = child.kill();
                let _ = child.wait();
                panic!("the {suite} did not finish within {limit:?}");
            }
            Err(error) => panic!("cannot wait for the {suite}: {error}"),
        }
    }
}

/// FNV-1a, 64 bits: a stable cache key (std's hasher may change between Rust releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    })
}
