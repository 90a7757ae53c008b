//! Results of a run: per-scenario figures, latency percentiles, the Markdown tables printed for
//! one run and for a comparison of runs, and the JSON form.

use std::fmt::Write as _;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::args::Profile;

/// Latency percentiles of one scenario, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub(crate) struct LatencySummary {
    /// How many latencies were recorded.
    pub(crate) samples: u64,
    /// Median.
    pub(crate) p50_us: u64,
    /// 99th percentile.
    pub(crate) p99_us: u64,
    /// 99.9th percentile.
    pub(crate) p999_us: u64,
    /// Largest.
    pub(crate) max_us: u64,
}

impl LatencySummary {
    /// The percentiles of a histogram of microseconds.
    pub(crate) fn from_histogram(histogram: &Histogram<u64>) -> Self {
        Self {
            samples: histogram.len(),
            p50_us: histogram.value_at_quantile(0.50),
            p99_us: histogram.value_at_quantile(0.99),
            p999_us: histogram.value_at_quantile(0.999),
            max_us: histogram.max(),
        }
    }
}

/// What the broker process spent during a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct BrokerUsage {
    /// User + system CPU time of the broker process per message, in microseconds.
    pub(crate) cpu_us_per_message: f64,
    /// The broker's resident set size at the end of the scenario.
    pub(crate) rss_bytes: u64,
    /// How much the resident set grew during the scenario (negative if it shrank).
    pub(crate) rss_growth_bytes: i64,
}

/// The figures of one scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScenarioResult {
    /// Short name, the same for every broker (the key of comparisons).
    pub(crate) name: String,
    /// What was measured as latency.
    pub(crate) latency_kind: String,
    /// Messages completed (accepted sends, or received messages).
    pub(crate) messages: u64,
    /// Body size of each message.
    pub(crate) body_bytes: u64,
    /// Duration of the measured part.
    pub(crate) elapsed_secs: f64,
    /// Latency percentiles.
    pub(crate) latency: LatencySummary,
    /// Sends the broker did not accept.
    pub(crate) not_accepted: u64,
    /// Copies stored in subscriptions (topic fan-out scenarios: accepted sends × the
    /// subscriptions that select them); `None` for queue scenarios.
    #[serde(default)]
    pub(crate) copies: Option<u64>,
    /// Of those, sends rejected because the queue was full (`amqp:resource-limit-exceeded`).
    #[serde(default)]
    pub(crate) refused_quota: u64,
    /// The broker's CPU and memory, when its process id was given.
    pub(crate) broker: Option<BrokerUsage>,
    /// The broker's largest RSS sampled during the scenario (the slow-consumer scenario).
    #[serde(default)]
    pub(crate) rss_peak_bytes: Option<u64>,
}

impl ScenarioResult {
    /// Messages per second.
    pub(crate) fn messages_per_second(&self) -> f64 {
        ratio(self.messages as f64, self.elapsed_secs)
    }

    /// Body megabytes (10^6 bytes) per second.
    pub(crate) fn megabytes_per_second(&self) -> f64 {
        self.messages_per_second() * self.body_bytes as f64 / 1e6
    }

    /// The progress line printed as the scenario ends.
    pub(crate) fn log(&self, label: &str) {
        eprintln!(
            "[{label}] {}: {:.0} msg/s, p50 {} µs, p99 {} µs",
            self.name,
            self.messages_per_second(),
            self.latency.p50_us,
            self.latency.p99_us
        );
    }

    /// Copies stored per second, for fan-out scenarios.
    pub(crate) fn copies_per_second(&self) -> Option<f64> {
        self.copies
            .map(|copies| ratio(copies as f64, self.elapsed_secs))
    }
}

/// A whole run against one broker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Report {
    /// The run's name (e.g. `busbar-memory`, `rabbitmq-quorum`).
    pub(crate) label: String,
    /// Quick or full.
    pub(crate) profile: Profile,
    /// One entry per scenario, in the order run.
    pub(crate) scenarios: Vec<ScenarioResult>,
    /// Scenarios this broker cannot run, and why.
    #[serde(default)]
    pub(crate) not_run: Vec<NotRun>,
}

