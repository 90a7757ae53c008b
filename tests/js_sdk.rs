//! Runs the official JavaScript SDK (`@azure/service-bus`) end-to-end suite in `tests/js`
//! against the real `busbar` binary, with Node's built-in test runner.
//!
//! The first run installs the packages pinned by `tests/js/package-lock.json` (`npm ci`) into a
//! directory under the target directory keyed by a hash of the lock file and Node's version;
//! later runs reuse it. The test files stay in `tests/js` and find the packages through
//! `NODE_PATH`. Node's report goes straight to this process's stdout and stderr.
//!
//! Node reads the certificate authorities it trusts once, at start (`NODE_EXTRA_CA_CERTS`), so
//! the suite's brokers serve TLS with one certificate made before Node starts: a development
//! CA set (busbar-gateway's, as the broker makes for itself) whose server certificate and key
//! `broker.js` passes as `--tls-cert` and `--tls-key` (`BUSBAR_TLS_DIR`).

#[path = "sdk_suite/npm.rs"]
mod npm;
mod sdk_suite;

use std::fs;
use std::path::Path;
use std::time::Duration;

use busbar_gateway::tls::DevelopmentCa;
use npm::{installed_packages, node_test};
use sdk_suite::wait_with_guard;

/// A guard against a hung broker or client: the suite itself takes a few seconds.
const SUITE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

#[test]
fn javascript_sdk_suite_passes_against_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join("tests").join("js");
    let modules = installed_packages(&suite, "js-packages");
    let tls = certificates();

    let child = node_test(root, &suite, &modules, env!("CARGO_BIN_EXE_busbar"))
        .env(
            "BUSBAR_TLS_DIR",
            tls.ca_cert.parent().unwrap_or(Path::new(".")),
        )
        .env("NODE_EXTRA_CA_CERTS", &tls.ca_cert)
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start node: {error}"));
    let status = wait_with_guard(child, SUITE_TIMEOUT, "JavaScript SDK suite");
    assert!(
        status.success(),
        "the JavaScript SDK suite failed ({status}); node's report is above"
    );
}

/// A development CA set for the suite's brokers, made anew in the target's scratch space.
fn certificates() -> DevelopmentCa {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("js-tls-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    DevelopmentCa::load_or_create(&dir).unwrap_or_else(|error| {
        panic!(
            "cannot create a development CA in {}: {error}",
            dir.display()
        )
    })
}
