//! Prices and bonus in centavos, from the SDK's tables (the one copy in the workspace:
//! [`carapi_sdk::Precos::ATUAIS`], [`carapi_sdk::Precos::LEGADOS`], [`carapi_sdk::FAIXAS_BONUS`];
//! contract, "Prices").

use carapi_sdk::{EndpointConsulta, FaixaBonus, Precos};

use super::Centavos;

/// The price table of an account: the legacy one while `legado`, else the current one
/// (contract, "Prices": a legacy account keeps its table until its first confirmed top-up).
pub(crate) fn table(legado: bool) -> Precos {
    if legado {
        Precos::LEGADOS
    } else {
        Precos::ATUAIS
    }
}

/// Price of one HTTP 200 of `endpoint` for an account on the legacy table (`legado`) or not,
/// in centavos.
pub fn preco(legado: bool, endpoint: EndpointConsulta) -> Centavos {
    // The tables hold whole centavos (checked by the unit test below).
    Centavos::from_reais(table(legado).preco(endpoint)).unwrap_or(Centavos::ZERO)
}

/// Bonus of a top-up of `valor`: (percent of its tier, bonus rounded down to the centavo).
/// Zero below the first tier (and for a negative amount).
pub(crate) fn bonus(valor: Centavos) -> (u32, Centavos) {
    let pct = carapi_sdk::percentual_bonus(valor.reais());
    (pct, Centavos::new(valor.0 * i64::from(pct) / 100))
}

/// The active bonus tiers as the contract's `faixas` list.
pub(crate) fn faixas() -> Vec<FaixaBonus> {
    carapi_sdk::faixas_bonus()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_in_centavos_and_bonus_rounded_down() {
        let cases = [
            (false, EndpointConsulta::CarBasico, 100),
            (false, EndpointConsulta::CarCompleto, 230),
            (false, EndpointConsulta::Proprietario, 260),
            (false, EndpointConsulta::Recibo, 1100),
            (true, EndpointConsulta::CarBasico, 50),
            (true, EndpointConsulta::CarCompleto, 150),
            (true, EndpointConsulta::Proprietario, 150),
            (true, EndpointConsulta::Recibo, 1000),
        ];
        for (legado, e, c) in cases {
            assert_eq!(preco(legado, e), Centavos::new(c), "{legado} {e:?}");
            assert_eq!(
                Centavos::from_reais(table(legado).preco(e)),
                Some(Centavos::new(c))
            );
        }
        let bonus_cases = [
            (-100, 0, 0),
            (0, 0, 0),
            (50_000, 0, 0),
            (99_999, 0, 0),
            (100_000, 5, 5_000),
            (100_033, 5, 5_001),
            (250_000, 8, 20_000),
            (499_999, 8, 39_999),
            (1_000_000, 10, 100_000),
            (100_000_000, 10, 10_000_000),
        ];
        for (valor, pct, b) in bonus_cases {
            assert_eq!(
                bonus(Centavos::new(valor)),
                (pct, Centavos::new(b)),
                "{valor}"
            );
        }
        assert_eq!(faixas().len(), 4);
    }
}
