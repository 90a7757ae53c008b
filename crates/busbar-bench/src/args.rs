//! The `busbar-bench` command line, parsed by hand (a few flags do not justify clap).

use std::path::PathBuf;

use std::time::Duration;

use crate::backlog_rss::{BacklogOptions, BacklogPhase};
use crate::crash::CrashOptions;
use crate::error::BenchError;
use crate::slow_handshakes::{Opening, SlowHandshakeOptions};
use crate::transactions::TransactionOptions;

/// The usage text of `--help`.
pub(crate) const USAGE: &str = "\
Usage:
  busbar-bench run --url amqp://USER:PASS@127.0.0.1:PORT [OPTIONS]
  busbar-bench run --url amqps://USER:PASS@127.0.0.1:PORT --ca CA.pem [OPTIONS]
  busbar-bench run --url ws[s]://USER:PASS@127.0.0.1:PORT/$servicebus/websocket [--ca CA.pem] …
  busbar-bench compare --ours A.json[,B.json] --peer C.json[,D.json]
  busbar-bench queue-names        the queues `run` uses, one per line (to declare on a peer)
  busbar-bench busbar-config      a Busbar Config.json declaring those queues and the fan-out
                                  topics fanout-1, fanout-10, fanout-100
  busbar-bench transactions --url URL [--queue NAME] [--handlers N] [--seconds S]
                                  handlers (default 1, each on its own connection) receive a
                                  message, complete it and send it back in one transaction;
                                  committed round trips/s and their latency [queue bench-0, 10 s]
  busbar-bench crash --busbar PATH --dir DIR [--rounds N] [--seed S] [--max-ms M]
                                  the crash campaign: N rounds [3] of a workload on the broker
                                  (file storage in DIR, kept across rounds) killed with SIGKILL
                                  after a random time up to M ms [1500], each restart checked
                                  against what the client knows; S repeats a schedule [random]
  busbar-bench slow-handshakes --address HOST:PORT [--connections N] [--seconds S]
                               [--send nothing|amqp-header|sasl-header]
                                  N connections (default 200) send only that (default
                                  amqp-header) and fall silent; how many the broker still holds
                                  open, second by second [20 s]
  busbar-bench backlog-rss --url URL --broker-pid PID [--queues A,B] [--megabytes N]
                          [--message-kib K] [--idle-seconds S] [--label NAME]
                          [--phase both|fill|drain]
                                  fills the queues with a backlog of N MB of K KiB messages
                                  (spread evenly), drains it with receive-and-delete and prints
                                  the broker's RSS at start, peak, full, drained and after S
                                  idle seconds [bench-0,bench-1; 1024 MB; 64 KiB; 5 s]; fill
                                  or drain alone, to restart the broker in between
  busbar-bench machine-probe DIR  what a write + fdatasync costs on the disk under DIR (200 B
                                  and 4 KiB) and a round trip between two threads: the state
                                  of the machine, which moves durable and 1-in-flight figures

Runs load scenarios against an AMQP 1.0 broker over loopback and prints msg/s, MB/s, latency
percentiles (p50/p99/p99.9) and the broker's CPU time per message and RSS.

