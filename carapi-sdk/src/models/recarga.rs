use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::Precos;

/// The state of a top-up (contract, "States and transitions").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum RecargaStatus {
    /// Waiting for the PIX payment.
    Pendente,
    /// Paid and credited (amount plus bonus); the account is on the current price table.
    Confirmado,
    /// Rejected.
    Rejeitado,
}

impl RecargaStatus {
    /// The wire name (`"Pendente"`, …).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pendente => "Pendente",
            Self::Confirmado => "Confirmado",
            Self::Rejeitado => "Rejeitado",
        }
    }

    /// True for `Confirmado` and `Rejeitado`, from which no move is shown by the contract.
    #[must_use]
    pub fn is_final(self) -> bool {
        !matches!(self, Self::Pendente)
    }
}

impl std::fmt::Display for RecargaStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RecargaStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "pendente" => Ok(Self::Pendente),
            "confirmado" => Ok(Self::Confirmado),
            "rejeitado" => Ok(Self::Rejeitado),
            _ => Err(format!(
                "status inválido: {s:?} (Pendente, Confirmado ou Rejeitado)"
            )),
        }
    }
}

/// FaixaBonus: a bonus tier of top-ups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FaixaBonus {
    /// Lower bound of the tier, BRL, inclusive.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_minimo: Decimal,
    /// Upper bound of the tier, BRL; `None` = no upper bound.
    #[serde(default, with = "rust_decimal::serde::float_option")]
    pub valor_maximo: Option<Decimal>,
    /// Bonus in percent of the amount paid (`5` = 5 %).
    #[serde(with = "rust_decimal::serde::float")]
    pub percentual_bonus: Decimal,
}

/// `preview` of [`FaixasResponse`]: what a top-up of `valorPago` would credit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PreviewRecarga {
    /// Amount paid, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_pago: Decimal,
    /// Bonus percentage of the tier.
    #[serde(with = "rust_decimal::serde::float")]
    pub percentual_bonus: Decimal,
    /// Bonus in BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_bonus: Decimal,
    /// Amount plus bonus, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub total_creditado: Decimal,
}

/// FaixasResponse: `GET /v1/recarga/faixas[?valor=V]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct FaixasResponse {
    /// Always true.
    pub success: bool,
    /// Minimum top-up amount, BRL (500).
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_minimo: Decimal,
    /// The account is on the legacy price table.
    pub usa_preco_legado: bool,
    /// Prices in force now.
    pub precos_atuais: Precos,
    /// Prices applied after a top-up (the current table).
    pub precos_apos_recarga: Precos,
    /// When true, `POST /v1/recarga` requires `confirmarNovosPrecos: true`.
    pub confirmar_novos_precos_obrigatorio: bool,
    /// Active bonus tiers.
    pub faixas: Vec<FaixaBonus>,
    /// Present when `valor` was requested.
    #[serde(default)]
    pub preview: Option<PreviewRecarga>,
}

/// The body of `POST /v1/recarga`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NovaRecarga {
    /// Amount in BRL; minimum 500 (400 `VALOR_MINIMO` below, `VALOR_INVALIDO` when not a valid
    /// amount).
    #[serde(with = "rust_decimal::serde::float")]
    pub valor: Decimal,
    /// Must be true for a legacy-price account (400 `CONFIRMACAO_PRECOS_OBRIGATORIA`).
    #[serde(default)]
    pub confirmar_novos_precos: bool,
}

impl NovaRecarga {
    /// A top-up of `valor` BRL for an account on the current prices
    /// (`confirmar_novos_precos: false`; set it for a legacy-price account).
    #[must_use]
    pub fn new(valor: Decimal) -> Self {
        NovaRecarga {
            valor,
            confirmar_novos_precos: false,
        }
    }
}

/// `previewBonus` of [`RecargaCriadaResponse`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct PreviewBonus {
    /// Bonus percentage.
    #[serde(with = "rust_decimal::serde::float")]
    pub percentual_bonus: Decimal,
    /// Bonus in BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_bonus: Decimal,
    /// Amount plus bonus, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub total_creditado: Decimal,
}

/// RecargaCriadaResponse: `POST /v1/recarga`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RecargaCriadaResponse {
    /// Always true.
    pub success: bool,
    /// True when a pending PIX of the same amount from the last 10 minutes was reused.
    pub reaproveitada: bool,
    /// The top-up id.
    pub recarga_id: Uuid,
    /// Payment identifier at the provider.
    pub payment_id: String,
    /// Amount, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor: Decimal,
    /// State (`Pendente` on creation).
    pub status: RecargaStatus,
    /// PIX copy-and-paste payload (BR Code).
    pub qr_code: String,
    /// PNG of the QR code, base64.
    pub qr_code_base64: String,
    /// What the top-up will credit.
    pub preview_bonus: PreviewBonus,
    /// A message in Portuguese.
    pub message: String,
}

/// RecargaStatusResponse: `GET /v1/recarga/{recargaId}`. Reading never changes the state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RecargaStatusResponse {
    /// Always true.
    pub success: bool,
    /// True only when `status` is `Confirmado`.
    pub pago: bool,
    /// The top-up id.
    pub recarga_id: Uuid,
    /// Amount, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor: Decimal,
    /// Bonus in BRL, filled only when paid.
    #[serde(
        default,
        with = "rust_decimal::serde::float_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub valor_bonus: Option<Decimal>,
    /// Bonus percentage, filled only when paid.
    #[serde(
        default,
        with = "rust_decimal::serde::float_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub percentual_bonus: Option<Decimal>,
    /// Amount plus bonus, BRL, filled only when paid.
    #[serde(
        default,
        with = "rust_decimal::serde::float_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_creditado: Option<Decimal>,
    /// State.
    pub status: RecargaStatus,
    /// PIX payload, present while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qr_code: Option<String>,
    /// QR PNG in base64, present while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qr_code_base64: Option<String>,
    /// Current balance, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub saldo_atual: Decimal,
    /// A message in Portuguese.
    pub message: String,
}

/// RecargaItem: one entry of `GET /v1/recargas`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RecargaItem {
    /// The top-up id.
    pub recarga_id: Uuid,
    /// When it was created.
    #[serde(with = "super::timestamp")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub data: DateTime<FixedOffset>,
    /// When it was confirmed.
    #[serde(default, with = "super::timestamp::option")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = DateTime))]
    pub data_confirmacao: Option<DateTime<FixedOffset>>,
    /// Amount paid, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_pago: Decimal,
    /// Bonus, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_bonus: Decimal,
    /// Bonus percentage.
    #[serde(with = "rust_decimal::serde::float")]
    pub percentual_bonus: Decimal,
    /// Amount plus bonus, BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub total_creditado: Decimal,
    /// State.
    pub status: RecargaStatus,
}

/// RecargasResponse: a page of `GET /v1/recargas`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RecargasResponse {
    /// Always true.
    pub success: bool,
    /// 1-based page number.
    pub page: u32,
    /// Page size (at most 100).
    pub size: u32,
    /// Items over all pages.
    pub total: u64,
    /// Number of pages.
    pub total_paginas: u32,
    /// The items of this page.
    pub itens: Vec<RecargaItem>,
}
