//! The spend guard: this client's running spend ([`Gasto`]) and the optional cap.
//!
//! A charged lookup reserves its price before it is sent, commits the reservation when the
//! answer is a 200 (contract, "Prices": only HTTP 200 is charged) and releases it otherwise,
//! also when the call is cancelled (the reservation is released on drop). A lookup whose answer
//! was lost after sending is recorded as uncertain ([`Incerto`]): it counts as spent until
//! [`Client::settle_uncertain`](crate::Client::settle_uncertain) settles it against the
//! history.
//!
//! The cap: a lookup that would pass it only because of reservations in flight waits for them
//! to settle (a 404 releases its reservation); one that would pass it even with no reservation
//! is refused with [`Error::SpendLimit`].
//!
//! The client learns the account's prices before its first charged lookup, so every lookup is
//! reserved at its price. Only when they could not be read (and there is no cap) is a lookup
//! counted per operation without a price, and priced as soon as the client learns them
//! ([`SpendGuard::precificar`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, TimeDelta, Utc};
use rust_decimal::Decimal;
use tokio::sync::Notify;

use crate::Error;
use crate::op::Op;

/// How far apart the client's clock and the server's may be, and how long after a lost answer
/// a later 200 of the same key is still told apart from it when settling against the history.
pub(crate) const TOLERANCIA: TimeDelta = TimeDelta::seconds(30);

/// What this client (and its clones) spent on lookups, BRL (contract, "Prices").
///
/// Sandbox values and errors cost nothing and are not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Gasto {
    /// Priced HTTP 200s: certainly charged, BRL.
    pub confirmado: Decimal,
    /// Lookups whose answer was lost after the request was sent (time-out, connection reset),
    /// at their price: possibly charged, BRL. [`ClientBuilder::max_spend`](crate::ClientBuilder::max_spend)
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
    /// `confirmado + incerto`: the most this client may have been charged for its priced
    /// lookups, BRL.
    #[must_use]
    pub fn total(&self) -> Decimal {
        self.confirmado + self.incerto
    }
}

/// A lookup whose answer was lost after its request was sent.
#[derive(Debug, Clone)]
pub(crate) struct Incerto {
    pub(crate) id: u64,
    pub(crate) op: Op,
    /// The normalised key (CAR code or bare document), as the history records it.
    pub(crate) chave: String,
    pub(crate) enviado: DateTime<Utc>,
    pub(crate) perdido: DateTime<Utc>,
    pub(crate) preco: Option<Decimal>,
    /// 200s of the same operation and key this client got within the tolerance window: history
    /// items they account for are not this lookup's.
    pub(crate) conhecidas: u32,
}

#[derive(Debug)]
struct Recente {
    op: Op,
    chave: String,
    em: DateTime<Utc>,
}

#[derive(Debug, Default)]
struct State {
    confirmado: Decimal,
    reservado: Decimal,
    /// 200s answered before the prices were known, by charged operation.
    sem_preco: Vec<Op>,
    incertos: Vec<Incerto>,
    /// 200s of the last [`TOLERANCIA`], to tell them from lost answers of the same key.
    recentes: VecDeque<Recente>,
    proximo_id: u64,
}

impl State {
    fn incerto(&self) -> Decimal {
        self.incertos.iter().filter_map(|i| i.preco).sum()
    }

    fn gasto(&self) -> Gasto {
        let sem_preco = self.incertos.iter().filter(|i| i.preco.is_none()).count();
        Gasto {
            confirmado: self.confirmado,
            incerto: self.incerto(),
            nao_precificadas: (self.sem_preco.len() + sem_preco) as u64,
        }
    }
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Woken whenever a reservation settles (commit, release, lost answer).
    settled: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Spend of one client, shared by its clones.
#[derive(Debug)]
pub(crate) struct SpendGuard {
    limite: Option<Decimal>,
    shared: Arc<Shared>,
}

impl SpendGuard {
    pub(crate) fn new(limite: Option<Decimal>) -> Self {
        Self {
            limite,
            shared: Arc::default(),
        }
    }

    pub(crate) fn limite(&self) -> Option<Decimal> {
        self.limite
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
    ) -> Result<Reserva, Error> {
        loop {
            let settled = self.shared.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            if self.try_reserve(preco)? {
                return Ok(Reserva {
                    shared: Some(self.shared.clone()),
                    op,
                    chave: chave.to_owned(),
                    preco: Some(preco),
                });
            }
            settled.await;
        }
    }

