//! The PIX payment provider (PSP) behind a trait, and the built-in simulated PSP.
//!
//! The simulated PSP builds real BR Code payloads (`carapi_sdk::domain::pix::CobrancaPix`) and
//! keeps its book of charges in the server's store, so a charge created by one process can be
//! paid from another (the CLI's local mode) and seen by the reconciliation job.

pub mod payment;
pub(crate) mod qr;
pub(crate) mod reservation;
pub mod webhook;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use carapi_sdk::CpfCnpj;
use carapi_sdk::domain::pix::CobrancaPix;
use chrono::{DateTime, Utc};

use crate::money::Centavos;
use crate::store::{PspCharge, Store};

/// A charge to create. The server chooses the payment id (the charge's txid) before asking, as
/// in the BCB PIX API (`PUT /cob/{txid}`), so that the top-up row exists, under its unique
/// payment id, before any provider charge does (`reservation`).
#[derive(Debug, Clone)]
pub struct CobrancaRequest {
    /// The payment id (txid) of the charge, from [`new_payment_id`]; the last segment of the
    /// BR Code's location ([`payload_charge`]).
    pub(crate) payment_id: String,
    /// Amount.
    pub(crate) valor: Centavos,
    /// Payer's CPF/CNPJ (the user linked to the account).
    pub(crate) documento: CpfCnpj,
    /// Payer's e-mail.
    pub(crate) email: Option<String>,
    /// When.
    pub(crate) at: DateTime<Utc>,
}

/// A charge created at the PSP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeCreated {
    /// The PSP's payment id (the BR Code's location names it: [`payload_charge`]).
    pub(crate) payment_id: String,
    /// The BR Code copy-and-paste payload.
    pub(crate) qr_code: String,
}

/// What the PSP says about a charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentState {
    /// Not paid yet.
    Pendente,
    /// Paid.
    Pago {
        /// When the payer paid.
        at: DateTime<Utc>,
        /// The amount the provider received.
        valor: Centavos,
    },
    /// The PSP does not know the charge.
    Unknown,
}

/// A PSP failure (502 `ERRO_PIX` on creation; logged and retried by reconciliation).
#[derive(Debug, thiserror::Error)]
#[error("provedor PIX: {0}")]
pub struct PixError(pub String);

/// A PIX payment provider.
#[async_trait]
pub trait PixProvider: Send + Sync + fmt::Debug + 'static {
    /// Creates a dynamic charge.
    async fn create_charge(&self, requested: CobrancaRequest) -> Result<ChargeCreated, PixError>;
    /// The provider's own record of a charge: whether and how much was paid. The server
    /// credits a top-up only on this answer (webhook and reconciliation alike).
    async fn query(&self, payment_id: &str) -> Result<PaymentState, PixError>;
}

/// The built-in PSP simulator.
#[derive(Debug, Clone)]
pub struct SimulatedPsp {
    store: Arc<dyn Store>,
    location_base: String,
    nome: String,
    cidade: String,
}

impl SimulatedPsp {
    /// A simulator over `store` whose BR Codes carry `location_base`, `nome` and `cidade`
    /// ([`payload_charge`]).
    pub(crate) fn new(
        store: Arc<dyn Store>,
        location_base: &str,
        nome: &str,
        cidade: &str,
    ) -> Self {
        SimulatedPsp {
            store,
            location_base: location_base.trim_end_matches('/').to_owned(),
            nome: nome.to_owned(),
            cidade: cidade.to_owned(),
        }
    }

    /// Plays the payer: marks the charge paid in the PSP's book (idempotent). False when
    /// unknown.
    ///
    /// # Errors
    /// [`PixError`] when the book cannot be written.
    pub async fn pay(&self, payment_id: &str, at: DateTime<Utc>) -> Result<bool, PixError> {
        self.store
            .psp_pay(payment_id, at)
            .await
            .map_err(|e| PixError(e.to_string()))
    }
}

/// Letters of a payment id: Crockford's base-32 letters (no `I`, `L`, `O`, `U`, which read as
/// digits or as each other). Upper case, no digits: see [`new_payment_id`].
const PAYMENT_ID_LETTERS: &[u8; 22] = b"ABCDEFGHJKMNPQRSTVWXYZ";

/// Characters of a payment id (22^16, about 2^71 ids).
pub(crate) const PAYMENT_ID_LEN: usize = 16;

/// A new payment id: `PAYMENT_ID_LEN` random upper-case letters from
/// Crockford's base-32 letters (`PAYMENT_ID_LETTERS`), e.g. `KQZMBXTRAHWDNFJE`.
///
/// Short and in the QR code's alphanumeric set (digits, upper-case letters, space and
/// `$%*+-./:`, 5.5 bits a character instead of 8), because the id is part of the BR Code's
/// location URL ([`payload_charge`]); letters only, because a digit run inside the URL makes the
/// `qrcode` crate's segment optimizer switch modes and spend more bits than it saves.
pub fn new_payment_id() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..PAYMENT_ID_LEN)
        .map(|_| char::from(PAYMENT_ID_LETTERS[rng.random_range(0..PAYMENT_ID_LETTERS.len())]))
        .collect()
}

