//! End-to-end tests: the reference server in-process on `127.0.0.1:0` over a temporary SQLite
//! store, driven through the SDK and through the real `carapi` binary and examples.

// A test is a scenario read top to bottom; the 80-line bound is for production functions.
#![allow(clippy::too_many_lines)]

mod cli;
mod erros;
mod examples;
mod limites;
mod operations;
mod precos;
mod proxy;
mod sandbox;
mod sdk_cancellation;
mod sdk_clock;
mod sdk_gasto;
mod sdk_logs;
mod server_process;
mod test_double;

use carapi_sdk::{ErrorCode, Precos};
use rust_decimal::Decimal;

/// A real SICAR record of the bundled data, with a receipt.
pub const CODIGO_REAL: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

/// A well-formed code that no record has.
pub const MISSING_CODIGO: &str = "DF-5300108-00000000000000000000000000000000";

/// Asserts that `result` is the API error `code`, with the HTTP status the contract pairs with it.
#[track_caller]
pub fn assert_api_error<T: std::fmt::Debug>(
    result: Result<T, carapi_sdk::Error>,
    code: ErrorCode,
) -> carapi_sdk::ApiError {
    match result {
        Err(carapi_sdk::Error::Api(e)) => {
            assert_eq!(e.code, code, "unexpected code: {e}");
            assert_eq!(Some(e.status), code.status(), "status of {code}");
            e
        }
        other => panic!("expected {code}, got {other:?}"),
    }
}

/// Current price of a basic lookup, BRL.
pub fn preco_basico() -> Decimal {
    Precos::ATUAIS.car_basico
}

/// A bundled record without a receipt (404 `RECIBO_NAO_ENCONTRADO`).
pub fn codigo_without_recibo() -> String {
    carapi_service::dados::bundled()
        .into_iter()
        .find(|i| !i.has_recibo)
        .expect("the bundled data has a record without receipt")
        .codigo_car
        .to_string()
}

/// A valid CPF that owns no CAR in the bundled data (404 `CPF_CNPJ_NAO_ENCONTRADO`).
pub fn cpf_without_cars() -> String {
    let owners: Vec<String> = carapi_service::dados::bundled()
        .iter()
        .flat_map(|i| i.proprietarios.iter().map(|p| p.documento.to_string()))
        .collect();
    (100_000_000u32..)
        .filter_map(|base| carapi_sdk::CpfCnpj::from_base(&base.to_string()))
        .map(|d| d.to_string())
        .find(|d| !owners.contains(d))
        .expect("some CPF owns nothing")
}
