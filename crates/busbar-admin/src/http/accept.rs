//! Reading an `Accept` header (RFC 9110 §12.5.1) for the few choices the admin port makes on
//! it: OpenMetrics or Prometheus's text format on `/metrics`, the explorer for a browser on `/`.

/// Whether `accept` names `media_type` (ignoring case and parameters) with a non-zero `q`.
/// Wildcards do not count: the choice is made only for a client that names the type.
pub(crate) fn names(accept: &str, media_type: &str) -> bool {
    accept.split(',').any(|range| {
        let mut parts = range.split(';').map(str::trim);
        let named = parts
            .next()
            .is_some_and(|range| range.eq_ignore_ascii_case(media_type));
        named && !parts.any(refuses)
    })
}

/// Whether a media range's parameter is a weight of zero (`q=0`, `q=0.000`, …).
fn refuses(parameter: &str) -> bool {
    parameter.split_once('=').is_some_and(|(name, value)| {
        name.trim().eq_ignore_ascii_case("q") && value.trim().parse::<f64>() == Ok(0.0)
    })
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn a_named_type_counts_unless_refused() {
        let prometheus = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;\
                          version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(names(prometheus, "application/openmetrics-text"));
        assert!(names(prometheus, "text/plain"));
        assert!(names(
            " Application/OpenMetrics-Text ; q=0.5",
            "application/openmetrics-text"
        ));
        let browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
        assert!(names(browser, "text/html"));
        assert!(!names(browser, "application/openmetrics-text"));
        assert!(!names("*/*", "text/html"));
        assert!(!names("text/*", "text/html"));
        assert!(!names("text/htmlx", "text/html"));
        for refused in ["q=0", "q=0.0", "Q=0.000", " q = 0 "] {
            assert!(
                !names(&format!("text/html;{refused}"), "text/html"),
                "{refused}"
            );
        }
        assert!(names("text/html;q=0.01", "text/html"));
        assert!(!names("", "text/html"));
    }
}
