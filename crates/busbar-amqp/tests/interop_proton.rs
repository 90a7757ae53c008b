//! Interop with python-qpid-proton (an independent C/Python AMQP 1.0 stack) through the
//! store-and-forward test node. The test creates, once, a virtualenv with a pinned
//! python-qpid-proton under the target directory and runs `tests/interop/proton_client.py`.
#![allow(clippy::unwrap_used)]

mod interop_node;

use std::path::{Path, PathBuf};
use std::process::Command;

use busbar_amqp::engine::ConnectionConfig;

const PROTON_VERSION: &str = "0.40.0";

/// The venv's python, creating the venv if it is missing or broken.
fn proton_python() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("proton-venv-{PROTON_VERSION}"));
    let python = venv.join("bin").join("python");
    let works = |python: &Path| {
        Command::new(python)
            .args(["-c", "import proton"])
            .status()
            .is_ok_and(|status| status.success())
    };
    if works(&python) {
        return python;
    }
    let created = Command::new("python3")
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        created,
        "could not create a Python venv at {venv:?}: is python3 (with venv) installed?"
    );
    let installed = Command::new(venv.join("bin").join("pip"))
        .args([
            "install",
            "--quiet",
            &format!("python-qpid-proton=={PROTON_VERSION}"),
        ])
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        installed && works(&python),
        "could not install python-qpid-proton=={PROTON_VERSION} into {venv:?}: this test needs \
         network access to PyPI once (the venv is cached under the target directory)"
    );
    python
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_qpid_proton_sends_receives_and_drains() {
    let python = tokio::task::spawn_blocking(proton_python).await.unwrap();
    let node = interop_node::start(ConnectionConfig {
        max_frame_size: 16 * 1024,
        ..ConnectionConfig::default()
    })
    .await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/proton_client.py");
    let address = node.addr.to_string();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(script)
            .arg(address)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "proton client failed\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stdout.contains("passed, 0 failed"), "{stdout}");
    node.shutdown.trigger();
    node.task.await.unwrap().unwrap();
}
