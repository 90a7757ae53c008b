//! The Debian packages the test suite needs, installed by `cargo xtask ci` when they are missing
//! and we may (root, apt): the OpenSSL headers before anything builds (the Rust `azservicebus`
//! client, a dev-dependency, builds OpenSSL bindings), then Chromium (the explorer's browser
//! tests) and PostgreSQL (the database store's tests) in the background while the workspace
//! compiles, so that a fresh machine downloads them during the build instead of in front of
//! the tests that would install them one by one.

use std::path::Path;
use std::process::Command;
use std::thread::JoinHandle;

/// What the browser tests run.
const CHROMIUM: &str = "/usr/bin/chromium";
/// Where Debian's PostgreSQL server packages put their versions.
const POSTGRESQL: &str = "/usr/lib/postgresql";

/// Installs the OpenSSL headers unless `pkg-config` finds them.
pub(crate) fn openssl_headers() -> Result<(), String> {
    let present = || {
        Command::new("pkg-config")
            .args(["--exists", "openssl"])
            .status()
            .is_ok_and(|status| status.success())
    };
    if present() {
        return Ok(());
    }
    eprintln!(
        "$ apt-get install libssl-dev pkg-config (OpenSSL headers for the azservicebus tests)"
    );
    if apt_install(&["libssl-dev", "pkg-config"]) && present() {
        Ok(())
    } else {
        Err("the OpenSSL headers are missing: install libssl-dev and pkg-config".to_owned())
    }
}

/// Starts installing the test suite's missing server packages; join the handle before the
/// tests run. A failure here is only reported: the tests that need a package install it
/// themselves, and say why when they cannot.
pub(crate) fn prefetch_test_servers() -> Option<JoinHandle<()>> {
    let mut missing = Vec::new();
    if !Path::new(CHROMIUM).is_file() {
        missing.push("chromium");
    }
    if !postgresql_installed() {
        missing.push("postgresql");
    }
    if missing.is_empty() || !Path::new("/usr/bin/apt-get").is_file() {
        return None;
    }
    eprintln!(
        "$ apt-get install {} (in the background, for the tests)",
        missing.join(" ")
    );
    Some(std::thread::spawn(move || {
        if !apt_install(&missing) {
            eprintln!("xtask ci: installing {} failed", missing.join(" "));
        }
    }))
}

/// Whether some PostgreSQL server version is installed.
fn postgresql_installed() -> bool {
    std::fs::read_dir(POSTGRESQL).is_ok_and(|versions| {
        versions
            .flatten()
            .any(|version| version.path().join("bin").join("initdb").is_file())
    })
}

/// `apt-get update` and a quiet install of `packages`, without their recommendations; whether
/// it succeeded.
fn apt_install(packages: &[&str]) -> bool {
    let script = format!(
        "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
         --no-install-recommends {} >/dev/null",
        packages.join(" ")
    );
    Command::new("sh")
        .args(["-c", &script])
        .status()
        .is_ok_and(|status| status.success())
}
