//! Top-up plans (contract, "Top-up endpoints" and "Top-up state machine"): the amount rule
//! shared by `POST /v1/recarga` and the preview of `GET /v1/recarga/faixas`, the bonus fixed
//! at creation, the 10-minute reuse decision, and the confirmation (credit of amount plus
//! bonus, once; move from the legacy to the current price table).

use carapi_sdk::RecargaStatus;
use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::{Centavos, ContaId, tarifa};

/// Minimum top-up: 500 BRL (contract, "Limits").
pub const VALOR_MINIMO: Centavos = Centavos(50_000);
/// Maximum top-up accepted by this server: 1,000,000 BRL (a sanity ceiling, equal to the
/// monthly-limit ceiling); above it `VALOR_INVALIDO`, on `POST /v1/recarga` and on the preview.
pub const VALOR_MAXIMO: Centavos = Centavos(100_000_000);
/// PIX reuse window, minutes (contract, "Limits").
pub const JANELA_REAPROVEITAMENTO_MIN: i64 = 10;
/// Seconds after which a top-up row still being created (its provider call never returned:
/// the process died) is no longer reused.
pub const PRAZO_CRIACAO_S: i64 = 15;

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
    pub criada_em: DateTime<Utc>,
    /// Confirmation instant.
    pub confirmada_em: Option<DateTime<Utc>>,
}

impl Recarga {
    /// True while the provider charge is being created: the row exists (reuse is decided on
    /// it) but its BR Code is not filled in yet. Such a row is not listed, not shown to its
    /// account and not reconciled.
    pub fn em_criacao(&self) -> bool {
        self.qr_code.is_empty()
    }
}

/// Outcome of a confirmation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmacao {
    /// This call moved it Pendente -> Confirmado and credited amount plus bonus.
    Creditada(Recarga),
    /// It was already final; nothing changed.
    JaFinal(Recarga),
    /// No top-up has this payment id.
    NaoEncontrada,
}

/// Why an amount is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValorRecusado {
    /// `VALOR_INVALIDO`: not positive, fractions of a centavo, or above [`VALOR_MAXIMO`].
    Invalido,
    /// `VALOR_MINIMO`: below [`VALOR_MINIMO`].
    AbaixoDoMinimo,
}

/// The amount of `POST /v1/recarga`: positive, at most 2 decimal places, at most
/// [`VALOR_MAXIMO`], at least [`VALOR_MINIMO`].
///
/// # Errors
/// [`ValorRecusado`] as above (`Invalido` is checked first).
pub fn valor_da_recarga(valor: Decimal) -> Result<Centavos, ValorRecusado> {
    let c = Centavos::from_reais(valor)
        .filter(|c| c.0 > 0 && *c <= VALOR_MAXIMO)
        .ok_or(ValorRecusado::Invalido)?;
    if c < VALOR_MINIMO {
        return Err(ValorRecusado::AbaixoDoMinimo);
    }
    Ok(c)
}

/// What a top-up of an amount would credit (`preview` of `GET /v1/recarga/faixas`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preview {
    /// Amount paid, rounded to the centavo.
    pub valor: Centavos,
    /// Bonus percent of its tier.
    pub percentual: u32,
    /// Bonus, rounded down to the centavo.
    pub bonus: Centavos,
}

impl Preview {
    /// Amount plus bonus.
    pub fn total(&self) -> Centavos {
        self.valor + self.bonus
    }
}

/// The preview of `valor` BRL: rounded to the centavo (half to even), the tier's percentage
/// (zero below the tiers and for negative amounts), the bonus rounded down to the centavo.
///
/// # Errors
/// [`ValorRecusado::Invalido`] above [`VALOR_MAXIMO`] (the largest amount `POST /v1/recarga`
/// accepts) or beyond what centavos can hold: the same refusal `POST /v1/recarga` gives it.
pub fn preview(valor: Decimal) -> Result<Preview, ValorRecusado> {
    let c = Centavos::from_reais(valor.round_dp(2))
        .filter(|c| *c <= VALOR_MAXIMO)
        .ok_or(ValorRecusado::Invalido)?;
    let (percentual, bonus) = tarifa::bonus(c);
    Ok(Preview {
        valor: c,
        percentual,
        bonus,
    })
}

