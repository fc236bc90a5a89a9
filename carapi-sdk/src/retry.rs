//! The retry policy: which failures are retried, how long to wait, and the retry budget.
//!
//! Modelled on smithy-rs's standard retry strategy (exponential backoff with full jitter and a
//! token-bucket retry budget) with the money rules of the contract on top: nothing may charge
//! twice (contract, "Prices": every HTTP 200 of a lookup is charged).

use std::sync::Mutex;
use std::time::Duration;

/// How the client retries failed requests. On by default ([`RetryPolicy::default`]); turn it
/// off with [`RetryPolicy::disabled`].
///
/// What is retried, whatever the numbers:
/// - a request that failed before it reached the server (connection refused, DNS, TLS);
/// - 429 `LIMITE_EXCEDIDO` of the per-second rate ([`EscopoLimite::Taxa`](crate::EscopoLimite::Taxa))
///   when the server's `Retry-After` is at most
///   [`with_max_retry_after`](RetryPolicy::with_max_retry_after) (a daily or monthly limit is
///   never retried; a 429 without `Retry-After` is not retried). A call absorbs up to
///   [`with_rate_retries`](RetryPolicy::with_rate_retries) of them (default 5) besides its
///   attempts: such a 429 charges nothing, and the client's own rate limiter slows down after
///   it (another process spends the same key);
/// - 502 and 503 (errors never debit, contract "Errors");
/// - a time-out or broken connection *after* the request was sent, only for requests that
///   cannot charge twice: the free requests (the `GET`s and the idempotent `PUT /v1/limites`)
///   and `criar_recarga` (the contract reuses a pending PIX of the same amount for 10 minutes). A charged lookup (`car`, `car_completo`,
///   `proprietario`, `recibo`) is retried in that case only with
///   [`ClientBuilder::retry_charged_consultas`](crate::ClientBuilder::retry_charged_consultas).
///
/// Never retried: 400, 401, 402, 404 and 500.
///
/// Waits grow as `initial_backoff * 2^(n-1)`, capped at `max_backoff`, each one a uniformly
/// random fraction of that (full jitter); a `Retry-After` is honoured as is. Every retry spends
/// tokens of a per-client budget (5, or 10 after a time-out); a success gives one back (or the
/// tokens its retries took). When the budget is empty the client stops retrying, so an outage
/// does not multiply the load.
///
/// ```
/// use std::time::Duration;
/// use carapi_sdk::RetryPolicy;
/// let p = RetryPolicy::default()
///     .with_max_attempts(5)
///     .with_backoff(Duration::from_millis(100), Duration::from_secs(2))
///     .with_max_retry_after(Duration::from_secs(5));
/// assert_eq!(p.max_attempts(), 5);
/// assert_eq!(p.max_retry_after(), Duration::from_secs(5));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
    max_retry_after: Duration,
    rate_retries: u32,
    jitter: bool,
    budget: u32,
    retry_cost: u32,
    timeout_retry_cost: u32,
}

impl Default for RetryPolicy {
    /// 3 attempts, backoff 200 ms doubling up to 5 s with jitter, `Retry-After` honoured up to
    /// 10 s, 5 rate 429s absorbed besides the attempts, budget of 500 tokens (retry 5, retry
    /// after a time-out 10).
    fn default() -> Self {
        Self {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(10),
            rate_retries: 5,
            jitter: true,
            budget: 500,
            retry_cost: 5,
            timeout_retry_cost: 10,
        }
    }
}

impl RetryPolicy {
    /// No retries at all: every request is attempted once.
    #[must_use]
    pub fn disabled() -> Self {
        Self {
            max_attempts: 1,
            rate_retries: 0,
            ..Self::default()
        }
    }

    /// How many 429s of the per-second rate one call absorbs besides its attempts (default 5;
    /// 0: they count as attempts). Each waits the server's `Retry-After`.
    #[must_use]
    pub fn with_rate_retries(mut self, n: u32) -> Self {
        self.rate_retries = n;
        self
    }

    /// The configured rate 429s absorbed per call.
    #[must_use]
    pub fn rate_retries(&self) -> u32 {
        self.rate_retries
    }

    /// Total attempts per call, the first included (minimum 1; 1 disables retries).
    #[must_use]
    pub fn with_max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// First backoff and the cap of the exponential backoff.
    #[must_use]
    pub fn with_backoff(mut self, initial: Duration, max: Duration) -> Self {
        self.initial_backoff = initial;
        self.max_backoff = max.max(initial);
        self
    }

    /// Longest `Retry-After` of a per-second-rate 429 the client will wait for (default 10 s);
    /// longer waits are returned as [`Error::Api`](crate::Error::Api), as are the daily and
    /// monthly limits whatever their `Retry-After`.
    #[must_use]
    pub fn with_max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// Turns the random jitter on (default) or off (waits are then exactly exponential).
    #[must_use]
    pub fn with_jitter(mut self, on: bool) -> Self {
        self.jitter = on;
        self
    }

    /// Capacity of the per-client retry budget in tokens (default 500). A retry costs 5 tokens,
    /// a retry after a time-out 10; a success refunds.
    #[must_use]
    pub fn with_budget(mut self, tokens: u32) -> Self {
        self.budget = tokens;
        self
    }

    /// The configured attempts per call, the first included.
    #[must_use]
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The configured longest `Retry-After` of a 429 honoured.
    #[must_use]
    pub fn max_retry_after(&self) -> Duration {
        self.max_retry_after
    }

