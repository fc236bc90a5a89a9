//! Top-up plans (contract, "Top-up endpoints" and "Top-up state machine"): the amount rule
//! shared by `POST /v1/recarga` and the preview of `GET /v1/recarga/faixas`, the bonus fixed
//! at creation, the 10-minute reuse decision, and the confirmation (credit of amount plus
//! bonus, once; move from the legacy to the current price table).

use carapi_sdk::RecargaStatus;
use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::{Centavos, ContaId, Overflow, tarifa};

/// Minimum top-up: 500 BRL (contract, "Limits").
pub(crate) const VALOR_MINIMO: Centavos = Centavos::new(50_000);
/// Maximum top-up accepted by this server: 1,000,000 BRL (a sanity ceiling, equal to the
/// monthly-limit ceiling); above it `VALOR_INVALIDO`, on `POST /v1/recarga` and on the preview.
pub const VALOR_MAXIMO: Centavos = Centavos::new(100_000_000);
/// PIX reuse window, minutes (contract, "Limits").
pub(crate) const REUSE_WINDOW_MIN: i64 = 10;
/// Seconds after which a top-up row still being created (its provider call never returned:
/// the process died) is no longer reused.
pub const CREATION_DEADLINE_S: i64 = 15;

/// A stored top-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recarga {
    /// Id.
    pub id: Uuid,
    /// Owner account.
    pub conta: ContaId,
    /// Payment id at the PSP.
    pub payment_id: String,
    /// Amount paid.
    pub valor: Centavos,
    /// Bonus percent fixed at creation.
    pub percentual_bonus: u32,
    /// Bonus fixed at creation.
    pub bonus: Centavos,
    /// State.
    pub status: RecargaStatus,
    /// BR Code payload.
    pub qr_code: String,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
    /// Confirmation instant.
    pub confirmed_at: Option<DateTime<Utc>>,
}

impl Recarga {
    /// True while the provider charge is being created: the row exists (reuse is decided on
    /// it) but its BR Code is not filled in yet. Such a row is not listed, not shown to its
    /// account and not reconciled.
    pub(crate) fn being_created(&self) -> bool {
        self.qr_code.is_empty()
    }

    /// Amount plus bonus: what a confirmation credits.
    ///
    /// # Errors
    /// [`Overflow`] when the stored amounts cannot be summed (corrupt data).
    pub(crate) fn total(&self) -> Result<Centavos, Overflow> {
        self.valor.checked_add(self.bonus)
    }
}

/// Outcome of a confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// This call moved it Pendente -> Confirmado and credited amount plus bonus.
    Credited(Recarga),
    /// It was already final; nothing changed.
    AlreadyFinal(Recarga),
    /// No top-up has this payment id.
    NotFound,
}

/// Why an amount is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ValorRefused {
    /// `VALOR_INVALIDO`: not positive, fractions of a centavo, or above [`VALOR_MAXIMO`].
    Invalid,
    /// `VALOR_MINIMO`: below [`VALOR_MINIMO`].
    BelowMinimum,
}

/// The amount of `POST /v1/recarga`: positive, at most 2 decimal places, at most
/// [`VALOR_MAXIMO`], at least [`VALOR_MINIMO`].
///
/// # Errors
/// [`ValorRefused`] as above (`Invalid` is checked first).
pub(crate) fn recarga_valor(valor: Decimal) -> Result<Centavos, ValorRefused> {
    let c = Centavos::from_reais(valor)
        .filter(|c| c.0 > 0 && *c <= VALOR_MAXIMO)
        .ok_or(ValorRefused::Invalid)?;
    if c < VALOR_MINIMO {
        return Err(ValorRefused::BelowMinimum);
    }
    Ok(c)
}

/// What a top-up of an amount would credit (`preview` of `GET /v1/recarga/faixas`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Preview {
    /// Amount paid, rounded to the centavo.
    pub(crate) valor: Centavos,
    /// Bonus percent of its tier.
    pub(crate) percentual: u32,
    /// Bonus, rounded down to the centavo.
    pub(crate) bonus: Centavos,
}

impl Preview {
    /// Amount plus bonus.
    ///
    /// # Errors
    /// [`Overflow`] when the sum does not fit (no amount the preview accepts does that).
    pub(crate) fn total(&self) -> Result<Centavos, Overflow> {
        self.valor.checked_add(self.bonus)
    }
}

/// The preview of `valor` BRL: rounded to the centavo (half to even), the tier's percentage
/// (zero below the tiers and for negative amounts), the bonus rounded down to the centavo.
///
/// # Errors
/// [`ValorRefused::Invalid`] above [`VALOR_MAXIMO`] (the largest amount `POST /v1/recarga`
/// accepts) or beyond what centavos can hold: the same refusal `POST /v1/recarga` gives it.
pub(crate) fn preview(valor: Decimal) -> Result<Preview, ValorRefused> {
    let c = Centavos::from_reais(valor.round_dp(2))
        .filter(|c| *c <= VALOR_MAXIMO)
        .ok_or(ValorRefused::Invalid)?;
    let (percentual, bonus) = tarifa::bonus(c);
    Ok(Preview {
        valor: c,
        percentual,
        bonus,
    })
}

