//! `CobrancaPix::payload` on any charge within its documented limits (a location URL, so ASCII,
//! of at most 77 characters; any amount, name, city and txid): the payload parses with
//! `pix::parse` (so it is ASCII with a correct CRC), is dynamic (`01` = `12`) and carries the
//! amount rounded to centavos in field `54`.
#![no_main]

use carapi_sdk::domain::pix::{self, CobrancaPix};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (String, [u8; 16], String, String, String)| {
    let (location, valor, nome, cidade, txid) = input;
    if location.len() > 77 || !location.is_ascii() {
        return;
    }
    let valor = carapi_fuzz::decimal(valor);
    let cobranca = CobrancaPix {
        location,
        valor,
        nome,
        cidade,
        txid,
    };
    let payload = cobranca.payload();
    let fields =
        pix::parse(&payload).unwrap_or_else(|e| panic!("{cobranca:?} -> {payload:?}: {e}"));
    assert_eq!(fields[1].valor, "12", "dynamic");
    assert_eq!(
        pix::valor(&payload).expect("valor"),
        Some(valor.round_dp(2))
    );
});
