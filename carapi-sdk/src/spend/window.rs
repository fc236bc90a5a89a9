//! Where a lookup falls in the server's time, without comparing the client's clock with the
//! server's: the `Date` of the answers (RFC 9110 §6.6.1, whole seconds) and this client's
//! monotonic clock, never its wall clock.
//!
//! - **From** (`not_before`): the latest `Date` received before the request was sent. The server
//!   stamped it before the request left, so the lookup is recorded at or after it, however the
//!   server's clock was moved before (a test double's clock moves forward only). When the client
//!   had no answer yet, an answer received after the send gives `Date - (received - sent) - 2 s`,
//!   valid when the server's clock did not jump forward within that round trip.
//! - **Until** (`not_after`): once a lost request may no longer be in process at the server (the
//!   client's settle grace after the loss, 30 s by default), the `Date` of an answer to a request
//!   sent after that, plus one second.

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};

/// Margin of a lower bound taken from an answer after the send: the `Date`'s whole second and
/// scheduling.
const SLACK: TimeDelta = TimeDelta::seconds(2);

/// How far after a send an answer may come and still bound it from below.
const MAX_ROUND_TRIP: Duration = Duration::from_secs(30);

/// A request in flight: when it left (monotonic) and the server's time before it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sending {
    pub(crate) sent: Instant,
    pub(crate) not_before: Option<DateTime<Utc>>,
}

/// The server's time of one lookup: at or after `not_before`, at or before `not_after` (`None`:
/// unbounded).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    pub(crate) sent: Instant,
    /// When the answer arrived (a known 200) or was lost.
    pub(crate) ended: Instant,
    pub(crate) not_before: Option<DateTime<Utc>>,
    pub(crate) not_after: Option<DateTime<Utc>>,
}

impl Window {
    /// True when a history item recorded at `data` (server time) may be this lookup's.
    pub(crate) fn contains(&self, data: DateTime<Utc>) -> bool {
        self.not_before.is_none_or(|d| data >= d) && self.not_after.is_none_or(|a| data <= a)
    }

    /// Narrows the bounds with an answer stamped `data` by the server, to a request of this
    /// client sent at `answer.sent` and received at `answer.received`; `grace` is how long a
    /// lost request may still be in process at the server.
    pub(crate) fn observe(&mut self, answer: &DatedAnswer, grace: Duration) {
        if self.not_before.is_none()
            && answer.received >= self.sent
            && answer.received - self.sent <= MAX_ROUND_TRIP
        {
            let round_trip =
                TimeDelta::from_std(answer.received - self.sent).unwrap_or(TimeDelta::MAX / 2);
            self.not_before = Some(answer.data - round_trip - SLACK);
        }
        let after_grace = self.ended.checked_add(grace);
        if self.not_after.is_none()
            && let (Some(e), Some(limite)) = (answer.sent, after_grace)
            && e >= limite
        {
            self.not_after = Some(answer.data + TimeDelta::seconds(1));
        }
    }
}

/// One answer's `Date` and when its request left and it arrived (monotonic).
#[derive(Debug, Clone, Copy)]
pub(crate) struct DatedAnswer {
    pub(crate) data: DateTime<Utc>,
    /// `None` when unknown (then it only bounds from below).
    pub(crate) sent: Option<Instant>,
    pub(crate) received: Instant,
}

/// The latest server time this client has seen (the largest `Date`).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct ServerClock {
    latest: Option<DatedAnswer>,
}

impl ServerClock {
    /// Keeps `r` when its `Date` is the latest (the earliest arrival of that second).
    pub(crate) fn observe(&mut self, r: DatedAnswer) {
        if self.latest.is_none_or(|m| r.data > m.data) {
            self.latest = Some(r);
        }
    }

    /// A request leaves now.
    pub(crate) fn sending(&self) -> Sending {
        Sending {
            sent: Instant::now(),
            not_before: self.latest.map(|m| m.data),
        }
    }

    /// The bounds of a request sent as `sending` that ended at `ended` (answered or lost).
    pub(crate) fn window(&self, sending: Sending, ended: Instant, grace: Duration) -> Window {
        let mut j = Window {
            sent: sending.sent,
            ended,
            not_before: sending.not_before,
            not_after: None,
        };
        if let Some(m) = self.latest {
            j.observe(&m, grace);
        }
        j
    }
}

/// The `Date` header's instant, if the answer has a valid one.
pub(crate) fn date_of_header(headers: &reqwest::header::HeaderMap) -> Option<DateTime<Utc>> {
    let v = headers.get(reqwest::header::DATE)?.to_str().ok()?;
    DateTime::parse_from_rfc2822(v.trim())
        .ok()
        .map(|d| d.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    #[test]
    fn the_date_before_the_send_bounds_from_below_whatever_the_wall_clocks() {
        let mut r = ServerClock::default();
        let before = Instant::now();
        r.observe(DatedAnswer {
            data: t(0),
            sent: Some(before),
            received: before,
        });
        let sending = r.sending();
        assert_eq!(sending.not_before, Some(t(0)));
        let j = r.window(sending, Instant::now(), Duration::from_secs(30));
        assert!(
            j.contains(t(0)) && j.contains(t(3 * 3600)),
            "moved by hours: still in"
        );
        assert!(!j.contains(t(-1)));
    }

    #[test]
    fn without_a_date_before_an_answer_after_the_send_gives_the_bound() {
        let r = ServerClock::default();
        let sending = r.sending();
        assert_eq!(sending.not_before, None);
        let mut j = r.window(sending, Instant::now(), Duration::ZERO);
        assert!(j.contains(t(-100_000)), "unbounded until an answer arrives");
        let later = Instant::now();
        j.observe(
            &DatedAnswer {
                data: t(10),
                sent: Some(later),
                received: later,
            },
            Duration::ZERO,
        );
        assert!(j.contains(t(8)) && !j.contains(t(7)), "{j:?}");
        assert_eq!(
            j.not_after,
            Some(t(11)),
            "sent after the grace: an upper bound"
        );
    }

    #[test]
    fn reads_the_date_header() {
        let mut h = reqwest::header::HeaderMap::new();
        assert_eq!(date_of_header(&h), None);
        h.insert(
            reqwest::header::DATE,
            reqwest::header::HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(
            date_of_header(&h),
            Some(
                DateTime::parse_from_rfc3339("2015-10-21T07:28:00Z")
                    .unwrap()
                    .into()
            )
        );
    }
}
