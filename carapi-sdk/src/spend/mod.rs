//! The spend guard: this client's running spend ([`Gasto`]) and the optional cap.
//!
//! A charged lookup reserves its price before it is sent, commits the reservation when the
//! answer is a 200 (contract, "Prices": only HTTP 200 is charged) and releases it when the
//! answer is any other status. A lookup whose request may have reached the server and whose
//! answer never came back, because it was lost (time-out, connection reset) or because the
//! caller dropped the future (a `tokio::time::timeout`, a `select!`, an aborted task), is
//! recorded as uncertain ([`Incerto`]): it counts as spent until
//! [`Client::settle_incertos`](crate::Client::settle_incertos) settles it against the
//! history. The reservation's drop guard does that, so no caller needs to wrap a call in a
//! task of its own.
//!
//! The cap: a lookup that would pass it only because of reservations in flight waits for them
//! to settle (a 404 releases its reservation); one that would pass it even with no reservation
//! is refused with [`Error::SpendLimit`].
//!
//! Prices: given to the builder, or learned from `GET /v1/saldo`. A lookup sent while they are
//! unknown (no cap) is priced as soon as the client learns them ([`SpendGuard::learn_prices`]).

mod reservation;
mod window;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rust_decimal::Decimal;
use tokio::sync::Notify;

pub(crate) use reservation::Reservation;
pub(crate) use window::{DatedAnswer, Window, date_of_header};

use crate::op::Op;
use crate::{Error, Precos};
use window::ServerClock;

/// How long after a lost answer the request may still be in process at the server, by
/// default: until then a lookup the history does not show stays uncertain.
pub(crate) const DEFAULT_SETTLE_GRACE: Duration = Duration::from_secs(30);

/// How long the 200s this client got are remembered to tell them from lost answers of the same
/// key (longer while an uncertain lookup of that key waits to be settled).
const MEMORY_200: Duration = Duration::from_secs(60);

/// The WARN of a lookup that may have been charged (a money event): operation, route template
/// and price, never the key.
pub(crate) fn warn_money(op: Op, preco: Option<Decimal>, message: &str) {
    tracing::warn!(
        target: "carapi_sdk::spend",
        operation = op.name(),
        route = op.route(),
        preco = preco.map(|p| tracing::field::display(brl(p))),
        "{message}"
    );
}

/// An amount for a log event: BRL with two decimals (`2.30`, also when it came as `2.3`).
pub(crate) fn brl(amount: Decimal) -> String {
    format!("{amount:.2}")
}

/// What this client (and its clones) spent on lookups, BRL (contract, "Prices").
///
/// Sandbox values and errors cost nothing and are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Gasto {
    /// Priced HTTP 200s: certainly charged, BRL.
    pub confirmado: Decimal,
    /// Lookups whose request may have reached the server and whose answer has not come back,
    /// at their price: possibly charged, BRL. Those still in flight (sent, not yet answered,
    /// whether their caller still waits or left: their purchase ends in the client's task)
    /// leave it when their answer arrives; those whose answer was lost (a time-out, a reset)
    /// stay until [`Client::settle_incertos`](crate::Client::settle_incertos) moves each one to
    /// `confirmado` or drops it. [`ClientBuilder::max_spend`](crate::ClientBuilder::max_spend)
    /// counts them all.
    pub incerto: Decimal,
    /// Lookups answered (200), lost or in flight while the client could not read the
    /// account's prices (its `GET /v1/saldo` failed, or has not answered yet), not yet in the
    /// amounts above; they are priced as soon as the client learns the prices
    /// ([`Client::precos`](crate::Client::precos), [`Client::saldo`](crate::Client::saldo)).
    pub nao_precificadas: u64,
}

impl Gasto {
    /// `confirmado + incerto`: the most this client may have been charged for its priced
    /// lookups, BRL.
    #[must_use]
    pub fn total(&self) -> Decimal {
        self.confirmado + self.incerto
    }
}

/// A lookup that may have reached the server and whose answer never came back.
#[derive(Debug, Clone)]
pub(crate) struct Incerto {
    pub(crate) id: u64,
    pub(crate) op: Op,
    /// The normalised key (CAR code or bare document), as the history records it.
    pub(crate) chave: String,
    pub(crate) preco: Option<Decimal>,
    pub(crate) window: Window,
    /// The WARN of an uncertain lookup without a price yet, given once it is priced.
    pub(crate) warning: Option<&'static str>,
}

/// A 200 this client got: its history item is not a lost lookup's.
#[derive(Debug, Clone)]
pub(crate) struct Answered200 {
    pub(crate) op: Op,
    pub(crate) chave: String,
    pub(crate) window: Window,
}

