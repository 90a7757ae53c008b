//! Starting the real `busbar` binary for end-to-end tests: a fresh data directory or memory
//! storage, `--listen 127.0.0.1:0`, the bound port read from the `listening on` line, and a
//! configuration with one queue per test.
#![allow(clippy::unwrap_used, dead_code, unreachable_pub)]

pub mod client;
pub mod deep_backlog;
pub mod management;
pub mod postgres_node;
pub mod raw;
pub mod small_disk;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How long the broker may take to print its listening line (a failure guard, not a wait).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A running broker process.
pub struct Broker {
    child: Child,
    pub port: u16,
    /// The administration API's port (HTTP and HTTPS), from the `admin listening on` line.
    pub admin_port: u16,
    pub data_dir: Option<PathBuf>,
    pub config: Option<PathBuf>,
    /// The standard output lines after the listening lines.
    lines: mpsc::Receiver<String>,
}

/// The binary on any free ports, with `flags`.
fn busbar_command(flags: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_busbar"));
    command.args([
        "--listen",
        "127.0.0.1:0",
        "--tls-listen",
        "127.0.0.1:0",
        "--admin-listen",
        "127.0.0.1:0",
    ]);
    command.args(flags);
    command
}

/// A fresh directory under the cargo target's test scratch space.
pub fn scratch_dir(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The `Properties` every queue of [`write_config`] gets: lock 5 s, MaxDeliveryCount 3.
const QUEUE_PROPERTIES: &str = r#"{ "LockDuration": "PT5S", "MaxDeliveryCount": 3 }"#;

/// An emulator-format `Config.json` with these queues, each with [`QUEUE_PROPERTIES`].
pub fn write_config(dir: &Path, queues: &[&str]) -> PathBuf {
    let queues: Vec<(&str, &str)> = queues
        .iter()
        .map(|name| (*name, QUEUE_PROPERTIES))
        .collect();
    write_config_with(dir, &queues)
}

/// An emulator-format `Config.json` with these queues, each `(name, its Properties object)`.
pub fn write_config_with(dir: &Path, queues: &[(&str, &str)]) -> PathBuf {
    let queues: Vec<String> = queues
        .iter()
        .map(|(name, properties)| format!(r#"{{ "Name": "{name}", "Properties": {properties} }}"#))
        .collect();
    let text = format!(
        r#"{{ "UserConfig": {{ "Namespaces": [ {{ "Name": "sbemulatorns", "Queues": [ {} ], "Topics": [] }} ], "Logging": {{ "Type": "Console" }} }} }}"#,
        queues.join(", ")
    );
    let path = dir.join("Config.json");
    std::fs::write(&path, text).unwrap();
    path
}

/// The child's stdout lines, read to the end on a thread of their own so the broker never
/// blocks on a full pipe.
pub fn stdout_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    lines
}

impl Broker {
    /// Starts a broker with in-memory storage serving `queues`.
    pub fn in_memory(queues: &[&str]) -> Broker {
        let dir = scratch_dir("busbar-e2e");
        let config = write_config(&dir, queues);
        Broker::spawn(Some(config), None)
    }

    /// Starts a broker with in-memory storage serving these `(name, Properties)` queues.
    pub fn in_memory_with(queues: &[(&str, &str)]) -> Broker {
        let dir = scratch_dir("busbar-e2e");
        let config = write_config_with(&dir, queues);
        Broker::spawn(Some(config), None)
    }

    /// Starts a broker with in-memory storage and the built-in default configuration (the
    /// emulator's `queue.1`, `topic.1` and `subscription.1`).
    pub fn default_in_memory() -> Broker {
        Broker::spawn(None, None)
    }

    /// Starts a broker on `data_dir` (file storage) with `config`.
    pub fn on_disk(config: PathBuf, data_dir: PathBuf) -> Broker {
        Broker::spawn(Some(config), Some(data_dir))
    }

    /// Starts a broker on `data_dir` with `--test-controls` (the virtual clock, faults).
    pub fn on_disk_with_test_controls(config: PathBuf, data_dir: PathBuf) -> Broker {
        Broker::spawn_with(Some(config), Some(data_dir), &["--test-controls"])
    }

    /// Runs `busbar ctl ARGS` against this broker's admin port; panics unless it succeeds.
    pub fn ctl(&self, args: &[&str]) {
        let admin = format!("http://127.0.0.1:{}", self.admin_port);
        let output = Command::new(env!("CARGO_BIN_EXE_busbar"))
            .args(["ctl", "--admin", &admin])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "busbar ctl {args:?}: {output:?}");
    }

    /// Starts a broker with in-memory storage, `--test-controls` (the virtual clock) and the
    /// built-in default configuration.
    pub fn default_with_test_controls() -> Broker {
        Broker::spawn_with(None, None, &["--test-controls"])
    }

    fn spawn(config: Option<PathBuf>, data_dir: Option<PathBuf>) -> Broker {
        Broker::spawn_with(config, data_dir, &[])
    }

    /// Starts a broker with `config` (or the built-in default), on `data_dir` (or in memory),
    /// with extra `flags`.
    pub fn spawn_with(
        config: Option<PathBuf>,
        data_dir: Option<PathBuf>,
        flags: &[&str],
    ) -> Broker {
        let mut command = busbar_command(flags);
        if let Some(config) = &config {
            command.arg("--config").arg(config);
        }
        match &data_dir {
            Some(dir) => command.arg("--data-dir").arg(dir),
            None => command.arg("--memory"),
        };
        Broker::spawn_command(command, config, data_dir)
    }

    /// Starts a broker with `config` on the PostgreSQL database at `url`, with extra `flags`.
    pub fn on_postgres(config: PathBuf, url: &str, flags: &[&str]) -> Broker {
        let mut command = busbar_command(flags);
        command.arg("--storage").arg(url);
        command.arg("--config").arg(&config);
        Broker::spawn_command(command, Some(config), None)
    }

    /// Runs `command` and reads the ports from its listening lines.
    fn spawn_command(
        mut command: Command,
        config: Option<PathBuf>,
        data_dir: Option<PathBuf>,
    ) -> Broker {
        let mut child = command
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let lines = stdout_lines(&mut child);
        let deadline = std::time::Instant::now() + START_TIMEOUT;
        let (mut port, mut admin_port) = (None, None);
        while port.is_none() || admin_port.is_none() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = lines
                .recv_timeout(left)
                .expect("busbar did not print its listening lines");
            let admin = line.starts_with("admin ");
            if let Some(address) = line
                .strip_prefix(if admin { "admin " } else { "" })
                .and_then(|rest| rest.strip_prefix("listening on "))
            {
                let parsed = Some(address.rsplit(':').next().unwrap_or("").parse().unwrap());
                if admin {
                    admin_port = parsed;
                } else {
                    port = parsed;
                }
            }
        }
        Broker {
            child,
            port: port.unwrap(),
            admin_port: admin_port.unwrap(),
            data_dir,
            config,
            lines,
        }
    }

    /// Sends the broker SIGHUP (it re-reads its `--policies` file) and waits for the line that
    /// says it did.
    pub fn hang_up(&self) {
        let status = Command::new("kill")
            .args(["-HUP", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = std::time::Instant::now() + START_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .expect("busbar did not say it re-read its policies");
            if line.starts_with("policies re-read") {
                return;
            }
        }
    }

    /// The fe2o3 URL authenticating with SASL PLAIN as the emulator's root key.
    pub fn url(&self) -> String {
        self.url_with_key("SAS_KEY_VALUE")
    }

    /// The URL with another key value.
    pub fn url_with_key(&self, key: &str) -> String {
        format!(
            "amqp://RootManageSharedAccessKey:{key}@127.0.0.1:{}",
            self.port
        )
    }

    /// The broker process's resident memory in KiB (`VmRSS` in `/proc/<pid>/status`, Linux).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().strip_suffix("kB"))
            .and_then(|value| value.trim().parse().ok())
            .expect("no VmRSS in /proc/<pid>/status")
    }

    /// SIGKILL: no chance to flush anything.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        self.child.wait().unwrap()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