/// A scenario a broker cannot run (a Service Bus feature it lacks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NotRun {
    /// The scenario's name.
    pub(crate) name: String,
    /// Why not.
    pub(crate) reason: String,
}

/// `a / b`, or 0 when `b` is not positive (an empty scenario, a missing peer).
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// A latency in microseconds, in the unit that keeps three significant figures readable.
pub(crate) fn format_micros(micros: u64) -> String {
    match micros {
        0..1_000 => format!("{micros} µs"),
        1_000..1_000_000 => format!("{:.2} ms", micros as f64 / 1e3),
        _ => format!("{:.2} s", micros as f64 / 1e6),
    }
}

/// A rate with thousands grouped (`12 345`), as integers read best in a table.
pub(crate) fn format_rate(rate: f64) -> String {
    let digits = format!("{:.0}", rate.max(0.0));
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index) % 3 == 0 {
            grouped.push(' ');
        }
        grouped.push(digit);
    }
    grouped
}

/// The Markdown table of one run.
pub(crate) fn run_table(report: &Report) -> String {
    let mut out = format!(
        "### {} ({:?})\n\n| scenario | msg/s | MB/s | copies stored/s | p50 | p99 | p99.9 | \
         latency of | broker CPU µs/msg | broker RSS MiB | RSS growth B/msg |\n\
         |---|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|\n",
        report.label, report.profile
    );
    for scenario in &report.scenarios {
        let (cpu, rss, growth) = match scenario.broker {
            Some(usage) => (
                format!("{:.1}", usage.cpu_us_per_message),
                format!("{:.0}", usage.rss_bytes as f64 / 1_048_576.0),
                format!(
                    "{:.0}",
                    ratio(usage.rss_growth_bytes as f64, scenario.messages as f64)
                ),
            ),
            None => ("-".into(), "-".into(), "-".into()),
        };
        let refused = match (scenario.not_accepted, scenario.refused_quota) {
            (0, _) => String::new(),
            (count, 0) => format!(" ({count} not accepted)"),
            (count, quota) => format!(" ({count} not accepted, {quota} of them over quota)"),
        };
        let copies = scenario.copies_per_second().map_or("-".into(), format_rate);
        let _ = writeln!(
            out,
            "| {}{refused} | {} | {:.2} | {copies} | {} | {} | {} | {} | {cpu} | {rss} | {growth} |",
            scenario.name,
            format_rate(scenario.messages_per_second()),
            scenario.megabytes_per_second(),
            format_micros(scenario.latency.p50_us),
            format_micros(scenario.latency.p99_us),
            format_micros(scenario.latency.p999_us),
            scenario.latency_kind,
        );
    }
    for scenario in &report.scenarios {
        if let (Some(peak), Some(usage)) = (scenario.rss_peak_bytes, scenario.broker) {
            let start = i64::try_from(usage.rss_bytes).unwrap_or(i64::MAX) - usage.rss_growth_bytes;
            let _ = writeln!(
                out,
                "\n{}: broker RSS peak {:.1} MiB, {:.1} MiB above its start.",
                scenario.name,
                peak as f64 / 1_048_576.0,
                (i64::try_from(peak).unwrap_or(i64::MAX) - start) as f64 / 1_048_576.0
            );
        }
    }
    out
}

/// The runs of one broker in a comparison: every report with the same label (the rounds of
/// `cargo xtask bench --rounds N`).
struct Column<'a> {
    label: &'a str,
    rounds: Vec<&'a Report>,
}

/// One scenario of a [`Column`]: the round with the median msg/s (the lower middle one of an
/// even count), and the range over every round that ran it.
struct Median {
    scenario: ScenarioResult,
    rounds: usize,
    slowest: f64,
    fastest: f64,
}

