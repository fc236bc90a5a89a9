//! The PIX payment provider (PSP) behind a trait, and the built-in simulated PSP.
//!
//! The simulated PSP builds real BR Code payloads (`carapi_sdk::domain::pix::CobrancaPix`) and
//! keeps its book of charges in the server's store, so a charge created by one process can be
//! paid from another (the CLI's local mode) and seen by the reconciliation job.

pub mod qr;
pub mod reserva;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use carapi_sdk::CpfCnpj;
use carapi_sdk::domain::pix::CobrancaPix;
use chrono::{DateTime, Utc};

use crate::money::Centavos;
use crate::store::{CobrancaPsp, Store};

/// A charge to create. The server chooses the payment id (the BR Code txid) before asking, as
/// in the BCB PIX API (`PUT /cob/{txid}`), so that the top-up row exists, under its unique
/// payment id, before any provider charge does ([`reserva`]).
#[derive(Debug, Clone)]
pub struct PedidoCobranca {
    /// The payment id (txid) of the charge, from [`novo_payment_id`].
    pub payment_id: String,
    /// Amount.
    pub valor: Centavos,
    /// Payer's CPF/CNPJ (the user linked to the account).
    pub documento: CpfCnpj,
    /// Payer's e-mail.
    pub email: Option<String>,
    /// When.
    pub em: DateTime<Utc>,
}

/// A charge created at the PSP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CobrancaCriada {
    /// The PSP's payment id (also the BR Code txid).
    pub payment_id: String,
    /// The BR Code copy-and-paste payload.
    pub qr_code: String,
}

/// What the PSP says about a charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SituacaoPagamento {
    /// Not paid yet.
    Pendente,
    /// Paid.
    Pago {
        /// When the payer paid.
        em: DateTime<Utc>,
        /// The amount the provider received.
        valor: Centavos,
    },
    /// The PSP does not know the charge.
    Desconhecido,
}

/// A PSP failure (502 `ERRO_PIX` on creation; logged and retried by reconciliation).
#[derive(Debug, thiserror::Error)]
#[error("provedor PIX: {0}")]
pub struct PixError(pub String);

/// A PIX payment provider.
#[async_trait]
pub trait PixProvider: Send + Sync + fmt::Debug + 'static {
    /// Creates a dynamic charge.
    async fn criar_cobranca(&self, pedido: PedidoCobranca) -> Result<CobrancaCriada, PixError>;
    /// The provider's own record of a charge: whether and how much was paid. The server
    /// credits a top-up only on this answer (webhook and reconciliation alike).
    async fn consultar(&self, payment_id: &str) -> Result<SituacaoPagamento, PixError>;
}

/// The built-in PSP simulator.
#[derive(Debug, Clone)]
pub struct PspSimulado {
    store: Arc<dyn Store>,
    falhar: bool,
    location_base: String,
    nome: String,
    cidade: String,
}

impl PspSimulado {
    /// A simulator over `store`; with `falhar` every creation fails (to reach `ERRO_PIX`).
    pub fn new(
        store: Arc<dyn Store>,
        falhar: bool,
        location_base: &str,
        nome: &str,
        cidade: &str,
    ) -> Self {
        PspSimulado {
            store,
            falhar,
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
    pub async fn pagar(&self, payment_id: &str, em: DateTime<Utc>) -> Result<bool, PixError> {
        self.store
            .psp_pagar(payment_id, em)
            .await
            .map_err(|e| PixError(e.to_string()))
    }
}

/// A new payment id: `PIX` and 22 upper-case hex characters (25 alphanumerics, the BR Code
/// txid ceiling).
pub fn novo_payment_id() -> String {
    let hex = uuid::Uuid::new_v4()
        .simple()
        .to_string()
        .to_ascii_uppercase();
    format!("PIX{}", &hex[..22])
}

#[async_trait]
impl PixProvider for PspSimulado {
    async fn criar_cobranca(&self, pedido: PedidoCobranca) -> Result<CobrancaCriada, PixError> {
        if self.falhar {
            return Err(PixError(
                "PSP simulado configurado para falhar (pix_falha)".into(),
            ));
        }
        let payment_id = pedido.payment_id;
        let qr_code = CobrancaPix {
            location: format!("{}/{payment_id}", self.location_base),
            valor: pedido.valor.reais(),
            nome: self.nome.clone(),
            cidade: self.cidade.clone(),
            txid: payment_id.clone(),
        }
        .payload();
        self.store
            .psp_registrar(
                &payment_id,
                pedido.valor,
                &pedido.documento,
                pedido.email.as_deref(),
                pedido.em,
            )
            .await
            .map_err(|e| PixError(e.to_string()))?;
        Ok(CobrancaCriada {
            payment_id,
            qr_code,
        })
    }

    async fn consultar(&self, payment_id: &str) -> Result<SituacaoPagamento, PixError> {
        Ok(
            match self
                .store
                .psp_situacao(payment_id)
                .await
                .map_err(|e| PixError(e.to_string()))?
            {
                None => SituacaoPagamento::Desconhecido,
                Some(CobrancaPsp { paga_em: None, .. }) => SituacaoPagamento::Pendente,
                Some(CobrancaPsp {
                    paga_em: Some(em),
                    valor,
                }) => SituacaoPagamento::Pago { em, valor },
            },
        )
    }
}
