//! ISO-8601 durations as `Config.json` writes them (`PT1M`, `P1DT2H`, `PT0.5S`), and their plain-English form.

use std::time::Duration;

const SECONDS_PER_MINUTE: u64 = 60;
const SECONDS_PER_HOUR: u64 = 3_600;
const SECONDS_PER_DAY: u64 = 86_400;
/// A year and a month have no fixed length; like .NET's `XmlConvert` (which the emulator
/// uses), a year counts 365 days and a month 30.
const SECONDS_PER_YEAR: u64 = 365 * SECONDS_PER_DAY;
const SECONDS_PER_MONTH: u64 = 30 * SECONDS_PER_DAY;

/// Why a text is not an ISO-8601 duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// The text does not begin with `P`.
    #[error("it does not start with 'P'")]
    MissingPeriodDesignator,
    /// `P` (or `T`) is not followed by any component.
    #[error("it has no components")]
    NoComponents,
    /// A number is not followed by a designator, or a character is out of place.
    #[error("unexpected {0:?}")]
    Unexpected(String),
    /// Designators repeated or out of the order `Y M D T H M S`.
    #[error("components must appear in the order Y, M, D, T, H, M, S, each at most once")]
    OutOfOrder,
    /// A fraction on anything but seconds.
    #[error("only seconds may have a fraction")]
    FractionNotOnSeconds,
    /// The value does not fit.
    #[error("it is too large")]
    Overflow,
}

/// Parses `P[nY][nM][nD][T[nH][nM][n[.f]S]]` (upper-case designators, no sign, no weeks).
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let body = text
        .strip_prefix('P')
        .ok_or(DurationError::MissingPeriodDesignator)?;
    if body.is_empty() {
        return Err(DurationError::NoComponents);
    }
    let mut seconds: u64 = 0;
    let mut nanos: u32 = 0;
    let mut last_rank: Option<u8> = None;
    let mut in_time = false;
    let mut time_components = 0;
    let mut rest = body;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('T') {
            if in_time {
                return Err(DurationError::OutOfOrder);
            }
            in_time = true;
            rest = after;
            continue;
        }
        let digits_end = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(digits_end);
        let mut tail_chars = tail.chars();
        let designator = tail_chars.next();
        if number.is_empty() || designator.is_none() {
            return Err(DurationError::Unexpected(rest.to_owned()));
        }
        let (rank, unit_seconds) = match (in_time, designator) {
            (false, Some('Y')) => (0, SECONDS_PER_YEAR),
            (false, Some('M')) => (1, SECONDS_PER_MONTH),
            (false, Some('D')) => (2, SECONDS_PER_DAY),
            (true, Some('H')) => (3, SECONDS_PER_HOUR),
            (true, Some('M')) => (4, SECONDS_PER_MINUTE),
            (true, Some('S')) => (5, 1),
            _ => return Err(DurationError::Unexpected(tail.to_owned())),
        };
        if last_rank.is_some_and(|last| last >= rank) {
            return Err(DurationError::OutOfOrder);
        }
        last_rank = Some(rank);
        time_components += u32::from(in_time);
        let (whole, fraction) = match number.split_once('.') {
            Some((whole, fraction)) if rank == 5 => (whole, Some(fraction)),
            Some(_) => return Err(DurationError::FractionNotOnSeconds),
            None => (number, None),
        };
        if whole.is_empty()
            || fraction.is_some_and(|digits| digits.is_empty() || digits.contains('.'))
        {
            return Err(DurationError::Unexpected(number.to_owned()));
        }
        let count: u64 = whole.parse().map_err(|_| DurationError::Overflow)?;
        seconds = count
            .checked_mul(unit_seconds)
            .and_then(|part| seconds.checked_add(part))
            .ok_or(DurationError::Overflow)?;
        if let Some(digits) = fraction {
            nanos = fraction_nanos(digits);
        }
        rest = tail_chars.as_str();
    }
    if in_time && time_components == 0 {
        return Err(DurationError::NoComponents);
    }
    Ok(Duration::new(seconds, nanos))
}

/// The nanoseconds of a decimal fraction's digits; digits past the ninth are dropped.
fn fraction_nanos(digits: &str) -> u32 {
    digits
        .bytes()
        .chain(std::iter::repeat(b'0'))
        .take(9)
        .fold(0, |nanos, digit| nanos * 10 + u32::from(digit - b'0'))
}