#[derive(Debug, Default)]
struct State {
    confirmado: Decimal,
    reservado: Decimal,
    /// 200s answered before the prices were known, by charged operation.
    unpriced: Vec<Op>,
    incertos: Vec<Incerto>,
    /// The reserved prices of the requests in flight (sent, not answered), BRL.
    sending: Decimal,
    /// The operations of the requests in flight whose price was unknown when they were
    /// reserved: counted at the account's prices once those are known.
    sending_unpriced: Vec<Op>,
    answered: VecDeque<Answered200>,
    next_id: u64,
    /// The account's prices, once known.
    precos: Option<Precos>,
    server_clock: ServerClock,
}

impl State {
    fn incerto(&self) -> Decimal {
        self.incertos.iter().filter_map(|i| i.preco).sum()
    }

    fn gasto(&self) -> Gasto {
        let unpriced = self.incertos.iter().filter(|i| i.preco.is_none()).count() as u64;
        let (sending_priced, sending_unpriced) = match &self.precos {
            Some(p) => (self.sending_unpriced.iter().map(|op| op.preco(p)).sum(), 0),
            None => (Decimal::ZERO, self.sending_unpriced.len() as u64),
        };
        Gasto {
            confirmado: self.confirmado,
            incerto: self.incerto() + self.sending + sending_priced,
            nao_precificadas: self.unpriced.len() as u64 + unpriced + sending_unpriced,
        }
    }

    /// `delta` (1 or -1) requests of `op` in flight reserved at `preco` (`None`: unknown then).
    fn in_flight(&mut self, op: Op, preco: Option<Decimal>, delta: i8) {
        match preco {
            Some(p) if delta > 0 => self.sending += p,
            Some(p) => self.sending -= p,
            None if delta > 0 => self.sending_unpriced.push(op),
            None => {
                if let Some(i) = self.sending_unpriced.iter().position(|o| *o == op) {
                    self.sending_unpriced.swap_remove(i);
                }
            }
        }
    }

    fn preco(&self, op: Op) -> Option<Decimal> {
        self.precos.map(|p| op.preco(&p))
    }

    /// Records an uncertain lookup; its price when known (then the caller gives the WARN
    /// `warning`; otherwise [`SpendGuard::learn_prices`] gives it with the price).
    fn mark_incerto(
        &mut self,
        op: Op,
        chave: &str,
        preco: Option<Decimal>,
        window: Window,
        warning: &'static str,
    ) -> Option<Decimal> {
        self.next_id += 1;
        let preco = preco.or_else(|| self.preco(op));
        self.incertos.push(Incerto {
            id: self.next_id,
            op,
            chave: chave.to_owned(),
            preco,
            window,
            warning: preco.is_none().then_some(warning),
        });
        preco
    }

    /// Remembers a 200, forgetting old ones no uncertain lookup of their key needs.
    fn remember_200(&mut self, c: Answered200, memory: Duration) {
        self.answered.push_back(c);
        if self.answered.len() > 256 {
            let now = Instant::now();
            let incertos = &self.incertos;
            self.answered.retain(|c| {
                now.duration_since(c.window.ended) < memory
                    || incertos.iter().any(|i| i.op == c.op && i.chave == c.chave)
            });
        }
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Woken whenever a reservation settles (commit, release, lost answer).
    settled: Notify,
    /// How long a lost request may still be in process at the server.
    grace: Duration,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn memory(&self) -> Duration {
        MEMORY_200.max(self.grace.saturating_mul(2))
    }
}

/// Spend of one client, shared by its clones.
#[derive(Debug)]
pub(crate) struct SpendGuard {
    limite: Option<Decimal>,
    shared: Arc<Shared>,
}

impl SpendGuard {
    /// A guard with the cap `limite` (BRL); `grace` is how long a lost request may still be
    /// in process at the server.
    pub(crate) fn new(limite: Option<Decimal>, grace: Duration) -> Self {
        Self {
            limite,
            shared: Arc::new(Shared {
                state: Mutex::default(),
                settled: Notify::new(),
                grace,
            }),
        }
    }

    pub(crate) fn limite(&self) -> Option<Decimal> {
        self.limite
    }

    pub(crate) fn grace(&self) -> Duration {
        self.shared.grace
    }

    pub(crate) fn gasto(&self) -> Gasto {
        self.shared.lock().gasto()
    }

