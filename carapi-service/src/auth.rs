//! API keys: generation (256 random bits), storage as SHA-256 and constant-time comparison
//! (docs/contrato.md, "Authentication"). The key itself is never stored nor logged.

use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of every key, so a leaked key is recognisable by secret scanners.
pub const PREFIXO: &str = "car_";

/// A new random API key: `car_` followed by 64 hex characters (256 bits from the OS RNG).
pub fn gerar_chave() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{PREFIXO}{}", hex::encode(bytes))
}

/// Hex SHA-256 of `chave`, the form stored and looked up.
pub fn hash_chave(chave: &str) -> String {
    hex::encode(Sha256::digest(chave.as_bytes()))
}

/// True when `chave` hashes to `armazenado`, compared in constant time.
pub fn confere(chave: &str, armazenado: &str) -> bool {
    hash_chave(chave)
        .as_bytes()
        .ct_eq(armazenado.as_bytes())
        .into()
}

/// The token of an `Authorization: Bearer <token>` header value (scheme case-insensitive).
pub fn bearer(valor: &str) -> Option<&str> {
    let (esquema, token) = valor.trim().split_once(' ')?;
    let token = token.trim();
    (esquema.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_long_random_and_hashed() {
        let a = gerar_chave();
        let b = gerar_chave();
        assert_ne!(a, b);
        assert_eq!(a.len(), PREFIXO.len() + 64);
        let h = hash_chave(&a);
        assert_eq!(h.len(), 64);
        assert!(confere(&a, &h));
        assert!(!confere(&b, &h));
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
    }
}