    /// Reserves `preco` now (`Ok(true)`), or tells to wait for reservations to settle
    /// (`Ok(false)`), or refuses.
    fn try_reserve(&self, preco: Decimal) -> Result<bool, Error> {
        let mut s = self.shared.lock();
        if let Some(limite) = self.limite {
            let gasto = s.confirmado + s.incerto();
            if gasto + preco > limite {
                return Err(Error::SpendLimit {
                    limite,
                    gasto,
                    reservado: s.reservado,
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

    /// A lookup of `op` sent while the prices cannot be read (only without a cap): when answered
    /// with 200 it is counted, and priced by the next [`SpendGuard::precificar`].
    pub(crate) fn pendente(&self, op: Op, chave: &str) -> Reserva {
        Reserva {
            shared: Some(self.shared.clone()),
            op,
            chave: chave.to_owned(),
            preco: None,
        }
    }

    /// The client learned the account's prices (`preco` of each operation, BRL): the lookups
    /// answered or lost before are priced now.
    pub(crate) fn precificar(&self, preco: impl Fn(Op) -> Decimal) {
        let mut s = self.shared.lock();
        let devido: Decimal = s.sem_preco.drain(..).map(&preco).sum();
        s.confirmado += devido;
        for i in s.incertos.iter_mut().filter(|i| i.preco.is_none()) {
            i.preco = Some(preco(i.op));
        }
    }

    /// The uncertain lookups now (a snapshot).
    pub(crate) fn incertos(&self) -> Vec<Incerto> {
        self.shared.lock().incertos.clone()
    }

    /// Settles uncertain lookups: `cobrados` (id and the amount the history shows) move to
    /// `confirmado`; `nao_cobrados` are dropped.
    pub(crate) fn assentar(&self, cobrados: &[(u64, Decimal)], nao_cobrados: &[u64]) {
        let mut s = self.shared.lock();
        for (id, valor) in cobrados {
            if let Some(pos) = s.incertos.iter().position(|i| i.id == *id) {
                s.incertos.remove(pos);
                s.confirmado += *valor;
            }
        }
        s.incertos.retain(|i| !nao_cobrados.contains(&i.id));
        drop(s);
        self.shared.settled.notify_waiters();
    }
}

/// A reserved price; released on drop unless committed.
#[derive(Debug)]
pub(crate) struct Reserva {
    shared: Option<Arc<Shared>>,
    op: Op,
    chave: String,
    /// `None` when the prices were unknown at send time.
    preco: Option<Decimal>,
}

impl Reserva {
    /// A reservation of nothing (sandbox values, free operations).
    pub(crate) fn nenhuma() -> Self {
        Self {
            shared: None,
            op: Op::Saldo,
            chave: String::new(),
            preco: None,
        }
    }

    /// The price of the lookup when the client knew it, BRL (`None` for free operations,
    /// sandbox values and unknown prices).
    pub(crate) fn preco(&self) -> Option<Decimal> {
        self.shared.as_ref().and(self.preco)
    }

    /// The lookup was answered with 200: the price becomes spend.
    pub(crate) fn commit(mut self) {
        let Some(shared) = self.shared.take() else {
            return;
        };
        let agora = Utc::now();
        let mut s = shared.lock();
        match self.preco {
            Some(p) => {
                s.reservado -= p;
                s.confirmado += p;
            }
            None => s.sem_preco.push(self.op),
        }
        for i in s.incertos.iter_mut() {
            if i.op == self.op && i.chave == self.chave && agora <= i.perdido + TOLERANCIA {
                i.conhecidas += 1;
            }
        }
        while s
            .recentes
            .front()
            .is_some_and(|r| r.em + TOLERANCIA < agora)
        {
            s.recentes.pop_front();
        }
        s.recentes.push_back(Recente {
            op: self.op,
            chave: std::mem::take(&mut self.chave),
            em: agora,
        });
        drop(s);
        shared.settled.notify_waiters();
    }

    /// The request was sent at `enviado` and its answer lost: the lookup may have been
    /// charged. Recorded as uncertain at its price; the reservation itself is released on drop.
    pub(crate) fn perdida(&self, enviado: DateTime<Utc>) {
        let Some(shared) = &self.shared else {
            return;
        };
        let perdido = Utc::now();
        let mut s = shared.lock();
        let conhecidas = s
            .recentes
            .iter()
            .filter(|r| r.op == self.op && r.chave == self.chave && r.em + TOLERANCIA >= enviado)
            .count() as u32;
        s.proximo_id += 1;
        let id = s.proximo_id;
        s.incertos.push(Incerto {
            id,
            op: self.op,
            chave: self.chave.clone(),
            enviado,
            perdido,
            preco: self.preco,
            conhecidas,
        });
    }
}

impl Drop for Reserva {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.take() {
            if let Some(p) = self.preco {
                shared.lock().reservado -= p;
            }
            shared.settled.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Precos;

    /// The price table as the client hands it over.
    fn tabela(p: Precos) -> impl Fn(Op) -> Decimal {
        move |op| op.preco(&p)
    }

    fn guard(limite: Option<i64>) -> SpendGuard {
        SpendGuard::new(limite.map(|c| Decimal::new(c, 2)))
    }

    #[test]
    fn lookups_answered_before_prices_are_priced_when_learned() {
        let g = guard(None);
        g.pendente(Op::Car, "a").commit();
        g.pendente(Op::Recibo, "b").commit();
        g.pendente(Op::Proprietario, "c").perdida(Utc::now());
        drop(g.pendente(Op::CarCompleto, "d")); // not a 200: never counted
        assert_eq!(g.gasto().total(), Decimal::ZERO, "unknown prices");
        assert_eq!(g.gasto().nao_precificadas, 3);
        g.precificar(tabela(Precos::ATUAIS));
        let gasto = g.gasto();
        assert_eq!(gasto.confirmado, Decimal::new(1200, 2), "1.00 + 11.00");
        assert_eq!(gasto.incerto, Decimal::new(260, 2));
        assert_eq!(gasto.nao_precificadas, 0);
        g.precificar(tabela(Precos::LEGADOS));
        assert_eq!(g.gasto().confirmado, Decimal::new(1200, 2), "priced once");
    }

    #[tokio::test]
    async fn reserve_commit_release_and_refusal_reports_spent_and_reserved_apart() {
        let g = guard(Some(300));
        let a = g.reserve(Op::Car, "a", Decimal::ONE).await.unwrap();
        let b = g.reserve(Op::Car, "b", Decimal::ONE).await.unwrap();
        a.commit();
        let e = g
            .reserve(Op::Car, "c", Decimal::new(25, 1))
            .await
            .unwrap_err();
        match e {
            Error::SpendLimit {
                gasto, reservado, ..
            } => {
                assert_eq!(gasto, Decimal::ONE);
                assert_eq!(reservado, Decimal::ONE);
            }
            other => panic!("{other:?}"),
        }
        drop(b);
        let c = g.reserve(Op::Car, "c", Decimal::ONE).await.unwrap();
        c.perdida(Utc::now());
        drop(c);
        let gasto = g.gasto();
        assert_eq!(
            (gasto.confirmado, gasto.incerto),
            (Decimal::ONE, Decimal::ONE)
        );
        assert!(
            g.reserve(Op::Car, "d", Decimal::new(101, 2)).await.is_err(),
            "incerto counts"
        );
        assert!(
            g.reserve(Op::Car, "d", Decimal::ZERO).await.is_ok(),
            "a free lookup fits"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_lookup_that_fits_once_reservations_settle_waits_for_them() {
        let g = Arc::new(guard(Some(300)));
        let em_voo = g.reserve(Op::Car, "404", Decimal::new(3, 0)).await.unwrap();
        let g2 = g.clone();
        let espera = tokio::spawn(async move { g2.reserve(Op::Car, "a", Decimal::ONE).await });
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        assert!(!espera.is_finished(), "waits while the 3.00 is in flight");
        drop(em_voo); // answered 404: released
        let r = espera.await.unwrap().expect("fits after the release");
        r.commit();
        assert_eq!(g.gasto().confirmado, Decimal::ONE);
    }

    #[test]
    fn settling_moves_or_drops() {
        let g = guard(None);
        g.precificar(tabela(Precos::ATUAIS));
        let r = g.pendente(Op::Car, "a");
        r.perdida(Utc::now());
        r.perdida(Utc::now());
        let ids: Vec<u64> = g.incertos().iter().map(|i| i.id).collect();
        assert_eq!(
            g.gasto().nao_precificadas,
            2,
            "lost before the prices were known"
        );
        g.precificar(tabela(Precos::ATUAIS));
        g.assentar(&[(ids[0], Decimal::ONE)], &[ids[1]]);
        let gasto = g.gasto();
        assert_eq!(
            (gasto.confirmado, gasto.incerto),
            (Decimal::ONE, Decimal::ZERO)
        );
    }

    #[test]
    fn a_later_200_of_the_same_key_is_known() {
        let g = guard(None);
        let r = g.pendente(Op::Car, "a");
        r.perdida(Utc::now());
        drop(r);
        g.pendente(Op::Car, "a").commit();
        g.pendente(Op::Car, "b").commit();
        assert_eq!(g.incertos()[0].conhecidas, 1);
    }
}
