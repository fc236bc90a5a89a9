//! The money rules that are not storage: price tables per endpoint, top-up bonus tiers, the
//! minimum top-up, and the Brasília calendar used by the daily and monthly limits.
//!
//! Bonus tiers (the contract lists tiers without fixing them; these are this server's choice):
//!
//! | Amount paid (BRL)      | Bonus |
//! |------------------------|-------|
//! | 500.00 to 999.99       | 0 %   |
//! | 1,000.00 to 2,499.99   | 5 %   |
//! | 2,500.00 to 4,999.99   | 8 %   |
//! | 5,000.00 and above     | 10 %  |
//!
//! The bonus is rounded down to the centavo. A top-up above [`VALOR_MAXIMO`] is refused as
//! `VALOR_INVALIDO` (a sanity ceiling of this server, equal to the monthly-limit ceiling).

use carapi_sdk::{EndpointConsulta, FaixaBonus, Precos};
use chrono::{DateTime, Datelike, NaiveDate, Utc};
use chrono_tz::America::Sao_Paulo;
use rust_decimal::Decimal;

use crate::money::Centavos;
use crate::store::Patch;

/// Minimum top-up: 500 BRL (contract, "Limits").
pub const VALOR_MINIMO: Centavos = Centavos(50_000);
/// Maximum top-up accepted by this server: 1,000,000 BRL.
pub const VALOR_MAXIMO: Centavos = Centavos(100_000_000);
/// PIX reuse window, minutes (contract, "Limits").
pub const JANELA_REAPROVEITAMENTO_MIN: i64 = 10;
/// Usage period of `GET /v1/uso`, days.
pub const PERIODO_USO_DIAS: u32 = 30;
/// Ceiling of items of an owner lookup.
pub const LIMITE_PROPRIETARIO: u32 = 200;
/// Highest daily request limit accepted by `PUT /v1/limites`.
pub const LIMITE_DIARIO_MAXIMO: u32 = 100_000;
/// Highest monthly spending limit accepted by `PUT /v1/limites`: 1,000,000 BRL.
pub const LIMITE_MENSAL_MAXIMO: Centavos = Centavos(100_000_000);

/// The contract's range check of `PUT /v1/limites` (docs/contrato.md, "Limits": daily 0 to
/// 100000 charged requests, monthly 0 to 1000000 BRL; 0 or `null` removes a limit), as
/// merge-patches for the store: `None` keeps, `Some(None)` removes, `Some(Some(v))` sets.
///
/// # Errors
/// The Portuguese message of `LIMITE_INVALIDO` when a value is out of range or has fractions
/// of a centavo.
pub fn limites_do_patch(
    diario: Patch<u32>,
    mensal: Patch<Decimal>,
) -> Result<(Patch<u32>, Patch<Centavos>), String> {
    let diario = match diario {
        Some(Some(v)) if v > LIMITE_DIARIO_MAXIMO => {
            return Err(format!(
                "limiteDiarioRequisicoes deve estar entre 0 e {LIMITE_DIARIO_MAXIMO}."
            ));
        }
        Some(Some(0)) => Some(None),
        outro => outro,
    };
    let mensal = match mensal {
        None => None,
        Some(None) => Some(None),
        Some(Some(v)) => {
            let c = Centavos::from_reais(v)
                .filter(|c| v >= Decimal::ZERO && *c <= LIMITE_MENSAL_MAXIMO)
                .ok_or_else(|| {
                    "limiteMensalReais deve estar entre 0 e 1000000 (em reais, até 2 casas decimais)."
                        .to_owned()
                })?;
            Some((c.0 > 0).then_some(c))
        }
    };
    Ok((diario, mensal))
}

/// (lower bound inclusive, percent) of each tier, ascending.
const FAIXAS: [(Centavos, u32); 4] = [
    (Centavos(50_000), 0),
    (Centavos(100_000), 5),
    (Centavos(250_000), 8),
    (Centavos(500_000), 10),
];

/// The effective price table of an account (contract, "Prices").
pub fn tabela(legado: bool) -> Precos {
    if legado {
        Precos::LEGADOS
    } else {
        Precos::ATUAIS
    }
}

