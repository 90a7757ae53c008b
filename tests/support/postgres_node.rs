//! A `busbar --storage postgres://…` process, which either serves (it took the lease) or stands
//! by; its stdout lines arrive on a channel so a test can tell which, and when that changes.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::{Broker, stdout_lines};

/// A broker process on PostgreSQL storage, not known yet to serve.
pub struct PostgresNode {
    /// Taken when the node becomes a [`Broker`].
    child: Option<Child>,
    lines: mpsc::Receiver<String>,
    config: std::path::PathBuf,
}

impl PostgresNode {
    /// Starts a broker on `url` serving `config`, in `workdir` (its development CA goes under
    /// it), listening for AMQP on `port` (0 for any) once it serves.
    pub fn start(config: &Path, url: &str, workdir: &Path, port: u16) -> PostgresNode {
        std::fs::create_dir_all(workdir).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_busbar"))
            .arg("--storage")
            .arg(url)
            .arg("--config")
            .arg(config)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args([
                "--tls-listen",
                "127.0.0.1:0",
                "--admin-listen",
                "127.0.0.1:0",
            ])
            .current_dir(workdir)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let lines = stdout_lines(&mut child);
        PostgresNode {
            child: Some(child),
            lines,
            config: config.to_owned(),
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// Waits for the standby line; fails if the node serves (or exits) first.
    pub fn expect_standby(&mut self, within: Duration) {
        let line = self.next_line_matching(within, |line| {
            line.starts_with("standby:") || line.starts_with("listening on ")
        });
        assert!(line.starts_with("standby:"), "a second node serves: {line}");
    }

    /// Waits until the node serves and returns it as a [`Broker`].
    pub fn serving(mut self, within: Duration) -> Broker {
        let port = self.wait_serving(within);
        let line = self.next_line_matching(within, |line| line.starts_with("admin listening on "));
        let admin_port = port_of(&line);
        Broker {
            child: self.child.take().unwrap(),
            port,
            admin_port,
            data_dir: None,
            config: Some(self.config.clone()),
            lines: std::mem::replace(&mut self.lines, std::sync::mpsc::channel().1),
        }
    }

    /// Waits until the node serves (again: it stops serving when its database fails) and
    /// returns its AMQP port.
    pub fn wait_serving(&mut self, within: Duration) -> u16 {
        port_of(&self.next_line_matching(within, |line| line.starts_with("listening on ")))
    }

    fn next_line_matching(&mut self, within: Duration, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if wanted(&line) => return line,
                Ok(_) => {}
                Err(_) => {
                    let status = self.child.as_mut().unwrap().try_wait().unwrap();
                    panic!("busbar printed no awaited line within {within:?} (exit: {status:?})")
                }
            }
        }
    }
}

impl Drop for PostgresNode {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The port at the end of a `… listening on HOST:PORT` line.
fn port_of(line: &str) -> u16 {
    line.rsplit(':').next().unwrap().parse().unwrap()
}