/// A new pending top-up of `valor` with its bonus fixed now (tier of the amount paid).
pub(crate) fn new_recarga(
    conta: ContaId,
    valor: Centavos,
    payment_id: String,
    now: DateTime<Utc>,
) -> Recarga {
    let (percentual_bonus, bonus) = tarifa::bonus(valor);
    Recarga {
        id: Uuid::new_v4(),
        conta,
        payment_id,
        valor,
        percentual_bonus,
        bonus,
        status: RecargaStatus::Pendente,
        qr_code: String::new(),
        created_at: now,
        confirmed_at: None,
    }
}

/// Start of the reuse window of a request at `now`: pending top-ups created at or after it
/// are reused.
pub(crate) fn since_reuse(now: DateTime<Utc>) -> DateTime<Utc> {
    now - Duration::minutes(REUSE_WINDOW_MIN)
}

/// The top-up a request for `valor` reuses among `candidates` (the account's top-ups a store
/// read, in insertion order), or `None`: same amount, pending, created at or after `desde`;
/// a row still being created counts only when `creating_since` is given and it was created
/// at or after that instant (an older one was abandoned). Among several, the latest created,
/// and of equal instants the last inserted.
pub(crate) fn reusable(
    candidates: &[Recarga],
    valor: Centavos,
    since: DateTime<Utc>,
    creating_since: Option<DateTime<Utc>>,
) -> Option<&Recarga> {
    candidates
        .iter()
        .filter(|r| r.valor == valor && r.status == RecargaStatus::Pendente)
        .filter(|r| r.created_at >= since)
        .filter(|r| {
            !r.being_created() || creating_since.is_some_and(|limite| r.created_at >= limite)
        })
        .max_by_key(|r| r.created_at)
}

/// The reuse decision of `POST /v1/recarga` creating `nova` with the window starting at
/// `desde` ([`since_reuse`]; see [`reusable`]): a row being created counts for
/// [`CREATION_DEADLINE_S`] seconds before `fresh.created_at`.
pub(crate) fn reuse<'a>(
    candidates: &'a [Recarga],
    fresh: &Recarga,
    since: DateTime<Utc>,
) -> Option<&'a Recarga> {
    let abandon = fresh.created_at - Duration::seconds(CREATION_DEADLINE_S);
    reusable(candidates, fresh.valor, since, Some(abandon))
}

/// What a store writes to confirm a top-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConfirmationPlan {
    /// Move the top-up to `Confirmado` at the given instant, credit `credito` (amount plus
    /// the bonus fixed at creation) with a ledger credit row of the same amount, and put the
    /// account on the current price table.
    Credit {
        /// Amount plus bonus.
        credit: Centavos,
        /// The account's legacy flag after the confirmation (always `false`: contract,
        /// "Prices").
        legado_depois: bool,
        /// The confirmed top-up as it will be stored.
        recarga: Recarga,
    },
    /// Already final (or still being created): change nothing.
    AlreadyFinal(Recarga),
    /// No such top-up.
    NotFound,
}

impl ConfirmationPlan {
    /// The outcome to report once applied.
    pub(crate) fn confirmation(&self) -> Confirmation {
        match self {
            ConfirmationPlan::Credit { recarga, .. } => Confirmation::Credited(recarga.clone()),
            ConfirmationPlan::AlreadyFinal(r) => Confirmation::AlreadyFinal(r.clone()),
            ConfirmationPlan::NotFound => Confirmation::NotFound,
        }
    }
}

/// The confirmation at `em` of the top-up a store read (`None`: not found): only a pending
/// top-up whose provider charge exists (not being created) is credited, once.
///
/// # Errors
/// [`Overflow`] when the stored amount plus bonus cannot be summed: nothing is credited.
pub(crate) fn plan_confirmation(
    recarga: Option<&Recarga>,
    at: DateTime<Utc>,
) -> Result<ConfirmationPlan, Overflow> {
    let Some(r) = recarga else {
        return Ok(ConfirmationPlan::NotFound);
    };
    if r.status != RecargaStatus::Pendente || r.being_created() {
        return Ok(ConfirmationPlan::AlreadyFinal(r.clone()));
    }
    Ok(ConfirmationPlan::Credit {
        credit: r.total()?,
        legado_depois: false,
        recarga: Recarga {
            status: RecargaStatus::Confirmado,
            confirmed_at: Some(at),
            ..r.clone()
        },
    })
}

#[cfg(test)]
#[path = "recarga_cases.rs"]
mod cases;
