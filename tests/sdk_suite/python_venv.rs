//! The Python virtual environment with the pinned official SDK (`tests/python/requirements.txt`),
//! created under the target directory keyed by that file and the interpreter's version. Shared
//! by `python_sdk.rs`, `postgres_e2e.rs` and `browser_explorer.rs` (included with `#[path]`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::sdk_suite::{cache_dir, mark_ready, run, version_of};

/// The interpreter that creates the virtual environment.
const PYTHON: &str = "python3";

/// The virtual environment's interpreter, creating and filling the environment if needed.
pub(crate) fn prepared_environment(requirements: &Path) -> PathBuf {
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
