//! Accounts as stored, their limits and the ledger check.

use std::fmt;

use async_trait::async_trait;
use carapi_sdk::CpfCnpj;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::StoreError;
use crate::money::limites::Patch;
use crate::money::{Centavos, ContaId};

/// An API account as stored.
#[derive(Clone, PartialEq, Eq)]
pub struct Conta {
    /// Account id.
    pub(crate) id: ContaId,
    /// Hex SHA-256 of the API key (never the key).
    pub chave_hash: String,
    /// Balance, never negative.
    pub saldo: Centavos,
    /// On the legacy price table (until its first confirmed top-up).
    pub legado: bool,
    /// CPF/CNPJ of the linked user (the PIX payer); `None` gives `DOCUMENTO_AUSENTE`.
    pub documento: Option<CpfCnpj>,
    /// E-mail of the linked user.
    pub email: Option<String>,
    /// Daily limit of charged lookups; `None` = unlimited.
    pub limite_diario: Option<u32>,
    /// Monthly spending ceiling; `None` = unlimited.
    pub limite_mensal: Option<Centavos>,
}

impl fmt::Debug for Conta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conta")
            .field("id", &self.id)
            .field("saldo", &self.saldo)
            .field("legado", &self.legado)
            .field("limite_diario", &self.limite_diario)
            .field("limite_mensal", &self.limite_mensal)
            .finish_non_exhaustive()
    }
}

/// A new account to store.
#[derive(Debug, Clone)]
pub struct NovaContaRecord {
    /// Hex SHA-256 of the API key.
    pub chave_hash: String,
    /// Initial balance (recorded in the ledger as an `saldo_inicial` credit).
    pub saldo: Centavos,
    /// Start on the legacy price table.
    pub legado: bool,
    /// Linked user's document.
    pub documento: Option<CpfCnpj>,
    /// Linked user's e-mail.
    pub email: Option<String>,
    /// Creation instant.
    pub at: DateTime<Utc>,
}

/// Ledger check of one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ledger {
    /// The account.
    pub conta_id: ContaId,
    /// Stored balance.
    pub saldo: Centavos,
    /// Sum of credits in the ledger.
    #[serde(rename = "creditos")]
    pub credits: Centavos,
    /// Sum of debits in the ledger.
    #[serde(rename = "debitos")]
    pub debits: Centavos,
    /// Sum of `valorCobrado` in the lookup history.
    pub cobrado_historico: Centavos,
    /// Sum of amount plus bonus of confirmed top-ups.
    pub creditado_recargas: Centavos,
    /// Sum of the initial-balance credits.
    pub saldo_inicial: Centavos,
    /// Sum of the reversals' compensating credits (`origem = 'estorno'`): each reverses a debit
    /// of a charge answered with an error ([`ConsultasStore::estornar_cobranca`](super::ConsultasStore::estornar_cobranca)).
    pub estornos: Centavos,
}

impl Ledger {
    /// True when `saldo == creditos - debitos`, the debits equal what the history says was
    /// charged plus the reversed debits, and the credits equal the initial balance plus
    /// confirmed top-ups plus the reversals.
    pub fn is_consistent(&self) -> bool {
        let credits = self
            .saldo_inicial
            .checked_add(self.creditado_recargas)
            .and_then(|c| c.checked_add(self.estornos));
        self.credits.checked_sub(self.debits) == Ok(self.saldo)
            && self.cobrado_historico.checked_add(self.estornos) == Ok(self.debits)
            && credits == Ok(self.credits)
            && self.saldo >= Centavos::ZERO
    }
}

/// Accounts, their limits and the ledger check.
#[async_trait]
pub trait ContasStore {
    /// Creates an account (and its initial-balance ledger credit).
    async fn create_conta(&self, fresh: NovaContaRecord) -> Result<ContaId, StoreError>;
    /// The account whose key hashes to `chave_hash`.
    async fn conta_by_key(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError>;
    /// The account `id`.
    async fn conta(&self, id: ContaId) -> Result<Option<Conta>, StoreError>;
    /// Every account id, ascending.
    async fn contas(&self) -> Result<Vec<ContaId>, StoreError>;
    /// Applies a merge-patch to the limits and returns the account after it.
    async fn atualizar_limites(
        &self,
        id: ContaId,
        diario: Patch<u32>,
        mensal: Patch<Centavos>,
    ) -> Result<Option<Conta>, StoreError>;
    /// The ledger sums of an account.
    async fn ledger(&self, conta: ContaId) -> Result<Option<Ledger>, StoreError>;
}
