//! The client-side rate limiter, so that a batch never meets a 429 it caused itself.
//!
//! A request takes a [`Permit`] before it is sent. Permits are handed out in the order they were
//! asked for (tokio's fair mutex), at most `rate` of them in any one-second window: the first
//! `rate` at once (a burst, as the contract's 10 per second allows), the next one second after
//! the oldest of the window. A permit dropped before its request was sent (a cancelled call, an
//! answer found in the archive meanwhile) gives its place back, as a semaphore permit does: after
//! any number of cancelled calls, the next call waits at most one second.
//!
//! A 429 of the per-second rate means someone else spends the same key's rate (two processes
//! with one key): the limiter then holds every request back for the server's `Retry-After`,
//! halves its own rate (down to 1 per second; once per such pause, however many 429s the pause
//! answers), spaces requests evenly instead of in bursts, and gives one request per second back
//! every [`RECOVERY`] without another such 429 (multiplicative decrease, slow additive
//! recovery), so two processes settle below the server's limit instead of meeting 429s that
//! outlast the retries.

use std::collections::VecDeque;
use std::fmt;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::{Instant, sleep_until};

/// The contract's rate limit: 10 requests per second per key (contract, "Limits").
pub const DEFAULT_RATE_LIMIT: NonZeroU32 = NonZeroU32::new(10).expect("10 is not zero");

/// How long without a rate 429 before the lowered rate grows by one request per second.
const RECOVERY: Duration = Duration::from_secs(2);

/// The window and the rate now.
#[derive(Debug)]
struct State {
    /// The configured rate, requests per second.
    max: u32,
    /// The rate now: `max`, or less after rate 429s.
    rate: u32,
    /// When the rate was last lowered or raised.
    changed: Option<Instant>,
    /// No request goes before this instant (the `Retry-After` of a rate 429).
    paused_until: Option<Instant>,
    /// The instants of the requests of the last second (sent, or about to be), oldest first,
    /// each with its permit's id.
    slots: VecDeque<(u64, Instant)>,
    next_id: u64,
}

impl State {
    /// Forgets slots older than a second and raises a lowered rate once per [`RECOVERY`].
    fn tidy(&mut self, now: Instant) {
        while self
            .slots
            .front()
            .is_some_and(|(_, t)| now.saturating_duration_since(*t) >= Duration::from_secs(1))
        {
            self.slots.pop_front();
        }
        if self.rate < self.max
            && let Some(changed) = self.changed
        {
            let steps = now.saturating_duration_since(changed).as_secs() / RECOVERY.as_secs();
            if steps > 0 {
                let steps = u32::try_from(steps).unwrap_or(u32::MAX);
                self.rate = self.rate.saturating_add(steps).min(self.max);
                self.changed = Some(now);
            }
        }
    }

    /// A slot now (its id), or the instant to wait for.
    fn take(&mut self, now: Instant) -> Result<u64, Instant> {
        self.tidy(now);
        if let Some(until) = self.paused_until.filter(|u| *u > now) {
            return Err(until);
        }
        // Lowered after a 429: evenly spaced, no burst (another process shares the key).
        if self.rate < self.max
            && let Some((_, last)) = self.slots.back()
        {
            let next = *last + Duration::from_secs(1) / self.rate;
            if next > now {
                return Err(next);
            }
        }
        let rate = self.rate as usize;
        if self.slots.len() < rate {
            self.next_id += 1;
            self.slots.push_back((self.next_id, now));
            return Ok(self.next_id);
        }
        let (_, oldest) = self.slots[self.slots.len() - rate];
        Err(oldest + Duration::from_secs(1))
    }

    /// Moves slot `id` to `now` (its request leaves now), keeping the window in order.
    fn restamp(&mut self, id: u64, now: Instant) {
        if let Some(pos) = self.slots.iter().position(|(i, _)| *i == id) {
            self.slots.remove(pos);
        }
        let at = self.slots.partition_point(|(_, t)| *t <= now);
        self.slots.insert(at, (id, now));
    }
}

/// At most `rate` requests in any one-second window, retries included (see the module docs).
/// Shared by a client's clones.
pub(crate) struct Limiter {
    state: Mutex<State>,
    /// Callers wait for their turn here, first come first served; a cancelled caller leaves
    /// the queue.
    turn: tokio::sync::Mutex<()>,
}

