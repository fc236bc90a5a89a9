//! `brl::format` and `brl::centavos` on any `Decimal`: no panic; the text is `R$ ` or `-R$ `, dot
//! thousands groups of 3 and 2 decimals, and reads back with `br::parse_decimal` to
//! `brl::centavos` of the value, which is idempotent.
#![no_main]

use carapi_sdk::domain::{br, brl};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: [u8; 16]| {
    let d = carapi_fuzz::decimal(bytes);
    let c = brl::centavos(d);
    assert_eq!(brl::centavos(c), c);
    assert!(c.scale() <= 2);
    let text = brl::format(d);
    let (negative, body) = match text.strip_prefix("-R$ ") {
        Some(body) => (true, body),
        None => (false, text.strip_prefix("R$ ").expect("R$ prefix")),
    };
    let (int, frac) = body.split_once(',').expect("decimal comma");
    assert_eq!(frac.len(), 2, "{text}");
    let groups: Vec<&str> = int.split('.').collect();
    assert!(
        groups[0].len() <= 3 && groups[1..].iter().all(|g| g.len() == 3),
        "{text}"
    );
    let value = br::parse_decimal(body).unwrap_or_else(|e| panic!("{d} -> {text:?}: {e}"));
    let value = if negative { -value } else { value };
    assert_eq!(value, c, "{d} -> {text:?}");
    assert_eq!(
        negative,
        c.is_sign_negative() && !c.is_zero(),
        "{d} -> {text:?}"
    );
});
