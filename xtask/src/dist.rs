//! `cargo xtask dist`: the packages that carry the `busbar` binary, versioned with the crate —
//! a Python wheel (with the pytest kit), an npm package (with the Node.js kit) and a Maven
//! artifact (with the JUnit 5 kit), so far for the machine's own target. Each target's
//! names (wheel platform, npm `os`/`cpu`) sit in one table, so more targets are one row each.

mod maven;
mod npm;
mod wheel;
mod zip;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bench::workspace_root;
use crate::cargo;

const USAGE: &str = "usage: cargo xtask dist [--binary PATH] [--out DIR] [--maven-repo DIR]";

/// The version every package carries: the workspace's (xtask inherits it).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What a package needs to know of the platform its binary runs on.
pub(crate) struct Target {
    /// The binary's file name there.
    binary_name: &'static str,
    /// The wheel's platform tag (`manylinux_2_34_x86_64`: the newest glibc symbol it needs).
    wheel_platform: String,
    /// Node's `process.platform` and `process.arch` there (npm's `os` and `cpu`).
    node_platform: &'static str,
    node_arch: &'static str,
    /// The folder of the binary inside the Maven artifact (`linux-x86_64`, as the kit names
    /// the JVM's `os.name` and `os.arch`).
    java_platform: &'static str,
}

/// What every package is built from.
#[derive(Clone, Copy)]
pub(crate) struct Job<'a> {
    /// The workspace (the sources under `packages/`, the licences).
    root: &'a Path,
    binary: &'a [u8],
    target: &'a Target,
    version: &'a str,
    /// Where the package goes.
    out: &'a Path,
    /// Maven's local repository for building the jar (Maven's default if none).
    maven_repository: Option<&'a Path>,
}

/// The packages built from one binary.
pub(crate) struct Packages {
    pub(crate) wheel: PathBuf,
    pub(crate) npm: PathBuf,
    /// The jar, with its pom beside it.
    pub(crate) maven: PathBuf,
}

/// Runs `cargo xtask dist`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let mut binary = None;
    let mut out = None;
    let mut maven_repository = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .map(PathBuf::from)
                .ok_or(format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--binary" => binary = Some(value()?),
            "--out" => out = Some(value()?),
            "--maven-repo" => maven_repository = Some(value()?),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    let binary = match binary {
        Some(path) => path,
        None => {
            cargo(
                &["build", "--release", "-p", "busbar", "--bin", "busbar"],
                &[],
            )?;
            target_dir().join("release").join("busbar")
        }
    };
    let out = out.unwrap_or_else(|| target_dir().join("dist"));
    let packages = package(&binary, &out, maven_repository.as_deref())?;
    for package in [&packages.wheel, &packages.npm, &packages.maven] {
        eprintln!("xtask dist: {}", package.display());
    }
    Ok(())
}

/// The cargo target directory (`CARGO_TARGET_DIR`, or `target` in the workspace).
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or(workspace_root().join("target"), PathBuf::from)
}

/// Builds every package from `binary` into `out` (emptied first).
pub(crate) fn package(
    binary: &Path,
    out: &Path,
    maven_repository: Option<&Path>,
) -> Result<Packages, String> {
    if !binary.is_file() {
        return Err(format!(
            "no binary at {} (build it first)",
            binary.display()
        ));
    }
    let _ = fs::remove_dir_all(out);
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let binary = stripped(binary, out)?;
    let target = host_target(&binary)?;
    let root = workspace_root();
    let job = Job {
        root: &root,
        binary: &binary,
        target: &target,
        version: VERSION,
        out,
        maven_repository,
    };
    Ok(Packages {
        wheel: wheel::build(&job)?,
        npm: npm::build(&job)?,
        maven: maven::build(&job)?,
    })
}

/// The binary without its debug information (`strip`, from binutils), or as it is without it.
fn stripped(binary: &Path, out: &Path) -> Result<Vec<u8>, String> {
    let copy = out.join("busbar.stripped");
    let status = Command::new("strip")
        .arg("-o")
        .arg(&copy)
        .arg(binary)
        .status();
    let bytes = if status.is_ok_and(|status| status.success()) {
        read(&copy)?
    } else {
        eprintln!(
            "xtask dist: no strip; packaging {} as it is",
            binary.display()
        );
        read(binary)?
    };
    let _ = fs::remove_file(&copy);
    Ok(bytes)
}

/// The target of the machine building the packages: the binary is this machine's.
fn host_target(binary: &[u8]) -> Result<Target, String> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Ok(Target {
            binary_name: "busbar",
            wheel_platform: format!("manylinux_2_{}_x86_64", newest_glibc_minor(binary)),
            node_platform: "linux",
            node_arch: "x64",
            java_platform: "linux-x86_64",
        }),
        (os, arch) => Err(format!("no package layout for {os}/{arch} yet")),
    }
}

/// The highest `GLIBC_2.N` symbol version the binary names (17, manylinux2014's, if none):
/// version names are NUL-terminated strings of its dynamic string table.
fn newest_glibc_minor(binary: &[u8]) -> u32 {
    binary
        .split(|byte| *byte == 0)
        .filter_map(|name| name.strip_prefix(b"GLIBC_2."))
        .filter_map(|minor| std::str::from_utf8(minor).ok()?.parse().ok())
        .fold(17, u32::max)
}

/// Copies a directory tree.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    let entries = fs::read_dir(from).map_err(|e| format!("cannot list {}: {e}", from.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        let target = to.join(path.file_name().unwrap_or_default());
        if path.is_dir() {
            copy_tree(&path, &target)?;
        } else {
            write(&target, &read(&path)?)?;
        }
    }
    Ok(())
}

/// Writes a file, creating its folder.
pub(crate) fn write(path: &Path, contents: &[u8]) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    fs::write(path, contents).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::newest_glibc_minor;

    #[test]
    fn the_newest_glibc_version_named_sets_the_wheel_platform() {
        let dynstr = b"\0memcpy\0GLIBC_2.14\0GLIBC_2.34\0GLIBC_2.2.5\0GLIBC_PRIVATE\0";
        assert_eq!(newest_glibc_minor(dynstr), 34);
        assert_eq!(newest_glibc_minor(b"\0static\0"), 17);
    }
}