impl Limiter {
    pub(crate) fn new(per_second: NonZeroU32) -> Arc<Self> {
        let max = per_second.get();
        Arc::new(Self {
            state: Mutex::new(State {
                max,
                rate: max,
                changed: None,
                paused_until: None,
                slots: VecDeque::with_capacity(max as usize),
                next_id: 0,
            }),
            turn: tokio::sync::Mutex::new(()),
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits for this caller's turn and a free slot. Cancel-safe: dropping the future, or the
    /// permit before [`Permit::sent`], gives the place back.
    pub(crate) async fn acquire(self: &Arc<Self>) -> Permit {
        let _turn = self.turn.lock().await;
        loop {
            let taken = self.lock().take(Instant::now());
            match taken {
                Ok(id) => {
                    return Permit {
                        limiter: Arc::clone(self),
                        id,
                        sent: false,
                    };
                }
                Err(until) => sleep_until(until).await,
            }
        }
    }

    /// The server answered 429 for the per-second rate, to retry after `retry_after`: someone
    /// else spends this key's rate too. Every request waits for `retry_after` (at most a
    /// second), and the rate halves (at least 1 per second), once per pause.
    pub(crate) fn rate_exceeded(&self, retry_after: Option<Duration>) {
        let now = Instant::now();
        let pause = retry_after
            .unwrap_or(Duration::from_secs(1))
            .min(Duration::from_secs(1));
        let mut s = self.lock();
        let paused = s.paused_until.is_some_and(|u| u > now);
        s.paused_until = Some(s.paused_until.map_or(now + pause, |u| u.max(now + pause)));
        if !paused {
            s.rate = (s.rate / 2).max(1);
            s.changed = Some(now);
            tracing::debug!(target: "carapi_sdk::http", rate = s.rate, "429 de taxa: o cliente reduz o próprio ritmo");
        }
    }

    /// The rate now, requests per second.
    #[cfg(test)]
    fn rate(&self) -> u32 {
        let mut s = self.lock();
        s.tidy(Instant::now());
        s.rate
    }
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/s", self.lock().max)
    }
}

/// A place in the limiter's window for one request. Call [`Permit::sent`] as the request
/// leaves; dropped before that, the place is given back.
#[derive(Debug)]
pub(crate) struct Permit {
    limiter: Arc<Limiter>,
    id: u64,
    sent: bool,
}

impl Permit {
    /// The request leaves now: its place is kept, stamped with this instant (a request that
    /// waited for something else after its permit counts from when it really left).
    pub(crate) fn sent(mut self) {
        self.limiter.lock().restamp(self.id, Instant::now());
        self.sent = true;
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if !self.sent {
            let mut s = self.limiter.lock();
            if let Some(pos) = s.slots.iter().position(|(i, _)| *i == self.id) {
                s.slots.remove(pos);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(n: u32) -> Arc<Limiter> {
        Limiter::new(NonZeroU32::new(n).unwrap())
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_n_then_no_window_of_a_second_holds_more_than_n() {
        let l = limiter(10);
        let t0 = Instant::now();
        let mut leaves = Vec::new();
        for _ in 0..25 {
            l.acquire().await.sent();
            leaves.push(t0.elapsed());
        }
        assert!(
            leaves[..10].iter().all(|d| d.is_zero()),
            "the first 10 go at once: {leaves:?}"
        );
        assert_eq!(leaves[10], Duration::from_secs(1));
        assert_eq!(leaves[24], Duration::from_secs(2));
        for (k, d) in leaves.iter().enumerate().skip(10) {
            assert!(*d >= leaves[k - 10] + Duration::from_secs(1), "{leaves:?}");
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        let t1 = Instant::now();
        l.acquire().await.sent();
        assert_eq!(
            t1.elapsed(),
            Duration::ZERO,
            "an idle limiter lets the next one go at once"
        );
    }

    /// 1,000 callers that leave before sending (a time-out, a `select!`) keep no place: the
    /// next caller waits at most one second.
    #[tokio::test(start_paused = true)]
    async fn cancelled_callers_give_their_places_back() {
        let l = limiter(10);
        let waiting: Vec<_> = (0..1000)
            .map(|_| {
                let l = Arc::clone(&l);
                tokio::spawn(async move { l.acquire().await.sent() })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(100)).await;
        for w in &waiting {
            w.abort();
        }
        // A permit taken and dropped unsent gives its place back too.
        drop(l.acquire().await);
        let t = Instant::now();
        l.acquire().await.sent();
        assert!(
            t.elapsed() <= Duration::from_secs(1),
            "the next call waited {:?}",
            t.elapsed()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_rate_429_pauses_halves_the_rate_and_it_recovers_slowly() {
        let l = limiter(10);
        let second = Some(Duration::from_secs(1));
        l.rate_exceeded(second);
        assert_eq!(l.rate(), 5);
        l.rate_exceeded(second);
        assert_eq!(l.rate(), 5, "one cut per pause");
        let t = Instant::now();
        l.acquire().await.sent();
        assert_eq!(
            t.elapsed(),
            Duration::from_secs(1),
            "nothing goes during the pause"
        );
        let t = Instant::now();
        l.acquire().await.sent();
        assert_eq!(
            t.elapsed(),
            Duration::from_millis(200),
            "lowered: evenly spaced, no burst"
        );
        l.rate_exceeded(second);
        assert_eq!(l.rate(), 2);
        tokio::time::sleep(RECOVERY).await;
        assert_eq!(l.rate(), 3, "one more per second after each quiet period");
        tokio::time::sleep(RECOVERY * 20).await;
        assert_eq!(l.rate(), 10, "never above the configured rate");
        for _ in 0..4 {
            l.rate_exceeded(second);
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        assert_eq!(l.rate(), 1, "never below one per second");
    }

    /// A permit whose request leaves later than its slot (it waited for a lock) counts from
    /// when it left, so no window holds more than `n` real sends.
    #[tokio::test(start_paused = true)]
    async fn a_late_send_counts_from_when_it_left() {
        let l = limiter(2);
        let a = l.acquire().await;
        let b = l.acquire().await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        a.sent();
        b.sent();
        let t = Instant::now();
        l.acquire().await.sent();
        assert_eq!(t.elapsed(), Duration::from_secs(1));
    }
}
