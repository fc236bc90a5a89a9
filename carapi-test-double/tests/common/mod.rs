//! What the archive's test binaries (`archive.rs`, `archive_postgres.rs`) share.

use carapi_sdk::CpfCnpj;
use carapi_test_double::dados;

/// A bundled record with a receipt and at least one owner: its code and its first owner.
pub fn record_with_owner() -> (String, CpfCnpj) {
    let i = dados::bundled()
        .into_iter()
        .find(|i| i.tem_recibo && !i.proprietarios.is_empty())
        .expect("a bundled record with a receipt and owners");
    let doc = CpfCnpj::parse(&i.proprietarios[0].documento).expect("valid");
    (i.codigo_car.to_string(), doc)
}
