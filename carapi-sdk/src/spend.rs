//! The spend guard: this client's running spend and the optional cap.
//!
//! A charged lookup reserves its price before it is sent (refused when spent + reserved + price
//! would pass the cap), commits the reservation when the answer is a 200 (contract, "Prices":
//! only HTTP 200 is charged) and releases it otherwise, also when the call is cancelled (the
//! reservation is released on drop). Reserving under one lock makes concurrent calls race-free.
//!
//! Without a cap the client never sends a request just to learn prices: a lookup answered while
//! the prices are unknown is counted per operation ([`SpendGuard::pendente`]) and priced as soon
//! as the client learns them ([`SpendGuard::precificar`]).

use std::sync::{Arc, Mutex};

use rust_decimal::Decimal;

use crate::client::Op;
use crate::{Error, Precos};

#[derive(Debug, Default)]
struct State {
    gasto: Decimal,
    reservado: Decimal,
    /// 200s answered before the prices were known, by charged operation.
    sem_preco: Vec<Op>,
}

/// Spend of one client, shared by its clones.
#[derive(Debug)]
pub(crate) struct SpendGuard {
    limite: Option<Decimal>,
    state: Arc<Mutex<State>>,
}

impl SpendGuard {
    pub(crate) fn new(limite: Option<Decimal>) -> Self {
        Self {
            limite,
            state: Arc::default(),
        }
    }

    pub(crate) fn limite(&self) -> Option<Decimal> {
        self.limite
    }

    /// BRL charged so far (committed 200s).
    pub(crate) fn gasto(&self) -> Decimal {
        self.lock().gasto
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reserves `preco`, or refuses with [`Error::SpendLimit`] when it would pass the cap.
    pub(crate) fn reserve(&self, preco: Decimal) -> Result<Reserva, Error> {
        let mut s = self.lock();
        if let Some(limite) = self.limite {
            let comprometido = s.gasto + s.reservado;
            if comprometido + preco > limite {
                return Err(Error::SpendLimit {
                    limite,
                    gasto: comprometido,
                    preco,
                });
            }
        }
        s.reservado += preco;
        Ok(Reserva {
            state: Some(self.state.clone()),
            preco,
            sem_preco: None,
        })
    }

    /// A lookup of `op` sent while the prices are unknown (only without a cap): when answered
    /// with 200 it is counted, and priced by the next [`SpendGuard::precificar`].
    pub(crate) fn pendente(&self, op: Op) -> Reserva {
        Reserva {
            state: Some(self.state.clone()),
            preco: Decimal::ZERO,
            sem_preco: Some(op),
        }
    }

    /// The client learned the account's prices: the lookups answered before are priced now.
    pub(crate) fn precificar(&self, precos: &Precos) {
        let mut s = self.lock();
        let devido: Decimal = s.sem_preco.drain(..).map(|op| op.preco(precos)).sum();
        s.gasto += devido;
    }
}

/// A reserved price; released on drop unless committed.
#[derive(Debug)]
pub(crate) struct Reserva {
    state: Option<Arc<Mutex<State>>>,
    preco: Decimal,
    sem_preco: Option<Op>,
}

impl Reserva {
    /// A reservation of nothing (sandbox values, unknown prices).
    pub(crate) fn nenhuma() -> Self {
        Self {
            state: None,
            preco: Decimal::ZERO,
            sem_preco: None,
        }
    }

    /// The lookup was answered with 200: the price becomes spend.
    pub(crate) fn commit(mut self) {
        if let Some(state) = self.state.take() {
            let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
            s.reservado -= self.preco;
            s.gasto += self.preco;
            if let Some(op) = self.sem_preco {
                s.sem_preco.push(op);
            }
        }
    }
}

impl Drop for Reserva {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
            s.reservado -= self.preco;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_answered_before_prices_are_priced_when_learned() {
        let g = SpendGuard::new(None);
        g.pendente(Op::Car).commit();
        g.pendente(Op::Recibo).commit();
        drop(g.pendente(Op::CarCompleto)); // not a 200: never counted
        assert_eq!(
            g.gasto(),
            Decimal::ZERO,
            "unknown prices: nothing counted yet"
        );
        g.precificar(&Precos::ATUAIS);
        assert_eq!(g.gasto(), Decimal::new(1200, 2), "1.00 + 11.00");
        g.precificar(&Precos::LEGADOS);
        assert_eq!(
            g.gasto(),
            Decimal::new(1200, 2),
            "each lookup is priced once"
        );
    }

    #[test]
    fn reserve_commit_release() {
        let g = SpendGuard::new(Some(Decimal::new(300, 2)));
        let a = g.reserve(Decimal::ONE).unwrap();
        let b = g.reserve(Decimal::ONE).unwrap();
        let c = g.reserve(Decimal::ONE).unwrap();
        let e = g.reserve(Decimal::ONE).unwrap_err();
        assert!(matches!(e, Error::SpendLimit { gasto, .. } if gasto == Decimal::new(3, 0)));
        a.commit();
        drop(b); // non-200: released
        assert_eq!(g.gasto(), Decimal::ONE);
        let d = g.reserve(Decimal::ONE).unwrap();
        c.commit();
        d.commit();
        assert_eq!(g.gasto(), Decimal::new(3, 0));
        assert!(g.reserve(Decimal::new(1, 2)).is_err());
        assert!(
            g.reserve(Decimal::ZERO).is_ok(),
            "a free lookup always fits"
        );
    }

    #[test]
    fn no_cap_still_counts() {
        let g = SpendGuard::new(None);
        g.reserve(Decimal::new(1100, 2)).unwrap().commit();
        Reserva::nenhuma().commit();
        assert_eq!(g.gasto(), Decimal::new(11, 0));
    }
}