Options of `run`:
  --url <URL>            amqp://user:password@host:port (SASL PLAIN); amqps://… for TLS;
                         ws://…/$servicebus/websocket or wss://… for AMQP over WebSockets
                         (subprotocol AMQPWSB10; the path defaults to /$servicebus/websocket)
  --ca <FILE>            PEM certificates to trust for amqps:// and wss:// (Busbar's `tls ca:`)
  --address <TEMPLATE>   link address of queue number {n} [default: bench-{n}];
                         RabbitMQ 3.x: /amq/queue/classic-{n}, RabbitMQ 4: /queues/classic-{n}
  --label <NAME>         name of this run in reports [default: broker]
  --broker-pid <PID>     broker process to read CPU time and RSS from (/proc/PID)
  --quick                short scenarios (about 2 s each) instead of the full run
  --only <A,B>           run only the scenarios whose name contains one of these words
                         (the receive scenarios take what this run's sends left)
  --no-topics            skip the topic fan-out scenarios (for brokers without the fanout-N
                         topics of `busbar-config`, such as RabbitMQ)
  --json <FILE>          also write the results as JSON
  --matrix               run the comparison matrix instead: send, receive + accept and both
                         at once for 128 B … 256 KiB, 1/100/1000 in flight, 1 and 16
                         connections, a topic with 5 subscriptions, 100 sessions in turn
                         (--quick: a subset); queues {n} = 0 and 1
  --matrix-topic <SEND,RECEIVE>  the matrix's topic: address to send to, template of the
                         subscriptions' addresses ({n} from 0), or none
                         [default: matrix-topic,matrix-topic/Subscriptions/sub-{n}]
  --sessions-queue <ADDRESS>  the matrix's session-enabled queue, or none
                         [default: matrix-sessions]
  --warmup <SECONDS>     unmeasured send + receive before the matrix [default: 0]

`compare` prints one column per label: reports sharing a label are rounds of one broker, and
each scenario then shows its median round with the msg/s range in brackets (ratios of medians).";

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// Run the scenarios against a broker.
    Run(RunOptions),
    /// Run transactional handlers against a broker.
    Transactions(TransactionOptions),
    /// Watch connections that never finish their handshake.
    SlowHandshakes(SlowHandshakeOptions),
    /// Run the crash campaign.
    Crash(CrashOptions),
    /// Fill and drain a backlog, reading the broker's RSS.
    BacklogRss(BacklogOptions),
    /// Compare saved reports.
    Compare {
        /// Reports of Busbar runs.
        ours: Vec<PathBuf>,
        /// Reports of the peer broker's runs.
        peer: Vec<PathBuf>,
    },
    /// Print the names of the queues the scenarios use.
    QueueNames,
    /// Print a Busbar configuration declaring those queues.
    BusbarConfig,
    /// Time durable writes in a directory and thread wake-ups.
    MachineProbe(PathBuf),
    /// Print the usage text.
    Help,
}

/// How long the scenarios run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Profile {
    /// About two seconds per scenario, small backlog.
    Quick,
    /// Longer scenarios and the one-million-message backlog.
    Full,
}

/// Options of `run`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RunOptions {
    /// The broker's URL, with credentials.
    pub(crate) url: String,
    /// The CA certificates to trust for TLS.
    pub(crate) ca: Option<PathBuf>,
    /// The link address of queue `{n}`.
    pub(crate) address_template: String,
    /// The name of this run.
    pub(crate) label: String,
    /// The broker process to observe.
    pub(crate) broker_pid: Option<u32>,
    /// Quick or full.
    pub(crate) profile: Profile,
    /// Scenario name filters (empty: all).
    pub(crate) only: Vec<String>,
    /// Whether the broker serves the fan-out topics (`--no-topics` says it does not).
    pub(crate) topics: bool,
    /// Where to write the JSON report.
    pub(crate) json: Option<PathBuf>,
    /// Run the comparison matrix instead of the scenarios.
    pub(crate) matrix: bool,
    /// The matrix's topic: the address to send to and the template of its subscriptions'
    /// addresses (`{n}` from 0); `None` where the broker has no such topic.
    pub(crate) matrix_topic: Option<(String, String)>,
    /// The matrix's session-enabled queue; `None` where the broker has no sessions.
    pub(crate) sessions_queue: Option<String>,
    /// Unmeasured send + receive before the matrix (JIT warm-up).
    pub(crate) warmup: Duration,
}

impl RunOptions {
    /// Whether `--only` selects the scenario called `name` (everything without `--only`).
    pub(crate) fn wants(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|word| name.contains(word.as_str()))
    }
}

