//! Serde helpers for the contract's ISO 8601 `date-time` fields.
//!
//! Decoding accepts RFC 3339 with an offset (`2026-11-21T10:00:00Z`, `…-03:00`) and a bare local
//! time with optional fraction (`2026-11-21T10:00:00.123`), which is taken as Brasília time
//! (UTC-3 all year since 2019, docs/dominio.md "time zone"). Encoding writes RFC 3339 with the offset.

use chrono::{DateTime, FixedOffset, NaiveDateTime};
use serde::{Deserialize, Deserializer, Serializer};

/// Brasília's offset, UTC-3 (America/Sao_Paulo has had no DST since 2019-02-17).
#[must_use]
pub fn brasilia() -> FixedOffset {
    FixedOffset::west_opt(3 * 3600).expect("UTC-3 is a valid offset")
}

/// Parses an ISO 8601 date-time with or without offset (see the module docs).
#[must_use]
pub fn parse(s: &str) -> Option<DateTime<FixedOffset>> {
    DateTime::parse_from_rfc3339(s).ok().or_else(|| {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f")
            .ok()
            .and_then(|n| n.and_local_timezone(brasilia()).single())
    })
}

/// Serialises as RFC 3339 with the offset.
pub fn serialize<S: Serializer>(dt: &DateTime<FixedOffset>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&dt.to_rfc3339())
}

/// Deserialises with or without offset.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<FixedOffset>, D::Error> {
    let s = String::deserialize(d)?;
    parse(&s).ok_or_else(|| serde::de::Error::custom(format!("data-hora ISO 8601 inválida: {s:?}")))
}

/// The same for nullable fields.
pub mod option {
    use super::*;

    /// Serialises `None` as `null`.
    pub fn serialize<S: Serializer>(
        dt: &Option<DateTime<FixedOffset>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match dt {
            Some(dt) => super::serialize(dt, s),
            None => s.serialize_none(),
        }
    }

    /// Deserialises `null` (or a missing field, with `#[serde(default)]`) as `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<DateTime<FixedOffset>>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(s) => parse(&s).map(Some).ok_or_else(|| {
                serde::de::Error::custom(format!("data-hora ISO 8601 inválida: {s:?}"))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_and_without_offset() {
        let a = parse("2026-11-21T13:00:00Z").unwrap();
        let b = parse("2026-11-21T10:00:00").unwrap();
        let c = parse("2026-11-21T10:00:00.5-03:00").unwrap();
        assert_eq!(a, b);
        assert_eq!(b.offset(), &brasilia());
        assert!(c > b);
        assert!(parse("21/11/2026 10:00:00").is_none());
    }
}
