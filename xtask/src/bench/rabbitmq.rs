//! RabbitMQ peers for `cargo xtask bench`: Debian's 3.x (`--peer rabbitmq`, installed with apt
//! if missing) and 4.0 (`--peer rabbitmq4`, as `../shared/tools/peers/rmq4-setup.sh` installs it
//! under a private prefix). Either runs as a private node (its own name, cookie, data and
//! ports, loopback only) with durable classic and quorum queues declared over the management
//! API, and is stopped afterwards.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{
    BROKER_DEADLINE, Broker, TOPIC_SUBSCRIPTIONS, Target, Tool, free_port, peers_dir, setup_script,
};

/// Where Debian installs RabbitMQ's own scripts (run directly, not through the wrapper that
/// switches to the `rabbitmq` user and the system-wide node).
const DEBIAN_BIN: &str = "/usr/lib/rabbitmq/bin";

/// Erlang flag binding the distribution listener to loopback.
const LOOPBACK_DISTRIBUTION: &str = "-kernel inet_dist_use_interface {127,0,0,1}";

/// The queue kinds declared and measured, each a column of its own.
const KINDS: [&str; 2] = ["classic", "quorum"];

/// A RabbitMQ installation: where its scripts are, what else goes on `PATH`, its major version.
pub(super) struct Install {
    bin: PathBuf,
    path_prefix: Option<PathBuf>,
    major: u32,
    /// The label prefix of its reports (`rabbitmq`, `rabbitmq4`).
    label: &'static str,
}

impl Install {
    /// Debian's package, installed from the distribution if missing.
    pub(super) fn debian() -> Result<Self, String> {
        Ok(Self {
            bin: PathBuf::from(DEBIAN_BIN),
            path_prefix: None,
            major: ensure_debian()?,
            label: "rabbitmq",
        })
    }

    /// RabbitMQ 4 under the peers directory, set up by `rmq4-setup.sh` if missing.
    pub(super) fn version_4() -> Result<Self, String> {
        let root = peers_dir().join("rmq4root/usr/lib");
        let bin = root.join("rabbitmq/bin");
        if !bin.join("rabbitmq-server").exists() {
            setup_script("rmq4-setup.sh")?;
        }
        Ok(Self {
            bin,
            path_prefix: Some(root.join("erlang/bin")),
            major: 4,
            label: "rabbitmq4",
        })
    }
}