impl<'a> Column<'a> {
    /// Groups runs by label, in the order the labels are first met.
    fn group(runs: impl IntoIterator<Item = &'a Report>) -> Vec<Column<'a>> {
        let mut columns: Vec<Column<'a>> = Vec::new();
        for run in runs {
            match columns.iter_mut().find(|column| column.label == run.label) {
                Some(column) => column.rounds.push(run),
                None => columns.push(Column {
                    label: &run.label,
                    rounds: vec![run],
                }),
            }
        }
        columns
    }

    /// Why this broker did not run scenario `name`, if it said so.
    fn not_run(&self, name: &str) -> Option<&str> {
        self.rounds
            .iter()
            .flat_map(|run| &run.not_run)
            .find(|skipped| skipped.name == name)
            .map(|skipped| skipped.reason.as_str())
    }

    fn median(&self, name: &str) -> Option<Median> {
        let mut ran: Vec<&ScenarioResult> = self
            .rounds
            .iter()
            .filter_map(|run| run.scenarios.iter().find(|s| s.name == name))
            .collect();
        ran.sort_by(|a, b| a.messages_per_second().total_cmp(&b.messages_per_second()));
        let (slowest, fastest) = (ran.first()?, ran.last()?);
        Some(Median {
            scenario: ran[(ran.len() - 1) / 2].clone(),
            rounds: ran.len(),
            slowest: slowest.messages_per_second(),
            fastest: fastest.messages_per_second(),
        })
    }
}

/// The Markdown table comparing Busbar runs with peer runs: msg/s and p50/p99 of every run,
/// and the throughput ratio of each of ours over each peer. Runs sharing a label are rounds
/// of one broker: each scenario shows its median round, with the range of msg/s over the
/// rounds in brackets, and the ratios are of medians.
pub(crate) fn comparison_table(ours: &[Report], peers: &[Report]) -> String {
    let (ours, peers) = (Column::group(ours), Column::group(peers));
    let columns: Vec<&Column> = ours.iter().chain(&peers).collect();
    // One peer: a ratio per pair. Several: each of ours over the best peer of the row.
    let best_of = peers.len() > 1;
    let pairs: Vec<(&Column, &Column)> = if best_of {
        Vec::new()
    } else {
        ours.iter()
            .flat_map(|mine| peers.iter().map(move |peer| (mine, peer)))
            .collect()
    };
    let mut header = String::from("| scenario |");
    let mut rule = String::from("|---|");
    for column in &columns {
        let _ = write!(
            header,
            " {0} msg/s | {0} p50 / p99 | {0} CPU µs/msg |",
            column.label
        );
        rule.push_str("--:|--:|--:|");
    }
    for (mine, peer) in &pairs {
        let _ = write!(header, " {} / {} |", mine.label, peer.label);
        rule.push_str("--:|");
    }
    if best_of {
        for mine in &ours {
            let _ = write!(header, " {} / best peer |", mine.label);
            rule.push_str("--:|");
        }
    }
    let mut out = format!("{header}\n{rule}\n");
    // Every scenario any run has, in the order first met: a row only one side ran (the
    // Busbar-only fan-out scenarios) shows "-" for the others.
    let mut names: Vec<&String> = Vec::new();
    let every_run = columns.iter().flat_map(|column| &column.rounds);
    for scenario in every_run.flat_map(|run| &run.scenarios) {
        if !names.contains(&&scenario.name) {
            names.push(&scenario.name);
        }
    }
    for name in names {
        let _ = write!(out, "| {name} |");
        for column in &columns {
            match column.median(name) {
                Some(median) => {
                    let s = &median.scenario;
                    let cpu = s
                        .broker
                        .map_or("-".into(), |u| format!("{:.1}", u.cpu_us_per_message));
                    let range = if median.rounds > 1 {
                        format!(
                            " ({}–{})",
                            format_rate(median.slowest),
                            format_rate(median.fastest)
                        )
                    } else {
                        String::new()
                    };
                    let _ = write!(
                        out,
                        " {}{range} | {} / {} | {cpu} |",
                        format_rate(s.messages_per_second()),
                        format_micros(s.latency.p50_us),
                        format_micros(s.latency.p99_us)
                    );
                }
                None if column.not_run(name).is_some() => out.push_str(" n/a | - | - |"),
                None => out.push_str(" - | - | - |"),
            }
        }
        for (mine, peer) in &pairs {
            match (mine.median(name), peer.median(name)) {
                (Some(a), Some(b)) if b.scenario.messages_per_second() > 0.0 => {
                    let _ = write!(
                        out,
                        " {:.2}× |",
                        a.scenario.messages_per_second() / b.scenario.messages_per_second()
                    );
                }
                _ => out.push_str(" - |"),
            }
        }
        if best_of {
            let best = peers
                .iter()
                .filter_map(|peer| Some((peer.label, peer.median(name)?)))
                .map(|(label, median)| (label, median.scenario.messages_per_second()))
                .max_by(|a, b| a.1.total_cmp(&b.1));
            for mine in &ours {
                match (mine.median(name), best) {
                    (Some(a), Some((label, rate))) if rate > 0.0 => {
                        let ratio = a.scenario.messages_per_second() / rate;
                        let _ = write!(out, " {ratio:.2}× ({label}) |");
                    }
                    _ => out.push_str(" - |"),
                }
            }
        }
        out.push('\n');
    }
    let mut reasons: Vec<String> = Vec::new();
    for column in &columns {
        for run in &column.rounds {
            for skipped in &run.not_run {
                let line = format!("- n/a for {}: {}", column.label, skipped.reason);
                if !reasons.contains(&line) {
                    reasons.push(line);
                }
            }
        }
    }
    if !reasons.is_empty() {
        let _ = write!(out, "\n{}\n", reasons.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(name: &str, messages: u64, elapsed_secs: f64) -> ScenarioResult {
        ScenarioResult {
            name: name.into(),
            latency_kind: "send→accepted".into(),
            messages,
            body_bytes: 128,
            elapsed_secs,
            latency: LatencySummary {
                samples: messages,
                p50_us: 850,
                p99_us: 1_500,
                p999_us: 2_500_000,
                max_us: 3_000_000,
            },
            not_accepted: 0,
            copies: None,
            refused_quota: 0,
            broker: Some(BrokerUsage {
                cpu_us_per_message: 12.34,
                rss_bytes: 64 * 1_048_576,
                rss_growth_bytes: 25_600,
            }),
            rss_peak_bytes: None,
        }
    }

    fn report(label: &str, scenarios: Vec<ScenarioResult>) -> Report {
        Report {
            label: label.into(),
            profile: Profile::Quick,
            scenarios,
            not_run: Vec::new(),
        }
    }

    #[test]
    fn percentiles_come_from_the_histogram() {
        let mut histogram = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        for micros in 1..=1000 {
            histogram.record(micros).unwrap();
        }
        let summary = LatencySummary::from_histogram(&histogram);
        assert_eq!(summary.samples, 1000);
        assert_eq!(summary.p50_us, 500);
        assert_eq!(summary.p99_us, 990);
        assert_eq!(summary.p999_us, 999);
        assert_eq!(summary.max_us, 1000);
    }

    #[test]
    fn units_and_grouping() {
        assert_eq!(format_micros(999), "999 µs");
        assert_eq!(format_micros(1_234), "1.23 ms");
        assert_eq!(format_micros(2_500_000), "2.50 s");
        assert_eq!(format_rate(0.4), "0");
        assert_eq!(format_rate(999.0), "999");
        assert_eq!(format_rate(1_234_567.2), "1 234 567");
        assert_eq!(format_rate(-5.0), "0");
    }

    #[test]
    fn run_table_rows() {
        let mut refused = scenario("send-4k", 0, 0.0);
        refused.not_accepted = 3;
        refused.broker = None;
        let mut fan_out = scenario("fan-out-10", 2_000, 2.0);
        fan_out.copies = Some(10_000);
        let table = run_table(&report(
            "busbar-memory",
            vec![scenario("send-128b", 200, 0.5), refused, fan_out],
        ));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines[0], "### busbar-memory (Quick)");
        assert_eq!(
            lines[4],
            "| send-128b | 400 | 0.05 | - | 850 µs | 1.50 ms | 2.50 s | send→accepted | 12.3 | 64 | 128 |"
        );
        assert_eq!(
            lines[5],
            "| send-4k (3 not accepted) | 0 | 0.00 | - | 850 µs | 1.50 ms | 2.50 s | send→accepted | - | - | - |"
        );
        assert!(
            lines[6].starts_with("| fan-out-10 | 1 000 | 0.13 | 5 000 | 850 µs |"),
            "{}",
            lines[6]
        );
    }

    #[test]
    fn quota_refusals_and_the_rss_peak_are_reported() {
        let mut slow = scenario("slow", 100, 1.0);
        slow.not_accepted = 7;
        slow.refused_quota = 5;
        slow.rss_peak_bytes = Some(80 * 1_048_576);
        let table = run_table(&report("busbar-memory", vec![slow]));
        assert!(
            table.contains("| slow (7 not accepted, 5 of them over quota) | 100 |"),
            "{table}"
        );
        // The run ended at 64 MiB after growing by 25 600 bytes: the peak is ~16 MiB above the start.
        assert!(
            table.contains("slow: broker RSS peak 80.0 MiB, 16.0 MiB above its start."),
            "{table}"
        );
    }

    #[test]
    fn comparison_ratios() {
        let ours = [report(
            "busbar",
            vec![scenario("a", 300, 1.0), scenario("b", 10, 1.0)],
        )];
        let peers = [report(
            "rabbit",
            vec![scenario("a", 100, 1.0), scenario("c", 50, 1.0)],
        )];
        let table = comparison_table(&ours, &peers);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].ends_with("| busbar / rabbit |"), "{}", lines[0]);
        assert!(lines[2].starts_with("| a | 300 | 850 µs / 1.50 ms | 12.3 | 100 |"));
        assert!(lines[2].ends_with("| 3.00× |"), "{}", lines[2]);
        // Rows only one side ran: ours only, then the peer's only.
        assert!(lines[3].starts_with("| b | 10 |"), "{}", lines[3]);
        assert!(lines[3].ends_with("| - | - | - | - |"), "{}", lines[3]);
        assert!(
            lines[4].starts_with("| c | - | - | - | 50 |"),
            "{}",
            lines[4]
        );
        assert!(lines[4].ends_with("| - |"), "{}", lines[4]);
        assert_eq!(lines.len(), 5);
    }

