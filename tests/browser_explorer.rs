//! Runs the web explorer's browser suite in `tests/browser` against the real `busbar` binary:
//! Playwright (`playwright-core`, pinned by `tests/browser/package-lock.json`) drives Debian's
//! Chromium headless with Node's built-in test runner, and the official Python SDK (the
//! `tests/python` virtual environment) sends and dead-letters the messages the pages show.
//!
//! Chromium is installed with `apt-get` when `/usr/bin/chromium` is missing (CI runs as root);
//! the npm packages go to a cache under the target directory like the JavaScript suite's.
//! With `BUSBAR_SCREENSHOTS=DIR` the suite also saves the main pages there as PNG
//! (`docs/screenshots/` holds the ones shown in the README).

#[path = "sdk_suite/npm.rs"]
mod npm;
#[path = "sdk_suite/python_venv.rs"]
mod python_venv;
mod sdk_suite;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use npm::{installed_packages, node_test};
use python_venv::prepared_environment;
use sdk_suite::{run, wait_with_guard};

/// Debian's Chromium.
const CHROMIUM: &str = "/usr/bin/chromium";
/// A guard against a hung broker, browser or client: the suite takes about half a minute.
const SUITE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

#[test]
fn explorer_browser_suite_passes_against_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join("tests").join("browser");
    install_chromium();
    let modules = installed_packages(&suite, "browser-packages");
    let python = prepared_environment(&root.join("tests").join("python").join("requirements.txt"));

    let child = node_test(root, &suite, &modules, env!("CARGO_BIN_EXE_busbar"))
        .env("BUSBAR_PYTHON", &python)
        .env("BUSBAR_CHROMIUM", CHROMIUM)
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start node: {error}"));
    let status = wait_with_guard(child, SUITE_TIMEOUT, "explorer browser suite");
    assert!(
        status.success(),
        "the explorer browser suite failed ({status}); node's report is above"
    );
}

/// Installs Debian's `chromium` package unless it is there.
fn install_chromium() {
    if Path::new(CHROMIUM).is_file() {
        return;
    }
    run(
        Command::new("apt-get").args(["update", "-qq"]),
        "apt-get update (to install chromium for the browser tests)",
    );
    run(
        Command::new("apt-get")
            .args([
                "install",
                "-y",
                "-qq",
                "--no-install-recommends",
                "chromium",
            ])
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get install chromium",
    );
}
