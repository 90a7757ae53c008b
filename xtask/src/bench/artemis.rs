//! ActiveMQ Artemis as a peer of `cargo xtask bench` (`--peer artemis`): the distribution that
//! `../shared/tools/peers/artemis-setup.sh` fetches, a fresh broker instance every round (its
//! journal tuned to this disk by `artemis create`, durable NIO journal, loopback only, the
//! bench's anycast queues and the matrix's multicast topic declared in `broker.xml`), started,
//! measured and stopped.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{BROKER_DEADLINE, Broker, TOPIC_SUBSCRIPTIONS, Target, Tool, peers_dir, setup_script};

/// The release the setup script installs.
const VERSION: &str = "2.44.0";
/// Offsets tried for the instance's ports (AMQP on 5672 + offset, core on 61616 + offset).
const PORT_OFFSETS: std::ops::Range<u16> = 300..400;
const AMQP_PORT: u16 = 5672;
const CORE_PORT: u16 = 61616;
/// The matrix's topic: a multicast address with one durable queue per subscription, which a
/// receiver names fully qualified (`ADDRESS::QUEUE`).
const TOPIC: &str = "matrix-topic";

fn port_free(port: u16) -> bool {
    TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200)).is_err()
}

/// Creates a broker instance in `dir` with the bench's queues; returns its AMQP port.
fn create(tool: &Tool, home: &Path, dir: &Path) -> Result<u16, String> {
    let offset = PORT_OFFSETS
        .clone()
        .find(|offset| port_free(AMQP_PORT + offset) && port_free(CORE_PORT + offset))
        .ok_or("no free ports for Artemis")?;
    let queues = tool
        .output(&["queue-names"])?
        .lines()
        .collect::<Vec<_>>()
        .join(",");
    let status = Command::new(home.join("bin/artemis"))
        .args([
            "create",
            "--silent",
            "--user",
            "guest",
            "--password",
            "guest",
        ])
        .args([
            "--allow-anonymous",
            "--host",
            "127.0.0.1",
            "--no-web",
            "--nio",
        ])
        .args([
            "--no-mqtt-acceptor",
            "--no-stomp-acceptor",
            "--no-hornetq-acceptor",
        ])
        .arg(format!("--port-offset={offset}"))
        .arg(format!("--queues={queues}"))
        .arg(format!("--addresses={TOPIC}:multicast"))
        .arg(dir)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run artemis create: {e}"))?;
    if !status.success() {
        return Err(format!("artemis create {} failed", dir.display()));
    }
    let config = dir.join("etc/broker.xml");
    let text =
        std::fs::read_to_string(&config).map_err(|e| format!("{}: {e}", config.display()))?;
    let empty = format!("<address name=\"{TOPIC}\">\n            <multicast/>");
    let queues: String = (0..TOPIC_SUBSCRIPTIONS)
        .map(|index| format!("<queue name=\"{TOPIC}-sub-{index}\" />"))
        .collect();
    let declared = format!("<address name=\"{TOPIC}\"><multicast>{queues}</multicast>");
    if !text.contains(&empty) {
        return Err(format!(
            "{}: no empty {TOPIC} address to fill",
            config.display()
        ));
    }
    std::fs::write(&config, text.replace(&empty, &declared))
        .map_err(|e| format!("{}: {e}", config.display()))?;
    Ok(AMQP_PORT + offset)
}

/// Runs the scenarios (or the matrix) against a fresh Artemis instance under `scratch`.
pub(super) fn run(
    tool: &Tool,
    scratch: &Path,
    out: &Path,
    suffix: &str,
) -> Result<Vec<PathBuf>, String> {
    let home = peers_dir().join(format!("artemis/apache-artemis-{VERSION}"));
    if !home.join("bin/artemis").exists() {
        setup_script("artemis-setup.sh")?;
    }
    let dir = scratch.join("artemis");
    let port = create(tool, &home, &dir)?;
    let log_path = out.join(format!("artemis{suffix}.log"));
    let log =
        std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
    // `artemis run` execs the JVM: the child is the broker process.
    let child = Command::new(dir.join("bin/artemis"))
        .arg("run")
        .stdout(log.try_clone().map_err(|e| e.to_string())?)
        .stderr(log)
        .spawn()
        .map_err(|e| format!("cannot start artemis: {e}"))?;
    let broker = Broker {
        child,
        name: "artemis",
    };
    let started = Instant::now();
    while port_free(port) {
        if started.elapsed() > BROKER_DEADLINE {
            return Err(format!(
                "Artemis did not listen; see {}",
                log_path.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let report = out.join(format!("artemis{suffix}.json"));
    tool.run(
        &Target {
            url: format!("amqp://guest:guest@127.0.0.1:{port}"),
            address: "bench-{n}".to_owned(),
            label: "artemis".to_owned(),
            pid: broker.child.id(),
            topics: false,
            matrix_topic: Some((TOPIC.to_owned(), format!("{TOPIC}::{TOPIC}-sub-{{n}}"))),
            sessions: false,
        },
        &report,
    )?;
    drop(broker);
    Ok(vec![report])
}