/// Installs RabbitMQ from Debian's packages unless present; returns its major version.
fn ensure_debian() -> Result<u32, String> {
    if !Path::new(DEBIAN_BIN).join("rabbitmq-server").exists() {
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
struct RabbitNode<'a> {
    install: &'a Install,
    env: Vec<(String, String)>,
    node: String,
    amqp_port: u16,
    management_port: u16,
    dir: PathBuf,
}

impl<'a> RabbitNode<'a> {
    fn new(install: &'a Install, scratch: &Path) -> Result<Self, String> {
        let dir = scratch.join(install.label);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let (amqp_port, management_port, dist_port) = (free_port()?, free_port()?, free_port()?);
        let node = format!("busbar-bench-{}@localhost", std::process::id());
        let plugins = if install.major >= 4 {
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
        let mut env: Vec<(String, String)> = [
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
        if let Some(prefix) = &install.path_prefix {
            let path = std::env::var("PATH").unwrap_or_default();
            let bin = install.bin.display();
            env.push(("PATH".into(), format!("{}:{bin}:{path}", prefix.display())));
            // Not the machine's /etc/rabbitmq/rabbitmq-env.conf, which is for Debian's node.
            env.push(("RABBITMQ_CONF_ENV_FILE".into(), path_of(&dir, "env.conf")));
            write("env.conf", "")?;
        }
        Ok(Self {
            install,
            env,
            node,
            amqp_port,
            management_port,
            dir,
        })
    }

    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.install.bin.join(program));
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    fn ctl(&self, args: &[&str]) -> Result<(), String> {
        let status = self
            .command("rabbitmqctl")
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

    /// `PUT`s `body` to the management API's `path` (under `/api/`, vhost `/`).
    fn put(&self, path: &str, body: &str) -> Result<(), String> {
        let url = format!("http://127.0.0.1:{}/api/{path}", self.management_port);
        let status = Command::new("curl")
            .args(["-sf", "-u", "guest:guest", "-X", "PUT"])
            .args(["-H", "content-type: application/json", "-d", body, &url])
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run curl: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or(format!("PUT {url} {body} failed"))
    }

    fn declare_queue(&self, name: &str, kind: &str) -> Result<(), String> {
        let body = format!(r#"{{"durable":true,"arguments":{{"x-queue-type":"{kind}"}}}}"#);
        self.put(&format!("queues/%2F/{name}"), &body)
    }

    /// A fanout exchange with `subscriptions` queues of `kind` bound, the matrix's topic.
    fn declare_topic(&self, kind: &str, subscriptions: usize) -> Result<(), String> {
        let exchange = format!("{kind}-matrix-topic");
        self.put(
            &format!("exchanges/%2F/{exchange}"),
            r#"{"type":"fanout","durable":true}"#,
        )?;
        for index in 0..subscriptions {
            let queue = format!("{exchange}-sub-{index}");
            self.declare_queue(&queue, kind)?;
            let url = format!(
                "http://127.0.0.1:{}/api/bindings/%2F/e/{exchange}/q/{queue}",
                self.management_port
            );
            let status = Command::new("curl")
                .args(["-sf", "-u", "guest:guest", "-X", "POST"])
                .args(["-H", "content-type: application/json", "-d", "{}", &url])
                .stdout(Stdio::null())
                .status()
                .map_err(|e| format!("cannot run curl: {e}"))?;
            if !status.success() {
                return Err(format!("binding {queue} to {exchange} failed"));
            }
        }
        Ok(())
    }

    fn pid(&self) -> Result<u32, String> {
        let text = std::fs::read_to_string(self.dir.join("pid"))
            .map_err(|e| format!("RabbitMQ pid file: {e}"))?;
        text.trim()
            .parse()
            .map_err(|_| format!("RabbitMQ pid file holds {text:?}"))
    }
}

fn path_of(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

fn epmd_running() -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], 4369).into(), Duration::from_secs(1)).is_ok()
}

/// Runs the scenarios (or the matrix) against durable classic and quorum queues of a private
/// node of `install`.
pub(super) fn run(
    install: &Install,
    tool: &Tool,
    scratch: &Path,
    out: &Path,
    suffix: &str,
) -> Result<Vec<PathBuf>, String> {
    let node = RabbitNode::new(install, scratch)?;
    let epmd_was_running = epmd_running();
    let log_path = out.join(format!("{}-server{suffix}.log", install.label));
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    let child = node
        .command("rabbitmq-server")
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start rabbitmq-server: {e}"))?;
    let broker = Broker {
        child,
        name: install.label,
    };
    let result = (|| {
        // `wait` waits for the pid file, then for the node; `await_startup` fails at once while
        // the node is still booting.
        let pid_file = path_of(&node.dir, "pid");
        let deadline = BROKER_DEADLINE.as_secs().to_string();
        node.ctl(&["wait", &pid_file, "--timeout", &deadline])
            .map_err(|e| format!("{e}; see {}", log_path.display()))?;
        let queues = tool.output(&["queue-names"])?;
        let address_prefix = if install.major >= 4 {
            "/queues/"
        } else {
            "/amq/queue/"
        };
        let url = format!("amqp://guest:guest@127.0.0.1:{}", node.amqp_port);
        let pid = node.pid()?;
        let mut reports = Vec::new();
        for kind in KINDS {
            for name in queues.lines() {
                node.declare_queue(&format!("{kind}-{name}"), kind)?;
            }
            // RabbitMQ 4 addresses exchanges as `/exchanges/NAME`: the matrix's topic is a
            // fanout exchange with its subscriptions' queues bound. Not mapped on 3.x.
            let matrix_topic = if install.major >= 4 {
                node.declare_topic(kind, TOPIC_SUBSCRIPTIONS)?;
                Some((
                    format!("/exchanges/{kind}-matrix-topic"),
                    format!("/queues/{kind}-matrix-topic-sub-{{n}}"),
                ))
            } else {
                None
            };
            let report = out.join(format!("{}-{kind}{suffix}.json", install.label));
            tool.run(
                &Target {
                    url: url.clone(),
                    address: format!("{address_prefix}{kind}-bench-{{n}}"),
                    label: format!("{}-{kind}", install.label),
                    pid,
                    // RabbitMQ has no Service Bus topics: the fan-out scenarios are Busbar's.
                    topics: false,
                    matrix_topic,
                    sessions: false,
                },
                &report,
            )?;
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
        // The node's `PATH` finds the epmd of its Erlang.
        let _ = Command::new("epmd")
            .args(["-kill"])
            .envs(node.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .status();
    }
    result
}
