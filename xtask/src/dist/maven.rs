//! The Maven artifact `dev.busbar:busbar-testing`: the JUnit 5 kit of `packages/java` and the
//! binary as a resource under `dev/busbar/testing/bin/{os}-{arch}/`, built with `mvn package`
//! from a staged copy whose `pom.xml` carries the crate's version. Returns the jar; its pom
//! is written beside it, as a repository holds them.

use std::fs;
use std::path::PathBuf;
use std::process::Command;

use super::{Job, copy_tree, read, write};

pub(crate) fn build(job: &Job<'_>) -> Result<PathBuf, String> {
    let version = job.version;
    let sources = job.root.join("packages").join("java");
    let stage = job.out.join("maven-stage");
    let _ = fs::remove_dir_all(&stage);
    copy_tree(&sources.join("src"), &stage.join("src"))?;
    let pom = String::from_utf8_lossy(&read(&sources.join("pom.xml"))?).into_owned();
    let placeholder = "<version>0.0.0-dev</version>";
    if !pom.contains(placeholder) {
        return Err(format!("packages/java/pom.xml lacks {placeholder}"));
    }
    let pom = pom.replacen(placeholder, &format!("<version>{version}</version>"), 1);
    write(&stage.join("pom.xml"), pom.as_bytes())?;
    let resources = stage.join("src/main/resources/dev/busbar/testing/bin");
    write(
        &resources
            .join(job.target.java_platform)
            .join(job.target.binary_name),
        job.binary,
    )?;

    let mut mvn = Command::new("mvn");
    mvn.args([
        "-B",
        "-q",
        "--no-transfer-progress",
        "package",
        "-Dmaven.test.skip=true",
    ]);
    if let Some(repository) = job.maven_repository {
        mvn.arg(format!("-Dmaven.repo.local={}", repository.display()));
    }
    let status = mvn
        .current_dir(&stage)
        .status()
        .map_err(|e| format!("cannot run mvn: {e}"))?;
    if !status.success() {
        return Err(format!("mvn package (packages/java) failed ({status})"));
    }
    let name = format!("busbar-testing-{version}");
    let jar = job.out.join(format!("{name}.jar"));
    fs::copy(stage.join("target").join(format!("{name}.jar")), &jar)
        .map_err(|e| format!("cannot copy the jar: {e}"))?;
    write(&job.out.join(format!("{name}.pom")), pom.as_bytes())?;
    let _ = fs::remove_dir_all(&stage);
    Ok(jar)
}
