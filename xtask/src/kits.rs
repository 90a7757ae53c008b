//! `cargo xtask ci`'s check of the packages: builds them from the debug binary the test step
//! made, installs each from its built file into a fresh, empty project, and runs the kit's
//! suite there with the official SDK at the version the repository's SDK suites pin.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bench::workspace_root;
use crate::dist::{self, copy_tree, target_dir, write};

/// Runs every package's suite in a project of its own under `target/kits`.
pub(crate) fn ci() -> Result<(), String> {
    let binary = target_dir().join("debug").join("busbar");
    let kits = target_dir().join("kits");
    let maven_repository = sdk_suite_cache("java-maven-").map(|cache| cache.join("repository"));
    let packages = dist::package(&binary, &kits.join("dist"), maven_repository.as_deref())?;
    python(&packages.wheel, &fresh_project(&kits, "python")?)?;
    node(&packages.npm, &fresh_project(&kits, "node")?)?;
    java(
        &packages.maven,
        &kits,
        maven_repository.as_deref(),
        &fresh_project(&kits, "java")?,
    )?;
    go(&kits.join("python-project"), &fresh_project(&kits, "go")?)
}

/// The cache an SDK suite (`tests/*_sdk.rs`, under `target/tmp`) filled, when it ran: the kits
/// use the same plugins, SDKs and modules, so they download next to nothing.
fn sdk_suite_cache(prefix: &str) -> Option<PathBuf> {
    let caches = fs::read_dir(target_dir().join("tmp")).ok()?;
    caches
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .find(|dir| {
            let name = dir.file_name().unwrap_or_default().to_string_lossy();
            name.starts_with(prefix) && dir.join("busbar-ready").is_file()
        })
}

/// An empty directory for one language's project.
fn fresh_project(kits: &Path, language: &str) -> Result<PathBuf, String> {
    let project = kits.join(format!("{language}-project"));
    let _ = fs::remove_dir_all(&project);
    fs::create_dir_all(&project)
        .map_err(|e| format!("cannot create {}: {e}", project.display()))?;
    Ok(project)
}

/// A virtual environment with the wheel and the SDK suite's pinned requirements (pip's cache
/// holds them once the SDK suite ran), then pytest on the kit's suite.
fn python(wheel: &Path, project: &Path) -> Result<(), String> {
    let root = workspace_root();
    let suite = root.join("packages").join("python").join("suite");
    copy_tree(&suite, project)?;
    fs::write(project.join("pytest.ini"), "[pytest]\n").map_err(|e| e.to_string())?;
    run(
        Command::new("python3")
            .args(["-m", "venv", ".venv"])
            .current_dir(project),
        "python3 -m venv",
    )?;
    let python = project.join(".venv").join("bin").join("python");
    run(
        Command::new(&python)
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .arg(wheel)
            .arg("-r")
            .arg(root.join("tests").join("python").join("requirements.txt"))
            .current_dir(project),
        "pip install (the wheel and the SDK)",
    )?;
    run(
        Command::new(&python)
            .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
            .current_dir(project)
            // The kit must find the binary the wheel installed.
            .env_remove("BUSBAR_BIN")
            .env("PYTHONDONTWRITEBYTECODE", "1"),
        "the Python kit's suite",
    )
}

/// An npm project with the package and the SDK at the version `tests/js` pins (npm's cache
/// holds it once the SDK suite ran), then `node --test` on the kit's suite.
fn node(package: &Path, project: &Path) -> Result<(), String> {
    let root = workspace_root();
    copy_tree(&root.join("packages").join("npm").join("suite"), project)?;
    let manifest = "{\"name\": \"kit-suite\", \"private\": true}\n";
    fs::write(project.join("package.json"), manifest).map_err(|e| e.to_string())?;
    let sdk = format!("@azure/service-bus@{}", pinned_js_sdk(&root)?);
    run(
        Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--prefer-offline",
                "--loglevel=error",
            ])
            .arg(package)
            .arg(sdk)
            .current_dir(project),
        "npm install (the package and the SDK)",
    )?;
    run(
        Command::new("node")
            .args(["--test", "--test-force-exit"])
            .current_dir(project)
            .env_remove("BUSBAR_BIN")
            .env_remove("NODE_PATH"),
        "the Node.js kit's suite",
    )
}

