//! The npm package: the kit of `packages/npm` (JavaScript with its `.d.ts`), the binary under
//! `vendor/{platform}-{arch}/` as Node names the machine, and `package.json` carrying the
//! crate's version and the platforms it has binaries for; `npm pack` makes the tarball.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{Job, read, write};

/// The files of `packages/npm` that go into the package (the suite stays behind).
const FILES: &[&str] = &[
    "index.js",
    "index.d.ts",
    "controls.js",
    "README.md",
    "bin/busbar.js",
];

/// Builds `busbar-VERSION.tgz` in `out`; returns its path.
pub(crate) fn build(job: &Job<'_>) -> Result<PathBuf, String> {
    let version = job.version;
    let sources = job.root.join("packages").join("npm");
    let stage = job.out.join("npm-stage");
    let _ = fs::remove_dir_all(&stage);
    for file in FILES {
        write(&stage.join(file), &read(&sources.join(file))?)?;
    }
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        write(&stage.join(license), &read(&job.root.join(license))?)?;
    }
    let manifest = String::from_utf8_lossy(&read(&sources.join("package.json"))?).into_owned();
    let placeholder = "\"version\": \"0.0.0-dev\"";
    if !manifest.contains(placeholder) {
        return Err(format!("packages/npm/package.json lacks {placeholder}"));
    }
    let platforms = format!(
        "\"version\": \"{version}\",\n  \"os\": [\"{}\"],\n  \"cpu\": [\"{}\"]",
        job.target.node_platform, job.target.node_arch
    );
    write(
        &stage.join("package.json"),
        manifest.replace(placeholder, &platforms).as_bytes(),
    )?;
    let vendored = stage
        .join("vendor")
        .join(format!(
            "{}-{}",
            job.target.node_platform, job.target.node_arch
        ))
        .join(job.target.binary_name);
    write(&vendored, job.binary)?;
    executable(&vendored)?;
    executable(&stage.join("bin").join("busbar.js"))?;

    let status = Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(job.out)
        .current_dir(&stage)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("cannot run npm pack: {e}"))?;
    if !status.success() {
        return Err(format!("npm pack failed ({status})"));
    }
    let _ = fs::remove_dir_all(&stage);
    Ok(job.out.join(format!("busbar-{version}.tgz")))
}

#[cfg(unix)]
fn executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("cannot make {} executable: {e}", path.display()))
}

#[cfg(not(unix))]
fn executable(_: &Path) -> Result<(), String> {
    Ok(())
}
