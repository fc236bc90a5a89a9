//! `br::parse_data` on any string: no panic; an accepted date formats (`br::format_data`) to a
//! string that parses back to the same instant.
#![no_main]

use carapi_sdk::domain::br;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|s: &str| {
    let Ok(dt) = br::parse_data(s) else {
        return;
    };
    let text = br::format_data(dt);
    let back = br::parse_data(&text).unwrap_or_else(|e| panic!("{s:?} -> {dt} -> {text:?}: {e}"));
    assert_eq!(back, dt, "{s:?} -> {text:?}");
    assert_eq!(br::format_data(back), text);
});
