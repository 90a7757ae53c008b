//! Points in time as the service writes them: `xs:dateTime` in UTC with 100-ns precision
//! (`2023-06-05T22:26:32.9394998Z`), whole seconds in Atom envelopes, §7.

use std::fmt::Write;

/// A point in time (UTC) between 0001-01-01 and 9999-12-31, with .NET's 100-ns precision so
/// that a time a client sent (or the service printed) is written back digit for digit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    /// 100-ns ticks since 1970-01-01T00:00:00Z.
    unix_ticks: i64,
}

const TICKS_PER_SECOND: i64 = 10_000_000;
const TICKS_PER_MILLISECOND: i64 = 10_000;
const SECONDS_PER_DAY: i64 = 86_400;
/// Days from 0001-01-01 to 1970-01-01.
const DAYS_BEFORE_UNIX_EPOCH: i64 = 719_162;
/// Days from 0001-01-01 to 10000-01-01.
const DAYS_IN_CALENDAR: i64 = 3_652_059;

impl Timestamp {
    /// 0001-01-01T00:00:00, .NET `DateTime.MinValue`: what the service prints for "never"
    /// (an `AccessedAt` of an entity nobody used).
    pub const MIN: Timestamp = Timestamp {
        unix_ticks: -DAYS_BEFORE_UNIX_EPOCH * SECONDS_PER_DAY * TICKS_PER_SECOND,
    };
    /// 9999-12-31T23:59:59.9999999, .NET `DateTime.MaxValue`.
    pub const MAX: Timestamp = Timestamp {
        unix_ticks: (DAYS_IN_CALENDAR - DAYS_BEFORE_UNIX_EPOCH)
            * SECONDS_PER_DAY
            * TICKS_PER_SECOND
            - 1,
    };

    /// The time `milliseconds` after the Unix epoch (the broker's clock), clamped to
    /// [`Timestamp::MIN`]..=[`Timestamp::MAX`].
    pub fn from_unix_millis(milliseconds: i64) -> Timestamp {
        Timestamp::from_unix_ticks(milliseconds.saturating_mul(TICKS_PER_MILLISECOND))
    }

    /// The time `ticks` 100-ns ticks after the Unix epoch, clamped to
    /// [`Timestamp::MIN`]..=[`Timestamp::MAX`].
    pub fn from_unix_ticks(ticks: i64) -> Timestamp {
        Timestamp {
            unix_ticks: ticks.clamp(Timestamp::MIN.unix_ticks, Timestamp::MAX.unix_ticks),
        }
    }

    /// Milliseconds since the Unix epoch, rounded down.
    pub fn unix_millis(self) -> i64 {
        self.unix_ticks.div_euclid(TICKS_PER_MILLISECOND)
    }

    /// 100-ns ticks since the Unix epoch.
    pub fn unix_ticks(self) -> i64 {
        self.unix_ticks
    }

    /// Parses an `xs:dateTime`, `YYYY-MM-DDThh:mm:ss[.f…][Z|±hh:mm]` (surrounding whitespace
    /// ignored). Without a zone it is taken as UTC, as .NET's `XmlDateTimeSerializationMode.Utc`
    /// does; digits of a second past the seventh are dropped.
    pub fn parse(text: &str) -> Option<Timestamp> {
        let text = text.trim();
        let (date, time) = text.split_once('T')?;
        let [year, month, day] = split_fields(date, '-', [4, 2, 2])?;
        let (time, offset_seconds) = split_zone(time)?;
        let (time, fraction) = match time.split_once('.') {
            Some((time, fraction)) if is_digits(fraction) => (time, fraction),
            Some(_) => return None,
            None => (time, ""),
        };
        let [hour, minute, second] = split_fields(time, ':', [2, 2, 2])?;
        if year == 0 || !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
            return None;
        }
        if hour > 23 || minute > 59 || second > 59 {
            return None;
        }
        let days = days_from_civil(year, month, day);
        let seconds = days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offset_seconds;
        let unix_ticks = seconds * TICKS_PER_SECOND + fraction_ticks(fraction);
        (Timestamp::MIN.unix_ticks..=Timestamp::MAX.unix_ticks)
            .contains(&unix_ticks)
            .then_some(Timestamp { unix_ticks })
    }

    /// `2023-06-05T22:26:32.9394998Z`: seven fractional digits, as the service writes
    /// `CreatedAt` and friends.
    pub(crate) fn to_precise_string(self) -> String {
        let mut text = self.to_seconds_string();
        let fraction = self.unix_ticks.rem_euclid(TICKS_PER_SECOND);
        let _ = write!(text, ".{fraction:07}Z");
        text
    }

    /// `2023-06-05T22:26:32Z`: whole seconds, as in Atom `published` / `updated`.
    pub(crate) fn to_atom_string(self) -> String {
        self.to_seconds_string() + "Z"
    }

    /// `2023-06-05T22:26:32`: whole seconds without a zone, as in `<Error>` details and for
    /// [`Timestamp::MIN`] ("never").
    pub(crate) fn to_seconds_string(self) -> String {
        let seconds = self.unix_ticks.div_euclid(TICKS_PER_SECOND);
        let (year, month, day) = civil_from_days(seconds.div_euclid(SECONDS_PER_DAY));
        let second_of_day = seconds.rem_euclid(SECONDS_PER_DAY);
        format!(
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
            second_of_day / 3600,
            second_of_day % 3600 / 60,
            second_of_day % 60
        )
    }
}

