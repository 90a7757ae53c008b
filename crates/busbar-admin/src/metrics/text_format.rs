//! The Prometheus text format 0.0.4, which `/metrics` answers unless the scraper asks for
//! OpenMetrics (and which `promtool check metrics` lints), from the OpenMetrics text
//! `prometheus-client` writes. The two differ, for what [`super::render`] writes, in:
//!
//! - a counter family: OpenMetrics names it without the `_total` its samples carry, 0.0.4 by
//!   the samples' name;
//! - `# UNIT` lines and the closing `# EOF`, which 0.0.4 does not have;
//! - the type `unknown`, 0.0.4's `untyped`.
//!
//! Samples, label escaping (`\\`, `\"`, `\n`), histogram series and `+Inf` are written alike;
//! `prometheus-client` writes help texts unescaped, and ours hold no backslash or line break.
//! The other OpenMetrics types (info, stateset, gauge histogram) are not written
//! (`render_writes_only_types_the_conversion_knows` checks it).

use std::collections::HashSet;

/// The content type of the 0.0.4 text format.
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Rewrites an OpenMetrics exposition (as [`super::render`] writes it) in the 0.0.4 format.
pub fn to_text_format(openmetrics: &str) -> String {
    let counters: HashSet<&str> = openmetrics
        .lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .filter_map(|rest| rest.strip_suffix(" counter"))
        .collect();
    let mut text = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let rewritten = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let (name, tail) = line.strip_prefix(prefix)?.split_once(' ')?;
            let tail = match (*prefix, tail) {
                ("# TYPE ", "unknown") => "untyped",
                _ => tail,
            };
            let suffix = if counters.contains(name) {
                "_total"
            } else {
                ""
            };
            Some(format!("{prefix}{name}{suffix} {tail}"))
        });
        text.push_str(rewritten.as_deref().unwrap_or(line));
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::{EntityMetrics, MetricsSnapshot, render};
    use super::*;

    #[test]
    fn counters_are_named_by_their_samples_and_units_and_eof_go() {
        let openmetrics = "# HELP sent Messages sent.\n# TYPE sent counter\nsent_total 3\n\
                           # HELP depth Depth.\n# TYPE depth gauge\ndepth 1\n\
                           # HELP wait_seconds Wait.\n# TYPE wait_seconds gauge\n\
                           # UNIT wait_seconds seconds\nwait_seconds 0.5\n\
                           # HELP odd Odd.\n# TYPE odd unknown\nodd{a=\"x\\\"y\"} 1\n# EOF\n";
        assert_eq!(
            to_text_format(openmetrics),
            "# HELP sent_total Messages sent.\n# TYPE sent_total counter\nsent_total 3\n\
             # HELP depth Depth.\n# TYPE depth gauge\ndepth 1\n\
             # HELP wait_seconds Wait.\n# TYPE wait_seconds gauge\nwait_seconds 0.5\n\
             # HELP odd Odd.\n# TYPE odd untyped\nodd{a=\"x\\\"y\"} 1\n"
        );
    }

    #[test]
    fn render_writes_only_types_the_conversion_knows() {
        let snapshot = MetricsSnapshot {
            entities: vec![EntityMetrics {
                name: "q".into(),
                ..EntityMetrics::default()
            }],
            ..MetricsSnapshot::default()
        };
        let openmetrics = render(&snapshot);
        for line in openmetrics.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let kind = rest.rsplit(' ').next().unwrap_or_default();
                assert!(["counter", "gauge", "histogram"].contains(&kind), "{line}");
            }
            if let Some(help) = line.strip_prefix("# HELP ") {
                assert!(!help.contains('\\'), "{line}");
            }
        }
        let text = to_text_format(&openmetrics);
        assert!(!text.contains("# EOF") && !text.contains("# UNIT"));
        assert!(text.contains("# TYPE servicebus_incoming_messages_total counter\n"));
    }
}
