//! [`Reservation`]: one charged lookup's price, from before it is sent until its outcome is known,
//! with a drop guard for the outcome nobody saw.

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, TimeDelta, Utc};
use rust_decimal::Decimal;

use super::window::{Sending, Window};
use super::{Answered200, Shared};
use crate::op::Op;

/// A reserved price. Committed on a 200; released on any other answer. Dropped while its
/// request is in flight (sent, not answered), it is recorded as uncertain first: the lookup
/// may have been charged.
#[derive(Debug)]
pub(crate) struct Reservation {
    shared: Option<Arc<Shared>>,
    op: Op,
    chave: String,
    /// `None` when the prices were unknown when it was made.
    preco: Option<Decimal>,
    /// The attempt sent and not answered yet.
    in_flight: Option<Sending>,
}

impl Reservation {
    pub(super) fn new(shared: Arc<Shared>, op: Op, chave: &str, preco: Option<Decimal>) -> Self {
        Self {
            shared: Some(shared),
            op,
            chave: chave.to_owned(),
            preco,
            in_flight: None,
        }
    }

    /// A reservation of nothing (sandbox values, free operations).
    pub(crate) fn free() -> Self {
        Self {
            shared: None,
            op: Op::Saldo,
            chave: String::new(),
            preco: None,
            in_flight: None,
        }
    }

    /// The price of the lookup when the client knows it, BRL (`None` for free operations,
    /// sandbox values and unknown prices).
    pub fn preco(&self) -> Option<Decimal> {
        let shared = self.shared.as_ref()?;
        self.preco.or_else(|| shared.lock().preco(self.op))
    }

    /// The request is about to leave: from now until an answer, it may reach the server (and
    /// [`Gasto::incerto`](crate::Gasto::incerto) counts it).
    pub(crate) fn about_to_send(&mut self) {
        if let Some(shared) = &self.shared {
            let mut s = shared.lock();
            if self.in_flight.is_none() {
                s.in_flight(self.op, self.preco, 1);
            }
            self.in_flight = Some(s.server_clock.sending());
        }
    }

    /// The attempt ended (an answer, or it never left): it is no longer in flight.
    fn landed(&mut self) -> Option<Sending> {
        let sending = self.in_flight.take()?;
        if let Some(shared) = &self.shared {
            shared.lock().in_flight(self.op, self.preco, -1);
        }
        Some(sending)
    }

    /// The attempt ended without a charge: an answer other than 200, or it never left (the
    /// connection was refused). It is no longer in flight.
    pub(crate) fn uncharged(&mut self) {
        self.landed();
    }

    /// The lookup was answered with 200 (stamped `data` by the server): the price becomes
    /// spend.
    pub(crate) fn commit(mut self, data: Option<DateTime<Utc>>) {
        let Some(shared) = self.shared.take() else {
            return;
        };
        let now = Instant::now();
        let sending = self.in_flight.take();
        let memory = shared.memory();
        if sending.is_some() {
            shared.lock().in_flight(self.op, self.preco, -1);
        }
        let mut s = shared.lock();
        match self.preco.or_else(|| s.preco(self.op)) {
            Some(p) => {
                if self.preco.is_some() {
                    s.reservado -= p;
                }
                s.confirmado += p;
            }
            None => s.unpriced.push(self.op),
        }
        if let Some(sending) = sending {
            let window = window_of_200(sending, now, data);
            let c = Answered200 {
                op: self.op,
                chave: std::mem::take(&mut self.chave),
                window,
            };
            s.remember_200(c, memory);
        }
        drop(s);
        shared.settled.notify_waiters();
    }

    /// The request was sent and its answer lost (time-out, reset): the lookup may have been
    /// charged. Recorded as uncertain at its price (a WARN event, once the price is known); the
    /// reservation itself stays
    /// until dropped (a retry may use it).
    pub(crate) fn lost(&mut self) {
        self.mark_incerto("resposta perdida de consulta cobrável: pode ter sido cobrada");
    }

    fn mark_incerto(&mut self, message: &'static str) {
        let Some(sending) = self.landed() else {
            return;
        };
        let Some(shared) = &self.shared else {
            return;
        };
        let grace = shared.grace;
        let mut s = shared.lock();
        let window = s.server_clock.window(sending, Instant::now(), grace);
        let preco = s.mark_incerto(self.op, &self.chave, self.preco, window, message);
        drop(s);
        if preco.is_some() {
            super::warn_money(self.op, preco, message);
        }
    }
}

/// The server's time of a 200: from the send's bound (or its own `Date` less its round trip)
/// to its own `Date` plus the second it rounds down.
fn window_of_200(sending: Sending, received: Instant, data: Option<DateTime<Utc>>) -> Window {
    let round_trip = TimeDelta::from_std(received.saturating_duration_since(sending.sent))
        .unwrap_or(TimeDelta::MAX / 2);
    let not_before = sending
        .not_before
        .or_else(|| data.map(|d| d - round_trip - TimeDelta::seconds(2)));
    Window {
        sent: sending.sent,
        ended: received,
        not_before,
        not_after: data.map(|d| d + TimeDelta::seconds(1)),
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.shared.is_none() {
            return;
        }
        if self.in_flight.is_some() {
            self.mark_incerto("consulta cobrável cancelada após o envio: pode ter sido cobrada");
        }
        if let Some(shared) = self.shared.take() {
            if let Some(p) = self.preco {
                shared.lock().reservado -= p;
            }
            shared.settled.notify_waiters();
        }
    }
}
