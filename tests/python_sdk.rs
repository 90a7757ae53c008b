//! Runs the official Python SDK (`azure-servicebus`) end-to-end suite in `tests/python` against
//! the real `busbar` binary.
//!
//! The first run creates a virtual environment under the target directory, keyed by a hash of
//! `tests/python/requirements.txt` and the interpreter's version, and installs the pinned
//! packages into it; later runs reuse it. pytest's output goes straight to this process's
//! stdout and stderr so its closing line ("N passed …") shows in the CI log.

mod sdk_suite;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sdk_suite::{cache_dir, mark_ready, run, version_of, wait_with_guard};

/// The interpreter that creates the virtual environment.
const PYTHON: &str = "python3";
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

/// The virtual environment's interpreter, creating and filling the environment if needed.
fn prepared_environment(requirements: &Path) -> PathBuf {
    let pinned = fs::read(requirements)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", requirements.display()));
    let version = version_of(
        PYTHON,
        "the Python SDK end-to-end tests (tests/python); install Python 3.9 or later with venv",
    );
    let (venv, ready) = cache_dir("python-venv", &[&pinned, version.as_bytes()]);
    let python = interpreter_in(&venv);
    if ready {
        return python;
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
    mark_ready(&venv);
    python
}

fn interpreter_in(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}
