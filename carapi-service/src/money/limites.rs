//! The range rules of `PUT /v1/limites` (docs/contrato.md, "Limits": daily 0 to 100000
//! charged requests, monthly 0 to 1000000 BRL; 0 or `null` removes a limit).

use rust_decimal::Decimal;

use super::Centavos;

/// Highest daily request limit accepted by `PUT /v1/limites`.
pub(crate) const LIMITE_DIARIO_MAXIMO: u32 = 100_000;
/// Highest monthly spending limit accepted by `PUT /v1/limites`: 1,000,000 BRL.
pub(crate) const LIMITE_MENSAL_MAXIMO: Centavos = Centavos::new(100_000_000);

/// Merge-patch of one limit: `None` keeps, `Some(None)` removes, `Some(Some(v))` sets.
pub type Patch<T> = Option<Option<T>>;

/// The contract's range check of `PUT /v1/limites`, as merge-patches for the store: `None`
/// keeps, `Some(None)` removes (also for 0), `Some(Some(v))` sets.
///
/// # Errors
/// The Portuguese message of `LIMITE_INVALIDO` when a value is out of range or has fractions
/// of a centavo.
pub fn limites_of_patch(
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
        other => other,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_removal() {
        assert_eq!(
            limites_of_patch(Some(Some(0)), Some(Some(Decimal::ZERO))),
            Ok((Some(None), Some(None)))
        );
        assert_eq!(
            limites_of_patch(Some(Some(5)), Some(Some(Decimal::new(1050, 2)))),
            Ok((Some(Some(5)), Some(Some(Centavos::new(1050)))))
        );
        assert_eq!(limites_of_patch(None, None), Ok((None, None)));
        assert!(limites_of_patch(Some(Some(100_001)), None).is_err());
        assert!(limites_of_patch(None, Some(Some(Decimal::new(1, 3)))).is_err());
        assert!(limites_of_patch(None, Some(Some(Decimal::from(-1)))).is_err());
        assert!(limites_of_patch(None, Some(Some(Decimal::from(1_000_001)))).is_err());
    }
}
