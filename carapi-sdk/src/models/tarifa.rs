//! The reference server's top-up bonus tiers ([`FAIXAS_BONUS`]), read by the SDK's spend
//! guard, the CLI and the reference server. The prices of the lookups are
//! [`Precos`](super::Precos), beside them in `models/precos.rs`.
//!
//! Bonus tiers: the contract
//! lists tiers without fixing them (`GET /v1/recarga/faixas` returns the active ones); these
//! are the reference server's:
//!
//! | Amount paid (BRL)      | Bonus |
//! |------------------------|-------|
//! | 500.00 to 999.99       | 0 %   |
//! | 1,000.00 to 2,499.99   | 5 %   |
//! | 2,500.00 to 4,999.99   | 8 %   |
//! | 5,000.00 and above     | 10 %  |

use super::FaixaBonus;
use rust_decimal::Decimal;

/// One bonus tier of a top-up: from `valor_minimo` BRL (inclusive) up to the next tier's
/// minimum, the bonus is `percentual` percent of the amount paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DegrauBonus {
    /// Lower bound of the tier, BRL, inclusive.
    pub valor_minimo: Decimal,
    /// Bonus in percent of the amount paid (`5` = 5 %).
    pub percentual: u32,
}

/// The reference server's bonus tiers, ascending by [`DegrauBonus::valor_minimo`] (see the
/// module docs). The first tier starts at the minimum top-up (500 BRL, contract "Limits").
pub const FAIXAS_BONUS: [DegrauBonus; 4] = [
    DegrauBonus {
        valor_minimo: Decimal::from_parts(500, 0, 0, false, 0),
        percentual: 0,
    },
    DegrauBonus {
        valor_minimo: Decimal::from_parts(1_000, 0, 0, false, 0),
        percentual: 5,
    },
    DegrauBonus {
        valor_minimo: Decimal::from_parts(2_500, 0, 0, false, 0),
        percentual: 8,
    },
    DegrauBonus {
        valor_minimo: Decimal::from_parts(5_000, 0, 0, false, 0),
        percentual: 10,
    },
];

/// The bonus percentage of a top-up of `valor` BRL under [`FAIXAS_BONUS`]: the tier whose
/// range holds `valor`, zero below the first tier.
pub fn percentual_bonus(valor: Decimal) -> u32 {
    FAIXAS_BONUS
        .iter()
        .rev()
        .find(|d| valor >= d.valor_minimo)
        .map_or(0, |d| d.percentual)
}

/// [`FAIXAS_BONUS`] as the contract's `faixas` list of `GET /v1/recarga/faixas`: each tier's
/// upper bound is one cent below the next tier's minimum; the last has none.
pub fn faixas_bonus() -> Vec<FaixaBonus> {
    let cent = Decimal::new(1, 2);
    FAIXAS_BONUS
        .iter()
        .enumerate()
        .map(|(i, d)| FaixaBonus {
            valor_minimo: d.valor_minimo,
            valor_maximo: FAIXAS_BONUS.get(i + 1).map(|p| p.valor_minimo - cent),
            percentual_bonus: Decimal::from(d.percentual),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bonus_tiers() {
        assert_eq!(percentual_bonus(Decimal::new(49_999, 2)), 0);
        assert_eq!(percentual_bonus(Decimal::new(99_999, 2)), 0);
        assert_eq!(percentual_bonus(Decimal::from(1000)), 5);
        assert_eq!(percentual_bonus(Decimal::new(499_999, 2)), 8);
        assert_eq!(percentual_bonus(Decimal::from(1_000_000)), 10);
        let f = faixas_bonus();
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].valor_maximo, Some(Decimal::new(99_999, 2)));
        assert_eq!(f[3].valor_maximo, None);
    }
}
