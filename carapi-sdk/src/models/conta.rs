use chrono::{DateTime, FixedOffset};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::{EndpointRegistrado, Precos};

/// `usoHoje` of [`SaldoResponse`]: today's use, Brasília time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsoHoje {
    /// Lookups made today.
    pub requisicoes: u64,
    /// BRL charged today.
    #[serde(with = "rust_decimal::serde::float")]
    pub gasto: Decimal,
    /// Lookups that ended in an error today.
    pub erros: u64,
}

/// `usoMes` of [`SaldoResponse`]: this calendar month's use, Brasília time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsoMes {
    /// Lookups made this month.
    pub requisicoes: u64,
    /// BRL charged this month.
    #[serde(with = "rust_decimal::serde::float")]
    pub gasto: Decimal,
}

/// SaldoResponse: `GET /v1/saldo` (contract, "SaldoResponse"). Free and not recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct SaldoResponse {
    /// Always true.
    pub success: bool,
    /// Current balance in BRL.
    #[serde(with = "rust_decimal::serde::float")]
    pub saldo_reais: Decimal,
    /// Daily limit of charged requests; `None` = unlimited.
    #[serde(default)]
    pub limite_diario_requisicoes: Option<u32>,
    /// Monthly spending ceiling in BRL; `None` = unlimited.
    #[serde(default, with = "rust_decimal::serde::float_option")]
    pub limite_mensal_reais: Option<Decimal>,
    /// The account's effective prices.
    pub precos: Precos,
    /// Today's use.
    pub uso_hoje: UsoHoje,
    /// This month's use.
    pub uso_mes: UsoMes,
}

/// ConsumoItem: one recorded lookup in the history (contract, "ConsumoItem").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct ConsumoItem {
    /// When the lookup was made.
    #[serde(with = "super::timestamp")]
    #[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
    pub data: DateTime<FixedOffset>,
    /// Registered endpoint form, e.g. `/v1/car/{codigo}`.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub endpoint: EndpointRegistrado,
    /// The looked-up key.
    #[serde(default)]
    pub chave_consulta: Option<String>,
    /// HTTP status of the answer.
    pub status_http: u16,
    /// True when the lookup was charged.
    pub cobrado: bool,
    /// BRL charged (0 when not charged).
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_cobrado: Decimal,
    /// Balance before, BRL.
    #[serde(default, with = "rust_decimal::serde::float_option")]
    pub saldo_antes: Option<Decimal>,
    /// Balance after, BRL.
    #[serde(default, with = "rust_decimal::serde::float_option")]
    pub saldo_depois: Option<Decimal>,
}

/// HistoricoResponse: a page of `GET /v1/historico`, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct HistoricoResponse {
    /// Always true.
    pub success: bool,
    /// 1-based page number.
    pub page: u32,
    /// Page size (at most 100).
    pub size: u32,
    /// Items matching the filters, over all pages.
    pub total: u64,
    /// Number of pages.
    pub total_paginas: u32,
    /// The items of this page.
    pub itens: Vec<ConsumoItem>,
}

/// LimitesResponse: `GET` and `PUT /v1/limites`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LimitesResponse {
    /// Always true.
    pub success: bool,
    /// A message in Portuguese.
    pub message: String,
    /// Daily limit of charged requests; `None` = unlimited.
    #[serde(default)]
    pub limite_diario_requisicoes: Option<u32>,
    /// Monthly spending ceiling in BRL; `None` = unlimited.
    #[serde(default, with = "rust_decimal::serde::float_option")]
    pub limite_mensal_reais: Option<Decimal>,
}

/// The body of `PUT /v1/limites`, with the contract's merge-patch rules per field:
/// `None` keeps the current value (field omitted), `Some(None)` or `Some(Some(0))` removes the
/// limit (sent as `null`), `Some(Some(n))` sets it. Daily: 0 to 100000 charged requests per day;
/// monthly: 0 to 1000000 BRL. Out of range: 400 `LIMITE_INVALIDO`. At least one field is required.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LimitesUpdate {
    /// Daily limit of charged requests.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "double_option"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>, nullable))]
    pub limite_diario_requisicoes: Option<Option<u32>>,
    /// Monthly spending ceiling in BRL.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "ser_money_patch",
        deserialize_with = "de_money_patch"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<f64>, nullable))]
    pub limite_mensal_reais: Option<Option<Decimal>>,
}

fn double_option<'de, T: Deserialize<'de>, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

fn ser_money_patch<S: serde::Serializer>(
    v: &Option<Option<Decimal>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    rust_decimal::serde::float_option::serialize(&v.flatten(), s)
}

fn de_money_patch<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Option<Decimal>>, D::Error> {
    rust_decimal::serde::float_option::deserialize(d).map(Some)
}

/// One row of [`UsoResponse`]: an endpoint's use over the period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsoItem {
    /// Registered endpoint form, e.g. `/v1/car/{codigo}`.
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub endpoint: EndpointRegistrado,
    /// Number of lookups.
    pub quantidade: u64,
    /// BRL charged.
    #[serde(with = "rust_decimal::serde::float")]
    pub valor_total: Decimal,
}

/// UsoResponse: `GET /v1/uso`, aggregates per endpoint over the last 30 days.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct UsoResponse {
    /// Always true.
    pub success: bool,
    /// Length of the period in days (30).
    pub periodo_dias: u32,
    /// One row per endpoint used.
    pub itens: Vec<UsoItem>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limites_update_merge_patch_wire_forms() {
        let keep = LimitesUpdate::default();
        assert_eq!(serde_json::to_string(&keep).unwrap(), "{}");
        let clear = LimitesUpdate {
            limite_diario_requisicoes: Some(None),
            limite_mensal_reais: Some(None),
        };
        assert_eq!(
            serde_json::to_string(&clear).unwrap(),
            r#"{"limiteDiarioRequisicoes":null,"limiteMensalReais":null}"#
        );
        let set = LimitesUpdate {
            limite_diario_requisicoes: Some(Some(50)),
            limite_mensal_reais: Some(Some(Decimal::new(2505, 1))),
        };
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            r#"{"limiteDiarioRequisicoes":50,"limiteMensalReais":250.5}"#
        );
        let back: LimitesUpdate = serde_json::from_str(r#"{"limiteMensalReais":null}"#).unwrap();
        assert_eq!(
            back,
            LimitesUpdate {
                limite_diario_requisicoes: None,
                limite_mensal_reais: Some(None)
            }
        );
    }

    #[test]
    fn price_tables() {
        assert_eq!(Precos::ATUAIS.car_completo.to_string(), "2.30");
        assert_eq!(Precos::LEGADOS.recibo.to_string(), "10.00");
        let j = serde_json::to_string(&Precos::ATUAIS).unwrap();
        assert_eq!(
            j,
            r#"{"carBasico":1.0,"carCompleto":2.3,"proprietario":2.6,"recibo":11.0}"#
        );
    }
}
