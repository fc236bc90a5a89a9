//! Say the truth, help the next step: a server that is not a carapi API, `--busca` with the
//! forms the CLI prints, `login --url-base`, and the small things a person notices.

use std::io::{Read, Write};

use crate::harness::*;

/// An HTTP server that answers every request with `status` and an HTML page (what a wrong base
/// URL reaches: another site, a proxy); its base URL.
fn html_server(status: u16) -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let body = "<!DOCTYPE HTML><html><body><h1>Not Found</h1></body></html>";
            let _ = write!(
                c,
                "HTTP/1.1 {status} X\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn a_server_that_is_not_the_api_is_named_exit_7() {
    let s = TestServer::new();
    for status in [404, 200, 500] {
        let url = html_server(status);
        let o = s
            .cmd()
            .env("CARAPI_BASE_URL", &url)
            .arg("saldo")
            .output()
            .unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(7), "{status}: {err}");
        assert!(
            err.contains(&format!("o servidor em {url}")) && err.contains("não segue o contrato"),
            "{status}: {err}"
        );
        assert!(!err.contains("DOCTYPE"), "{err}");
        assert!(!err.contains("confira o código CAR"), "{err}");
    }
}

#[test]
fn login_with_base_url_saves_it_for_the_next_command() {
    let s = TestServer::new();
    let o = s
        .cmd_without_credentials()
        .args(["login", "--chave-stdin", "--url-base", &s.base_url])
        .write_stdin(format!("{}\n", s.conta.api_key))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("config.toml"), "{}", stderr(&o));
    let o = s
        .cmd_without_credentials()
        .args(["saldo", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn historico_busca_finds_the_masked_document_proprietario_prints() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["proprietario", "38521139039", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for busca in ["385.211.390-39", "38521139039"] {
        let o = s
            .cmd()
            .args(["historico", "--busca", busca, "-o", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["itens"].as_array().unwrap().len(), 1, "{busca}: {v}");
    }
}

#[test]
fn amount_errors_name_what_is_wrong_with_the_input() {
    let s = TestServer::new();
    for (valor, expected) in [
        ("0,001", "3 casas decimais"),
        ("12,345", "12.345,00"),
        ("-5", "valor negativo"),
        ("1.500", "1.500,00"),
    ] {
        let o = s
            .cmd()
            .args(["limites", "set", "--mensal", valor])
            .output()
            .unwrap();
        assert_error(&o, 2, "USO");
        let err = stderr(&o);
        assert!(err.contains(expected), "{valor}: {err}");
        assert!(!err.contains("argumento inesperado"), "{valor}: {err}");
        if valor != "1.500" {
            assert!(!err.contains("mil e quinhentos"), "{valor}: {err}");
        }
    }
    let o = s.cmd().args(["recarga", "criar", "-5"]).output().unwrap();
    assert_error(&o, 2, "USO");
    assert!(stderr(&o).contains("valor negativo"), "{}", stderr(&o));
}

#[test]
fn csv_is_the_analysts_and_csv_cru_the_machines() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["car", CODES[0], "-o", "csv"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("\u{feff}Código CAR;"),
        "titled as the table: {out}"
    );
    let mut rd = csv::ReaderBuilder::new()
        .delimiter(b';')
        .from_reader(&o.stdout[3..]);
    let h = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    let col = |n: &str| &row[h.iter().position(|x| x == n).unwrap()];
    assert!(col("Data da consulta").as_bytes()[2] == b'/', "{out}");
    let cache = col("Da base consolidada (cache)");
    assert!(cache == "sim" || cache == "não", "{out}");

    let o = s.cmd().args(["historico", "-o", "csv"]).output().unwrap();
    let out = stdout(&o);
    assert!(out.starts_with("\u{feff}Data;Endpoint;"), "{out}");
    assert!(out.contains(";1,00;"), "decimal comma: {out}");

    let o = s
        .cmd()
        .args(["historico", "-o", "csv-cru"])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(out.starts_with("data,endpoint,"), "{out}");
    assert!(out.contains(",1.00,"), "{out}");

    let o = s.cmd().args(["car", "--help"]).output().unwrap();
    let help = stdout(&o);
    assert!(
        help.contains("csv-cru") && help.contains("vírgula decimal"),
        "{help}"
    );
}

#[test]
fn por_pagina_above_100_says_it_was_reduced() {
    let s = TestServer::new();
    for cmd in ["historico", "recargas"] {
        let o = s
            .cmd()
            .args([cmd, "--por-pagina", "500", "-o", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("--por-pagina 500 reduzido para 100"),
            "{cmd}: {}",
            stderr(&o)
        );
    }
}

#[cfg(unix)]
#[test]
fn recibo_abrir_without_a_viewer_says_so() {
    let s = TestServer::new();
    let empty = s.work_dir().join("sem-programas");
    std::fs::create_dir(&empty).unwrap();
    let o = s
        .cmd()
        .env("PATH", &empty)
        .args(["recibo", CODES[0], "--abrir"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("aviso: não foi possível abrir") && err.contains("xdg-open"),
        "{err}"
    );
}

/// `-o csv-cru` is what its help promises: a decimal point, ISO 8601 dates, decimal degrees
/// (the registry's `9,8043`, `14/05/2019` and DMS stay in the table and `-o csv`).
#[test]
fn csv_cru_has_decimal_points_iso_dates_and_decimal_degrees() {
    // A bundled record with a position (its polygon's centroid).
    const MAPPED: &str = "DF-5300108-0000AE7221F4458582BE077E36495213";
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["car", MAPPED, "-o", "csv-cru"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let mut rd = csv::Reader::from_reader(out.as_bytes());
    let h = rd.headers().unwrap().clone();
    let row = rd.records().next().unwrap().unwrap();
    let col = |n: &str| row[h.iter().position(|x| x == n).unwrap()].to_owned();
    let area = col("areaTotalHa");
    assert!(area.parse::<f64>().is_ok() && !area.contains(','), "{out}");
    for c in ["latitude", "longitude"] {
        let v: f64 = col(c).parse().unwrap_or_else(|_| panic!("{c}: {out}"));
        assert!(v < 0.0, "south and west: {out}");
    }
    let registered = col("dataCadastro");
    assert!(
        chrono::DateTime::parse_from_rfc3339(&registered).is_ok(),
        "ISO 8601: {registered}"
    );
    let matricula = col("matriculaData");
    assert!(
        matricula.is_empty()
            || chrono::NaiveDate::parse_from_str(&matricula, "%Y-%m-%d").is_ok()
            || chrono::DateTime::parse_from_rfc3339(&matricula).is_ok(),
        "ISO 8601: {matricula}"
    );
    // The analyst's CSV: the same numbers with a decimal comma, dates as dd/mm/aaaa.
    let o = s.cmd().args(["car", MAPPED, "-o", "csv"]).output().unwrap();
    let text = stdout(&o);
    assert!(text.contains(&area.replace('.', ",")), "{text}");
}

/// `carapi lote --saida`'s help lists every format it writes.
#[test]
fn saida_help_lists_every_format() {
    let s = TestServer::new();
    let o = s.cmd().args(["lote", "--ajuda"]).output().unwrap();
    let help = stdout(&o);
    let output_help = help
        .split("--saida")
        .nth(1)
        .unwrap_or_default()
        .split("\n  -")
        .next()
        .unwrap_or_default()
        .to_owned();
    for ext in [".jsonl", ".csv", ".xlsx", ".geojson"] {
        assert!(output_help.contains(ext), "{ext}: {output_help}");
    }
}
