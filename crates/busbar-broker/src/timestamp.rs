//! ISO-8601 UTC text for a time given in milliseconds since the Unix epoch (no calendar crate needed).

use std::fmt::Write as _;

const MILLIS_PER_DAY: i64 = 86_400_000;

/// Formats `unix_millis` as `YYYY-MM-DDTHH:MM:SS.mmmZ`; times before the epoch are supported.
pub(crate) fn iso8601_utc(unix_millis: i64) -> String {
    let days = unix_millis.div_euclid(MILLIS_PER_DAY);
    let millis_of_day = unix_millis.rem_euclid(MILLIS_PER_DAY);
    let (year, month, day) = civil_from_days(days);
    let seconds_of_day = millis_of_day / 1000;
    let mut text = String::with_capacity(24);
    // Writing to a String cannot fail.
    let _ = write!(
        text,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        seconds_of_day / 3600,
        seconds_of_day / 60 % 60,
        seconds_of_day % 60,
        millis_of_day % 1000
    );
    text
}

/// Proleptic Gregorian date of a day count since 1970-01-01, by Howard Hinnant's
/// `civil_from_days` algorithm: shift to an era starting on 1 March so leap days fall last.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
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
    fn formats_known_instants() {
        let table = [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_795_307_569_000, "2026-11-22T00:32:49.000Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (951_868_799_999, "2000-02-29T23:59:59.999Z"),
            (1_709_251_199_123, "2024-02-29T23:59:59.123Z"),
            (4_107_542_400_000, "2100-03-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (-2_208_988_800_000, "1900-01-01T00:00:00.000Z"),
        ];
        for (millis, text) in table {
            assert_eq!(iso8601_utc(millis), text, "{millis}");
        }
    }

    #[test]
    fn every_day_of_four_centuries_follows_the_previous_one() {
        // Walk 1900..2300 day by day: dates must increase with no gaps or repeats.
        let mut previous = civil_from_days(-25_568);
        for days in -25_567..120_000 {
            let current = civil_from_days(days);
            let next_day = (previous.0, previous.1, previous.2 + 1);
            let next_month = (previous.0, previous.1 + 1, 1);
            let next_year = (previous.0 + 1, 1, 1);
            assert!(
                current == next_day || current == next_month || current == next_year,
                "{days}"
            );
            previous = current;
        }
    }
}
