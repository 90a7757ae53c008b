//! Runs the official Go SDK (`azservicebus`) end-to-end suite in `tests/go` against the real
//! `busbar` binary, with `go test`.
//!
//! The first run downloads the modules pinned by `tests/go/go.sum` (`go mod download`) into a
//! module cache under the target directory keyed by a hash of `go.mod`, `go.sum` and
//! `go version`; Go's build cache sits beside it, so later runs reuse both. `go test -v`'s report
//! (each test, then the closing `ok` or `FAIL` line) goes straight to this process's stdout and
//! stderr.

mod sdk_suite;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sdk_suite::{cache_dir, mark_ready, run, version_of, wait_with_guard};

/// A guard against a hung broker or client: the tests take a few seconds, compiling the SDK
/// into a fresh build cache about a minute.
const SUITE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

#[test]
fn go_sdk_suite_passes_against_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join("tests").join("go");
    let cache = downloaded_modules(&suite);

    // The tests wait for lock expiries in parallel; Go's default is one test per CPU.
    let child = go(&cache)
        .args(["test", "-count=1", "-v", "-parallel=32", "./..."])
        .current_dir(&suite)
        .env("BUSBAR_BIN", env!("CARGO_BIN_EXE_busbar"))
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start go test: {error}"));
    let status = wait_with_guard(child, SUITE_TIMEOUT, "Go SDK suite");
    assert!(
        status.success(),
        "the Go SDK suite failed ({status}); go test's report is above"
    );
}

/// The cache directory holding the pinned modules, downloading them if needed.
fn downloaded_modules(suite: &Path) -> PathBuf {
    let read = |name: &str| {
        let path = suite.join(name);
        fs::read(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
    };
    let manifest = read("go.mod");
    let sums = read("go.sum");
    let version = version_of(
        "go",
        "the Go SDK end-to-end tests (tests/go); install the Go version tests/go/go.mod names",
    );
    let (cache, ready) = cache_dir("go-modules", &[&manifest, &sums, version.as_bytes()]);
    if ready {
        return cache;
    }
    fs::create_dir_all(&cache)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", cache.display()));
    run(
        go(&cache).args(["mod", "download"]).current_dir(suite),
        "go mod download (tests/go/go.sum)",
    );
    mark_ready(&cache);
    cache
}

/// `go` with its module, build and GOPATH caches in `cache`.
fn go(cache: &Path) -> Command {
    let mut command = Command::new("go");
    command
        .env("GOPATH", cache.join("gopath"))
        .env("GOMODCACHE", cache.join("modules"))
        .env("GOCACHE", cache.join("build"))
        // Go makes downloaded modules read-only, which would keep `cache_dir` from removing an
        // incomplete cache.
        .env("GOFLAGS", "-modcacherw")
        // The installed toolchain, never one downloaded because go.mod asks for a newer one.
        .env("GOTOOLCHAIN", "local");
    command
}