/// The BR Code of a charge of `valor` with id `payment_id`: a dynamic BR Code (docs/dominio.md,
/// "PIX BR Code") whose location (field `26`/`25`) is `{location_base}/{payment_id}`, merchant
/// name `nome` (field `59`) and city `cidade` (field `60`).
///
/// Sized to be scanned from a terminal: the `qrcode` crate encodes each run of characters in the
/// smallest QR mode that holds it (numeric, alphanumeric, byte), and everything in this payload
/// but the mandatory lower-case GUI `br.gov.bcb.pix` is digits, upper-case letters and the
/// alphanumeric symbols, provided the location, the name and the city are upper case (the
/// defaults of [`crate::config::Config`] are: a host name is case-insensitive and the path is
/// the simulator's own). The longest payload (R$ 1.000.000,00, [`crate::money::recarga::VALOR_MAXIMO`])
/// then fits a version-5 QR code (37 modules) at error-correction level L, which the CLI draws in
/// 21 lines of an 80x24 terminal; with the former lower-case location, name and 25-character id it
/// took version 7 or 8.
///
/// The txid (field `62`/`05`) is `***`: in a dynamic BR Code the charge is identified by its
/// location, which already carries the payment id (docs/dominio.md: `***` when none is given).
pub fn payload_charge(
    location_base: &str,
    nome: &str,
    cidade: &str,
    payment_id: &str,
    valor: Centavos,
) -> String {
    CobrancaPix {
        location: format!("{}/{payment_id}", location_base.trim_end_matches('/')),
        valor: valor.reais(),
        nome: nome.to_owned(),
        cidade: cidade.to_owned(),
        txid: String::new(),
    }
    .payload()
}

#[async_trait]
impl PixProvider for SimulatedPsp {
    async fn create_charge(&self, requested: CobrancaRequest) -> Result<ChargeCreated, PixError> {
        let payment_id = requested.payment_id;
        let qr_code = payload_charge(
            &self.location_base,
            &self.nome,
            &self.cidade,
            &payment_id,
            requested.valor,
        );
        self.store
            .psp_register(
                &payment_id,
                requested.valor,
                &requested.documento,
                requested.email.as_deref(),
                requested.at,
            )
            .await
            .map_err(|e| PixError(e.to_string()))?;
        Ok(ChargeCreated {
            payment_id,
            qr_code,
        })
    }

    async fn query(&self, payment_id: &str) -> Result<PaymentState, PixError> {
        Ok(
            match self
                .store
                .psp_state(payment_id)
                .await
                .map_err(|e| PixError(e.to_string()))?
            {
                None => PaymentState::Unknown,
                Some(PspCharge { paid_at: None, .. }) => PaymentState::Pendente,
                Some(PspCharge {
                    paid_at: Some(at),
                    valor,
                }) => PaymentState::Pago { at, valor },
            },
        )
    }
}

/// A provider that refuses every new charge (`POST /v1/recarga` answers 502 `ERRO_PIX`) and
/// asks the provider it wraps about the charges it has: `carapi-server serve --pix-falha`
/// ([`crate::Config::pix_failure`]), so that clients can meet the contract's `ERRO_PIX`.
#[derive(Debug)]
pub(crate) struct RefusingPsp(pub Arc<dyn PixProvider>);

#[async_trait]
impl PixProvider for RefusingPsp {
    async fn create_charge(&self, _request: CobrancaRequest) -> Result<ChargeCreated, PixError> {
        Err(PixError(
            "PSP simulado configurado para falhar (pix_falha)".into(),
        ))
    }

    async fn query(&self, payment_id: &str) -> Result<PaymentState, PixError> {
        self.0.query(payment_id).await
    }
}

#[cfg(test)]
mod tests {
    use carapi_sdk::domain::pix;
    use qrcode::{EcLevel, QrCode};

    use super::*;
    use crate::config::Config;
    use crate::money::recarga::VALOR_MAXIMO;

    fn default_payload(payment_id: &str, valor: Centavos) -> String {
        let c = Config::default();
        payload_charge(
            &c.pix_location_base,
            &c.pix_nome,
            &c.pix_cidade,
            payment_id,
            valor,
        )
    }

    #[test]
    fn payment_id_is_16_upper_case_letters() {
        let id = new_payment_id();
        assert_eq!(id.len(), PAYMENT_ID_LEN);
        assert!(id.bytes().all(|b| PAYMENT_ID_LETTERS.contains(&b)), "{id}");
        assert_ne!(id, new_payment_id());
    }

    #[test]
    fn br_code_is_valid_and_names_the_charge() {
        let p = default_payload("KQZMBXTRAHWDNFJE", Centavos::new(50_000));
        let fields = pix::parse(&p).expect("BR Code");
        let conta = &fields.iter().find(|f| f.id == "26").expect("26").valor;
        assert_eq!(
            conta,
            "0014br.gov.bcb.pix2535CARAPI.EXAMPLE/PIX/KQZMBXTRAHWDNFJE"
        );
        assert_eq!(
            pix::valor(&p).unwrap(),
            Some(rust_decimal::Decimal::new(500, 0))
        );
        assert!(
            p.contains("5802BR5906CARAPI6008BRASILIA62070503***6304"),
            "{p}"
        );
    }

    #[test]
    fn br_code_fits_a_version_5_qr_code_at_level_l() {
        // Every amount width (R$ 500,00 to the ceiling) and many ids: the CRC and the id change
        // the segments the encoder picks.
        for i in 0..2_000_i64 {
            let valor = [
                Centavos::new(50_000),
                Centavos::new(9_999_999),
                VALOR_MAXIMO,
            ][(i % 3) as usize];
            let p = default_payload(&new_payment_id(), valor);
            let qr = QrCode::with_error_correction_level(p.as_bytes(), EcLevel::L).unwrap();
            assert!(qr.width() <= 37, "{} modules for {p}", qr.width());
        }
    }
}