    /// Rounds of one broker share a column: the median round's figures, the range in brackets,
    /// ratios of medians.
    #[test]
    fn comparison_of_rounds_shows_medians_and_ranges() {
        let ours = [
            report("busbar", vec![scenario("a", 300, 1.0)]),
            report("busbar", vec![scenario("a", 900, 1.0)]),
            report("busbar", vec![scenario("a", 600, 1.0)]),
        ];
        let peers = [
            report("rabbit", vec![scenario("a", 100, 1.0)]),
            report("rabbit", vec![scenario("a", 400, 1.0)]),
        ];
        let table = comparison_table(&ours, &peers);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert_eq!(
            lines[2],
            "| a | 600 (300–900) | 850 µs / 1.50 ms | 12.3 | 100 (100–400) | 850 µs / 1.50 ms | 12.3 | 6.00× |"
        );
    }

    /// With several peers each of ours is compared with the best peer of the row; a cell a
    /// peer cannot run says n/a, and why below the table.
    #[test]
    fn comparison_with_several_peers_uses_the_best() {
        let ours = [report(
            "busbar",
            vec![scenario("a", 300, 1.0), scenario("s", 9, 1.0)],
        )];
        let mut artemis = report("artemis", vec![scenario("a", 200, 1.0)]);
        artemis.not_run.push(NotRun {
            name: "s".into(),
            reason: "no sessions".into(),
        });
        let peers = [report("rabbit", vec![scenario("a", 100, 1.0)]), artemis];
        let table = comparison_table(&ours, &peers);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].ends_with("| busbar / best peer |"), "{}", lines[0]);
        assert!(lines[2].ends_with("| 1.50× (artemis) |"), "{}", lines[2]);
        assert!(lines[3].contains("| n/a | - | - |"), "{}", lines[3]);
        assert_eq!(lines.last(), Some(&"- n/a for artemis: no sessions"));
    }

    #[test]
    fn json_round_trip() {
        let original = report("busbar", vec![scenario("a", 1, 1.0)]);
        let text = serde_json::to_string(&original).unwrap();
        assert_eq!(serde_json::from_str::<Report>(&text).unwrap(), original);
    }
}
