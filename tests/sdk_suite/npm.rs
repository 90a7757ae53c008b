//! The npm packages a Node.js suite pins (`package.json` and `package-lock.json` in its folder),
//! installed with `npm ci` into a cache under the target directory keyed by both files and
//! Node's version. Shared by `js_sdk.rs` and `browser_explorer.rs` (included with `#[path]`).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::sdk_suite::{cache_dir, mark_ready, run, version_of};

/// The `node_modules` directory holding the pinned packages, installing them if needed.
pub(crate) fn installed_packages(suite: &Path, prefix: &str) -> PathBuf {
    let read = |name: &str| {
        let path = suite.join(name);
        fs::read(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
    };
    let manifest = read("package.json");
    let lock = read("package-lock.json");
    let version = version_of(
        "node",
        "the Node.js end-to-end tests (tests/js, tests/browser); install Node 18 or later",
    );
    let (dir, ready) = cache_dir(prefix, &[&manifest, &lock, version.as_bytes()]);
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
        &format!("npm ci ({})", suite.join("package-lock.json").display()),
    );
    mark_ready(&dir);
    modules
}

/// `node --test` on `suite` from `root`, finding the packages in `modules` and the broker at
/// `binary` (`BUSBAR_BIN`).
pub(crate) fn node_test(root: &Path, suite: &Path, modules: &Path, binary: &str) -> Command {
    let mut command = Command::new("node");
    // A client can leave a timer behind after a file's tests (the SDK's connection retry), which
    // would keep that file's process idle for a minute and a half once every test has reported.
    command
        .arg("--test")
        .arg("--test-force-exit")
        .arg(suite)
        .current_dir(root)
        .env("BUSBAR_BIN", binary)
        .env("NODE_PATH", modules)
        .env("RUST_LOG", "warn");
    command
}
