//! What a 402 `SALDO_INSUFICIENTE` lacked: [`Client::falta`].

use rust_decimal::Decimal;

use super::{Client, Op};
use crate::{Error, ErrorCode, Result};

/// The money side of a 402 `SALDO_INSUFICIENTE` (see [`Client::falta`]). Amounts in BRL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Falta {
    /// The refused lookup, e.g. `"car_completo"` (the SDK method).
    pub operation: &'static str,
    /// Its price at the account's effective prices (`precos` of `GET /v1/saldo`).
    pub preco: Decimal,
    /// The balance now (`saldoReais`).
    pub saldo: Decimal,
    /// What the balance lacks for one such lookup: `preco - saldo`, at least zero (zero when
    /// the balance changed since the error, e.g. a top-up was confirmed).
    pub falta: Decimal,
}

impl Client {
    /// For a 402 `SALDO_INSUFICIENTE` of a lookup: its price, the balance now and the
    /// shortfall, from one `GET /v1/saldo` (free; contract, "Account endpoints"). `Ok(None)`
    /// for any other error, and for the sandbox's fixed 402 (contract, "Sandbox": it debits
    /// and lacks nothing).
    ///
    /// ```no_run
    /// # async fn f(client: carapi_sdk::Client) -> carapi_sdk::Result<()> {
    /// match client.car("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47").await {
    ///     Err(e) => {
    ///         if let Some(f) = client.falta(&e).await? {
    ///             println!("{} custa R$ {}; saldo R$ {}; faltam R$ {}", f.operation, f.preco, f.saldo, f.falta);
    ///         }
    ///     }
    ///     Ok(car) => println!("{}", car.dados.codigo_car),
    /// }
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// Those of [`Client::saldo`].
    pub async fn falta(&self, error: &Error) -> Result<Option<Falta>> {
        let Some(api) = error.api() else {
            return Ok(None);
        };
        if api.code != ErrorCode::SaldoInsuficiente || api.sandbox {
            return Ok(None);
        }
        let Some(op) = api.operation.and_then(Op::charged_by_name) else {
            return Ok(None);
        };
        let saldo = self.saldo().await?;
        let preco = op.preco(&saldo.precos);
        Ok(Some(Falta {
            operation: op.name(),
            preco,
            saldo: saldo.saldo_reais,
            falta: (preco - saldo.saldo_reais).max(Decimal::ZERO),
        }))
    }
}