/// Parses the arguments after the program name.
pub(crate) fn parse(args: &[String]) -> Result<Command, BenchError> {
    let Some((subcommand, rest)) = args.split_first() else {
        return Ok(Command::Help);
    };
    match subcommand.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help),
        "queue-names" => no_more(rest, Command::QueueNames),
        "busbar-config" => no_more(rest, Command::BusbarConfig),
        "run" => parse_run(rest).map(Command::Run),
        "transactions" => parse_transactions(rest).map(Command::Transactions),
        "slow-handshakes" => parse_slow_handshakes(rest).map(Command::SlowHandshakes),
        "crash" => parse_crash(rest).map(Command::Crash),
        "backlog-rss" => parse_backlog(rest).map(Command::BacklogRss),
        "compare" => parse_compare(rest),
        "machine-probe" => match rest {
            [dir] => Ok(Command::MachineProbe(PathBuf::from(dir))),
            _ => Err(usage("machine-probe needs one directory".into())),
        },
        other => Err(usage(format!("unknown command {other:?}"))),
    }
}

fn no_more(rest: &[String], command: Command) -> Result<Command, BenchError> {
    match rest.first() {
        Some(extra) => Err(usage(format!("unexpected argument {extra:?}"))),
        None => Ok(command),
    }
}

fn parse_run(args: &[String]) -> Result<RunOptions, BenchError> {
    let mut url = None;
    let mut options = RunOptions {
        url: String::new(),
        ca: None,
        address_template: "bench-{n}".to_owned(),
        label: "broker".to_owned(),
        broker_pid: None,
        profile: Profile::Full,
        only: Vec::new(),
        topics: true,
        json: None,
        matrix: false,
        matrix_topic: Some((
            crate::entities::MATRIX_TOPIC.to_owned(),
            format!("{}/Subscriptions/sub-{{n}}", crate::entities::MATRIX_TOPIC),
        )),
        sessions_queue: Some(crate::entities::SESSIONS_QUEUE.to_owned()),
        warmup: Duration::ZERO,
    };
    let mut flags = Flags::new(args);
    while let Some(flag) = flags.next_flag() {
        match flag.as_str() {
            "--url" => url = Some(flags.value("--url")?),
            "--ca" => options.ca = Some(PathBuf::from(flags.value("--ca")?)),
            "--address" => options.address_template = flags.value("--address")?,
            "--label" => options.label = flags.value("--label")?,
            "--broker-pid" => {
                let text = flags.value("--broker-pid")?;
                let pid = text
                    .parse()
                    .map_err(|_| usage(format!("--broker-pid {text:?} is not a process id")))?;
                options.broker_pid = Some(pid);
            }
            "--quick" => options.profile = Profile::Quick,
            "--only" => options.only = split_list(&flags.value("--only")?),
            "--no-topics" => options.topics = false,
            "--json" => options.json = Some(PathBuf::from(flags.value("--json")?)),
            "--matrix" => options.matrix = true,
            "--matrix-topic" => {
                let text = flags.value("--matrix-topic")?;
                options.matrix_topic = match text.split_once(',') {
                    _ if text == "none" => None,
                    Some((send, receive)) if receive.contains("{n}") => {
                        Some((send.to_owned(), receive.to_owned()))
                    }
                    _ => {
                        return Err(usage(format!(
                            "--matrix-topic {text:?}: SEND,RECEIVE-with-{{n}} or none"
                        )));
                    }
                };
            }
            "--sessions-queue" => {
                let text = flags.value("--sessions-queue")?;
                options.sessions_queue = (text != "none").then_some(text);
            }
            "--warmup" => {
                let text = flags.value("--warmup")?;
                let seconds: u64 = text
                    .parse()
                    .map_err(|_| usage(format!("--warmup {text:?} is not a number of seconds")))?;
                options.warmup = Duration::from_secs(seconds);
            }
            other => return Err(usage(format!("unknown argument {other:?}"))),
        }
    }
    options.url = url.ok_or_else(|| usage("run needs --url amqp://USER:PASS@HOST:PORT".into()))?;
    if !options.address_template.contains("{n}") {
        return Err(usage(format!(
            "--address {:?} must contain {{n}}, the queue number",
            options.address_template
        )));
    }
    Ok(options)
}

