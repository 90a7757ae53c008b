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

mod sdk_suite;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use busbar_gateway::tls::DevelopmentCa;
use sdk_suite::{cache_dir, mark_ready, run, version_of, wait_with_guard};

/// A guard against a hung broker or client: the suite itself takes a few seconds.
const SUITE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

#[test]
fn javascript_sdk_suite_passes_against_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join("tests").join("js");
    let modules = installed_packages(&suite);
    let tls = certificates();

    // The SDK can leave a timer behind after a file's tests (its connection retry), which would
    // keep that file's process idle for a minute and a half once every test has reported.
    let child = Command::new("node")
        .arg("--test")
        .arg("--test-force-exit")
        .arg(&suite)
        .current_dir(root)
        .env("BUSBAR_BIN", env!("CARGO_BIN_EXE_busbar"))
        .env("NODE_PATH", &modules)
        .env(
            "BUSBAR_TLS_DIR",
            tls.ca_cert.parent().unwrap_or(Path::new(".")),
        )
        .env("NODE_EXTRA_CA_CERTS", &tls.ca_cert)
        .env("RUST_LOG", "warn")
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

/// The `node_modules` directory holding the pinned packages, installing them if needed.
fn installed_packages(suite: &Path) -> PathBuf {
    let read = |name: &str| {
        let path = suite.join(name);
        fs::read(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
    };
    let manifest = read("package.json");
    let lock = read("package-lock.json");
    let version = version_of(
        "node",
        "the JavaScript SDK end-to-end tests (tests/js); install Node 18 or later",
    );
    let (dir, ready) = cache_dir("js-packages", &[&manifest, &lock, version.as_bytes()]);
    let modules = dir.join("node_modules");
    if ready {
        return modules;
    }
    fs::create_dir_all(&dir)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", dir.display()));
    for (name, contents) in [("package.json", &manifest), ("package-lock.json", &lock)] {
        fs::write(dir.join(name), contents)
            .unwrap_or_else(|error| panic!("cannot write {name} to {}: {error}", dir.display()));
    }
    run(
        Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir),
        "npm ci (tests/js/package-lock.json)",
    );
    mark_ready(&dir);
    modules
}
