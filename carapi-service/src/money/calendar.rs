//! The Brasília calendar (America/Sao_Paulo) that scopes the daily and monthly limits, and the
//! `Retry-After` of their refusals (contract, "Limits": days and months in Brasília time).

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::America::Sao_Paulo;

/// The Brasília calendar day of `now`, which scopes the daily limit and `usoHoje`.
pub(crate) fn brasilia_day(now: DateTime<Utc>) -> NaiveDate {
    now.with_timezone(&Sao_Paulo).date_naive()
}

/// First day of the Brasília month of `dia` and first day of the next month (`[inicio, fim)`).
pub(crate) fn month(day: NaiveDate) -> (NaiveDate, NaiveDate) {
    let start = day.with_day(1).unwrap_or(day);
    let end = if day.month() == 12 {
        NaiveDate::from_ymd_opt(day.year() + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(day.year(), day.month() + 1, 1)
    };
    (start, end.unwrap_or(start))
}

/// Whole seconds from `now` to the next Brasília midnight, rounded up (the `Retry-After` of
/// a daily limit: a client that waits that long is on the next day).
pub fn seconds_until_tomorrow(now: DateTime<Utc>) -> u64 {
    let tomorrow = brasilia_day(now)
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 0));
    seconds_until(now, tomorrow)
}

/// Whole seconds from `now` to the first Brasília midnight of next month, rounded up (the
/// `Retry-After` of a monthly cap).
pub fn seconds_until_next_month(now: DateTime<Utc>) -> u64 {
    let (_, end) = month(brasilia_day(now));
    seconds_until(now, end.and_hms_opt(0, 0, 0))
}

/// Seconds from `now` to the local Brasília instant `alvo`, rounded up to a whole second and
/// at least 1 (an hour when the instant does not exist).
fn seconds_until(now: DateTime<Utc>, target: Option<NaiveDateTime>) -> u64 {
    target
        .and_then(|a| a.and_local_timezone(Sao_Paulo).earliest())
        .and_then(|a| (a.with_timezone(&Utc) - now).num_microseconds())
        .map_or(3600, |us| {
            let s = us.div_euclid(1_000_000) + i64::from(us.rem_euclid(1_000_000) > 0);
            s.max(1).unsigned_abs()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn days_months_and_retry_after_rounded_up() {
        let cases = [
            // (instant, Brasília day, seconds to tomorrow, seconds to next month)
            ("2026-03-01T02:30:00Z", "2026-02-28", 1800, 1800),
            ("2026-03-01T02:59:54.530Z", "2026-02-28", 6, 6),
            ("2026-03-01T02:59:59.999Z", "2026-02-28", 1, 1),
            ("2026-03-01T02:59:59Z", "2026-02-28", 1, 1),
            ("2026-03-01T03:00:00Z", "2026-03-01", 86_400, 31 * 86_400),
            ("2026-12-31T12:00:00Z", "2026-12-31", 54_000, 54_000),
        ];
        for (instant, day, tomorrow, mes_s) in cases {
            let a = t(instant);
            assert_eq!(brasilia_day(a).to_string(), day, "{instant}");
            assert_eq!(seconds_until_tomorrow(a), tomorrow, "{instant}");
            assert_eq!(seconds_until_next_month(a), mes_s, "{instant}");
        }
        let d = |s: &str| s.parse::<NaiveDate>().unwrap();
        assert_eq!(month(d("2026-12-15")), (d("2026-12-01"), d("2027-01-01")));
        assert_eq!(month(d("2026-02-28")), (d("2026-02-01"), d("2026-03-01")));
    }
}
