//! Durations as the service writes them: .NET `TimeSpan` ticks in ISO 8601 / `xs:duration`
//! form (`PT1M`, `P14D`, `P10675199DT2H48M5.4775807S`), §7.

use std::fmt;

/// A non-negative .NET `TimeSpan`: a count of 100-nanosecond ticks, at most
/// [`TimeSpan::MAX`] (`TimeSpan.MaxValue`, which Service Bus uses for "never").
///
/// Ticks, not milliseconds, so that what a client sent is written back digit for digit:
/// `P10675199DT2H48M5.4775807S` (.NET), `P10675199DT2H48M5.477S` (Java) and
/// `P10675199DT2H48M5.477539S` (Python) all survive a round trip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TimeSpan {
    ticks: u64,
}

const TICKS_PER_SECOND: u64 = 10_000_000;
const TICKS_PER_MINUTE: u64 = 60 * TICKS_PER_SECOND;
const TICKS_PER_HOUR: u64 = 60 * TICKS_PER_MINUTE;
const TICKS_PER_DAY: u64 = 24 * TICKS_PER_HOUR;
/// Digits of a fraction of a second that ticks can hold.
const FRACTION_DIGITS: usize = 7;

impl TimeSpan {
    /// Zero (`PT0S`).
    pub const ZERO: TimeSpan = TimeSpan { ticks: 0 };
    /// .NET `TimeSpan.MaxValue` (`P10675199DT2H48M5.4775807S`): the service's "never"
    /// (default time to live, auto-delete on idle).
    pub const MAX: TimeSpan = TimeSpan {
        ticks: i64::MAX as u64,
    };

    /// A span of `ticks` 100-ns ticks, saturating at [`TimeSpan::MAX`].
    pub const fn from_ticks(ticks: u64) -> TimeSpan {
        if ticks > TimeSpan::MAX.ticks {
            TimeSpan::MAX
        } else {
            TimeSpan { ticks }
        }
    }

    /// A span of whole seconds, saturating at [`TimeSpan::MAX`].
    pub const fn from_secs(seconds: u64) -> TimeSpan {
        TimeSpan::from_ticks(seconds.saturating_mul(TICKS_PER_SECOND))
    }

    /// A span of milliseconds, saturating at [`TimeSpan::MAX`].
    pub const fn from_millis(milliseconds: u64) -> TimeSpan {
        TimeSpan::from_ticks(milliseconds.saturating_mul(TICKS_PER_SECOND / 1000))
    }

    /// A [`std::time::Duration`] as a span, in whole ticks (nanoseconds below 100 dropped),
    /// saturating at [`TimeSpan::MAX`].
    pub fn from_std(duration: std::time::Duration) -> TimeSpan {
        TimeSpan::from_ticks(u64::try_from(duration.as_nanos() / 100).unwrap_or(u64::MAX))
    }

    /// The span in 100-ns ticks.
    pub const fn ticks(self) -> u64 {
        self.ticks
    }

    /// The span as a [`std::time::Duration`].
    pub const fn to_std(self) -> std::time::Duration {
        std::time::Duration::new(
            self.ticks / TICKS_PER_SECOND,
            // The remainder is below 10^7 ticks, so below 10^9 ns.
            ((self.ticks % TICKS_PER_SECOND) * 100) as u32,
        )
    }

    /// Parses an `xs:duration` (surrounding whitespace ignored): `P[nY][nM][nD][T[nH][nM][n[.f]S]]`.
    ///
    /// As .NET's `XmlConvert.ToTimeSpan` does, a year counts 365 days and a month 30. Digits of
    /// a second past the seventh are dropped, and a span beyond [`TimeSpan::MAX`] saturates to it
    /// (clients compute "never" in floating point and land just around it). Negative spans,
    /// weeks and empty forms (`P`, `PT`) are refused.
    pub fn parse(text: &str) -> Option<TimeSpan> {
        let rest = text.trim().strip_prefix('P')?;
        let (date, time) = match rest.split_once('T') {
            Some((date, time)) => (date, Some(time)),
            None => (rest, None),
        };
        if time == Some("") || (date.is_empty() && time.is_none()) {
            return None;
        }
        let mut ticks: u128 = 0;
        for (designators, part) in [("YMD", date), ("HMS", time.unwrap_or(""))] {
            ticks = ticks.saturating_add(parse_components(part, designators)?);
        }
        Some(TimeSpan::from_ticks(
            u64::try_from(ticks).unwrap_or(u64::MAX),
        ))
    }
}

/// Sums the `<number><designator>` components of one half of a duration, which must appear in
/// the order of `designators` (each at most once). Only seconds may have a fraction.
fn parse_components(mut part: &str, designators: &str) -> Option<u128> {
    let mut ticks: u128 = 0;
    let mut allowed = designators;
    while !part.is_empty() {
        let number_len = part.find(|c: char| !c.is_ascii_digit() && c != '.')?;
        let (number, rest) = part.split_at(number_len);
        let designator = rest.chars().next()?;
        let position = allowed.find(designator)?;
        allowed = &allowed[position + 1..];
        part = &rest[1..];
        let (whole, fraction) = match number.split_once('.') {
            Some((whole, fraction)) if designator == 'S' && is_digits(fraction) => {
                (whole, fraction)
            }
            Some(_) => return None,
            None => (number, ""),
        };
        if !is_digits(whole) {
            return None;
        }
        // A value too long for u128 is far past TimeSpan::MAX anyway.
        let whole: u128 = whole.parse().unwrap_or(u128::MAX);
        let unit = match (designators, designator) {
            (_, 'Y') => 365 * TICKS_PER_DAY,
            ("YMD", 'M') => 30 * TICKS_PER_DAY,
            (_, 'D') => TICKS_PER_DAY,
            (_, 'H') => TICKS_PER_HOUR,
            (_, 'M') => TICKS_PER_MINUTE,
            _ => TICKS_PER_SECOND,
        };
        ticks = ticks
            .saturating_add(whole.saturating_mul(u128::from(unit)))
            .saturating_add(u128::from(fraction_ticks(fraction)));
    }
    Some(ticks)
}

fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The ticks of a fraction of a second given by its digits (`"4775807"` → 4 775 807).
fn fraction_ticks(digits: &str) -> u64 {
    let mut ticks = 0;
    for position in 0..FRACTION_DIGITS {
        let digit = digits.as_bytes().get(position).map_or(0, |b| b - b'0');
        ticks = ticks * 10 + u64::from(digit);
    }
    ticks
}

/// The `xs:duration` form .NET's `XmlConvert.ToString(TimeSpan)` writes: zero components left
/// out, the fraction of a second without trailing zeros, `PT0S` for zero.
impl fmt::Display for TimeSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.ticks == 0 {
            return f.write_str("PT0S");
        }
        let days = self.ticks / TICKS_PER_DAY;
        let hours = self.ticks % TICKS_PER_DAY / TICKS_PER_HOUR;
        let minutes = self.ticks % TICKS_PER_HOUR / TICKS_PER_MINUTE;
        let seconds = self.ticks % TICKS_PER_MINUTE / TICKS_PER_SECOND;
        let fraction = self.ticks % TICKS_PER_SECOND;
        f.write_str("P")?;
        if days > 0 {
            write!(f, "{days}D")?;
        }
        if hours + minutes + seconds + fraction == 0 {
            return Ok(());
        }
        f.write_str("T")?;
        if hours > 0 {
            write!(f, "{hours}H")?;
        }
        if minutes > 0 {
            write!(f, "{minutes}M")?;
        }
        if seconds + fraction > 0 {
            write!(f, "{seconds}")?;
            if fraction > 0 {
                let digits = format!("{fraction:07}");
                write!(f, ".{}", digits.trim_end_matches('0'))?;
            }
            f.write_str("S")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_value_is_written_as_dotnet_does() {
        assert_eq!(TimeSpan::MAX.to_string(), "P10675199DT2H48M5.4775807S");
        assert_eq!(
            TimeSpan::parse("P10675199DT2H48M5.4775807S"),
            Some(TimeSpan::MAX)
        );
    }

    #[test]
    fn client_spellings_of_never_round_trip() {
        for text in ["P10675199DT2H48M5.477S", "P10675199DT2H48M5.477539S"] {
            let span = TimeSpan::parse(text).expect("parses");
            assert!(span < TimeSpan::MAX);
            assert_eq!(span.to_string(), text);
        }
    }

    #[test]
    fn beyond_max_saturates() {
        assert_eq!(TimeSpan::parse("P10675199DT2H48M6S"), Some(TimeSpan::MAX));
        assert_eq!(
            TimeSpan::parse("P99999999999999999999999999999999999999999D"),
            Some(TimeSpan::MAX)
        );
    }

    #[test]
    fn common_forms() {
        let cases = [
            ("PT1M", TimeSpan::from_secs(60)),
            ("PT45S", TimeSpan::from_secs(45)),
            ("PT2H", TimeSpan::from_secs(7200)),
            ("P14D", TimeSpan::from_secs(14 * 86_400)),
            ("PT0.5S", TimeSpan::from_millis(500)),
            ("P1DT1H1M1.25S", TimeSpan::from_millis(90_061_250)),
            ("PT0S", TimeSpan::ZERO),
        ];
        for (text, span) in cases {
            assert_eq!(TimeSpan::parse(text), Some(span), "{text}");
            assert_eq!(span.to_string(), text);
        }
    }

    #[test]
    fn lenient_spellings() {
        assert_eq!(TimeSpan::parse(" PT90S "), Some(TimeSpan::from_secs(90)));
        assert_eq!(TimeSpan::parse("PT0H5M0S"), Some(TimeSpan::from_secs(300)));
        assert_eq!(
            TimeSpan::parse("P1Y"),
            Some(TimeSpan::from_secs(365 * 86_400))
        );
        assert_eq!(
            TimeSpan::parse("P1M"),
            Some(TimeSpan::from_secs(30 * 86_400))
        );
        assert_eq!(
            TimeSpan::parse("PT1.123456789S"),
            Some(TimeSpan::from_ticks(11_234_567))
        );
    }

    #[test]
    fn malformed_forms_are_refused() {
        for text in [
            "", "P", "PT", "1M", "-PT1M", "PT1", "PTM", "P1W", "PT1M1H", "PT1.5M", "P1.5D",
            "PT1..5S", "PT.5S", "PT5.S", "P1DT", "PT1S1S", "PT+1S", "pt1m",
        ] {
            assert_eq!(TimeSpan::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn std_conversion_keeps_sub_millisecond_ticks() {
        assert_eq!(
            TimeSpan::from_ticks(12_345_678).to_std(),
            std::time::Duration::new(1, 234_567_800)
        );
        assert_eq!(
            TimeSpan::from_std(std::time::Duration::new(1, 234_567_899)),
            TimeSpan::from_ticks(12_345_678)
        );
        assert_eq!(TimeSpan::from_std(std::time::Duration::MAX), TimeSpan::MAX);
    }
}
