//! The Prometheus text format 0.0.4 for scrapers that ask for it (`Accept: text/plain`) and
//! for `promtool check metrics`, which lints only that format: the OpenMetrics rendering with
//! each counter family named by its `_total` samples, and no `# UNIT` or `# EOF` line.

use std::collections::HashSet;

/// The content type of the 0.0.4 text format.
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether an `Accept` header prefers the 0.0.4 text format: it names `text/plain` and not
/// OpenMetrics (Prometheus itself asks for OpenMetrics first).
pub fn prefers_text_format(accept: &str) -> bool {
    accept.contains("text/plain") && !accept.contains("application/openmetrics-text")
}

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
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters
                .contains(name)
                .then(|| format!("{prefix}{name}_total {tail}"))
        });
        text.push_str(renamed.as_deref().unwrap_or(line));
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_by_their_samples_and_eof_goes() {
        let openmetrics = "# HELP sent Messages sent.\n# TYPE sent counter\nsent_total 3\n\
                           # HELP depth Depth.\n# TYPE depth gauge\ndepth 1\n# EOF\n";
        assert_eq!(
            to_text_format(openmetrics),
            "# HELP sent_total Messages sent.\n# TYPE sent_total counter\nsent_total 3\n\
             # HELP depth Depth.\n# TYPE depth gauge\ndepth 1\n"
        );
        assert!(prefers_text_format("text/plain; version=0.0.4"));
        assert!(!prefers_text_format(
            "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
        ));
        assert!(!prefers_text_format("*/*"));
    }
}