    /// The wait before attempt `attempt + 1`, given that `attempt` (1-based) just failed.
    pub(crate) fn backoff_for(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(20);
        let base = self
            .initial_backoff
            .saturating_mul(1u32 << exp)
            .min(self.max_backoff);
        if self.jitter && !base.is_zero() {
            base.mul_f64(fastrand::f64())
        } else {
            base
        }
    }

    /// Decides whether attempt `attempt` (1-based), which ended with `outcome`, is retried and
    /// after how long. Budget not included (see [`RetryBudget`]).
    pub(crate) fn decide(
        &self,
        attempt: u32,
        outcome: &Outcome,
        resend_safe: bool,
    ) -> Option<Duration> {
        if attempt >= self.max_attempts {
            return None;
        }
        match *outcome {
            Outcome::NotSent => Some(self.backoff_for(attempt)),
            Outcome::LostAfterSend { .. } if resend_safe => Some(self.backoff_for(attempt)),
            Outcome::LostAfterSend { .. } => None,
            Outcome::Status {
                status: 429,
                retry_after: Some(wait),
            } if wait <= self.max_retry_after => Some(wait),
            Outcome::Status {
                status: 502 | 503,
                retry_after,
            } => match retry_after {
                Some(wait) if wait <= self.max_retry_after => {
                    Some(wait.max(self.backoff_for(attempt)))
                }
                Some(_) => None,
                None => Some(self.backoff_for(attempt)),
            },
            Outcome::Status { .. } => None,
        }
    }

    pub(crate) fn cost(&self, outcome: &Outcome) -> u32 {
        match outcome {
            Outcome::LostAfterSend { timeout: true } => self.timeout_retry_cost,
            _ => self.retry_cost,
        }
    }

    pub(crate) fn new_budget(&self) -> RetryBudget {
        RetryBudget {
            capacity: self.budget,
            tokens: Mutex::new(self.budget),
        }
    }
}

/// How one attempt ended, as far as retrying is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The request never reached the server.
    NotSent,
    /// Sent, then the answer was lost (time-out, reset, body cut).
    LostAfterSend { timeout: bool },
    /// The server answered with an error status.
    Status {
        status: u16,
        retry_after: Option<Duration>,
    },
}

/// Per-client token bucket limiting retries (smithy-rs "standard" retry quota).
#[derive(Debug)]
pub(crate) struct RetryBudget {
    capacity: u32,
    tokens: Mutex<u32>,
}

impl RetryBudget {
    /// Takes `cost` tokens; false (nothing taken) when the budget holds fewer.
    pub(crate) fn try_acquire(&self, cost: u32) -> bool {
        let mut t = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        if *t >= cost {
            *t -= cost;
            true
        } else {
            false
        }
    }

    /// Gives back `tokens` after a success (capped at the capacity).
    pub(crate) fn refund(&self, tokens: u32) {
        let mut t = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        *t = (*t + tokens).min(self.capacity);
    }

    #[cfg(test)]
    pub(crate) fn available(&self) -> u32 {
        *self.tokens.lock().unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> RetryPolicy {
        RetryPolicy::default()
            .with_jitter(false)
            .with_backoff(Duration::from_millis(100), Duration::from_millis(350))
    }

    #[test]
    fn exponential_capped_backoff() {
        let p = p();
        assert_eq!(p.backoff_for(1), Duration::from_millis(100));
        assert_eq!(p.backoff_for(2), Duration::from_millis(200));
        assert_eq!(p.backoff_for(3), Duration::from_millis(350));
        assert_eq!(p.backoff_for(40), Duration::from_millis(350));
        let j = p.with_jitter(true);
        for n in 1..10 {
            assert!(j.backoff_for(n) <= Duration::from_millis(350));
        }
    }

    #[test]
    fn rules() {
        let p = p();
        let st = |status, ra: Option<u64>| Outcome::Status {
            status,
            retry_after: ra.map(Duration::from_secs),
        };
        assert!(p.decide(1, &Outcome::NotSent, false).is_some());
        assert!(
            p.decide(1, &Outcome::LostAfterSend { timeout: true }, false)
                .is_none()
        );
        assert!(
            p.decide(1, &Outcome::LostAfterSend { timeout: true }, true)
                .is_some()
        );
        assert_eq!(
            p.decide(1, &st(429, Some(2)), false),
            Some(Duration::from_secs(2))
        );
        assert_eq!(p.decide(1, &st(429, Some(3600)), false), None);
        assert_eq!(p.decide(1, &st(429, None), false), None);
        assert!(p.decide(1, &st(502, None), false).is_some());
        assert!(p.decide(1, &st(503, Some(1)), false).is_some());
        for s in [400, 401, 402, 404, 500] {
            assert_eq!(p.decide(1, &st(s, None), true), None, "{s}");
        }
        assert_eq!(
            p.decide(3, &Outcome::NotSent, true),
            None,
            "attempts exhausted"
        );
        assert_eq!(
            RetryPolicy::disabled().decide(1, &Outcome::NotSent, true),
            None
        );
    }

    #[test]
    fn budget_drains_and_refills() {
        let b = RetryPolicy::default().with_budget(12).new_budget();
        assert!(b.try_acquire(5));
        assert!(b.try_acquire(5));
        assert!(!b.try_acquire(5));
        assert_eq!(b.available(), 2);
        b.refund(100);
        assert_eq!(b.available(), 12);
    }
}
