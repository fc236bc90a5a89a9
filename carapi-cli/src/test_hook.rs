//! The one hidden hook for process-level tests: the environment variable `CARAPI_TESTE`, a
//! comma-separated list of `name=value`, read once here and nowhere else. Production runs never
//! set it; the code it feeds takes a clock and an interval as parameters, as it does from the
//! real ones.
//!
//! | name | value | what it changes |
//! |---|---|---|
//! | `agora` | an RFC 3339 instant | the clock `carapi vigiar` measures the archive's ages against (a test ages its archive without waiting a month) |
//! | `intervalo-ms` | milliseconds | the interval between status reads while waiting for a top-up, below the contract's 5 s (a local test server pays in milliseconds) |
//!
//! Anything else, or a value that does not parse, is ignored.

use std::time::Duration;

use chrono::{DateTime, Utc};

/// The variable.
const VARIABLE: &str = "CARAPI_TESTE";

/// The value of `name` in `CARAPI_TESTE`, if set.
fn value(name: &str) -> Option<String> {
    let all = std::env::var(VARIABLE).ok()?;
    all.split(',').find_map(|pair| {
        let (n, v) = pair.split_once('=')?;
        (n.trim() == name).then(|| v.trim().to_owned())
    })
}

/// The instant `carapi vigiar` measures ages against: `agora`, else the system clock.
pub(crate) fn now() -> DateTime<Utc> {
    value("agora")
        .and_then(|v| DateTime::parse_from_rfc3339(&v).ok())
        .map_or_else(Utc::now, |t| t.to_utc())
}

/// The interval between status reads of a top-up, when a test sets `intervalo-ms`.
pub(crate) fn poll_interval() -> Option<Duration> {
    value("intervalo-ms")
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis)
}
