//! A private PostgreSQL server for tests, from Debian's packages: `initdb` into a temporary
//! directory (as the `postgres` user when running as root, which initdb refuses), `pg_ctl` on a
//! free loopback port with trust authentication, stopped and removed when the test process
//! exits. When `initdb` is missing the packages are installed with apt (CI runs as root on a
//! fresh Debian machine).
//!
//! Shared by busbar-store-postgres's tests and the binary's end-to-end tests (as a path module).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// The user the server runs as and tests connect as.
const USER: &str = "postgres";

/// A running server; one per test process ([`PgServer::shared`]).
pub(crate) struct PgServer {
    port: u16,
    bin: PathBuf,
    /// The watchdog and its stdin, kept open: when this process ends, the watchdog reads
    /// end-of-file and stops the server (it outlives us, so it is never waited for).
    _watchdog: Mutex<(Child, ChildStdin)>,
}

impl PgServer {
    /// The server of this test process, started on first use.
    pub(crate) fn shared() -> &'static PgServer {
        static SERVER: OnceLock<PgServer> = OnceLock::new();
        SERVER.get_or_init(PgServer::start)
    }

    /// The URL of `database` for the superuser.
    pub(crate) fn url(&self, database: &str) -> String {
        format!("postgres://{USER}@127.0.0.1:{}/{database}", self.port)
    }

    /// Creates a database with a name unique in this process, and returns its URL.
    pub(crate) fn create_database(&self, prefix: &str) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "{prefix}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        self.psql(&format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs one SQL command as the superuser in the `postgres` database.
    pub(crate) fn psql(&self, sql: &str) {
        let output = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                USER,
                "-d",
                "postgres",
                "-c",
                sql,
            ])
            .output()
            .expect("cannot run psql");
        assert!(
            output.status.success(),
            "psql {sql:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn start() -> PgServer {
        let bin = postgres_bin_dir();
        let root = std::env::temp_dir().join(format!("busbar-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let data = root.join("data");
        std::fs::create_dir_all(&data).expect("cannot create the server's directory");
        let as_root = is_root();
        if as_root {
            run(Command::new("chown").args(["-R", USER]).arg(&root), "chown");
        }
        run(
            server_command(as_root, &bin.join("initdb"))
                .args(["-A", "trust", "-U", USER, "--no-sync", "-E", "UTF8", "-D"])
                .arg(&data),
            "initdb",
        );
        let port = free_port();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=on -c max_connections=200",
            root.display()
        );
        run(
            server_command(as_root, &bin.join("pg_ctl"))
                .args(["-w", "-t", "60", "-D"])
                .arg(&data)
                .arg("-l")
                .arg(root.join("server.log"))
                .args(["-o", &options, "start"]),
            "pg_ctl start",
        );
        let watchdog = watchdog(as_root, &bin, &root, &data);
        PgServer {
            port,
            bin,
            _watchdog: Mutex::new(watchdog),
        }
    }
}

/// A shell that waits for end-of-file on its stdin (this process exiting closes it), then
/// stops the server at once and removes its directory.
fn watchdog(as_root: bool, bin: &Path, root: &Path, data: &Path) -> (Child, ChildStdin) {
    let run_as = if as_root {
        "runuser -u postgres -- "
    } else {
        ""
    };
    let script = format!(
        "read _ignored; {run_as}'{}' -D '{}' -m immediate stop; rm -rf '{}'",
        bin.join("pg_ctl").display(),
        data.display(),
        root.display()
    );
    let mut child: Child = Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start the server's watchdog");
    let stdin = child.stdin.take().expect("the watchdog's stdin");
    (child, stdin)
}

/// A command for the server's binaries: as the `postgres` user when we are root.
fn server_command(as_root: bool, program: &Path) -> Command {
    if as_root {
        let mut command = Command::new("runuser");
        command.args(["-u", USER, "--"]).arg(program);
        command
    } else {
        Command::new(program)
    }
}

/// The directory of `initdb` and `pg_ctl` (Debian keeps them out of PATH), installing the
/// packages when they are missing.
fn postgres_bin_dir() -> PathBuf {
    if let Some(dir) = installed_bin_dir() {
        return dir;
    }
    assert!(
        is_root(),
        "PostgreSQL's server binaries are missing and only root can install them: \
         run `apt-get install -y postgresql`"
    );
    run(Command::new("apt-get").arg("update"), "apt-get update");
    run(
        Command::new("apt-get")
            .args(["install", "-y", "--no-install-recommends", "postgresql"])
            .env("DEBIAN_FRONTEND", "noninteractive"),
        "apt-get install postgresql",
    );
    installed_bin_dir().expect("apt installed postgresql but no initdb was found")
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb`.
fn installed_bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.starts_with(b"0\n"))
}

/// A port that was free a moment ago (the OS's pick for port 0).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("cannot find a free port")
}

fn run(command: &mut Command, what: &str) {
    let output = command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {what}: {error}"));
    assert!(
        output.status.success(),
        "{what} failed ({}): {}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
