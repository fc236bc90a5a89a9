//! The account's prices as last seen (`precos` of `GET /v1/saldo`, contract "Prices"), kept in
//! the data directory per server and key, so that a charged lookup on a terminal can say what it
//! cost (`cobrado R$ 1,00`) without a request of its own.
//!
//! Written whenever the CLI reads the balance anyway (`carapi saldo`, the cost step of `lote`).
//! The file is named by a hash of the base URL and the key (the key itself is not stored):
//! `<data dir>/precos/<16 hex>.json`.

use std::path::PathBuf;

use carapi_sdk::Precos;

use crate::config::Paths;

/// The cache file of the account behind `chave` at `base_url`.
pub fn caminho(paths: &Paths, base_url: &str, chave: &str) -> PathBuf {
    paths
        .data_dir
        .join("precos")
        .join(format!("{:016x}.json", fnv1a(&[base_url, "\n", chave])))
}

/// The prices last seen for this account, if any.
pub fn ler(paths: &Paths, base_url: &str, chave: &str) -> Option<Precos> {
    let bytes = std::fs::read(caminho(paths, base_url, chave)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Remembers the prices (best effort: a read-only data directory only loses the cost line).
pub fn gravar(paths: &Paths, base_url: &str, chave: &str, precos: &Precos) {
    let p = caminho(paths, base_url, chave);
    if let (Some(dir), Ok(json)) = (p.parent(), serde_json::to_vec(precos)) {
        let _ = crate::config::create_private_dir(dir);
        let _ = crate::config::write_private(&p, &json);
    }
}

/// 64-bit FNV-1a: a stable file name (std's hasher may change between Rust versions).
fn fnv1a(partes: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in partes.iter().flat_map(|p| p.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_per_account() {
        let dir = tempfile::tempdir().unwrap();
        let paths = Paths {
            config_dir: dir.path().join("c"),
            data_dir: dir.path().join("d"),
        };
        let p = Precos {
            car_basico: "1.00".parse().unwrap(),
            car_completo: "2.30".parse().unwrap(),
            proprietario: "2.60".parse().unwrap(),
            recibo: "11.00".parse().unwrap(),
        };
        assert_eq!(ler(&paths, "http://a", "k1"), None);
        gravar(&paths, "http://a", "k1", &p);
        assert_eq!(ler(&paths, "http://a", "k1"), Some(p));
        assert_eq!(ler(&paths, "http://a", "k2"), None);
        assert_ne!(
            caminho(&paths, "http://a", "k1"),
            caminho(&paths, "http://b", "k1")
        );
    }
}
