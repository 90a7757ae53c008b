//! `cargo xtask bench`: builds Busbar and `busbar-bench` in release, runs the load scenarios
//! against Busbar (memory and/or file storage) and, with `--peer rabbitmq`, against a private
//! loopback-only RabbitMQ node it installs, starts, declares queues on and stops; then prints
//! the comparison table.

use std::io::{BufRead as _, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cargo;

/// SASL PLAIN credentials Busbar accepts from plain AMQP clients (the emulator's).
const BUSBAR_CREDENTIALS: &str = "RootManageSharedAccessKey:SAS_KEY_VALUE";
/// How long a broker may take to start or stop.
const BROKER_DEADLINE: Duration = Duration::from_secs(180);
/// Where Debian installs RabbitMQ's own scripts (run directly, not through the wrapper that
/// switches to the `rabbitmq` user and the system-wide node).
const RABBITMQ_BIN: &str = "/usr/lib/rabbitmq/bin";

/// Erlang flag binding the distribution listener to loopback.
const LOOPBACK_DISTRIBUTION: &str = "-kernel inet_dist_use_interface {127,0,0,1}";

/// Which Busbar storages to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storages {
    Memory,
    File,
    Both,
    /// Only the peer (useful while comparing peers, or when Busbar cannot serve).
    None,
}

/// What `cargo xtask bench` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BenchOptions {
    quick: bool,
    peer_rabbitmq: bool,
    storages: Storages,
    out: Option<PathBuf>,
    /// Passed to `busbar-bench run --only`: scenario name words, comma-separated.
    only: Option<String>,
    /// How many times every broker runs the scenarios; the comparison shows each scenario's
    /// median round and the range.
    rounds: u32,
}

const USAGE: &str = "usage: cargo xtask bench [--quick] [--peer rabbitmq] \
                     [--storage memory|file|both|none] [--only WORD,…] [--rounds N] [--out DIR]";

