//! `dms::parse` on any string: no panic; an accepted coordinate formats (`dms::format`) to a
//! string that parses back within half a hundredth of a second, and that form is a fixed point.
#![no_main]

use carapi_sdk::domain::dms::{self, Axis};
use libfuzzer_sys::fuzz_target;
use rust_decimal::Decimal;

fuzz_target!(|s: &str| {
    let Ok(d) = dms::parse(s) else {
        return;
    };
    assert!(d.scale() <= 8, "{d}");
    let hemi = s
        .trim()
        .chars()
        .last()
        .expect("non-empty")
        .to_ascii_uppercase();
    let eixo = if matches!(hemi, 'N' | 'S') {
        Axis::Latitude
    } else {
        Axis::Longitude
    };
    let text = dms::format(d, eixo);
    let back = dms::parse(&text).unwrap_or_else(|e| panic!("{s:?} -> {d} -> {text:?}: {e}"));
    // Half a hundredth of a second is 1/720000 degree (< 1.39e-6); parse rounds to 8 places.
    assert!(
        (back - d).abs() <= Decimal::new(14, 7),
        "{s:?} -> {d} -> {text:?} -> {back}"
    );
    let again = dms::parse(&dms::format(back, eixo)).expect("formatted again");
    assert_eq!(again, back, "{text:?}");
});
