//! Runs the official Java SDK (`azure-messaging-servicebus`) end-to-end suite in `tests/java`
//! against the real `busbar` binary, with Maven Surefire and JUnit 5.
//!
//! The first run fills a Maven local repository under the target directory, keyed by a hash of
//! `tests/java/pom.xml` and the `mvn --version` and `java --version` output, with the pinned
//! plugins and dependencies: a `mvn test` that compiles the tests and selects none of them (an
//! unknown JUnit tag), which still resolves Surefire's JUnit Platform provider. Later runs use it
//! offline (`-o`). Maven's build directory sits beside it and is emptied before every run, so
//! nothing is written under `tests/java` and no stale test class survives. Surefire's report (each
//! class, then `Tests run: N, Failures: …`) goes straight to this process's stdout and stderr.

mod sdk_suite;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use sdk_suite::{cache_dir, mark_ready, run, version_of, wait_with_guard};

/// A guard against a hung broker or client: the suite itself takes under a minute.
const SUITE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

#[test]
fn java_sdk_suite_passes_against_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let suite = root.join("tests").join("java");
    let cache = resolved_repository(&suite);
    let build = cache.join("build");
    if build.exists() {
        fs::remove_dir_all(&build)
            .unwrap_or_else(|error| panic!("cannot remove {}: {error}", build.display()));
    }

    let child = maven(&cache)
        .args(["-o", "test"])
        .current_dir(&suite)
        .env("BUSBAR_BIN", env!("CARGO_BIN_EXE_busbar"))
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start mvn: {error}"));
    let status = wait_with_guard(child, SUITE_TIMEOUT, "Java SDK suite");
    assert!(
        status.success(),
        "the Java SDK suite failed ({status}); Surefire's report is above"
    );
}

/// The cache directory holding the Maven repository, resolving the pinned artifacts if needed.
fn resolved_repository(suite: &Path) -> PathBuf {
    let pom_path = suite.join("pom.xml");
    let pom = fs::read(&pom_path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", pom_path.display()));
    let needed_for = "the Java SDK end-to-end tests (tests/java); install Java 17+ and Maven 3.8+";
    let maven_version = version_of("mvn", needed_for);
    let java_version = version_of("java", needed_for);
    let (cache, ready) = cache_dir(
        "java-maven",
        &[&pom, maven_version.as_bytes(), java_version.as_bytes()],
    );
    if ready {
        return cache;
    }
    fs::create_dir_all(&cache)
        .unwrap_or_else(|error| panic!("cannot create {}: {error}", cache.display()));
    run(
        maven(&cache)
            .args(["-q", "test", "-Dgroups=resolve-dependencies-only"])
            .current_dir(suite),
        "mvn test (resolving tests/java/pom.xml)",
    );
    mark_ready(&cache);
    cache
}

/// `mvn` in batch mode with its local repository and build directory in `cache`.
fn maven(cache: &Path) -> Command {
    let mut command = Command::new("mvn");
    command
        .args(["-B", "--no-transfer-progress"])
        .arg(format!(
            "-Dmaven.repo.local={}",
            cache.join("repository").display()
        ))
        .arg(format!(
            "-DbuildDirectory={}",
            cache.join("build").display()
        ));
    command
}