/// Price of one HTTP 200 of `endpoint` under `precos`, in centavos.
pub fn preco(precos: &Precos, endpoint: EndpointConsulta) -> Centavos {
    let valor = match endpoint {
        EndpointConsulta::CarBasico => precos.car_basico,
        EndpointConsulta::CarCompleto => precos.car_completo,
        EndpointConsulta::Proprietario => precos.proprietario,
        EndpointConsulta::Recibo => precos.recibo,
    };
    Centavos::from_reais(valor).unwrap_or(Centavos::ZERO)
}

/// The active bonus tiers as the contract's `FaixaBonus` list.
pub fn faixas() -> Vec<FaixaBonus> {
    FAIXAS
        .iter()
        .enumerate()
        .map(|(i, (min, pct))| FaixaBonus {
            valor_minimo: min.reais(),
            valor_maximo: FAIXAS
                .get(i + 1)
                .map(|(next, _)| (*next - Centavos(1)).reais()),
            percentual_bonus: Decimal::from(*pct),
        })
        .collect()
}

/// Bonus of a top-up of `valor`: (percent, bonus rounded down to the centavo).
pub fn bonus(valor: Centavos) -> (u32, Centavos) {
    let pct = FAIXAS
        .iter()
        .rev()
        .find(|(min, _)| valor >= *min)
        .map_or(0, |(_, p)| *p);
    (pct, Centavos(valor.0 * i64::from(pct) / 100))
}

/// The Brasília calendar day of `agora` (America/Sao_Paulo), which scopes the daily limit and
/// `usoHoje`.
pub fn dia_brasilia(agora: DateTime<Utc>) -> NaiveDate {
    agora.with_timezone(&Sao_Paulo).date_naive()
}

/// Seconds from `agora` to the next Brasília midnight (the `Retry-After` of a daily limit).
pub fn segundos_ate_amanha(agora: DateTime<Utc>) -> u64 {
    let amanha = dia_brasilia(agora)
        .succ_opt()
        .and_then(|d| d.and_hms_opt(0, 0, 0));
    segundos_ate(agora, amanha)
}

/// Seconds from `agora` to the first Brasília midnight of next month.
pub fn segundos_ate_proximo_mes(agora: DateTime<Utc>) -> u64 {
    let d = dia_brasilia(agora);
    let (y, m) = if d.month() == 12 {
        (d.year() + 1, 1)
    } else {
        (d.year(), d.month() + 1)
    };
    segundos_ate(
        agora,
        NaiveDate::from_ymd_opt(y, m, 1).and_then(|d| d.and_hms_opt(0, 0, 0)),
    )
}

fn segundos_ate(agora: DateTime<Utc>, alvo: Option<chrono::NaiveDateTime>) -> u64 {
    alvo.and_then(|a| a.and_local_timezone(Sao_Paulo).earliest())
        .map(|a| (a.with_timezone(&Utc) - agora).num_seconds().max(1) as u64)
        .unwrap_or(3600)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_and_bonus() {
        assert_eq!(bonus(Centavos(50_000)), (0, Centavos(0)));
        assert_eq!(bonus(Centavos(99_999)), (0, Centavos(0)));
        assert_eq!(bonus(Centavos(100_000)), (5, Centavos(5_000)));
        assert_eq!(bonus(Centavos(100_033)), (5, Centavos(5_001)));
        assert_eq!(bonus(Centavos(250_000)), (8, Centavos(20_000)));
        assert_eq!(bonus(Centavos(1_000_000)), (10, Centavos(100_000)));
        let f = faixas();
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].valor_maximo, Some(Decimal::new(99_999, 2)));
        assert_eq!(f[3].valor_maximo, None);
    }

    #[test]
    fn prices() {
        assert_eq!(
            preco(&tabela(false), EndpointConsulta::CarCompleto),
            Centavos(230)
        );
        assert_eq!(
            preco(&tabela(true), EndpointConsulta::Recibo),
            Centavos(1000)
        );
    }

    #[test]
    fn brasilia_day() {
        let t: DateTime<Utc> = "2026-03-01T02:30:00Z".parse().unwrap();
        assert_eq!(dia_brasilia(t).to_string(), "2026-02-28");
        assert_eq!(segundos_ate_amanha(t), 30 * 60);
        assert_eq!(segundos_ate_proximo_mes(t), 30 * 60);
    }
}
