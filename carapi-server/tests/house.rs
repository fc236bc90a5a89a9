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
        "the key is parsed by flow::consulta: {parse:#?}"
    );
    let wait = holding(&src.join("http"), &["cobranca::espera", "espera("]);
    assert!(wait.is_empty(), "Retry-After is the plan's: {wait:#?}");
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

/// The production code of `dir` (each file up to its unit tests), without comments.
fn production_code(dir: &Path) -> Vec<(PathBuf, String)> {
    rust_files(dir)
        .into_iter()
        .map(|f| {
            let text = fs::read_to_string(&f).expect("source file");
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let code: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .map(|l| format!("{l}\n"))
                .collect();
            (f, code)
        })
        .collect()
}

#[test]
fn the_route_of_a_charged_lookup_is_written_once_in_the_sdk_table() {
    let root = workspace();
    let mut found = Vec::new();
    for krate in [
        "carapi-service",
        "carapi-test-double",
        "carapi-loader",
        "carapi-server",
        "carapi-cli",
        "carapi-py",
    ] {
        for (f, code) in production_code(&root.join(krate).join("src")) {
            for e in carapi_sdk::EndpointConsulta::ALL {
                let quoted = format!("\"{}\"", e.route());
                let wildcard = quoted.replace("{cpfCnpj}", "{*cpfCnpj}");
                if code.contains(&quoted) || code.contains(&wildcard) {
                    found.push(format!("{}: {}", f.display(), e.route()));
                }
            }
        }
    }
    // The Python package's own modules (its testing helpers' routes come from the extension).
    for f in files_ending(&root.join("carapi-py/python"), ".py") {
        let code: String = fs::read_to_string(&f)
            .expect("python module")
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            // Docstrings quote routes between backticks: what users read, not code.
            .map(|l| l.split('`').step_by(2).collect::<Vec<_>>().join(" "))
            .map(|l| format!("{l}\n"))
            .collect();
        for e in carapi_sdk::EndpointConsulta::ALL {
            if code.contains(&format!("\"{}\"", e.route())) {
                found.push(format!("{}: {}", f.display(), e.route()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "routes come from carapi_sdk::EndpointConsulta::route: {found:#?}"
    );
}

/// Files under `dir` whose names end with `suffix`, recursively.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).expect("folder").flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(files_ending(&p, suffix));
        } else if p.to_string_lossy().ends_with(suffix) {
            out.push(p);
        }
    }
    out
}
