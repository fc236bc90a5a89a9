//! Sandbox recognition. A reserved CAR code decorated by the fuzzer (lower case, dots, white
//! space) is still that sandbox code; a reserved document with its mask or decorated with white
//! space is still reserved. For any string, `CodigoCar::parse` yields a sandbox code, and
//! `CpfCnpj::parse` a sandbox document, exactly when the normalised string is reserved.
#![no_main]

use carapi_sdk::{CodigoCar, CpfCnpj, sandbox};
use libfuzzer_sys::fuzz_target;

fn decorate(code: &str, deco: &[u8]) -> String {
    let mut out = String::new();
    for (i, ch) in code.chars().enumerate() {
        let b = deco.get(i).copied().unwrap_or(0);
        out.push(if b & 1 == 1 {
            ch.to_ascii_lowercase()
        } else {
            ch
        });
        if b & 2 == 2 {
            out.push('.');
        }
        if b & 4 == 4 {
            out.push(['\t', '\n', '\u{a0}', '\u{2003}'][usize::from(b >> 6)]);
        }
        if b & 8 == 8 {
            out.push(' ');
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    if let Some((&pick, deco)) = data.split_first() {
        let code = sandbox::CODIGOS_CAR[usize::from(pick) % 3];
        let decorated = decorate(code, deco);
        let c = CodigoCar::parse(&decorated).unwrap_or_else(|e| panic!("{decorated:?}: {e}"));
        assert!(c.is_sandbox() && c.as_str() == code && c.uf() == "ZZ");
        let doc = sandbox::DOCUMENTOS[usize::from(pick / 3) % 3];
        let masked = CpfCnpj::parse(doc).expect("reserved").formatted();
        let padded = decorate(&masked, deco);
        let d = CpfCnpj::parse(&padded).unwrap_or_else(|e| panic!("{padded:?}: {e}"));
        assert!(d.is_sandbox() && d.as_str() == doc);
    }
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let is_car = CodigoCar::parse(s).is_ok_and(|c| c.is_sandbox());
    assert_eq!(
        is_car,
        sandbox::is_codigo_car(&carapi_fuzz::normalise_codigo(s))
    );
    let is_doc = CpfCnpj::parse(s).is_ok_and(|d| d.is_sandbox());
    let reserved = sandbox::DOCUMENTOS.contains(&carapi_fuzz::normalise_documento(s).as_str());
    assert_eq!(is_doc, reserved);
    assert_eq!(sandbox::is_documento(s), reserved);
});
