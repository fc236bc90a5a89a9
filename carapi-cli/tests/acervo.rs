//! The archive of paid answers in the CLI: `car`/`proprietario`/`recibo`/`lote` reuse what was
//! bought, `carapi acervo listar|titular|expurgar|verificar|exportar`, the purpose and legal
//! basis refused before any request when missing.

use crate::harness::*;

/// A bundled record with a receipt and owners: its code and its first owner's bare document.
fn record_with_owner() -> (String, String) {
    let i = carapi_service::dados::bundled()
        .into_iter()
        .find(|i| i.tem_recibo && !i.proprietarios.is_empty())
        .expect("a bundled record with a receipt and owners");
    (
        i.codigo_car.to_string(),
        i.proprietarios[0].documento.to_string(),
    )
}

/// A server with the archive configured (`padrao`), the purpose and legal basis given in
/// `config.toml`.
fn with_archive() -> TestServer {
    let s = TestServer::new();
    for (k, v) in [
        ("acervo", "padrao"),
        ("finalidade", "due diligence de fornecedores"),
        ("base-legal", "interesse-legitimo"),
    ] {
        let o = s.cmd().args(["config", "definir", k, v]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    s
}

fn archive_file(s: &TestServer) -> std::path::PathBuf {
    s.dir.path().join("data").join("acervo.sqlite3")
}

#[test]
fn a_second_lookup_is_answered_from_the_archive_without_a_charge() {
    let s = with_archive();
    let o = s
        .cmd()
        .args(["-o", "json", "car", CODES[0]])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let first: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(first["origem"], "api");
    assert_eq!(s.saldo(), dec("99.00"));

    let o = s
        .cmd()
        .args(["-o", "json", "car", CODES[0]])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let second: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(second["origem"], "acervo");
    assert_eq!(second["compradoEm"], first["compradoEm"]);
    assert_eq!(second["dados"], first["dados"]);
    assert!(
        stderr(&o).contains("do acervo, sem cobrança"),
        "{}",
        stderr(&o)
    );
    assert_eq!(s.saldo(), dec("99.00"), "no charge");
    assert_eq!(s.charged().len(), 1, "one lookup reached the server");

    // --comprar buys anyway (and keeps the new answer).
    let o = s
        .cmd()
        .args(["car", CODES[0], "--comprar"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.saldo(), dec("98.00"));
    // --idade-maxima shorter than the answer's age buys again.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let o = s
        .cmd()
        .args(["car", CODES[0], "--idade-maxima", "1s"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.saldo(), dec("97.00"));

    let o = s
        .cmd()
        .args(["-o", "json", "acervo", "listar"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 3);
    assert_eq!(v[0]["legal_basis"], "interesse-legitimo");
}

#[test]
fn a_missing_purpose_or_legal_basis_is_refused_before_any_request() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["config", "definir", "acervo", "padrao"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = s.cmd().args(["car", CODES[0]]).output().unwrap();
    assert_error(&o, 2, "SEM_FINALIDADE");
    assert!(stderr(&o).contains("--finalidade"), "{}", stderr(&o));
    let o = s
        .cmd()
        .args(["car", CODES[0], "--finalidade", "crédito"])
        .output()
        .unwrap();
    assert_error(&o, 2, "SEM_BASE_LEGAL");
    assert!(stderr(&o).contains("--base-legal"), "{}", stderr(&o));
    let o = s
        .cmd()
        .args([
            "car",
            CODES[0],
            "--finalidade",
            "crédito",
            "--base-legal",
            "palpite",
        ])
        .output()
        .unwrap();
    assert_error(&o, 2, "BASE_LEGAL_INVALIDA");
    assert_eq!(s.saldo(), dec("100"), "nothing was sent");
    let o = s
        .cmd()
        .args([
            "car",
            CODES[0],
            "--finalidade",
            "crédito",
            "--base-legal",
            "protecao-credito",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn titular_expurgar_and_verificar() {
    let s = with_archive();
    let (codigo, doc) = record_with_owner();
    for args in [
        vec!["car", codigo.as_str()],
        vec!["car", codigo.as_str(), "--completo"],
        vec!["proprietario", doc.as_str()],
        vec!["recibo", codigo.as_str()],
    ] {
        let o = s.cmd().args(&args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    let o = s.cmd().args(["acervo", "verificar"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let head = stdout(&o).trim().trim_start_matches("cabeça: ").to_owned();
    assert!(head.starts_with("4:"), "{head}");

    let o = s
        .cmd()
        .args(["-o", "json", "acervo", "titular", &doc])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ops: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["operation"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["car_completo", "proprietario", "recibo"], "{v}");

    // Asks first: without a terminal and without --sim nothing is removed.
    let o = s
        .cmd()
        .args(["acervo", "expurgar", "--documento", &doc])
        .output()
        .unwrap();
    assert_error(&o, 2, "CONFIRMACAO");
    let o = s
        .cmd()
        .args(["acervo", "expurgar", "--documento", &doc, "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("3 entrada(s) expurgada(s)"),
        "{}",
        stderr(&o)
    );
    let o = s
        .cmd()
        .args(["-o", "json", "acervo", "titular", &doc])
        .output()
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap(),
        serde_json::json!([])
    );
    let o = s
        .cmd()
        .args(["acervo", "verificar", "--cabeca", &head])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "the chain still verifies after the purge: {}",
        stderr(&o)
    );

    let o = s.cmd().args(["acervo", "exportar"]).output().unwrap();
    let csv = stdout(&o);
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.lines().next().unwrap().starts_with("seq,operation"));

    // One byte changed: verificar exits 1.
    let db = rusqlite::Connection::open(archive_file(&s)).unwrap();
    db.execute("UPDATE entries SET purpose = 'outra' WHERE seq = 1", [])
        .unwrap();
    let o = s.cmd().args(["acervo", "verificar"]).output().unwrap();
    assert_error(&o, 1, "ACERVO_ADULTERADO");
    assert!(
        stderr(&o).contains("entrada 1: registro alterado"),
        "{}",
        stderr(&o)
    );
    db.execute(
        "UPDATE entries SET purpose = 'due diligence de fornecedores' WHERE seq = 1",
        [],
    )
    .unwrap();
    // The newest entry deleted: consistent alone, not against the kept head.
    db.execute("DELETE FROM entries WHERE seq = 4", []).unwrap();
    let o = s.cmd().args(["acervo", "verificar"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s
        .cmd()
        .args(["acervo", "verificar", "--cabeca", &head])
        .output()
        .unwrap();
    assert_error(&o, 1, "ACERVO_ADULTERADO");
}

#[test]
fn lote_preview_counts_archived_answers_as_free() {
    let s = with_archive();
    for c in &CODES[..2] {
        let o = s.cmd().args(["car", c]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(s.saldo(), dec("98.00"));
    let mut text = String::from("codigo_car\n");
    for c in &CODES[..3] {
        text.push_str(c);
        text.push('\n');
    }
    let input = write_file(&s.work_dir(), "entrada.csv", &text);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&input)
        .args(["--saida", "r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("3 códigos: 2 no acervo, 1 a comprar: R$ 1,00"),
        "{err}"
    );
    assert_eq!(s.saldo(), dec("97.00"), "only the third was bought");
}

/// With the archive configured, `lote`'s files say where each row came from (`origem`) and when
/// it was bought (`compradoEm`): CSV, XLSX and GeoJSON; an answer from the archive is not
/// counted as charged.
#[test]
fn lote_outputs_have_origin_columns_with_the_archive() {
    use calamine::{Data, Reader, Xlsx, open_workbook};
    let s = with_archive();
    let list = write_file(
        &s.work_dir(),
        "lista.txt",
        &format!("{}\n{}\n", CODES[0], CODES[1]),
    );
    let run = |out: &str| {
        let o = s
            .cmd()
            .args(["lote", "car"])
            .arg(&list)
            .args(["--saida", out, "--sim"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let csv_rows = |name: &str| -> Vec<Vec<String>> {
        let text = std::fs::read_to_string(s.work_dir().join(name)).unwrap();
        text.trim_start_matches('\u{feff}')
            .lines()
            .map(|l| l.split(';').map(str::to_owned).collect())
            .collect()
    };
    // Bought now: origem api.
    run("primeira.csv");
    assert_eq!(s.saldo(), dec("98.00"));
    let first = csv_rows("primeira.csv");
    let col = |n: &str| first[0].iter().position(|c| c == n).unwrap();
    let (origem, comprado, cobrado) = (col("origem"), col("compradoEm"), col("cobrado"));
    assert!(
        first[1..]
            .iter()
            .all(|r| r[origem] == "api" && r[cobrado] == "sim"),
        "{first:?}"
    );
    assert!(
        first[1..].iter().all(|r| !r[comprado].is_empty()),
        "{first:?}"
    );

    // From the archive: origem acervo, the same purchase instant, not charged.
    run("segunda.csv");
    run("segunda.xlsx");
    run("segunda.geojson");
    assert_eq!(s.saldo(), dec("98.00"), "nothing bought again");
    let second = csv_rows("segunda.csv");
    assert_eq!(second[0], first[0], "same columns");
    for (a, b) in first[1..].iter().zip(&second[1..]) {
        assert_eq!(b[origem], "acervo");
        assert_eq!(b[cobrado], "não");
        assert_eq!(b[comprado], a[comprado], "when it was bought, not now");
    }
    let mut wb: Xlsx<_> = open_workbook(s.work_dir().join("segunda.xlsx")).unwrap();
    let r = wb.worksheet_range("Resultados").unwrap();
    let lines: Vec<&[Data]> = r.rows().collect();
    let headers: Vec<String> = lines[0].iter().map(ToString::to_string).collect();
    let x = |n: &str| headers.iter().position(|c| c == n).unwrap();
    for l in &lines[1..] {
        assert_eq!(l[x("origem")].to_string(), "acervo");
        assert!(
            matches!(l[x("compradoEm")], Data::DateTime(_)),
            "{:?}",
            l[x("compradoEm")]
        );
    }
    let g: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(s.work_dir().join("segunda.geojson")).unwrap(),
    )
    .unwrap();
    for f in g["features"].as_array().unwrap() {
        assert_eq!(f["properties"]["origem"], "acervo");
        assert!(f["properties"]["compradoEm"].is_string(), "{f}");
    }
}

/// Without the archive, `lote`'s files have no origin columns.
#[test]
fn lote_outputs_have_no_origin_columns_without_the_archive() {
    let s = TestServer::new();
    let list = write_file(&s.work_dir(), "lista.txt", &format!("{}\n", CODES[0]));
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&list)
        .args(["--saida", "r.csv", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(s.work_dir().join("r.csv")).unwrap();
    let header = text.lines().next().unwrap();
    assert!(
        !header.contains("origem") && !header.contains("compradoEm"),
        "{header}"
    );
}
