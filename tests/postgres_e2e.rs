//! `busbar --storage postgres://…` end to end, against a private PostgreSQL server: the Python
//! SDK suite's durability cases, active/passive failover under load (SIGKILL the active node
//! while an independent fe2o3-amqp client sends and completes; the standby takes over with
//! nothing acknowledged lost and nothing completed back), and a clear error when the database
//! cannot be reached.

#![allow(clippy::unwrap_used)]

#[path = "../crates/busbar-store-postgres/tests/pg_server/mod.rs"]
mod pg_server;
#[path = "sdk_suite/python.rs"]
mod python_env;
mod sdk_suite;
mod support;

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use pg_server::PgServer;
use python_env::prepared_environment;
use sdk_suite::wait_with_guard;
use support::scratch_dir;

#[path = "postgres_e2e/failover.rs"]
mod failover;

/// A guard against a hung broker or client: the two cases take about twenty seconds.
const SUITE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

#[test]
fn the_python_durability_cases_pass_on_postgres() {
    let url = PgServer::shared().create_database("python");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = prepared_environment(&root.join("tests").join("python").join("requirements.txt"));
    let child = Command::new(&python)
        .args(["-m", "pytest", "tests/python/test_restart.py", "-q"])
        .current_dir(root)
        .env("BUSBAR_BIN", env!("CARGO_BIN_EXE_busbar"))
        .env("BUSBAR_STORAGE_URL", &url)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", python.display()));
    let status = wait_with_guard(child, SUITE_TIMEOUT, "Python durability cases");
    assert!(
        status.success(),
        "pytest failed ({status}); its report is above"
    );
}

#[test]
fn an_unreachable_database_stops_start_up_with_a_clear_error() {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = scratch_dir("busbar-pg-unreachable");
    let output = Command::new(env!("CARGO_BIN_EXE_busbar"))
        .args([
            "--storage",
            &format!("postgres://busbar@127.0.0.1:{port}/busbar"),
        ])
        .args([
            "--listen",
            "127.0.0.1:0",
            "--tls-listen",
            "none",
            "--admin-listen",
            "none",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot open the storage: database connect failed"),
        "{stderr}"
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains("listening on"));
}
