//! The spend guard: this client's running spend ([`Gasto`]) and the optional cap.
//!
//! A charged lookup reserves its price before it is sent, commits the reservation when the
//! answer is a 200 (contract, "Prices": only HTTP 200 is charged) and releases it when the
//! answer is any other status. A lookup whose request may have reached the server and whose
//! answer never came back, because it was lost (time-out, connection reset) or because the
//! caller dropped the future (a `tokio::time::timeout`, a `select!`, an aborted task), is
//! recorded as uncertain ([`Uncertain`]): it counts as spent until
//! [`Client::settle_uncertain`](crate::Client::settle_uncertain) settles it against the
//! history. The reservation's drop guard does that, so no caller needs to wrap a call in a
//! task of its own.
//!
//! The cap: a lookup that would pass it only because of reservations in flight waits for them
//! to settle (a 404 releases its reservation); one that would pass it even with no reservation
//! is refused with [`Error::SpendLimit`].
//!
//! Prices: given to the builder, or learned from `GET /v1/saldo`. A lookup sent while they are
//! unknown (no cap) is priced as soon as the client learns them ([`SpendGuard::precificar`]).

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
pub(crate) fn warn_money(op: Op, preco: Option<Decimal>, mensagem: &str) {
    tracing::warn!(
        target: "carapi_sdk::spend",
        operation = op.name(),
        route = op.route(),
        preco = preco.map(|p| tracing::field::display(brl(p))),
        "{mensagem}"
    );
}

/// An amount for a log event: BRL with two decimals (`2.30`, also when it came as `2.3`).
pub(crate) fn brl(valor: Decimal) -> String {
    format!("{valor:.2}")
}

/// What this client (and its clones) spent on lookups, BRL (contract, "Prices").
///
/// Sandbox values and errors cost nothing and are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Gasto {
    /// Priced HTTP 200s: certainly charged, BRL.
    pub confirmado: Decimal,
    /// Lookups whose request may have reached the server and whose answer never came back
    /// (time-out, connection reset, or the call's future dropped after sending), at their
    /// price: possibly charged, BRL. [`ClientBuilder::max_spend`](crate::ClientBuilder::max_spend)
    /// counts them as spent; [`Client::settle_uncertain`](crate::Client::settle_uncertain)
    /// moves each one to `confirmado` or drops it.
    pub incerto: Decimal,
    /// Lookups answered (200) or lost while the client could not read the account's prices
    /// (its `GET /v1/saldo` failed), not yet in the amounts above; they are priced as soon as
    /// the client learns the prices ([`Client::precos`](crate::Client::precos),
    /// [`Client::saldo`](crate::Client::saldo)). Zero whenever the prices were read.
    pub nao_precificadas: u64,
}

impl Gasto {
    /// `confirmado + uncertain`: the most this client may have been charged for its priced
    /// lookups, BRL.
    #[must_use]
    pub fn total(&self) -> Decimal {
        self.confirmado + self.incerto
    }
}

/// A lookup that may have reached the server and whose answer never came back.
#[derive(Debug, Clone)]
pub(crate) struct Uncertain {
    pub(crate) id: u64,
    pub(crate) op: Op,
    /// The normalised key (CAR code or bare document), as the history records it.
    pub(crate) chave: String,
    pub(crate) preco: Option<Decimal>,
    pub(crate) window: Window,
    /// The WARN of an uncertain lookup without a price yet, given once it is priced.
    pub(crate) aviso: Option<&'static str>,
}

/// A 200 this client got: its history item is not a lost lookup's.
#[derive(Debug, Clone)]
pub(crate) struct Conhecida {
    pub(crate) op: Op,
    pub(crate) chave: String,
    pub(crate) window: Window,
}

#[derive(Debug, Default)]
struct State {
    confirmado: Decimal,
    reservado: Decimal,
    /// 200s answered before the prices were known, by charged operation.
    sem_preco: Vec<Op>,
    uncertain: Vec<Uncertain>,
    conhecidas: VecDeque<Conhecida>,
    proximo_id: u64,
    /// The account's prices, once known.
    precos: Option<Precos>,
    relogio: ServerClock,
}

impl State {
    fn uncertain(&self) -> Decimal {
        self.uncertain.iter().filter_map(|i| i.preco).sum()
    }

    fn gasto(&self) -> Gasto {
        let sem_preco = self.uncertain.iter().filter(|i| i.preco.is_none()).count();
        Gasto {
            confirmado: self.confirmado,
            incerto: self.uncertain(),
            nao_precificadas: (self.sem_preco.len() + sem_preco) as u64,
        }
    }