/// Splits `a<sep>b<sep>c` into three decimal fields of exactly the given widths.
fn split_fields(text: &str, separator: char, widths: [usize; 3]) -> Option<[i64; 3]> {
    let mut parts = text.split(separator);
    let mut fields = [0; 3];
    for (field, width) in fields.iter_mut().zip(widths) {
        let part = parts.next()?;
        if part.len() != width || !is_digits(part) {
            return None;
        }
        *field = part.parse().ok()?;
    }
    parts.next().is_none().then_some(fields)
}

/// Splits the zone off a time: `Z` (or none) is UTC, `±hh:mm` an offset in seconds east.
fn split_zone(time: &str) -> Option<(&str, i64)> {
    if let Some(time) = time.strip_suffix('Z') {
        return Some((time, 0));
    }
    let Some(sign_at) = time.rfind(['+', '-']) else {
        return Some((time, 0));
    };
    let (time, zone) = time.split_at(sign_at);
    let (hours, minutes) = zone[1..].split_once(':')?;
    if hours.len() != 2 || minutes.len() != 2 || !is_digits(hours) || !is_digits(minutes) {
        return None;
    }
    let (hours, minutes): (i64, i64) = (hours.parse().ok()?, minutes.parse().ok()?);
    if hours > 14 || minutes > 59 {
        return None;
    }
    let offset = hours * 3600 + minutes * 60;
    Some((
        time,
        if zone.starts_with('-') {
            -offset
        } else {
            offset
        },
    ))
}

fn is_digits(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

/// The ticks of a fraction of a second given by its digits, past the seventh dropped.
fn fraction_ticks(digits: &str) -> i64 {
    (0..7).fold(0, |ticks, position| {
        ticks * 10
            + digits
                .as_bytes()
                .get(position)
                .map_or(0, |b| i64::from(b - b'0'))
    })
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The proleptic Gregorian date of a day counted from 1970-01-01 (`civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_forms_round_trip() {
        let created = Timestamp::parse("2026-11-24T19:14:36.6349880Z").expect("parses");
        assert_eq!(created.to_precise_string(), "2026-11-24T19:14:36.6349880Z");
        assert_eq!(created.to_atom_string(), "2026-11-24T19:14:36Z");
        assert_eq!(created.to_seconds_string(), "2026-11-24T19:14:36");
    }

    #[test]
    fn client_forms_parse() {
        let expected = Timestamp::from_unix_millis(1_704_164_645_000);
        for text in [
            "2024-01-02T03:04:05Z",
            "2024-01-02T03:04:05.000Z",
            "2024-01-02T03:04:05+00:00",
            "2024-01-02T04:34:05+01:30",
            "2024-01-01T23:04:05-04:00",
            "2024-01-02T03:04:05",
        ] {
            assert_eq!(Timestamp::parse(text), Some(expected), "{text}");
        }
        assert_eq!(
            Timestamp::parse("2026-11-24T19:14:36.634988Z").map(Timestamp::unix_ticks),
            Timestamp::parse("2026-11-24T19:14:36.6349880Z").map(Timestamp::unix_ticks)
        );
    }

    #[test]
    fn calendar_edges() {
        assert_eq!(
            Timestamp::parse("0001-01-01T00:00:00"),
            Some(Timestamp::MIN)
        );
        assert_eq!(
            Timestamp::parse("9999-12-31T23:59:59.9999999Z"),
            Some(Timestamp::MAX)
        );
        assert_eq!(Timestamp::MIN.to_seconds_string(), "0001-01-01T00:00:00");
        assert_eq!(
            Timestamp::from_unix_millis(0).to_precise_string(),
            "1970-01-01T00:00:00.0000000Z"
        );
        assert!(Timestamp::parse("2024-02-29T00:00:00Z").is_some());
        assert_eq!(Timestamp::from_unix_millis(i64::MIN), Timestamp::MIN);
        assert_eq!(Timestamp::from_unix_millis(i64::MAX), Timestamp::MAX);
    }

    #[test]
    fn malformed_forms_are_refused() {
        for text in [
            "",
            "2024-01-02",
            "2023-02-29T00:00:00Z",
            "2024-13-01T00:00:00Z",
            "2024-01-02T24:00:00Z",
            "2024-01-02T03:04:60Z",
            "0000-01-01T00:00:00Z",
            "24-01-02T03:04:05Z",
            "2024-01-02T03:04:05.Z",
            "2024-01-02T03:04:05+1:00",
            "2024-01-02T03:04Z",
            "0001-01-01T00:00:00+01:00",
            "2024-01-02T03:04:05ZZ",
            "+2024-01-02T03:04:05Z",
        ] {
            assert_eq!(Timestamp::parse(text), None, "{text:?}");
        }
    }

    #[test]
    fn unix_millis_round_down() {
        assert_eq!(Timestamp::from_unix_ticks(-1).unix_millis(), -1);
        assert_eq!(Timestamp::from_unix_ticks(19_999).unix_millis(), 1);
    }
}
