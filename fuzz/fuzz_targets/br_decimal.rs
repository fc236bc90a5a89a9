//! `br::parse_decimal` on any string: no panic; an accepted number formats with
//! `br::format_decimal` (at its own scale and at the registry's 4 places) to a string that
//! parses back to the same value, rounded half away from zero.
#![no_main]

use carapi_sdk::domain::br;
use libfuzzer_sys::fuzz_target;
use rust_decimal::RoundingStrategy;

fuzz_target!(|s: &str| {
    let Ok(d) = br::parse_decimal(s) else {
        return;
    };
    let text = br::format_decimal(d, d.scale());
    let back = br::parse_decimal(&text).unwrap_or_else(|e| panic!("{s:?} -> {d} -> {text:?}: {e}"));
    assert_eq!(back, d, "{s:?} -> {text:?}");
    let four = br::format_decimal(d, 4);
    let back = br::parse_decimal(&four).unwrap_or_else(|e| panic!("{s:?} -> {d} -> {four:?}: {e}"));
    assert_eq!(
        back,
        d.round_dp_with_strategy(4, RoundingStrategy::MidpointAwayFromZero),
        "{s:?} -> {four:?}"
    );
    assert_eq!(br::format_decimal(back, 4), four);
});