fn parse_transactions(args: &[String]) -> Result<TransactionOptions, BenchError> {
    let mut options = TransactionOptions {
        url: String::new(),
        queue: "bench-0".to_owned(),
        handlers: 1,
        duration: Duration::from_secs(10),
    };
    let mut flags = Flags::new(args);
    while let Some(flag) = flags.next_flag() {
        match flag.as_str() {
            "--url" => options.url = flags.value("--url")?,
            "--queue" => options.queue = flags.value("--queue")?,
            "--handlers" => options.handlers = number(&flags.value("--handlers")?, "--handlers")?,
            "--seconds" => {
                options.duration =
                    Duration::from_secs(number(&flags.value("--seconds")?, "--seconds")?);
            }
            other => return Err(usage(format!("unknown argument {other:?}"))),
        }
    }
    if options.url.is_empty() {
        return Err(usage(
            "transactions needs --url amqp://USER:PASS@HOST:PORT".into(),
        ));
    }
    Ok(options)
}

fn parse_crash(args: &[String]) -> Result<CrashOptions, BenchError> {
    let (mut busbar, mut dir) = (None, None);
    let mut options = CrashOptions {
        busbar: PathBuf::new(),
        dir: PathBuf::new(),
        rounds: 3,
        seed: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |since| since.as_secs() ^ u64::from(since.subsec_nanos())),
        max_run: Duration::from_millis(1500),
    };
    let mut flags = Flags::new(args);
    while let Some(flag) = flags.next_flag() {
        match flag.as_str() {
            "--busbar" => busbar = Some(PathBuf::from(flags.value("--busbar")?)),
            "--dir" => dir = Some(PathBuf::from(flags.value("--dir")?)),
            "--rounds" => options.rounds = number(&flags.value("--rounds")?, "--rounds")?,
            "--seed" => {
                let text = flags.value("--seed")?;
                options.seed = text
                    .parse()
                    .map_err(|_| usage(format!("--seed {text:?} is not a number")))?;
            }
            "--max-ms" => {
                options.max_run =
                    Duration::from_millis(number(&flags.value("--max-ms")?, "--max-ms")?);
            }
            other => return Err(usage(format!("unknown argument {other:?}"))),
        }
    }
    options.busbar = busbar.ok_or_else(|| usage("crash needs --busbar PATH".into()))?;
    options.dir = dir.ok_or_else(|| usage("crash needs --dir DIR".into()))?;
    Ok(options)
}

fn parse_slow_handshakes(args: &[String]) -> Result<SlowHandshakeOptions, BenchError> {
    let mut options = SlowHandshakeOptions {
        address: String::new(),
        connections: 200,
        seconds: 20,
        opening: Opening::AmqpHeader,
    };
    let mut flags = Flags::new(args);
    while let Some(flag) = flags.next_flag() {
        match flag.as_str() {
            "--address" => options.address = flags.value("--address")?,
            "--connections" => {
                options.connections = number(&flags.value("--connections")?, "--connections")?;
            }
            "--seconds" => options.seconds = number(&flags.value("--seconds")?, "--seconds")?,
            "--send" => {
                let text = flags.value("--send")?;
                options.opening = Opening::parse(&text)
                    .ok_or_else(|| usage(format!("--send {text:?} is not one of the choices")))?;
            }
            other => return Err(usage(format!("unknown argument {other:?}"))),
        }
    }
    if options.address.is_empty() {
        return Err(usage("slow-handshakes needs --address HOST:PORT".into()));
    }
    Ok(options)
}