fn parse(args: &[String]) -> Result<BenchOptions, String> {
    let mut options = BenchOptions {
        quick: false,
        peer_rabbitmq: false,
        storages: Storages::Both,
        out: None,
        only: None,
        rounds: 1,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .cloned()
                .ok_or(format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--quick" => options.quick = true,
            "--peer" => match value()?.as_str() {
                "rabbitmq" => options.peer_rabbitmq = true,
                other => return Err(format!("unknown peer {other:?}: only rabbitmq")),
            },
            "--storage" => {
                options.storages = match value()?.as_str() {
                    "memory" => Storages::Memory,
                    "file" => Storages::File,
                    "both" => Storages::Both,
                    "none" => Storages::None,
                    other => return Err(format!("unknown storage {other:?}\n{USAGE}")),
                }
            }
            "--out" => options.out = Some(PathBuf::from(value()?)),
            "--only" => options.only = Some(value()?),
            "--rounds" => {
                options.rounds = match value()?.parse() {
                    Ok(rounds) if rounds >= 1 => rounds,
                    _ => return Err(format!("--rounds needs a whole number ≥ 1\n{USAGE}")),
                }
            }
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    Ok(options)
}

/// The workspace root (xtask lives one level below it).
pub(crate) fn workspace_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .map_or(manifest.clone(), Path::to_path_buf)
}

/// Runs `cargo xtask bench`.
pub(crate) fn run(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    let root = workspace_root();
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or(root.join("target"), PathBuf::from);
    let out = options.out.clone().unwrap_or(target.join("bench"));
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let scratch = std::env::temp_dir().join(format!("busbar-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let result = run_in(&options, &target, &out, &scratch);
    // The scratch space holds broker data only; the reports stay in `out`.
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn run_in(options: &BenchOptions, target: &Path, out: &Path, scratch: &Path) -> Result<(), String> {
    let mut packages = vec!["build", "--release", "-p", "busbar-bench"];
    if options.storages != Storages::None {
        packages.extend(["-p", "busbar"]);
    }
    cargo(&packages, &[])?;
    let started = Instant::now();
    let tool = Tool {
        path: target.join("release/busbar-bench"),
        quick: options.quick,
        only: options.only.clone(),
    };
    let storages: &[&str] = match options.storages {
        Storages::Memory => &["memory"],
        Storages::File => &["file"],
        Storages::Both => &["memory", "file"],
        Storages::None => &[],
    };
    let (mut ours, mut peers) = (Vec::new(), Vec::new());
    let mut machine = Vec::new();
    // Rounds interleave the brokers, so a slow spell of the machine hits all of them; every
    // broker starts afresh each round, in its own scratch directory.
    for round in 1..=options.rounds {
        let suffix = if options.rounds > 1 {
            format!("-r{round}")
        } else {
            String::new()
        };
        let scratch = scratch.join(format!("round-{round}"));
        std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
        // The disk's sync time and the cost of waking a thread move by the hour here, and the
        // durable and 1-in-flight rows with them: the report says what they were.
        let reading = tool.output(&["machine-probe", &scratch.display().to_string()])?;
        let reading = format!("round {round}: {}", reading.trim());
        eprintln!("xtask bench: machine before {reading}");
        machine.push(format!("- {reading}"));
        for storage in storages {
            let report = out.join(format!("busbar-{storage}{suffix}.json"));
            run_busbar(
                &tool,
                &target.join("release/busbar"),
                storage,
                &scratch,
                &report,
            )?;
            ours.push(report);
        }
        if options.peer_rabbitmq {
            peers.extend(run_rabbitmq(&tool, &scratch, out, &suffix)?);
        }
    }
    let (ours, peers) = if ours.is_empty() {
        (peers, Vec::new())
    } else {
        (ours, peers)
    };
    let table = format!(
        "{}\n\n#### The machine before each round\n\n{}\n",
        tool.compare(&ours, &peers)?.trim_end(),
        machine.join("\n")
    );
    let path = out.join("comparison.md");
    std::fs::write(&path, &table).map_err(|e| format!("{}: {e}", path.display()))?;
    println!("{table}");
    eprintln!(
        "xtask bench: brokers and scenarios took {:.0} s after the build; reports in {}",
        started.elapsed().as_secs_f64(),
        out.display()
    );
    Ok(())
}

/// The built `busbar-bench` binary.
struct Tool {
    path: PathBuf,
    quick: bool,
    only: Option<String>,
}

impl Tool {
    fn output(&self, args: &[&str]) -> Result<String, String> {
        let output = Command::new(&self.path)
            .args(args)
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.path.display()))?;
        if !output.status.success() {
            return Err(format!(
                "busbar-bench {} failed ({})",
                args.join(" "),
                output.status
            ));
        }
        String::from_utf8(output.stdout).map_err(|_| "busbar-bench printed non-UTF-8".to_owned())
    }

    /// Runs the scenarios (the topic fan-out ones only if the broker has `busbar-config`'s
    /// topics); the table goes to our standard output as it is printed.
    fn run(
        &self,
        url: &str,
        address: &str,
        label: &str,
        pid: u32,
        report: &Path,
        topics: bool,
    ) -> Result<(), String> {
        let pid = pid.to_string();
        let report_path = report.display().to_string();
        let mut args = vec![
            "run",
            "--url",
            url,
            "--address",
            address,
            "--label",
            label,
            "--broker-pid",
            &pid,
            "--json",
            &report_path,
        ];
        if self.quick {
            args.push("--quick");
        }
        if let Some(only) = &self.only {
            args.extend(["--only", only]);
        }
        if !topics {
            args.push("--no-topics");
        }
        eprintln!("$ busbar-bench {}", args.join(" "));
        print!("{}", self.output(&args)?);
        Ok(())
    }

    fn compare(&self, ours: &[PathBuf], peers: &[PathBuf]) -> Result<String, String> {
        let join = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        let (ours, peers) = (join(ours), join(peers));
        let mut args = vec!["compare", "--ours", ours.as_str()];
        if !peers.is_empty() {
            args.extend(["--peer", peers.as_str()]);
        }
        self.output(&args)
    }
}

/// A broker process that is stopped (SIGTERM, then SIGKILL after the deadline) when dropped.
struct Broker {
    child: Child,
    name: &'static str,
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let started = Instant::now();
        while started.elapsed() < BROKER_DEADLINE {
            if let Ok(Some(_)) = self.child.try_wait() {
                eprintln!("xtask bench: {} stopped", self.name);
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!(
            "xtask bench: {} did not stop in time; killing it",
            self.name
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn run_busbar(
    tool: &Tool,
    binary: &Path,
    storage: &str,
    scratch: &Path,
    report: &Path,
) -> Result<(), String> {
    let config = scratch.join("Config.json");
    std::fs::write(&config, tool.output(&["busbar-config"])?)
        .map_err(|e| format!("{}: {e}", config.display()))?;
    let log_path = report.with_extension("log");
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let mut command = Command::new(binary);
    command.arg("--config").arg(&config).args([
        "--listen",
        "127.0.0.1:0",
        "--admin-listen",
        "none",
        "--tls-listen",
        "none",
    ]);
    if storage == "memory" {
        command.arg("--memory");
    } else {
        command.arg("--data-dir").arg(scratch.join("busbar-data"));
    }
    eprintln!("$ {command:?}");
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let stdout = child.stdout.take();
    let broker = Broker {
        child,
        name: "busbar",
    };
    let address = stdout.and_then(listening_address).ok_or_else(|| {
        format!(
            "busbar did not print `listening on ADDR`; see {}",
            log_path.display()
        )
    })?;
    let url = format!("amqp://{BUSBAR_CREDENTIALS}@{address}");
    let label = format!("busbar-{storage}");
    tool.run(&url, "bench-{n}", &label, broker.child.id(), report, true)
}

/// Reads the broker's standard output up to `listening on ADDR`, then keeps draining it on a
/// thread so the broker never blocks on a full pipe.
fn listening_address(stdout: std::process::ChildStdout) -> Option<String> {
    let mut lines = BufReader::new(stdout).lines();
    let address = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| line.strip_prefix("listening on ").map(str::to_owned))?;
    std::thread::spawn(move || lines.for_each(drop));
    Some(address)
}

/// A free loopback port (bound and released; the broker binds it right after).
fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

/// Installs RabbitMQ from Debian's packages unless present; returns its major version.
fn ensure_rabbitmq() -> Result<u32, String> {
    if !Path::new(RABBITMQ_BIN).join("rabbitmq-server").exists() {
        eprintln!("xtask bench: installing rabbitmq-server from Debian's packages");
        let apt = |args: &[&str]| -> Result<(), String> {
            let status = Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .map_err(|e| format!("cannot run apt-get: {e}"))?;
            status
                .success()
                .then_some(())
                .ok_or(format!("apt-get {} failed", args.join(" ")))
        };
        // The package may start the system-wide node (where services are allowed to start):
        // make that one listen on loopback only too, unless the machine already configures it,
        // and stop it again, since the benchmark runs its own private node.
        let system_env = Path::new("/etc/rabbitmq/rabbitmq-env.conf");
        if !system_env.exists() {
            std::fs::create_dir_all("/etc/rabbitmq")
                .and_then(|()| std::fs::write(system_env, "NODE_IP_ADDRESS=127.0.0.1\n"))
                .map_err(|e| format!("{}: {e}", system_env.display()))?;
        }
        apt(&["update"])?;
        apt(&["install", "-y", "rabbitmq-server"])?;
        let _ = Command::new("service")
            .args(["rabbitmq-server", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let output = Command::new("dpkg-query")
        .args(["-W", "-f=${Version}", "rabbitmq-server"])
        .output()
        .map_err(|e| format!("cannot run dpkg-query: {e}"))?;
    let version = String::from_utf8_lossy(&output.stdout).into_owned();
    eprintln!("xtask bench: rabbitmq-server {version}");
    version
        .split(['.', '-', ':'])
        .next()
        .and_then(|major| major.parse().ok())
        .ok_or(format!("cannot read the RabbitMQ version from {version:?}"))
}

/// A private RabbitMQ node: its own name, ports, data and cookie, on 127.0.0.1 only.
struct RabbitNode {
    env: Vec<(String, String)>,
    node: String,
    amqp_port: u16,
    management_port: u16,
    dir: PathBuf,
}

impl RabbitNode {
    fn new(scratch: &Path, major: u32) -> Result<Self, String> {
        let dir = scratch.join("rabbitmq");
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let (amqp_port, management_port, dist_port) = (free_port()?, free_port()?, free_port()?);
        let node = format!("busbar-bench-{}@localhost", std::process::id());
        let plugins = if major >= 4 {
            "[rabbitmq_management]."
        } else {
            "[rabbitmq_amqp1_0,rabbitmq_management]."
        };
        let config = format!(
            "listeners.tcp.1 = 127.0.0.1:{amqp_port}\n\
             management.tcp.ip = 127.0.0.1\nmanagement.tcp.port = {management_port}\n"
        );
        let write = |name: &str, text: &str| {
            std::fs::write(dir.join(name), text).map_err(|e| format!("{name}: {e}"))
        };
        write("enabled_plugins", plugins)?;
        write("rabbitmq.conf", &config)?;
        let path = |name: &str| dir.join(name).display().to_string();
        let env = [
            ("RABBITMQ_NODENAME", node.clone()),
            ("RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1".to_owned()),
            ("RABBITMQ_NODE_PORT", amqp_port.to_string()),
            ("RABBITMQ_DIST_PORT", dist_port.to_string()),
            ("ERL_EPMD_ADDRESS", "127.0.0.1".to_owned()),
            // Erlang distribution (node and CLI) on loopback too.
            (
                "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS",
                LOOPBACK_DISTRIBUTION.to_owned(),
            ),
            ("RABBITMQ_CTL_ERL_ARGS", LOOPBACK_DISTRIBUTION.to_owned()),
            ("RABBITMQ_CONFIG_FILE", path("rabbitmq.conf")),
            ("RABBITMQ_ENABLED_PLUGINS_FILE", path("enabled_plugins")),
            ("RABBITMQ_MNESIA_BASE", path("mnesia")),
            ("RABBITMQ_LOG_BASE", path("log")),
            ("RABBITMQ_PID_FILE", path("pid")),
            // The Erlang cookie lives in $HOME: a private one for this node and its rabbitmqctl.
            ("HOME", dir.display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        Ok(Self {
            env,
            node,
            amqp_port,
            management_port,
            dir,
        })
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    fn ctl(&self, args: &[&str]) -> Result<(), String> {
        let status = self
            .command(&format!("{RABBITMQ_BIN}/rabbitmqctl"))
            .args(["-n", &self.node])
            .args(args)
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run rabbitmqctl: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or(format!("rabbitmqctl {} failed", args.join(" ")))
    }

    fn declare(&self, name: &str, kind: &str) -> Result<(), String> {
        let arguments = format!(r#"{{"x-queue-type":"{kind}"}}"#);
        let status = Command::new("rabbitmqadmin")
            .args(["-H", "127.0.0.1", "-P", &self.management_port.to_string()])
            .args(["-u", "guest", "-p", "guest", "declare", "queue"])
            .args([
                format!("name={name}"),
                "durable=true".to_owned(),
                format!("arguments={arguments}"),
            ])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run rabbitmqadmin: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or(format!("declaring {kind} queue {name} failed"))
    }

    fn pid(&self) -> Result<u32, String> {
        let text = std::fs::read_to_string(self.dir.join("pid"))
            .map_err(|e| format!("RabbitMQ pid file: {e}"))?;
        text.trim()
            .parse()
            .map_err(|_| format!("RabbitMQ pid file holds {text:?}"))
    }
}

fn epmd_running() -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], 4369).into(), Duration::from_secs(1)).is_ok()
}

/// Runs the scenarios against durable classic and quorum queues of a private RabbitMQ node.
fn run_rabbitmq(
    tool: &Tool,
    scratch: &Path,
    out: &Path,
    suffix: &str,
) -> Result<Vec<PathBuf>, String> {
    let major = ensure_rabbitmq()?;
    let node = RabbitNode::new(scratch, major)?;
    let epmd_was_running = epmd_running();
    let log_path = out.join(format!("rabbitmq-server{suffix}.log"));
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let child = node
        .command(&format!("{RABBITMQ_BIN}/rabbitmq-server"))
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start rabbitmq-server: {e}"))?;
    let broker = Broker {
        child,
        name: "rabbitmq",
    };
    let result = (|| {
        // `wait` waits for the pid file, then for the node; `await_startup` fails at once while
        // the node is still booting.
        let pid_file = node.dir.join("pid").display().to_string();
        let deadline = BROKER_DEADLINE.as_secs().to_string();
        node.ctl(&["wait", &pid_file, "--timeout", &deadline])
            .map_err(|e| format!("{e}; see {}", log_path.display()))?;
        let queues = tool.output(&["queue-names"])?;
        let address_prefix = if major >= 4 {
            "/queues/"
        } else {
            "/amq/queue/"
        };
        let url = format!("amqp://guest:guest@127.0.0.1:{}", node.amqp_port);
        let pid = node.pid()?;
        let mut reports = Vec::new();
        for kind in ["classic", "quorum"] {
            for name in queues.lines() {
                node.declare(&format!("{kind}-{name}"), kind)?;
            }
            let report = out.join(format!("rabbitmq-{kind}{suffix}.json"));
            let address = format!("{address_prefix}{kind}-bench-{{n}}");
            // RabbitMQ has no Service Bus topics: the fan-out scenarios are Busbar's only.
            let label = format!("rabbitmq-{kind}");
            tool.run(&url, &address, &label, pid, &report, false)?;
            reports.push(report);
        }
        Ok(reports)
    })();
    // Stop the node cleanly first; the Broker guard then reaps (or kills) the process.
    if let Err(error) = node.ctl(&["stop"]) {
        eprintln!("xtask bench: {error}");
    }
    drop(broker);
    if !epmd_was_running {
        let _ = Command::new("epmd")
            .args(["-kill"])
            .env("ERL_EPMD_ADDRESS", "127.0.0.1")
            .stdout(Stdio::null())
            .status();
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &str) -> Result<BenchOptions, String> {
        parse(
            &words
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn flags() {
        assert_eq!(
            parse_words("--quick --peer rabbitmq --storage file --only fan-out --out /tmp/x"),
            Ok(BenchOptions {
                quick: true,
                peer_rabbitmq: true,
                storages: Storages::File,
                out: Some(PathBuf::from("/tmp/x")),
                only: Some("fan-out".to_owned()),
                rounds: 1,
            })
        );
        assert_eq!(parse_words("").map(|o| o.storages), Ok(Storages::Both));
        assert_eq!(parse_words("--rounds 3").map(|o| o.rounds), Ok(3));
        assert!(parse_words("--rounds 0").is_err());
        assert!(parse_words("--rounds many").is_err());
        assert!(parse_words("--peer kafka").is_err());
        assert!(parse_words("--storage").is_err());
        assert!(parse_words("--fast").is_err());
    }
}
