//! Creating an account outside HTTP (`carapi-server account create`, the library, the test
//! double): its key, shown once and stored only as its SHA-256, and its initial balance.

use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::auth;
use crate::error::ServerError;
use crate::money::Centavos;
use crate::store::{ContaId, NovaContaRecord, Store};

/// An account to create (`carapi-server account create`, or the library).
#[derive(Debug, Clone)]
pub struct NovaConta {
    /// Initial balance in BRL (2 decimals at most).
    pub saldo: Decimal,
    /// Start on the legacy price table.
    pub legado: bool,
    /// CPF/CNPJ of the linked user; `None` makes `POST /v1/recarga` answer `DOCUMENTO_AUSENTE`.
    pub documento: Option<CpfCnpj>,
    /// E-mail of the linked user.
    pub email: Option<String>,
}

/// A fictitious but valid CPF used by default (`529.982.247-25`, docs/dominio.md test vector).
pub const DEFAULT_DOCUMENT: &str = "52998224725";

impl Default for NovaConta {
    /// Balance 100.00, current prices, a valid fictitious CPF, `client_addr@example.com`.
    fn default() -> Self {
        NovaConta {
            saldo: Decimal::new(10_000, 2),
            legado: false,
            documento: CpfCnpj::parse(DEFAULT_DOCUMENT).ok(),
            email: Some("cliente@example.com".into()),
        }
    }
}

/// A created account. The key is shown once and never stored in clear.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContaCriada {
    /// Account id.
    pub conta_id: ContaId,
    /// The API key (`car_` + 64 hex).
    pub api_key: String,
}

impl std::fmt::Debug for ContaCriada {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContaCriada")
            .field("conta_id", &self.conta_id)
            .field("api_key", &"<redacted>")
            .finish()
    }
}

/// Creates an account directly in `store` (no server needed; `carapi-server account create`),
/// created now by the system clock.
///
/// # Errors
/// [`ServerError::Invalid`] for a negative balance or one with fractions of a centavo;
/// [`ServerError::Store`] when the store fails.
pub async fn create_conta(store: &dyn Store, fresh: NovaConta) -> Result<ContaCriada, ServerError> {
    create_conta_at(store, fresh, Utc::now()).await
}

/// [`create_conta`] with the creation instant `em` (a server's clock).
///
/// # Errors
/// As [`create_conta`].
pub async fn create_conta_at(
    store: &dyn Store,
    fresh: NovaConta,
    at: DateTime<Utc>,
) -> Result<ContaCriada, ServerError> {
    let saldo = Centavos::from_reais(fresh.saldo)
        .filter(|c| c.get() >= 0)
        .ok_or_else(|| ServerError::Invalid(format!("saldo inválido: {}", fresh.saldo)))?;
    let api_key = auth::generate_key();
    let conta_id = store
        .create_conta(NovaContaRecord {
            chave_hash: auth::key_hash(&api_key),
            saldo,
            legado: fresh.legado,
            documento: fresh.documento,
            email: fresh.email,
            at,
        })
        .await?;
    Ok(ContaCriada { conta_id, api_key })
}
