//! Runs the official Python SDK (`azure-servicebus`) end-to-end suite in `tests/python` against
//! the real `busbar` binary.
//!
//! The first run creates a virtual environment under the target directory (see
//! `sdk_suite/python_venv.rs`); later runs reuse it. pytest's output goes straight to this process's
//! stdout and stderr so its closing line ("N passed …") shows in the CI log.

#[path = "sdk_suite/python_venv.rs"]
mod python_venv;
mod sdk_suite;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use python_venv::prepared_environment;
use sdk_suite::wait_with_guard;

/// A guard against a hung broker or client: the suite itself takes about two minutes.
const SUITE_TIMEOUT: Duration = Duration::from_secs(15 * 60);

#[test]
fn python_sdk_suite_passes_against_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let requirements = root.join("tests").join("python").join("requirements.txt");
    let python = prepared_environment(&requirements);

    let child = Command::new(&python)
        .args(["-m", "pytest", "tests/python", "-q"])
        .current_dir(root)
        .env("BUSBAR_BIN", env!("CARGO_BIN_EXE_busbar"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", python.display()));
    let status = wait_with_guard(child, SUITE_TIMEOUT, "Python SDK suite");
    assert!(
        status.success(),
        "the Python SDK suite failed ({status}); pytest's report is above"
    );
}
