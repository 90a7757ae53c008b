//! Runs the official Python SDK (`azure-servicebus`) end-to-end suite in `tests/python` against
//! the real `busbar` binary.
//!
//! The first run creates a virtual environment under the target directory, keyed by a hash of
//! `tests/python/requirements.txt` and the interpreter's version, and installs the pinned
//! packages into it; later runs reuse it. pytest's output goes straight to this process's
//! stdout and stderr so its closing line ("N passed …") shows in the CI log.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// The interpreter that creates the virtual environment.
const PYTHON: &str = "python3";
/// A guard against a hung broker or client: the suite itself takes about two minutes.
const SUITE_TIMEOUT: Duration = Duration::from_secs(15 * 60);
/// How often the guard looks at the running suite.
const POLL_INTERVAL: Duration = Duration::from_millis(200);
/// Written into the environment once every package is installed, so an interrupted
/// installation is redone rather than trusted.
const READY_MARKER: &str = "busbar-ready";

#[test]
fn python_sdk_suite_passes_against_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join("tests").join("python");
    let requirements = suite.join("requirements.txt");
    let python = prepared_environment(&requirements);

    let child = Command::new(&python)
        .args(["-m", "pytest", "tests/python", "-q"])
        .current_dir(root)
        .env("BUSBAR_BIN", env!("CARGO_BIN_EXE_busbar"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", python.display()));
    let status = wait_with_guard(child, SUITE_TIMEOUT);
    assert!(
        status.success(),
        "the Python SDK suite failed ({status}); pytest's report is above"
    );
}

/// The virtual environment's interpreter, creating and filling the environment if needed.
fn prepared_environment(requirements: &Path) -> PathBuf {
    let pinned = fs::read(requirements)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", requirements.display()));
    let version = python_version();
    let key = fnv1a(&[pinned.as_slice(), version.as_bytes()].concat());
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("python-venv-{key:016x}"));
    let python = interpreter_in(&venv);
    if venv.join(READY_MARKER).is_file() {
        return python;
    }
    if venv.exists() {
        fs::remove_dir_all(&venv).unwrap_or_else(|error| {
            panic!("cannot remove the incomplete {}: {error}", venv.display())
        });
    }
    run(
        Command::new(PYTHON).arg("-m").arg("venv").arg(&venv),
        "python3 -m venv",
    );
    run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "-q",
                "-r",
            ])
            .arg(requirements),
        "pip install -r tests/python/requirements.txt",
    );
    fs::write(venv.join(READY_MARKER), &pinned)
        .unwrap_or_else(|error| panic!("cannot write to {}: {error}", venv.display()));
    python
}

/// `python3 --version`, or a clear failure when there is no Python 3.
fn python_version() -> String {
    let output = Command::new(PYTHON)
        .arg("--version")
        .output()
        .unwrap_or_else(|error| {
            panic!(
                "{PYTHON} is needed to run the Python SDK end-to-end tests (tests/python) but \
                 cannot be started: {error}. Install Python 3.9 or later with the venv module."
            )
        });
    assert!(
        output.status.success(),
        "`{PYTHON} --version` failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    // Older interpreters print the version on stderr.
    let mut version = String::from_utf8_lossy(&output.stdout).into_owned();
    version.push_str(&String::from_utf8_lossy(&output.stderr));
    version
}

fn interpreter_in(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

fn run(command: &mut Command, what: &str) {
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("cannot run {what}: {error}"));
    assert!(status.success(), "{what} failed ({status})");
}

/// Waits for `child`, killing it if it outlives `limit`.
fn wait_with_guard(mut child: Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL_INTERVAL),
            Ok(None) => {
                // Killing may race with a natural exit; either way the suite is over.
                let _ = child.kill();
                let _ = child.wait();
                panic!("the Python SDK suite did not finish within {limit:?}");
            }
            Err(error) => panic!("cannot wait for pytest: {error}"),
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
