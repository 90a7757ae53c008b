//! Runs the official JavaScript SDK (`@azure/service-bus`) end-to-end suite in `tests/js`
//! against the real `busbar` binary, with Node's built-in test runner.
//!
//! The first run installs the packages pinned by `tests/js/package-lock.json` (`npm ci`) into a
//! directory under the target directory keyed by a hash of the lock file and Node's version;
//! later runs reuse it. The test files stay in `tests/js` and find the packages through
//! `NODE_PATH`. Node's report goes straight to this process's stdout and stderr.

#[path = "sdk_suite/npm.rs"]
mod npm;
mod sdk_suite;

use std::path::Path;
use std::time::Duration;

use npm::{installed_packages, node_test};
use sdk_suite::wait_with_guard;

/// A guard against a hung broker or client: the suite itself takes a few seconds.
const SUITE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

#[test]
fn javascript_sdk_suite_passes_against_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join("tests").join("js");
    let modules = installed_packages(&suite, "js-packages");

    let child = node_test(root, &suite, &modules, env!("CARGO_BIN_EXE_busbar"))
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start node: {error}"));
    let status = wait_with_guard(child, SUITE_TIMEOUT, "JavaScript SDK suite");
    assert!(
        status.success(),
        "the JavaScript SDK suite failed ({status}); node's report is above"
    );
}