    /// Reserves the price `preco` of a lookup of `op` on `chave`. Waits while it fits only once
    /// the reservations in flight settle; refuses with [`Error::SpendLimit`] when it would pass
    /// the cap even with none.
    pub(crate) async fn reserve(
        &self,
        op: Op,
        chave: &str,
        preco: Decimal,
    ) -> Result<Reservation, Error> {
        loop {
            let settled = self.shared.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            if self.try_reserve(op, preco)? {
                return Ok(Reservation::new(
                    self.shared.clone(),
                    op,
                    chave,
                    Some(preco),
                ));
            }
            settled.await;
        }
    }

    /// Reserves `preco` now (`Ok(true)`), or tells to wait for reservations to settle
    /// (`Ok(false)`), or refuses (a WARN event: a money event).
    fn try_reserve(&self, op: Op, preco: Decimal) -> Result<bool, Error> {
        let mut s = self.shared.lock();
        if let Some(limite) = self.limite {
            let gasto = s.confirmado + s.incerto();
            if gasto + preco > limite {
                let reservado = s.reservado;
                drop(s);
                tracing::warn!(
                    target: "carapi_sdk::spend",
                    operation = op.name(),
                    route = op.route(),
                    preco = %brl(preco),
                    gasto = %brl(gasto),
                    reservado = %brl(reservado),
                    limite = %brl(limite),
                    "consulta recusada antes do envio: ultrapassaria o limite de gasto do cliente"
                );
                return Err(Error::SpendLimit {
                    limite,
                    gasto,
                    reservado,
                    preco,
                });
            }
            if gasto + s.reservado + preco > limite {
                return Ok(false);
            }
        }
        s.reservado += preco;
        Ok(true)
    }

    /// A lookup of `op` sent while the prices are unknown (only without a cap): when answered
    /// with 200 or lost it is counted, priced with the prices known by then or by the next
    /// [`SpendGuard::learn_prices`].
    pub(crate) fn unpriced(&self, op: Op, chave: &str) -> Reservation {
        Reservation::new(self.shared.clone(), op, chave, None)
    }

    /// The client learned the account's prices: kept for the lookups to come, and the lookups
    /// answered or lost before are priced now (those still in flight count at these prices in
    /// [`Gasto::incerto`] until they end).
    pub(crate) fn learn_prices(&self, precos: Precos) {
        let mut s = self.shared.lock();
        s.precos = Some(precos);
        let owed: Decimal = s.unpriced.drain(..).map(|op| op.preco(&precos)).sum();
        s.confirmado += owed;
        let mut warnings = Vec::new();
        for i in s.incertos.iter_mut().filter(|i| i.preco.is_none()) {
            let preco = i.op.preco(&precos);
            i.preco = Some(preco);
            if let Some(warning) = i.warning.take() {
                warnings.push((i.op, preco, warning));
            }
        }
        drop(s);
        for (op, preco, warning) in warnings {
            warn_money(op, Some(preco), warning);
        }
    }

    /// The account's prices, once known.
    pub(crate) fn precos(&self) -> Option<Precos> {
        self.shared.lock().precos
    }

    /// Forgets the prices (a confirmed top-up moves a legacy account to the current table).
    pub(crate) fn forget_prices(&self) {
        self.shared.lock().precos = None;
    }

    /// An answer arrived with the server's `Date`: the server's time moves on, and the bounds
    /// of the uncertain lookups narrow.
    pub(crate) fn observe(&self, answer: DatedAnswer) {
        let grace = self.shared.grace;
        let mut s = self.shared.lock();
        s.server_clock.observe(answer);
        for i in &mut s.incertos {
            i.window.observe(&answer, grace);
        }
    }

    /// The uncertain lookups and the remembered 200s now (a snapshot).
    pub(crate) fn to_settle(&self) -> (Vec<Incerto>, Vec<Answered200>) {
        let s = self.shared.lock();
        (s.incertos.clone(), s.answered.iter().cloned().collect())
    }

    /// The uncertain lookups with these ids now (their bounds may have narrowed).
    pub(crate) fn incertos(&self, ids: &[u64]) -> Vec<Incerto> {
        let s = self.shared.lock();
        s.incertos
            .iter()
            .filter(|i| ids.contains(&i.id))
            .cloned()
            .collect()
    }

    /// Settles uncertain lookups: `charged` (id and the amount the history shows) move to
    /// `confirmado`; `not_charged` are dropped.
    pub(crate) fn settle(&self, charged: &[(u64, Decimal)], not_charged: &[u64]) {
        let mut s = self.shared.lock();
        for (id, amount) in charged {
            if let Some(pos) = s.incertos.iter().position(|i| i.id == *id) {
                s.incertos.remove(pos);
                s.confirmado += *amount;
            }
        }
        s.incertos.retain(|i| !not_charged.contains(&i.id));
        drop(s);
        self.shared.settled.notify_waiters();
    }
}

#[cfg(test)]
mod tests;