/// A new pending top-up of `valor` with its bonus fixed now (tier of the amount paid).
pub fn nova_recarga(
    conta: ContaId,
    valor: Centavos,
    payment_id: String,
    agora: DateTime<Utc>,
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
        criada_em: agora,
        confirmada_em: None,
    }
}

/// Start of the reuse window of a request at `agora`: pending top-ups created at or after it
/// are reused.
pub fn desde_reuso(agora: DateTime<Utc>) -> DateTime<Utc> {
    agora - Duration::minutes(JANELA_REAPROVEITAMENTO_MIN)
}

/// The top-up a request for `valor` reuses among `candidatas` (the account's top-ups a store
/// read, in insertion order), or `None`: same amount, pending, created at or after `desde`;
/// a row still being created counts only when `em_criacao_desde` is given and it was created
/// at or after that instant (an older one was abandoned). Among several, the latest created,
/// and of equal instants the last inserted.
pub fn reaproveitavel(
    candidatas: &[Recarga],
    valor: Centavos,
    desde: DateTime<Utc>,
    em_criacao_desde: Option<DateTime<Utc>>,
) -> Option<&Recarga> {
    candidatas
        .iter()
        .filter(|r| r.valor == valor && r.status == RecargaStatus::Pendente)
        .filter(|r| r.criada_em >= desde)
        .filter(|r| !r.em_criacao() || em_criacao_desde.is_some_and(|limite| r.criada_em >= limite))
        .max_by_key(|r| r.criada_em)
}

/// The reuse decision of `POST /v1/recarga` creating `nova` with the window starting at
/// `desde` ([`desde_reuso`]; see [`reaproveitavel`]): a row being created counts for
/// [`PRAZO_CRIACAO_S`] seconds before `nova.criada_em`.
pub fn reuso<'a>(
    candidatas: &'a [Recarga],
    nova: &Recarga,
    desde: DateTime<Utc>,
) -> Option<&'a Recarga> {
    let abandono = nova.criada_em - Duration::seconds(PRAZO_CRIACAO_S);
    reaproveitavel(candidatas, nova.valor, desde, Some(abandono))
}

/// What a store writes to confirm a top-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanoConfirmacao {
    /// Move the top-up to `Confirmado` at the given instant, credit `credito` (amount plus
    /// the bonus fixed at creation) with a ledger credit row of the same amount, and put the
    /// account on the current price table.
    Creditar {
        /// Amount plus bonus.
        credito: Centavos,
        /// The account's legacy flag after the confirmation (always `false`: contract,
        /// "Prices").
        legado_depois: bool,
        /// The confirmed top-up as it will be stored.
        recarga: Recarga,
    },
    /// Already final (or still being created): change nothing.
    JaFinal(Recarga),
    /// No such top-up.
    NaoEncontrada,
}

impl PlanoConfirmacao {
    /// The outcome to report once applied.
    pub fn confirmacao(&self) -> Confirmacao {
        match self {
            PlanoConfirmacao::Creditar { recarga, .. } => Confirmacao::Creditada(recarga.clone()),
            PlanoConfirmacao::JaFinal(r) => Confirmacao::JaFinal(r.clone()),
            PlanoConfirmacao::NaoEncontrada => Confirmacao::NaoEncontrada,
        }
    }
}

/// The confirmation at `em` of the top-up a store read (`None`: not found): only a pending
/// top-up whose provider charge exists (not being created) is credited, once.
pub fn planejar_confirmacao(recarga: Option<&Recarga>, em: DateTime<Utc>) -> PlanoConfirmacao {
    let Some(r) = recarga else {
        return PlanoConfirmacao::NaoEncontrada;
    };
    if r.status != RecargaStatus::Pendente || r.em_criacao() {
        return PlanoConfirmacao::JaFinal(r.clone());
    }
    PlanoConfirmacao::Creditar {
        credito: r.valor + r.bonus,
        legado_depois: false,
        recarga: Recarga {
            status: RecargaStatus::Confirmado,
            confirmada_em: Some(em),
            ..r.clone()
        },
    }
}

#[cfg(test)]
#[path = "recarga_casos.rs"]
mod casos;
