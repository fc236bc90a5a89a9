//! API keys: generation (256 random bits), storage as SHA-256 and constant-time comparison
//! (docs/contrato.md, "Authentication"). The key itself is never stored nor logged.

use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of every key, so a leaked key is recognisable by secret scanners.
pub(crate) const PREFIX: &str = "car_";

/// A new random API key: `car_` followed by 64 hex characters (256 bits from the OS RNG).
pub fn generate_key() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{PREFIX}{}", hex::encode(bytes))
}

/// Hex SHA-256 of `chave`, the form stored and looked up.
pub fn key_hash(chave: &str) -> String {
    hex::encode(Sha256::digest(chave.as_bytes()))
}

/// True when `chave` hashes to `armazenado`, compared in constant time.
pub(crate) fn matches_expected(chave: &str, stored: &str) -> bool {
    key_hash(chave).as_bytes().ct_eq(stored.as_bytes()).into()
}

/// The token of an `Authorization: Bearer <token>` header value (scheme case-insensitive).
pub fn bearer(valor: &str) -> Option<&str> {
    let (schema, token) = valor.trim().split_once(' ')?;
    let token = token.trim();
    (schema.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_long_random_and_hashed() {
        let a = generate_key();
        let b = generate_key();
        assert_ne!(a, b);
        assert_eq!(a.len(), PREFIX.len() + 64);
        let h = key_hash(&a);
        assert_eq!(h.len(), 64);
        assert!(matches_expected(&a, &h));
        assert!(!matches_expected(&b, &h));
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
    }
}
