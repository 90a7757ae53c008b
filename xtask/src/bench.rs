//! `cargo xtask bench`: builds Busbar and `busbar-bench` in release, runs the load scenarios
//! (or, with `--matrix`, the comparison matrix) against Busbar (memory and/or file storage, and
//! optionally a baseline binary) and against the peers asked for — RabbitMQ 3.x from Debian,
//! RabbitMQ 4 and ActiveMQ Artemis as `../shared/tools/peers/` installs them — each started
//! afresh every round, interleaved, and stopped; then prints the comparison table.

use std::io::{BufRead as _, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::cargo;

mod artemis;
mod rabbitmq;

/// SASL PLAIN credentials Busbar accepts from plain AMQP clients (the emulator's).
const BUSBAR_CREDENTIALS: &str = "RootManageSharedAccessKey:SAS_KEY_VALUE";
/// How long a broker may take to start or stop.
const BROKER_DEADLINE: Duration = Duration::from_secs(180);
/// Subscriptions of the matrix's topic (`busbar-bench`'s `matrix::TOPIC_SUBSCRIPTIONS`), which
/// a peer declares itself.
const TOPIC_SUBSCRIPTIONS: usize = 5;
/// Unmeasured send + receive before each broker's matrix (Artemis's JIT needs it; every broker
/// gets the same).
const WARMUP_SECONDS: [u32; 2] = [5, 20];

/// Which Busbar storages to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Storages {
    Memory,
    File,
    Both,
    /// Only the peer (useful while comparing peers, or when Busbar cannot serve).
    None,
}

/// A peer broker to compare with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    /// Debian's RabbitMQ 3.x, classic and quorum queues.
    Rabbitmq,
    /// RabbitMQ 4.0, classic and quorum queues.
    Rabbitmq4,
    /// ActiveMQ Artemis 2.44.
    Artemis,
}

/// What `cargo xtask bench` was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct BenchOptions {
    quick: bool,
    peers: Vec<Peer>,
    /// `None`: both, or file only for the matrix (its cells are durable).
    storages: Option<Storages>,
    out: Option<PathBuf>,
    /// Passed to `busbar-bench run --only`: scenario name words, comma-separated.
    only: Option<String>,
    /// How many times every broker runs the scenarios; the comparison shows each scenario's
    /// median round and the range.
    rounds: u32,
    /// The comparison matrix instead of the scenarios.
    matrix: bool,
    /// Another Busbar binary run beside this build's (`busbar-STORAGE-before`).
    baseline: Option<PathBuf>,
}

impl BenchOptions {
    fn storages(&self) -> &'static [&'static str] {
        let default = if self.matrix {
            Storages::File
        } else {
            Storages::Both
        };
        match self.storages.unwrap_or(default) {
            Storages::Memory => &["memory"],
            Storages::File => &["file"],
            Storages::Both => &["memory", "file"],
            Storages::None => &[],
        }
    }
}

const USAGE: &str = "usage: cargo xtask bench [--quick] [--matrix] \
                     [--peer rabbitmq|rabbitmq4|artemis]… [--baseline BUSBAR-BINARY] \
                     [--storage memory|file|both|none] [--only WORD,…] [--rounds N] [--out DIR]";