fn parse_backlog(args: &[String]) -> Result<BacklogOptions, BenchError> {
    let mut options = BacklogOptions {
        url: String::new(),
        broker_pid: 0,
        queues: vec!["bench-0".to_owned(), "bench-1".to_owned()],
        megabytes: 1024,
        message_kib: 64,
        idle: Duration::from_secs(5),
        label: "busbar".to_owned(),
        phase: BacklogPhase::Both,
    };
    let mut flags = Flags::new(args);
    while let Some(flag) = flags.next_flag() {
        match flag.as_str() {
            "--url" => options.url = flags.value("--url")?,
            "--broker-pid" => {
                options.broker_pid = number(&flags.value("--broker-pid")?, "--broker-pid")?;
            }
            "--queues" => options.queues = split_list(&flags.value("--queues")?),
            "--megabytes" => {
                options.megabytes = number(&flags.value("--megabytes")?, "--megabytes")?;
            }
            "--message-kib" => {
                options.message_kib = number(&flags.value("--message-kib")?, "--message-kib")?;
            }
            "--idle-seconds" => {
                let text = flags.value("--idle-seconds")?;
                let seconds = text
                    .parse()
                    .map_err(|_| usage(format!("--idle-seconds {text:?} is not a number")))?;
                options.idle = Duration::from_secs(seconds);
            }
            "--label" => options.label = flags.value("--label")?,
            "--phase" => {
                options.phase = match flags.value("--phase")?.as_str() {
                    "both" => BacklogPhase::Both,
                    "fill" => BacklogPhase::Fill,
                    "drain" => BacklogPhase::Drain,
                    other => return Err(usage(format!("--phase {other:?}: both, fill or drain"))),
                };
            }
            other => return Err(usage(format!("unknown argument {other:?}"))),
        }
    }
    if options.url.is_empty() || options.broker_pid == 0 || options.queues.is_empty() {
        return Err(usage(
            "backlog-rss needs --url amqp://USER:PASS@HOST:PORT, --broker-pid PID and a queue"
                .into(),
        ));
    }
    Ok(options)
}

/// A positive whole number given to `flag`.
fn number<T: std::str::FromStr + Default + PartialEq>(
    text: &str,
    flag: &str,
) -> Result<T, BenchError> {
    text.parse()
        .ok()
        .filter(|value| *value != T::default())
        .ok_or_else(|| usage(format!("{flag} {text:?} is not a positive number")))
}

fn parse_compare(args: &[String]) -> Result<Command, BenchError> {
    let (mut ours, mut peer) = (Vec::new(), Vec::new());
    let mut flags = Flags::new(args);
    while let Some(flag) = flags.next_flag() {
        let list = match flag.as_str() {
            "--ours" => &mut ours,
            "--peer" => &mut peer,
            other => return Err(usage(format!("unknown argument {other:?}"))),
        };
        list.extend(
            split_list(&flags.value(&flag)?)
                .into_iter()
                .map(PathBuf::from),
        );
    }
    if ours.is_empty() {
        return Err(usage("compare needs --ours REPORT.json".into()));
    }
    Ok(Command::Compare { ours, peer })
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',')
        .filter(|item| !item.is_empty())
        .map(str::to_owned)
        .collect()
}

fn usage(message: String) -> BenchError {
    BenchError::Usage(message)
}

/// Walks `--flag value` and `--flag=value` arguments.
struct Flags<'a> {
    args: std::slice::Iter<'a, String>,
    inline_value: Option<String>,
}

impl<'a> Flags<'a> {
    fn new(args: &'a [String]) -> Self {
        Self {
            args: args.iter(),
            inline_value: None,
        }
    }

