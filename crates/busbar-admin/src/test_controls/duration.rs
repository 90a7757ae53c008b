//! Durations as the controls take them: ISO 8601 (through [`TimeSpan`], the codec's
//! `xs:duration`), or numbers with units as people type them (`90s`, `2h`, `1h30m`).

use std::time::Duration;

use crate::atom::TimeSpan;

/// The units of the short form, longest spelling first (`ms` before `m`).
const UNITS: [(&str, u64); 5] = [
    ("ms", 1),
    ("d", 86_400_000),
    ("h", 3_600_000),
    ("m", 60_000),
    ("s", 1000),
];

/// Parses `PT1H30M`-style ISO 8601 (`P` in either case; a year counts 365 days and a month
/// 30, as .NET reads them) or one or more `<digits><unit>` with units `d`, `h`, `m`, `s` and
/// `ms` (`90s`, `2h`, `15m`, `500ms`, `1h30m`). Surrounding whitespace is ignored; signs,
/// fractions in the short form and values past `u64` milliseconds are refused.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text.starts_with(['P', 'p']) {
        return TimeSpan::parse(&text.to_ascii_uppercase()).map(TimeSpan::to_std);
    }
    if text.is_empty() {
        return None;
    }
    let mut rest = text;
    let mut millis: u64 = 0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .filter(|&end| end > 0)?;
        let value: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let (unit, unit_millis) = UNITS.into_iter().find(|(unit, _)| rest.starts_with(unit))?;
        rest = &rest[unit.len()..];
        millis = millis.checked_add(value.checked_mul(unit_millis)?)?;
    }
    Some(Duration::from_millis(millis))
}

/// ISO 8601, as .NET writes a `TimeSpan` (`PT2H`, `P1DT30M`, `PT0.5S`, `PT0S`), to 100 ns.
pub fn format_duration(duration: Duration) -> String {
    TimeSpan::from_std(duration).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_8601_and_short_forms() {
        let cases = [
            ("PT1H30M", 5_400_000),
            ("pt2h", 7_200_000),
            ("P1D", 86_400_000),
            ("PT0.5S", 500),
            ("PT0S", 0),
            ("90s", 90_000),
            ("2h", 7_200_000),
            ("15m", 900_000),
            ("500ms", 500),
            ("1d", 86_400_000),
            ("1h30m", 5_400_000),
            (" 10s ", 10_000),
            ("0s", 0),
        ];
        for (text, millis) in cases {
            assert_eq!(
                parse_duration(text),
                Some(Duration::from_millis(millis)),
                "{text}"
            );
        }
    }

    #[test]
    fn garbage_is_refused() {
        for text in [
            "",
            "90",
            "s",
            "1.5h",
            "-1s",
            "+1s",
            "2 h",
            "2x",
            "1hour",
            "P",
            "PT",
            "PT1H-",
            "h2",
            "10msx",
            "99999999999999999999s",
            "18446744073709551615d",
        ] {
            assert_eq!(parse_duration(text), None, "{text:?}");
        }
    }

    #[test]
    fn written_as_iso_8601() {
        assert_eq!(format_duration(Duration::from_secs(7200)), "PT2H");
        assert_eq!(format_duration(Duration::from_secs(90_000)), "P1DT1H");
        assert_eq!(format_duration(Duration::from_millis(1500)), "PT1.5S");
        assert_eq!(format_duration(Duration::ZERO), "PT0S");
    }
}
