//! `busbar-bench crash`: the crash campaign. Each round starts the broker on one data directory
//! (file storage, kept across rounds), checks what it recovered against the model of what the
//! client knows for sure ([`model`]), drains it, puts a concurrent workload on it ([`workload`])
//! and kills it with SIGKILL at a random moment. The seed drives the kill times and the
//! workload's choices; `--seed` repeats a campaign's schedule (the interleaving of the
//! concurrent clients is the machine's).

mod link;
mod model;
mod verify;
mod workload;

use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::error::BenchError;
use model::Ledger;

/// The queue receiving, completing, abandoning and dead-lettering.
pub(crate) const QUEUE: &str = "crash-queue";
/// The session-enabled queue.
pub(crate) const SESSION_QUEUE: &str = "crash-sessions";
/// The sessions its messages are sent to.
pub(crate) const SESSIONS: [&str; 4] = ["s0", "s1", "s2", "s3"];
/// The topic, fanning out to [`SUBSCRIPTIONS`].
pub(crate) const TOPIC: &str = "crash-topic";
pub(crate) const SUBSCRIPTIONS: [&str; 2] = ["a", "b"];
/// The shortest time a workload runs before the kill.
const MIN_RUN: Duration = Duration::from_millis(50);

pub(crate) fn subscription_path(subscription: &str) -> String {
    format!("{TOPIC}/Subscriptions/{subscription}")
}

/// What `busbar-bench crash` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CrashOptions {
    /// The `busbar` binary.
    pub(crate) busbar: PathBuf,
    /// Where the configuration, the data directory and the broker's log go.
    pub(crate) dir: PathBuf,
    pub(crate) rounds: u64,
    pub(crate) seed: u64,
    /// The longest time a workload runs before the kill.
    pub(crate) max_run: Duration,
}

