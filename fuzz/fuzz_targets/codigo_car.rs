//! `CodigoCar::parse` on any string: no panic; an accepted code is a fixed point of parsing,
//! survives the dotted receipt form, lower case and a JSON round trip.
#![no_main]

use carapi_sdk::{CodigoCar, sandbox};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    let Ok(c) = CodigoCar::parse(s) else {
        return;
    };
    let text = c.as_str();
    assert_eq!(text, carapi_fuzz::normalise_codigo(s));
    assert_eq!(text.len(), 43, "{text}");
    assert!(text.is_ascii(), "{text}");
    assert_eq!(CodigoCar::parse(text).expect("normalised code parses"), c);
    assert_eq!(CodigoCar::parse(c.to_string()).expect("display parses"), c);
    assert_eq!(
        CodigoCar::parse(text.to_lowercase()).expect("lower case"),
        c
    );
    assert_eq!(c.is_sandbox(), sandbox::is_codigo_car(text));
    let ibge = c.municipio_ibge().expect("7 digits after the UF");
    let dotted = format!("{}-{:07}-{}", c.uf(), ibge, c.hash_dotted());
    assert_eq!(CodigoCar::parse(&dotted).expect("dotted form parses"), c);
    let json = serde_json::to_string(&c).expect("serialise");
    assert_eq!(
        serde_json::from_str::<CodigoCar>(&json).expect("deserialise"),
        c
    );
});
