//! `pix::parse` and `pix::valor` on any payload: no panic; an accepted payload is exactly the
//! canonical TLV encoding of its fields (2-digit id, 2-digit length, value). The first byte picks
//! the mode: odd = the rest gets a correct `6304` CRC appended, so the fuzzer explores the TLV
//! layout behind the checksum; even = the rest is the payload as is.
#![no_main]

use carapi_sdk::domain::pix;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let Ok(s) = std::str::from_utf8(rest) else {
        return;
    };
    let payload = if mode & 1 == 1 {
        let mut p = format!("{s}6304");
        let crc = pix::crc16(p.as_bytes());
        p.push_str(&format!("{crc:04X}"));
        p
    } else {
        s.to_owned()
    };
    let valor = pix::valor(&payload);
    let Ok(fields) = pix::parse(&payload) else {
        assert!(valor.is_err());
        return;
    };
    let mut encoded = String::with_capacity(payload.len());
    for f in &fields {
        assert_eq!(f.id.len(), 2);
        assert!(f.valor.len() <= 99);
        encoded.push_str(&format!("{}{:02}{}", f.id, f.valor.len(), f.valor));
    }
    assert_eq!(encoded, payload, "fields {fields:?}");
    let amount = fields.iter().find(|f| f.id == "54");
    assert_eq!(
        valor.is_ok(),
        amount.is_none_or(|f| f.valor.parse::<rust_decimal::Decimal>().is_ok())
    );
});
