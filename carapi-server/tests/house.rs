//! The house rules of the server library (ARCHITECTURE.md), read from its sources: the HTTP
//! layer names no database driver, nothing silences missing docs, the key of a lookup is parsed
//! in one place, `Retry-After` is computed by the money core only, and every PostgreSQL-only
//! test is gated so that it shows as ignored without `DATABASE_URL`.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).expect("source folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The files under `dir` whose text holds one of `needles`, as `file: needle`.
fn holding(dir: &Path, needles: &[&str]) -> Vec<String> {
    rust_files(dir)
        .into_iter()
        .flat_map(|f| {
            let text = fs::read_to_string(&f).expect("source file");
            needles
                .iter()
                .filter(|n| text.contains(**n))
                .map(|n| format!("{}: {n}", f.display()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn the_http_layer_names_no_database_driver() {
    let http = workspace().join("carapi-service/src/http");
    let found = holding(&http, &["sqlx::", "rusqlite::", "PoolTimedOut"]);
    assert!(
        found.is_empty(),
        "the store port says what happened: {found:#?}"
    );
}

#[test]
fn no_crate_silences_missing_docs() {
    let root = workspace();
    let found: Vec<String> = [
        "carapi-service",
        "carapi-test-double",
        "carapi-loader",
        "carapi-server",
    ]
    .iter()
    .flat_map(|c| holding(&root.join(c).join("src"), &["allow(missing_docs)"]))
    .collect();
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn a_lookup_key_is_parsed_once_and_retry_after_comes_from_the_plan() {
    let src = workspace().join("carapi-service/src");
    let parse = holding(&src.join("http"), &["CodigoCar::parse", "CpfCnpj::parse"]);
    assert!(
        parse.is_empty(),
        "the key is parsed by flow::lookup: {parse:#?}"
    );
    let espera = holding(&src.join("http"), &["cobranca::espera", "espera("]);
    assert!(espera.is_empty(), "Retry-After is the plan's: {espera:#?}");
    let parses: Vec<String> = holding(&src.join("flow"), &["CodigoCar::parse(&raw)"]);
    assert_eq!(parses.len(), 1, "one parse of the CAR code: {parses:#?}");
}

#[test]
fn postgresql_only_tests_are_gated_at_build_time() {
    let tests = workspace().join("carapi-server/tests");
    let mut ungated = Vec::new();
    for f in rust_files(&tests) {
        let text = fs::read_to_string(&f).expect("test file");
        // A test that reads DATABASE_URL (or asks for a PostgreSQL test database) and returns
        // early without it would count as passed.
        let reads = text.contains("\"DATABASE_URL\"") || text.contains("BancoTeste::create");
        let early = reads && text.contains("return;");
        if early && !text.contains("carapi_pg") && !f.ends_with("house.rs") {
            ungated.push(f.display().to_string());
        }
    }
    assert!(
        ungated.is_empty(),
        "gate with cfg_attr(not(carapi_pg), ignore): {ungated:#?}"
    );
}