/// The `@azure/service-bus` version of `tests/js/package.json`.
fn pinned_js_sdk(root: &Path) -> Result<String, String> {
    let path = root.join("tests").join("js").join("package.json");
    let manifest =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let key = "\"@azure/service-bus\": \"";
    let start = manifest
        .find(key)
        .ok_or(format!("{} pins no @azure/service-bus", path.display()))?;
    let rest = &manifest[start + key.len()..];
    Ok(rest[..rest.find('"').unwrap_or(rest.len())].to_owned())
}

/// The jar and its pom laid out as a Maven repository in `kits/maven-repository`, then
/// `mvn test` on the kit's suite, a project that names that directory as a repository.
fn java(jar: &Path, kits: &Path, local: Option<&Path>, project: &Path) -> Result<(), String> {
    let root = workspace_root();
    copy_tree(&root.join("packages").join("java").join("suite"), project)?;
    let repository = kits.join("maven-repository");
    let _ = fs::remove_dir_all(&repository);
    let version = jar
        .file_stem()
        .and_then(|stem| stem.to_str())
        .and_then(|stem| stem.strip_prefix("busbar-testing-"))
        .ok_or(format!(
            "{} is not busbar-testing-VERSION.jar",
            jar.display()
        ))?;
    let artifact = repository.join("dev/busbar/busbar-testing").join(version);
    for file in [jar.to_path_buf(), jar.with_extension("pom")] {
        let name = file.file_name().unwrap_or_default();
        write(&artifact.join(name), &dist::read(&file)?)?;
    }
    let mut mvn = Command::new("mvn");
    mvn.args(["-B", "--no-transfer-progress", "test"])
        .arg(format!("-Dbusbar.version={version}"))
        .arg(format!(
            "-Dbusbar.repository=file://{}",
            repository.display()
        ));
    if let Some(local) = local {
        mvn.arg(format!("-Dmaven.repo.local={}", local.display()));
    }
    run(
        mvn.current_dir(project).env_remove("BUSBAR_BIN"),
        "the Java kit's suite",
    )
}

/// A Go module requiring `busbartest` with a `replace` to `packages/go/busbartest`, the SDK's
/// sums those of `tests/go`, and `go test` with `busbar` on the PATH from the Python project's
/// virtual environment, as a Go user who installed the wheel has it.
fn go(python_project: &Path, project: &Path) -> Result<(), String> {
    let root = workspace_root();
    copy_tree(&root.join("packages").join("go").join("suite"), project)?;
    write(
        &project.join("go.sum"),
        &dist::read(&root.join("tests").join("go").join("go.sum"))?,
    )?;
    let module = root.join("packages").join("go").join("busbartest");
    let mut command = Command::new("go");
    command
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod");
    if let Some(cache) = sdk_suite_cache("go-modules-") {
        command
            .env("GOMODCACHE", cache.join("modules"))
            .env("GOCACHE", cache.join("build"));
    }
    run(
        Command::new("go")
            .arg("mod")
            .arg("edit")
            .arg(format!(
                "-replace=github.com/busbar-rs/busbar/packages/go/busbartest={}",
                module.display()
            ))
            .current_dir(project),
        "go mod edit -replace",
    )?;
    let path = std::env::join_paths(
        std::iter::once(python_project.join(".venv").join("bin")).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .map_err(|e| e.to_string())?;
    run(
        command
            .args(["test", "-count=1", "-v", "./..."])
            .current_dir(project)
            .env_remove("BUSBAR_BIN")
            .env("PATH", path),
        "the Go kit's suite",
    )
}

/// Runs a command in the foreground, failing with `what` unless it succeeds.
fn run(command: &mut Command, what: &str) -> Result<(), String> {
    eprintln!("$ {what}");
    let status = command
        .status()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed ({status})"))
    }
}