/// SplitMix64: a small, seedable generator (the campaign needs reproducible draws, not quality).
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..bound`.
    pub(crate) fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next() % u64::try_from(bound.max(1)).unwrap_or(1)).unwrap_or(0)
    }

    /// A generator of its own for a task, drawn from this one.
    pub(crate) fn fork(&mut self) -> Rng {
        Rng::new(self.next())
    }
}

/// The campaign's configuration: its queues and topic, locks long enough to outlive a round and
/// a delivery count that abandons never exhaust.
fn config() -> String {
    let delivery = json!({ "LockDuration": "PT1M", "MaxDeliveryCount": 1000 });
    let mut sessions = delivery.clone();
    sessions["RequiresSession"] = true.into();
    let subscriptions: Vec<_> = SUBSCRIPTIONS
        .iter()
        .map(|name| json!({ "Name": name, "Properties": delivery }))
        .collect();
    json!({ "UserConfig": {
        "Namespaces": [{
            "Name": "sbemulatorns",
            "Queues": [
                { "Name": QUEUE, "Properties": delivery },
                { "Name": SESSION_QUEUE, "Properties": sessions }
            ],
            "Topics": [{ "Name": TOPIC, "Subscriptions": subscriptions }]
        }],
        "Logging": { "Type": "Console" }
    }})
    .to_string()
}

fn file_error(path: &std::path::Path, source: std::io::Error) -> BenchError {
    BenchError::File {
        path: path.display().to_string(),
        source,
    }
}

/// The broker, started on the campaign's data directory.
struct Broker {
    child: Child,
    url: String,
}

/// Small enough that nearly every message's bytes are evicted once durable: every delivery,
/// drain and restart of the campaign reads them back from the store.
const MEMORY_BUDGET: &str = "1MiB";

impl Broker {
    fn start(options: &CrashOptions) -> Result<Self, BenchError> {
        let log_path = options.dir.join("busbar.log");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|source| file_error(&log_path, source))?;
        let mut child = Command::new(&options.busbar)
            .arg("--config")
            .arg(options.dir.join("Config.json"))
            .arg("--data-dir")
            .arg(options.dir.join("data"))
            .args(["--listen", "127.0.0.1:0", "--admin-listen", "none"])
            .args(["--tls-listen", "none"])
            .args(["--memory-budget", MEMORY_BUDGET])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .map_err(|source| file_error(&options.busbar, source))?;
        let stdout = child.stdout.take();
        let mut lines = stdout.map(|out| BufReader::new(out).lines());
        let address = lines.as_mut().and_then(|lines| {
            lines
                .map_while(Result::ok)
                .find_map(|line| line.strip_prefix("listening on ").map(str::to_owned))
        });
        // Keep draining its output so the broker never blocks on a full pipe.
        if let Some(lines) = lines {
            std::thread::spawn(move || lines.for_each(drop));
        }
        let Some(address) = address else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(BenchError::broker(
                "start busbar",
                format!("no `listening on` line; see {}", log_path.display()),
            ));
        };
        Ok(Self {
            child,
            url: format!("amqp://RootManageSharedAccessKey:SAS_KEY_VALUE@{address}"),
        })
    }

    /// SIGKILL: nothing is flushed.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, and whether it exited cleanly.
    fn stop(mut self) -> bool {
        let terminated = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .is_ok_and(|status| status.success());
        terminated && self.child.wait().is_ok_and(|status| status.success())
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the campaign did.
#[derive(Debug, Default)]
struct Totals {
    kills: u64,
    messages: usize,
    dead_lettered: usize,
    states: usize,
}

/// Runs the campaign; an error names the round, the seed and what was wrong.
pub(crate) fn run(options: &CrashOptions) -> Result<(), BenchError> {
    std::fs::create_dir_all(&options.dir).map_err(|source| file_error(&options.dir, source))?;
    let config_path = options.dir.join("Config.json");
    std::fs::write(&config_path, config()).map_err(|source| file_error(&config_path, source))?;
    eprintln!(
        "crash campaign: {} rounds, seed {}, data in {}",
        options.rounds,
        options.seed,
        options.dir.display()
    );
    let runtime = crate::runtime()?;
    let ledger = Arc::new(Mutex::new(Ledger::default()));
    let mut rng = Rng::new(options.seed);
    let mut totals = Totals::default();
    let started = Instant::now();
    for round in 1..=options.rounds + 1 {
        let broker = Broker::start(options)?;
        let fail = |what: String| {
            BenchError::broker(
                "crash campaign",
                format!(
                    "round {round} (seed {}): {what}; data in {}",
                    options.seed,
                    options.dir.display()
                ),
            )
        };
        let found = runtime
            .block_on(verify::collect(&broker.url, round))
            .map_err(|error| fail(format!("checking the restarted broker: {error}")))?;
        let verdict = ledger
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .check(&found);
        totals.messages += verdict.messages;
        totals.states += verdict.states;
        totals.dead_lettered += found.dead_lettered();
        if !verdict.failures.is_empty() {
            return Err(fail(verdict.failures.join("\n  ")));
        }
        if round > options.rounds {
            if !broker.stop() {
                return Err(fail("the broker did not stop cleanly on SIGTERM".into()));
            }
            break;
        }
        let span = options.max_run.saturating_sub(MIN_RUN).as_millis();
        let run_for = MIN_RUN
            + Duration::from_millis(
                u64::try_from(rng.below(usize::try_from(span).unwrap_or(1) + 1)).unwrap_or(0),
            );
        let mut tasks = {
            let _entered = runtime.enter();
            workload::start(&broker.url, &ledger, round, &mut rng)
        };
        let early = runtime.block_on(async {
            tokio::select! {
                ended = tasks.join_next() => Some(ended),
                () = tokio::time::sleep(run_for) => None,
            }
        });
        broker.kill();
        runtime.block_on(tasks.shutdown());
        if let Some(ended) = early {
            return Err(fail(format!(
                "a workload task ended before the kill: {ended:?}"
            )));
        }
        totals.kills += 1;
        eprintln!(
            "round {round}: checked {} messages ({} dead-lettered) and {} session states; \
             killed after {} ms",
            verdict.messages,
            found.dead_lettered(),
            verdict.states,
            run_for.as_millis()
        );
    }
    let elapsed = started.elapsed().as_secs_f64();
    let counts = ledger.lock().unwrap_or_else(PoisonError::into_inner).counts;
    println!(
        "crash campaign passed: {} rounds, {} kills, {} messages ({} dead-lettered) and {} \
         session states checked, 0 failures, {elapsed:.0} s ({:.2} s a round), seed {}\n\
         acknowledged during the workloads: {} sends, {} settlements through $management, \
         {} session states; {} settlements on the link",
        options.rounds,
        totals.kills,
        totals.messages,
        totals.dead_lettered,
        totals.states,
        elapsed / options.rounds.max(1) as f64,
        options.seed,
        counts.sends,
        counts.settlements,
        counts.states,
        counts.link_settlements
    );
    Ok(())
}
