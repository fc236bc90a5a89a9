//! The spend guard: this client's running spend and the optional cap.
//!
//! A charged lookup reserves its price before it is sent (refused when spent + reserved + price
//! would pass the cap), commits the reservation when the answer is a 200 (contract, "Prices":
//! only HTTP 200 is charged) and releases it otherwise, also when the call is cancelled (the
//! reservation is released on drop). Reserving under one lock makes concurrent calls race-free.

use std::sync::{Arc, Mutex};

use rust_decimal::Decimal;

use crate::Error;

#[derive(Debug, Default)]
struct State {
    gasto: Decimal,
    reservado: Decimal,
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
        })
    }
}

/// A reserved price; released on drop unless committed.
#[derive(Debug)]
pub(crate) struct Reserva {
    state: Option<Arc<Mutex<State>>>,
    preco: Decimal,
}

impl Reserva {
    /// A reservation of nothing (sandbox values, unknown prices).
    pub(crate) fn nenhuma() -> Self {
        Self {
            state: None,
            preco: Decimal::ZERO,
        }
    }

    /// The lookup was answered with 200: the price becomes spend.
    pub(crate) fn commit(mut self) {
        if let Some(state) = self.state.take() {
            let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
            s.reservado -= self.preco;
            s.gasto += self.preco;
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