    fn next_flag(&mut self) -> Option<String> {
        let arg = self.args.next()?;
        match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                self.inline_value = Some(value.to_owned());
                Some(flag.to_owned())
            }
            _ => {
                self.inline_value = None;
                Some(arg.clone())
            }
        }
    }

    fn value(&mut self, flag: &str) -> Result<String, BenchError> {
        self.inline_value
            .take()
            .or_else(|| self.args.next().cloned())
            .filter(|value| !value.is_empty() && !value.starts_with("--"))
            .ok_or_else(|| usage(format!("{flag} needs a value")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &str) -> Result<Command, BenchError> {
        let args: Vec<String> = words.split_whitespace().map(str::to_owned).collect();
        parse(&args)
    }

    #[test]
    fn run_with_every_flag() {
        let command = parse_words(
            "run --url amqps://u:p@127.0.0.1:5671 --ca ca.crt --address=/amq/queue/quorum-{n} \
             --label rabbit \
             --broker-pid 42 --quick --only send,fan --no-topics --json out.json",
        )
        .unwrap();
        assert_eq!(
            command,
            Command::Run(RunOptions {
                url: "amqps://u:p@127.0.0.1:5671".into(),
                ca: Some(PathBuf::from("ca.crt")),
                address_template: "/amq/queue/quorum-{n}".into(),
                label: "rabbit".into(),
                broker_pid: Some(42),
                profile: Profile::Quick,
                only: vec!["send".into(), "fan".into()],
                topics: false,
                json: Some(PathBuf::from("out.json")),
                matrix: false,
                matrix_topic: Some((
                    "matrix-topic".into(),
                    "matrix-topic/Subscriptions/sub-{n}".into()
                )),
                sessions_queue: Some("matrix-sessions".into()),
                warmup: Duration::ZERO,
            })
        );
    }

    #[test]
    fn run_defaults() {
        let Command::Run(options) = parse_words("run --url amqp://h:1").unwrap() else {
            panic!("not a run");
        };
        assert_eq!(options.address_template, "bench-{n}");
        assert_eq!(options.profile, Profile::Full);
        assert_eq!(options.broker_pid, None);
        assert!(options.topics);
        assert!(!options.matrix);
    }

    #[test]
    fn run_matrix_with_a_peer_mapping() {
        let Command::Run(options) = parse_words(
            "run --url amqp://h:1 --matrix --matrix-topic /exchanges/t,/queues/t-{n} \
             --sessions-queue none --warmup 20",
        )
        .unwrap() else {
            panic!("not a run");
        };
        assert!(options.matrix);
        assert_eq!(
            options.matrix_topic,
            Some(("/exchanges/t".into(), "/queues/t-{n}".into()))
        );
        assert_eq!(options.sessions_queue, None);
        assert_eq!(options.warmup, Duration::from_secs(20));
        let Command::Run(options) = parse_words("run --url x --matrix-topic none").unwrap() else {
            panic!("not a run");
        };
        assert_eq!(options.matrix_topic, None);
        assert!(parse_words("run --url x --matrix-topic a,b").is_err());
    }

    #[test]
    fn compare_and_simple_commands() {
        assert_eq!(
            parse_words("compare --ours a.json,b.json --peer c.json").unwrap(),
            Command::Compare {
                ours: vec!["a.json".into(), "b.json".into()],
                peer: vec!["c.json".into()],
            }
        );
        assert_eq!(parse_words("").unwrap(), Command::Help);
        assert_eq!(parse_words("queue-names").unwrap(), Command::QueueNames);
        assert_eq!(parse_words("busbar-config").unwrap(), Command::BusbarConfig);
        assert_eq!(
            parse_words("machine-probe /tmp/x").unwrap(),
            Command::MachineProbe("/tmp/x".into())
        );
    }

    #[test]
    fn crash_with_every_flag() {
        let command =
            parse_words("crash --busbar bin/busbar --dir /tmp/c --rounds 9 --seed 42 --max-ms 300");
        assert_eq!(
            command.unwrap(),
            Command::Crash(CrashOptions {
                busbar: "bin/busbar".into(),
                dir: "/tmp/c".into(),
                rounds: 9,
                seed: 42,
                max_run: Duration::from_millis(300),
            })
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let table = [
            ("run", "run needs --url amqp://USER:PASS@HOST:PORT"),
            ("run --url", "--url needs a value"),
            ("run --url --quick", "--url needs a value"),
            ("run --url x --bogus", r#"unknown argument "--bogus""#),
            (
                "run --url x --broker-pid me",
                r#"--broker-pid "me" is not a process id"#,
            ),
            (
                "run --url x --address q",
                r#"--address "q" must contain {n}, the queue number"#,
            ),
            ("compare --peer a.json", "compare needs --ours REPORT.json"),
            ("queue-names x", r#"unexpected argument "x""#),
            ("machine-probe", "machine-probe needs one directory"),
            ("crash --dir d", "crash needs --busbar PATH"),
            ("crash --busbar b", "crash needs --dir DIR"),
            (
                "crash --busbar b --dir d --rounds 0",
                r#"--rounds "0" is not a positive number"#,
            ),
            (
                "crash --busbar b --dir d --seed x",
                r#"--seed "x" is not a number"#,
            ),
            ("machine-probe a b", "machine-probe needs one directory"),
            ("frobnicate", r#"unknown command "frobnicate""#),
        ];
        for (words, message) in table {
            let error = parse_words(words).unwrap_err();
            assert_eq!(error.to_string(), format!("usage: {message}"), "{words}");
        }
    }
}
