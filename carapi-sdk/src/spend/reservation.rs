//! [`Reservation`]: one charged lookup's price, from before it is sent until its outcome is known,
//! with a drop guard for the outcome nobody saw.

use std::sync::Arc;
use std::time::Instant;

use chrono::{DateTime, TimeDelta, Utc};
use rust_decimal::Decimal;

use super::window::{Sending, Window};
use super::{Conhecida, Shared};
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
    em_voo: Option<Sending>,
}

impl Reservation {
    pub(super) fn new(shared: Arc<Shared>, op: Op, chave: &str, preco: Option<Decimal>) -> Self {
        Self {
            shared: Some(shared),
            op,
            chave: chave.to_owned(),
            preco,
            em_voo: None,
        }
    }

    /// A reservation of nothing (sandbox values, free operations).
    pub(crate) fn nenhuma() -> Self {
        Self {
            shared: None,
            op: Op::Saldo,
            chave: String::new(),
            preco: None,
            em_voo: None,
        }
    }

    /// The price of the lookup when the client knows it, BRL (`None` for free operations,
    /// sandbox values and unknown prices).
    pub fn preco(&self) -> Option<Decimal> {
        let shared = self.shared.as_ref()?;
        self.preco.or_else(|| shared.lock().preco(self.op))
    }

    /// The request is about to leave: from now until an answer, it may reach the server.
    pub(crate) fn enviando(&mut self) {
        if let Some(shared) = &self.shared {
            self.em_voo = Some(shared.lock().relogio.sending());
        }
    }

    /// The attempt ended without a charge: an answer other than 200, or it never left (the
    /// connection was refused). It is no longer in flight.
    pub(crate) fn sem_cobranca(&mut self) {
        self.em_voo = None;
    }

    /// The lookup was answered with 200 (stamped `data` by the server): the price becomes
    /// spend.
    pub(crate) fn commit(mut self, data: Option<DateTime<Utc>>) {
        let Some(shared) = self.shared.take() else {
            return;
        };
        let now = Instant::now();
        let sending = self.em_voo.take();
        let memory = shared.memory();
        let mut s = shared.lock();
        match self.preco.or_else(|| s.preco(self.op)) {
            Some(p) => {
                if self.preco.is_some() {
                    s.reservado -= p;
                }
                s.confirmado += p;
            }
            None => s.sem_preco.push(self.op),
        }
        if let Some(sending) = sending {
            let window = window_of_200(sending, now, data);
            let c = Conhecida {
                op: self.op,
                chave: std::mem::take(&mut self.chave),
                window,
            };
            s.conhecida(c, memory);
        }
        drop(s);
        shared.settled.notify_waiters();
    }

    /// The request was sent and its answer lost (time-out, reset): the lookup may have been
    /// charged. Recorded as uncertain at its price (a WARN event, once the price is known); the
    /// reservation itself stays
    /// until dropped (a retry may use it).
    pub(crate) fn lost(&mut self) {
        self.mark_uncertain("resposta perdida de consulta cobrável: pode ter sido cobrada");
    }

    fn mark_uncertain(&mut self, mensagem: &'static str) {
        let (Some(shared), Some(sending)) = (&self.shared, self.em_voo.take()) else {
            return;
        };
        let grace = shared.grace;
        let mut s = shared.lock();
        let window = s.relogio.window(sending, Instant::now(), grace);
        let preco = s.mark_uncertain(self.op, &self.chave, self.preco, window, mensagem);
        drop(s);
        if preco.is_some() {
            super::warn_money(self.op, preco, mensagem);
        }
    }
}

/// The server's time of a 200: from the send's bound (or its own `Date` less its round trip)
/// to its own `Date` plus the second it rounds down.
fn window_of_200(sending: Sending, recebido: Instant, data: Option<DateTime<Utc>>) -> Window {
    let ida_e_volta = TimeDelta::from_std(recebido.saturating_duration_since(sending.enviado))
        .unwrap_or(TimeDelta::MAX / 2);
    let desde = sending
        .desde
        .or_else(|| data.map(|d| d - ida_e_volta - TimeDelta::seconds(2)));
    Window {
        enviado: sending.enviado,
        fim: recebido,
        desde,
        ate: data.map(|d| d + TimeDelta::seconds(1)),
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.shared.is_none() {
            return;
        }
        if self.em_voo.is_some() {
            self.mark_uncertain("consulta cobrável cancelada após o envio: pode ter sido cobrada");
        }
        if let Some(shared) = self.shared.take() {
            if let Some(p) = self.preco {
                shared.lock().reservado -= p;
            }
            shared.settled.notify_waiters();
        }
    }
}