fn parse(args: &[String]) -> Result<BenchOptions, String> {
    let mut options = BenchOptions {
        quick: false,
        peers: Vec::new(),
        storages: None,
        out: None,
        only: None,
        rounds: 1,
        matrix: false,
        baseline: None,
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
            "--matrix" => options.matrix = true,
            "--peer" => {
                let peer = match value()?.as_str() {
                    "rabbitmq" => Peer::Rabbitmq,
                    "rabbitmq4" => Peer::Rabbitmq4,
                    "artemis" => Peer::Artemis,
                    other => {
                        return Err(format!(
                            "unknown peer {other:?}: rabbitmq, rabbitmq4 or artemis"
                        ));
                    }
                };
                if !options.peers.contains(&peer) {
                    options.peers.push(peer);
                }
            }
            "--baseline" => options.baseline = Some(PathBuf::from(value()?)),
            "--storage" => {
                options.storages = Some(match value()?.as_str() {
                    "memory" => Storages::Memory,
                    "file" => Storages::File,
                    "both" => Storages::Both,
                    "none" => Storages::None,
                    other => return Err(format!("unknown storage {other:?}\n{USAGE}")),
                })
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

/// Where the peers are installed: `$PEERS_DIR`, as the setup scripts read it, or their default.
fn peers_dir() -> PathBuf {
    std::env::var_os("PEERS_DIR").map_or_else(
        || PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/busbar-peers"),
        PathBuf::from,
    )
}

/// Runs one of the peers' setup scripts, `../shared/tools/peers/NAME` beside the workspace.
fn setup_script(name: &str) -> Result<(), String> {
    let script = workspace_root().join("../shared/tools/peers").join(name);
    eprintln!("xtask bench: installing a peer with {}", script.display());
    let status = Command::new("bash")
        .arg(&script)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    status
        .success()
        .then_some(())
        .ok_or(format!("{} failed ({status})", script.display()))
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

/// The machine's load averages (`/proc/loadavg`'s first three fields).
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

fn run_in(options: &BenchOptions, target: &Path, out: &Path, scratch: &Path) -> Result<(), String> {
    let storages = options.storages();
    let mut packages = vec!["build", "--release", "-p", "busbar-bench"];
    if !storages.is_empty() {
        packages.extend(["-p", "busbar"]);
    }
    cargo(&packages, &[])?;
    let started = Instant::now();
    let tool = Tool {
        path: target.join("release/busbar-bench"),
        quick: options.quick,
        only: options.only.clone(),
        matrix: options.matrix,
    };
    let mut binaries = vec![(target.join("release/busbar"), "")];
    if let Some(baseline) = &options.baseline {
        binaries.push((baseline.clone(), "-before"));
    }
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
        // durable and 1-in-flight rows with them: the report says what they were, and how
        // loaded the machine was (other work shares its two cores).
        let reading = tool.output(&["machine-probe", &scratch.display().to_string()])?;
        let reading = format!(
            "round {round}: {}; load average {}",
            reading.trim(),
            load_average()
        );
        eprintln!("xtask bench: machine before {reading}");
        machine.push(format!("- {reading}"));
        for storage in storages {
            for (binary, tag) in &binaries {
                let label = format!("busbar-{storage}{tag}");
                let report = out.join(format!("{label}{suffix}.json"));
                run_busbar(&tool, binary, storage, &label, &scratch, &report)?;
                ours.push(report);
            }
        }
        for peer in &options.peers {
            let scratch = scratch.join("peer");
            let reports = match peer {
                Peer::Rabbitmq => {
                    rabbitmq::run(&rabbitmq::Install::debian()?, &tool, &scratch, out, &suffix)?
                }
                Peer::Rabbitmq4 => rabbitmq::run(
                    &rabbitmq::Install::version_4()?,
                    &tool,
                    &scratch,
                    out,
                    &suffix,
                )?,
                Peer::Artemis => artemis::run(&tool, &scratch, out, &suffix)?,
            };
            peers.extend(reports);
            // A peer's data goes with its round: the disk is shared.
            let _ = std::fs::remove_dir_all(&scratch);
        }
        machine.push(format!(
            "  (after round {round}: load average {})",
            load_average()
        ));
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
    matrix: bool,
}

/// A running broker to measure, as `busbar-bench run` is told about it.
struct Target {
    url: String,
    /// The address template of queue `{n}`.
    address: String,
    label: String,
    pid: u32,
    /// Whether it has `busbar-config`'s fan-out topics.
    topics: bool,
    /// The matrix's topic: send address and the subscriptions' receive template.
    matrix_topic: Option<(String, String)>,
    /// Whether it has the matrix's session-enabled queue.
    sessions: bool,
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

    /// Runs the scenarios or the matrix against `target`; the table goes to our standard output
    /// as it is printed.
    fn run(&self, target: &Target, report: &Path) -> Result<(), String> {
        let mut args: Vec<String> = [
            "run",
            "--url",
            &target.url,
            "--address",
            &target.address,
            "--label",
            &target.label,
            "--broker-pid",
            &target.pid.to_string(),
            "--json",
            &report.display().to_string(),
        ]
        .map(str::to_owned)
        .to_vec();
        let mut flag = |words: &[&str]| args.extend(words.iter().map(|w| (*w).to_owned()));
        if self.quick {
            flag(&["--quick"]);
        }
        if let Some(only) = &self.only {
            flag(&["--only", only]);
        }
        if !target.topics {
            flag(&["--no-topics"]);
        }
        if self.matrix {
            let warmup = WARMUP_SECONDS[usize::from(!self.quick)].to_string();
            flag(&["--matrix", "--warmup", &warmup]);
            let topic = target
                .matrix_topic
                .as_ref()
                .map_or("none".to_owned(), |(send, receive)| {
                    format!("{send},{receive}")
                });
            flag(&["--matrix-topic", &topic]);
            if !target.sessions {
                flag(&["--sessions-queue", "none"]);
            }
        }
        eprintln!("$ busbar-bench {}", args.join(" "));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
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
    label: &str,
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
    tool.run(
        &Target {
            url: format!("amqp://{BUSBAR_CREDENTIALS}@{address}"),
            address: "bench-{n}".to_owned(),
            label: label.to_owned(),
            pid: broker.child.id(),
            topics: true,
            // busbar-bench's defaults: `busbar-config` declares both.
            matrix_topic: Some((
                "matrix-topic".to_owned(),
                "matrix-topic/Subscriptions/sub-{n}".to_owned(),
            )),
            sessions: true,
        },
        report,
    )
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
                peers: vec![Peer::Rabbitmq],
                storages: Some(Storages::File),
                out: Some(PathBuf::from("/tmp/x")),
                only: Some("fan-out".to_owned()),
                rounds: 1,
                matrix: false,
                baseline: None,
            })
        );
        assert_eq!(
            parse_words("").map(|o| o.storages()),
            Ok(&["memory", "file"][..])
        );
        let matrix = parse_words(
            "--matrix --peer rabbitmq4 --peer artemis --peer artemis --baseline /tmp/busbar-before",
        )
        .unwrap();
        assert_eq!(matrix.peers, [Peer::Rabbitmq4, Peer::Artemis]);
        assert_eq!(matrix.storages(), ["file"]);
        assert_eq!(matrix.baseline, Some(PathBuf::from("/tmp/busbar-before")));
        assert_eq!(parse_words("--rounds 3").map(|o| o.rounds), Ok(3));
        assert!(parse_words("--rounds 0").is_err());
        assert!(parse_words("--rounds many").is_err());
        assert!(parse_words("--peer kafka").is_err());
        assert!(parse_words("--storage").is_err());
        assert!(parse_words("--fast").is_err());
    }
}
