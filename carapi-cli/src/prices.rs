//! The account's prices, kept in the CLI's state so that a charged lookup spends one request,
//! not two (the SDK otherwise reads `GET /v1/saldo` beside the first charged lookup of each
//! process to price what it spent).
//!
//! Kept only for an account on the contract's current table (`Precos::ATUAIS`): the contract
//! only ever moves an account from the legacy table to the current one ("Prices"), so a kept
//! current price can never be too low, while a kept legacy price could undercount by half after
//! a top-up made elsewhere and let `--max-custo` and `--teto` overshoot. Kept for the Brasília
//! day it was read on (a day's change reads them again), per server and key (the key's
//! fingerprint, never the key), and forgotten on a 402.
//!
//! The file is `<data dir>/precos.json`: `{"<base URL> <fingerprint>": "<aaaa-mm-dd>"}`, the
//! day each account was last seen on the current table.

use std::collections::BTreeMap;
use std::path::PathBuf;

use carapi_sdk::Precos;

use crate::config::Paths;

/// The state file.
fn file(paths: &Paths) -> PathBuf {
    paths.data_dir.join("precos.json")
}

/// The entry's name of an account (conta): its server and its key's fingerprint.
fn conta_name(base_url: &str, api_key: &str) -> String {
    format!("{base_url} {}", carapi_sdk::archive::fingerprint(api_key))
}

/// Today in Brasília, `aaaa-mm-dd`.
fn today() -> String {
    crate::format::in_brasilia(chrono::Utc::now())
        .format("%Y-%m-%d")
        .to_string()
}

fn read(paths: &Paths) -> BTreeMap<String, String> {
    std::fs::read(file(paths))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// The account's prices when it was seen on the current table today.
pub(crate) fn known(paths: &Paths, base_url: &str, api_key: &str) -> Option<Precos> {
    let day = read(paths).remove(&conta_name(base_url, api_key))?;
    (day == today()).then_some(Precos::ATUAIS)
}

/// Keeps `precos` when they are the current table (best effort: a state that cannot be
/// written costs one request next time).
pub(crate) fn remember(paths: &Paths, base_url: &str, api_key: &str, precos: &Precos) {
    if *precos != Precos::ATUAIS {
        return;
    }
    let mut all = read(paths);
    let name = conta_name(base_url, api_key);
    let day = today();
    if all.get(&name) == Some(&day) {
        return;
    }
    all.insert(name, day);
    if let Ok(bytes) = serde_json::to_vec_pretty(&all) {
        let _ = crate::config::write_private(&file(paths), &bytes);
    }
}

/// Forgets every kept price (after a 402: the next command reads them again).
pub(crate) fn forget(paths: &Paths) {
    let _ = std::fs::remove_file(file(paths));
}
