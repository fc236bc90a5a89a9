//! `CpfCnpj::parse` and `complete_check_digits` on any string: no panic; an accepted document is a
//! fixed point of parsing, its mask parses back, its check digits are the ones
//! `complete_check_digits` computes, and it survives a JSON round trip.
#![no_main]

use carapi_sdk::domain::{DocumentoKind, complete_check_digits};
use carapi_sdk::{CpfCnpj, sandbox};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    if let Some(full) = complete_check_digits(s) {
        let repeated = full.bytes().all(|b| b == full.as_bytes()[0]);
        match CpfCnpj::parse(&full) {
            Ok(d) => assert_eq!(d.as_str(), full),
            Err(_) => assert!(repeated, "completed {full} refused"),
        }
    }
    let Ok(d) = CpfCnpj::parse(s) else {
        return;
    };
    let bare = d.as_str();
    assert!(matches!(bare.len(), 11 | 14), "{bare}");
    assert_eq!(d.kind() == DocumentoKind::Cpf, bare.len() == 11);
    assert_eq!(CpfCnpj::parse(bare).expect("bare form parses"), d);
    assert_eq!(d.is_sandbox(), sandbox::is_documento(bare));
    assert_eq!(bare, carapi_fuzz::normalise_documento(s));
    assert_eq!(CpfCnpj::parse(d.formatted()).expect("mask parses"), d);
    assert_eq!(CpfCnpj::parse(bare.to_lowercase()).expect("lower case"), d);
    if !d.is_sandbox() {
        // Reserved documents are all one digit repeated: no mod-11 check digits.
        let base = &bare[..bare.len() - 2];
        assert_eq!(complete_check_digits(base).as_deref(), Some(bare));
    }
    let json = serde_json::to_string(&d).expect("serialise");
    assert_eq!(
        serde_json::from_str::<CpfCnpj>(&json).expect("deserialise"),
        d
    );
});