/// A duration in words for error messages: `5 minutes`, `1 second`, `7 days`, `1.5 seconds`.
pub(super) fn describe(duration: Duration) -> String {
    let units = [
        (SECONDS_PER_DAY, "day"),
        (SECONDS_PER_HOUR, "hour"),
        (SECONDS_PER_MINUTE, "minute"),
        (1, "second"),
    ];
    if duration.subsec_nanos() == 0 {
        let seconds = duration.as_secs();
        for (size, name) in units {
            if seconds.is_multiple_of(size) && seconds >= size {
                let count = seconds / size;
                return format!("{count} {name}{}", if count == 1 { "" } else { "s" });
            }
        }
    }
    let nanos = format!("{:09}", duration.subsec_nanos());
    match nanos.trim_end_matches('0') {
        "" => format!("{} seconds", duration.as_secs()),
        fraction => format!("{}.{fraction} seconds", duration.as_secs()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_component_and_fractions_of_seconds() {
        let table = [
            ("PT1M", Duration::from_secs(60)),
            ("PT1H", Duration::from_secs(3_600)),
            ("PT20S", Duration::from_secs(20)),
            ("PT0.5S", Duration::from_millis(500)),
            ("PT1.25S", Duration::from_millis(1_250)),
            ("PT0.0000000019S", Duration::from_nanos(1)),
            ("PT0.123456789S", Duration::from_nanos(123_456_789)),
            ("P1D", Duration::from_secs(86_400)),
            ("P1DT2H", Duration::from_secs(93_600)),
            ("P7D", Duration::from_secs(604_800)),
            ("P1Y", Duration::from_secs(365 * 86_400)),
            ("P2M", Duration::from_secs(60 * 86_400)),
            (
                "P1Y2M3DT4H5M6S",
                Duration::from_secs(((365 + 60 + 3) * 24 + 4) * 3_600 + 5 * 60 + 6),
            ),
            ("PT90M", Duration::from_secs(5_400)),
            ("PT0S", Duration::ZERO),
            ("P0D", Duration::ZERO),
            (
                "P10675199DT2H48M5.4775807S",
                Duration::new(922_337_203_685, 477_580_700),
            ),
        ];
        for (text, expected) in table {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn refuses_malformed_text_with_the_reason() {
        use DurationError::*;
        let table = [
            ("", MissingPeriodDesignator),
            ("1M", MissingPeriodDesignator),
            ("-PT1M", MissingPeriodDesignator),
            ("pt1m", MissingPeriodDesignator),
            ("P", NoComponents),
            ("PT", NoComponents),
            ("P1DT", NoComponents),
            ("PT1m", Unexpected("m".into())),
            ("P1H", Unexpected("H".into())),
            ("PT1D", Unexpected("D".into())),
            ("P1W", Unexpected("W".into())),
            ("PT5", Unexpected("5".into())),
            ("PTM", Unexpected("M".into())),
            ("PT1M ", Unexpected(" ".into())),
            ("PT.5S", Unexpected(".5".into())),
            ("PT1.S", Unexpected("1.".into())),
            ("PT1.2.3S", Unexpected("1.2.3".into())),
            ("PT1S1M", OutOfOrder),
            ("P1D1Y", OutOfOrder),
            ("PT1M2M", OutOfOrder),
            ("PT1HT1M", OutOfOrder),
            ("PT1.5M", FractionNotOnSeconds),
            ("P1.5D", FractionNotOnSeconds),
            ("PT99999999999999999999S", Overflow),
            ("P99999999999999999Y", Overflow),
        ];
        for (text, error) in table {
            assert_eq!(parse_duration(text), Err(error), "{text}");
        }
    }

    #[test]
    fn describes_durations_in_the_largest_whole_unit() {
        let table = [
            (Duration::from_secs(300), "5 minutes"),
            (Duration::from_secs(60), "1 minute"),
            (Duration::from_secs(5), "5 seconds"),
            (Duration::from_secs(1), "1 second"),
            (Duration::from_secs(604_800), "7 days"),
            (Duration::from_secs(3_600), "1 hour"),
            (Duration::from_secs(90), "90 seconds"),
            (Duration::from_millis(1_500), "1.5 seconds"),
            (
                Duration::new(922_337_203_685, 477_580_700),
                "922337203685.4775807 seconds",
            ),
            (Duration::ZERO, "0 seconds"),
        ];
        for (duration, text) in table {
            assert_eq!(describe(duration), text);
        }
    }
}
