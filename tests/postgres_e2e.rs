//! `busbar --storage postgres://…` end to end, against a private PostgreSQL server: the Python
//! SDK suite's durability cases; active/passive failover under load, SIGKILLing the active node
//! while an independent fe2o3-amqp client sends and completes (nothing acknowledged lost,
//! nothing completed back, takeover time printed) and while the Python SDK streams a session's
//! messages and changes its state (`tests/python/failover_postgres.py`: order and state kept,
//! the SDK's retries carry the sender across); the active node reconnecting after a database
//! outage (`postgres_e2e/outage.rs`); a 1 GiB backlog under a 32 MiB budget held in the
//! database, across a SIGKILL (`postgres_e2e/backlog.rs`); a paused active node replaced and fenced
//! (`postgres_e2e/paused.rs`); and a clear error when the database cannot be reached at
//! start-up.

#![allow(clippy::unwrap_used)]

#[path = "../crates/busbar-store-postgres/tests/pg_server/mod.rs"]
mod pg_server;
#[path = "sdk_suite/python_venv.rs"]
mod python_venv;
mod sdk_suite;
mod support;

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use pg_server::PgServer;
use python_venv::prepared_environment;
use sdk_suite::wait_with_guard;
use support::scratch_dir;

#[path = "postgres_e2e/backlog.rs"]
mod backlog;
#[path = "postgres_e2e/failover.rs"]
mod failover;
#[path = "postgres_e2e/outage.rs"]
mod outage;
#[path = "postgres_e2e/paused.rs"]
mod paused;

/// A guard against a hung broker or client: the two cases take about twenty seconds.
const SUITE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// The durability cases and the failover case, each file with a database of its own (two
/// brokers on one database would share its lease), run side by side.
#[test]
fn the_python_durability_and_failover_cases_pass_on_postgres() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = prepared_environment(&root.join("tests").join("python").join("requirements.txt"));
    let runs: Vec<_> = [
        "test_restart.py",
        "test_backlog_on_disk.py",
        "failover_postgres.py",
    ]
    .into_iter()
    .map(|file| {
        let url = PgServer::shared().create_database("python");
        let child = Command::new(&python)
            .args(["-m", "pytest", "-q", "-n", "0"])
            .arg(Path::new("tests").join("python").join(file))
            .current_dir(root)
            .env("BUSBAR_BIN", env!("CARGO_BIN_EXE_busbar"))
            .env("BUSBAR_STORAGE_URL", &url)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", python.display()));
        (file, child)
    })
    .collect();
    for (file, child) in runs {
        let status = wait_with_guard(child, SUITE_TIMEOUT, file);
        assert!(
            status.success(),
            "pytest {file} failed ({status}); its report is above"
        );
    }
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
