//! The Python wheel: `busbar` (with `busbar.testing`, also a pytest plugin) from
//! `packages/python`, and the binary in the wheel's `.data/scripts`, which pip installs beside
//! the interpreter (on the PATH of the environment), as ruff ships its binary.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

use super::zip::Zip;
use super::{Job, read};

/// Builds `busbar-VERSION-py3-none-PLATFORM.whl` in `out`; returns its path.
pub(crate) fn build(job: &Job<'_>) -> Result<PathBuf, String> {
    let version = job.version;
    let sources = job.root.join("packages").join("python");
    let mut files: Vec<(String, Vec<u8>, u32)> = Vec::new();
    for path in python_files(&sources.join("busbar"))? {
        let relative = path
            .strip_prefix(&sources)
            .map_err(|e| e.to_string())?
            .to_string_lossy()
            .replace('\\', "/");
        files.push((relative, read(&path)?, 0o644));
    }
    let data = format!("busbar-{version}.data/scripts/{}", job.target.binary_name);
    files.push((data, job.binary.to_vec(), 0o755));

    let tag = format!("py3-none-{}", job.target.wheel_platform);
    let info = format!("busbar-{version}.dist-info");
    let readme = String::from_utf8_lossy(&read(&sources.join("README.md"))?).into_owned();
    let metadata = format!(
        "Metadata-Version: 2.1\nName: busbar\nVersion: {version}\n\
         Summary: The Busbar Service Bus broker job.binary, and a test kit and pytest plugin for it\n\
         License: MIT OR Apache-2.0\nRequires-Python: >=3.9\n\
         Project-URL: Repository, https://github.com/busbar-rs/busbar\n\
         Classifier: Framework :: Pytest\n\
         Description-Content-Type: text/markdown\n\n{readme}"
    );
    let wheel = format!(
        "Wheel-Version: 1.0\nGenerator: cargo xtask dist\nRoot-Is-Purelib: false\nTag: {tag}\n"
    );
    let entry_points = "[pytest11]\nbusbar = busbar.testing\n";
    files.push((format!("{info}/METADATA"), metadata.into_bytes(), 0o644));
    files.push((format!("{info}/WHEEL"), wheel.into_bytes(), 0o644));
    files.push((
        format!("{info}/entry_points.txt"),
        entry_points.into(),
        0o644,
    ));
    for license in ["LICENSE-MIT", "LICENSE-APACHE"] {
        let text = read(&job.root.join(license))?;
        files.push((format!("{info}/licenses/{license}"), text, 0o644));
    }

    let mut record = String::new();
    let mut zip = Zip::default();
    for (name, contents, mode) in &files {
        let digest = URL_SAFE_NO_PAD.encode(Sha256::digest(contents));
        record.push_str(&format!("{name},sha256={digest},{}\n", contents.len()));
        zip.add(name, contents, *mode)?;
    }
    record.push_str(&format!("{info}/RECORD,,\n"));
    zip.add(&format!("{info}/RECORD"), record.as_bytes(), 0o644)?;

    let path = job.out.join(format!("busbar-{version}-{tag}.whl"));
    fs::write(&path, zip.finish()?).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// The package's `.py` files, sorted (the wheel is the same for the same sources).
fn python_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut found = Vec::new();
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.is_dir() {
            found.extend(python_files(&path)?);
        } else if path.extension().is_some_and(|ext| ext == "py") {
            found.push(path);
        }
    }
    found.sort();
    Ok(found)
}