    fn preco(&self, op: Op) -> Option<Decimal> {
        self.precos.map(|p| op.preco(&p))
    }

    /// Records an uncertain lookup; its price when known (then the caller gives the WARN
    /// `aviso`; otherwise [`SpendGuard::precificar`] gives it with the price).
    fn mark_uncertain(
        &mut self,
        op: Op,
        chave: &str,
        preco: Option<Decimal>,
        window: Window,
        aviso: &'static str,
    ) -> Option<Decimal> {
        self.proximo_id += 1;
        let preco = preco.or_else(|| self.preco(op));
        self.uncertain.push(Uncertain {
            id: self.proximo_id,
            op,
            chave: chave.to_owned(),
            preco,
            window,
            aviso: preco.is_none().then_some(aviso),
        });
        preco
    }

    /// Remembers a 200, forgetting old ones no uncertain lookup of their key needs.
    fn conhecida(&mut self, c: Conhecida, memory: Duration) {
        self.conhecidas.push_back(c);
        if self.conhecidas.len() > 256 {
            let now = Instant::now();
            let uncertain = &self.uncertain;
            self.conhecidas.retain(|c| {
                now.duration_since(c.window.fim) < memory
                    || uncertain.iter().any(|i| i.op == c.op && i.chave == c.chave)
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
            let gasto = s.confirmado + s.uncertain();
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
    /// [`SpendGuard::precificar`].
    pub(crate) fn pendente(&self, op: Op, chave: &str) -> Reservation {
        Reservation::new(self.shared.clone(), op, chave, None)
    }

    /// The client learned the account's prices: kept for the lookups to come, and the lookups
    /// answered or lost before are priced now.
    pub(crate) fn precificar(&self, precos: Precos) {
        let mut s = self.shared.lock();
        s.precos = Some(precos);
        let devido: Decimal = s.sem_preco.drain(..).map(|op| op.preco(&precos)).sum();
        s.confirmado += devido;
        let mut avisos = Vec::new();
        for i in s.uncertain.iter_mut().filter(|i| i.preco.is_none()) {
            let preco = i.op.preco(&precos);
            i.preco = Some(preco);
            if let Some(aviso) = i.aviso.take() {
                avisos.push((i.op, preco, aviso));
            }
        }
        drop(s);
        for (op, preco, aviso) in avisos {
            warn_money(op, Some(preco), aviso);
        }
    }

    /// The account's prices, once known.
    pub(crate) fn precos(&self) -> Option<Precos> {
        self.shared.lock().precos
    }

    /// Forgets the prices (a confirmed top-up moves a legacy account to the current table).
    pub(crate) fn esquecer_precos(&self) {
        self.shared.lock().precos = None;
    }

    /// An answer arrived with the server's `Date`: the server's time moves on, and the bounds
    /// of the uncertain lookups narrow.
    pub(crate) fn observar(&self, resposta: DatedAnswer) {
        let grace = self.shared.grace;
        let mut s = self.shared.lock();
        s.relogio.observar(resposta);
        for i in &mut s.uncertain {
            i.window.observar(&resposta, grace);
        }
    }

    /// The uncertain lookups and the remembered 200s now (a snapshot).
    pub(crate) fn to_settle(&self) -> (Vec<Uncertain>, Vec<Conhecida>) {
        let s = self.shared.lock();
        (s.uncertain.clone(), s.conhecidas.iter().cloned().collect())
    }

    /// The uncertain lookups with these ids now (their bounds may have narrowed).
    pub(crate) fn uncertain(&self, ids: &[u64]) -> Vec<Uncertain> {
        let s = self.shared.lock();
        s.uncertain
            .iter()
            .filter(|i| ids.contains(&i.id))
            .cloned()
            .collect()
    }

    /// Settles uncertain lookups: `cobrados` (id and the amount the history shows) move to
    /// `confirmado`; `nao_cobrados` are dropped.
    pub(crate) fn settle(&self, cobrados: &[(u64, Decimal)], nao_cobrados: &[u64]) {
        let mut s = self.shared.lock();
        for (id, valor) in cobrados {
            if let Some(pos) = s.uncertain.iter().position(|i| i.id == *id) {
                s.uncertain.remove(pos);
                s.confirmado += *valor;
            }
        }
        s.uncertain.retain(|i| !nao_cobrados.contains(&i.id));
        drop(s);
        self.shared.settled.notify_waiters();
    }
}

#[cfg(test)]
mod tests;
