//! The archive of paid answers in the CLI: `car`/`proprietario`/`recibo`/`lote` reuse what was
//! bought, `carapi acervo listar|titular|expurgar|verificar|exportar`, the purpose and legal
//! basis refused before any request when missing.

use crate::harness::*;

/// A bundled record with a receipt and owners: its code and its first owner's bare document.
fn record_with_owner() -> (String, String) {
    let i = carapi_service::dados::bundled()
        .into_iter()
        .find(|i| i.has_recibo && !i.proprietarios.is_empty())
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
    assert_eq!(v[0]["baseLegal"], "interesse-legitimo");
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
        .map(|e| e["operacao"].as_str().unwrap())
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

    let o = s
        .cmd()
        .args(["acervo", "exportar", "-o", "csv-cru"])
        .output()
        .unwrap();
    let csv = stdout(&o);
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.lines().next().unwrap().starts_with("seq,operacao"));

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

/// `carapi acervo listar -o json [--conta FP]`: the entries' `seq`s.
fn listed(s: &TestServer, conta: Option<&str>) -> Vec<u64> {
    let mut args = vec!["-o", "json", "acervo", "listar"];
    if let Some(fp) = conta {
        args.extend(["--conta", fp]);
    }
    let o = s.cmd().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect()
}

/// `carapi login` with the key stored (not in the environment), from stdin.
fn login(s: &TestServer, key: &str) -> std::process::Output {
    let o = s
        .cmd_without_credentials()
        .env("CARAPI_BASE_URL", &s.base_url)
        .args(["login", "--chave-stdin"])
        .write_stdin(key.to_owned())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

/// The account's key rotated on the server (as `carapi-server conta rotacionar` does): `carapi
/// login` with the new key finds the old one refused and links the two fingerprints; listing
/// by either gives the entries bought with both.
#[test]
fn after_a_key_rotation_login_links_the_fingerprints_and_both_list_the_same_entries() {
    use carapi_service::store::{OpenMode, SqliteStore};
    let s = with_archive();
    login(&s, &s.conta.api_key);
    let stored = |args: &[&str]| {
        let o = s
            .cmd_without_credentials()
            .env("CARAPI_BASE_URL", &s.base_url)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    };
    stored(&["car", CODES[0]]);

    let new_key = carapi_service::auth::generate_key();
    let db = format!(
        "sqlite://{}",
        s.dir.path().join("servidor.sqlite3").display()
    );
    let old_client = s.client();
    s.rt.block_on(async {
        let store = SqliteStore::open(&db, OpenMode::Existing).await.unwrap();
        assert!(
            store
                .rotate_key(s.conta.conta_id, &carapi_service::auth::key_hash(&new_key))
                .await
                .unwrap()
        );
        store.close().await;
        // Running servers refuse the old key once their key cache expires.
        while old_client.saldo().await.is_ok() {
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
    });
    let o = login(&s, &new_key);
    assert!(
        stderr(&o).contains("vinculada à mesma conta"),
        "{}",
        stderr(&o)
    );
    stored(&["car", CODES[1]]);

    let (old_fp, new_fp) = (
        carapi_sdk::archive::fingerprint(&s.conta.api_key),
        carapi_sdk::archive::fingerprint(&new_key),
    );
    assert_eq!(listed(&s, None), [1, 2]);
    assert_eq!(
        listed(&s, Some(&old_fp)),
        [1, 2],
        "the old fingerprint lists both"
    );
    assert_eq!(
        listed(&s, Some(&new_fp)),
        [1, 2],
        "the new fingerprint lists both"
    );
}

/// `carapi acervo vincular` by hand: the configured key linked to an old fingerprint (and a
/// fingerprint that is not one refused); a PostgreSQL archive refused, without echoing its
/// password, by a build without the feature.
#[test]
fn vincular_links_by_hand_and_a_postgres_archive_needs_the_feature() {
    let s = with_archive();
    let o = s.cmd().args(["car", CODES[0]]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let old = "0123456789abcdef";
    assert!(listed(&s, Some(old)).is_empty());
    let o = s
        .cmd()
        .args(["acervo", "vincular", "--antiga", old])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        listed(&s, Some(old)),
        [1],
        "the old fingerprint lists the new key's entry"
    );
    let o = s
        .cmd()
        .args(["acervo", "vincular", "--antiga", "xyz"])
        .output()
        .unwrap();
    assert_error(&o, 2, "IMPRESSAO_INVALIDA");

    if cfg!(feature = "archive-postgres") {
        eprintln!(
            "built with archive-postgres: the refusal of a PostgreSQL archive is not checked"
        );
        return;
    }
    let o = s
        .cmd()
        .args([
            "config",
            "definir",
            "acervo",
            "postgres://equipe:segredo@db/acervo",
        ])
        .output()
        .unwrap();
    assert_error(&o, 2, "ACERVO_POSTGRES_AUSENTE");
    assert!(!stderr(&o).contains("segredo"), "{}", stderr(&o));
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
    let (origin, bought_at, cobrado) = (col("Origem"), col("Comprado em"), col("Cobrado"));
    assert!(
        first[1..]
            .iter()
            .all(|r| r[origin] == "api" && r[cobrado] == "sim"),
        "{first:?}"
    );
    assert!(
        first[1..].iter().all(|r| !r[bought_at].is_empty()),
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
        assert_eq!(b[origin], "acervo");
        assert_eq!(b[cobrado], "não");
        assert_eq!(b[bought_at], a[bought_at], "when it was bought, not now");
    }
    let mut wb: Xlsx<_> = open_workbook(s.work_dir().join("segunda.xlsx")).unwrap();
    let r = wb.worksheet_range("Resultados").unwrap();
    let lines: Vec<&[Data]> = r.rows().collect();
    let headers: Vec<String> = lines[0].iter().map(ToString::to_string).collect();
    let x = |n: &str| headers.iter().position(|c| c == n).unwrap();
    for l in &lines[1..] {
        assert_eq!(l[x("Origem")].to_string(), "acervo");
        assert!(
            matches!(l[x("Comprado em")], Data::DateTime(_)),
            "{:?}",
            l[x("Comprado em")]
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
        !header.contains("Origem") && !header.contains("Comprado em"),
        "{header}"
    );
}

/// `carapi config definir acervo`: a relative path is stored absolute (later commands from
/// another directory use the same file and create none where they run), an existing folder
/// holds `acervo.sqlite3`, `desligado` (and a hidden `off`) turns it off, and a bare word such
/// as `sem` is refused with a hint, nothing stored; `config mostrar` shows the archive's
/// settings.
#[test]
fn the_archive_setting_does_not_depend_on_the_working_directory() {
    let s = TestServer::new();
    let shown = |s: &TestServer| -> serde_json::Value {
        let o = s
            .cmd()
            .args(["config", "mostrar", "-o", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    for word in ["sem", "nao"] {
        let o = s
            .cmd()
            .args(["config", "definir", "acervo", word])
            .output()
            .unwrap();
        assert_error(&o, 2, "USO");
        assert!(stderr(&o).contains("desligado"), "{}", stderr(&o));
        assert!(!s.work_dir().join(word).exists());
    }
    assert!(shown(&s)["acervo"].is_null(), "nothing stored");

    for (k, v) in [
        ("acervo", "meu-acervo.sqlite3"),
        ("finalidade", "due diligence"),
        ("base-legal", "interesse-legitimo"),
    ] {
        let o = s.cmd().args(["config", "definir", k, v]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let file = s.work_dir().join("meu-acervo.sqlite3");
    let m = shown(&s);
    assert_eq!(m["acervo"], file.display().to_string(), "absolute: {m}");
    assert_eq!(m["finalidade"], "due diligence");
    assert_eq!(m["baseLegal"], "interesse-legitimo");
    assert_eq!(m["idadeMaxima"], "30d (padrão)");
    let elsewhere = s.dir.path().join("outro");
    std::fs::create_dir(&elsewhere).unwrap();
    let o = s
        .cmd()
        .current_dir(&elsewhere)
        .args(["car", CODES[0]])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(file.exists(), "the configured file");
    assert_eq!(
        std::fs::read_dir(&elsewhere).unwrap().count(),
        0,
        "nothing where it ran"
    );

    let o = s
        .cmd()
        .args(["config", "definir", "acervo", "../outro"])
        .output()
        .unwrap();
    assert!(o.status.success(), "an existing folder: {}", stderr(&o));
    assert_eq!(
        shown(&s)["acervo"],
        elsewhere.join("acervo.sqlite3").display().to_string()
    );
    let o = s
        .cmd()
        .args(["config", "definir", "acervo", "off"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(shown(&s)["acervo"].is_null());
    let o = s.cmd().args(["config", "mostrar"]).output().unwrap();
    assert!(stdout(&o).contains("desligado"), "{}", stdout(&o));
}

/// `acervo exportar` does what `-o` says (a table, the analyst's CSV, the machine's CSV with
/// the archive's camelCase names, JSON), to stdout or `--saida`; `listar` and `mostrar` give
/// Brasília time, as everything a person reads.
#[test]
fn exportar_follows_o_and_listar_shows_brasilia_time() {
    let s = with_archive();
    let o = s.cmd().args(["car", CODES[0]]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let export = |args: &[&str]| {
        let o = s
            .cmd()
            .args(["acervo", "exportar"])
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let table = export(&["-o", "tabela"]);
    assert!(table.contains('│') && table.contains("Operação"), "{table}");
    let sheet = export(&["-o", "csv"]);
    assert!(
        sheet.starts_with("\u{feff}Seq;Operação;Chave;Preço (R$);"),
        "{sheet}"
    );
    assert!(sheet.contains(";1,00;"), "decimal comma: {sheet}");
    let raw = export(&["-o", "csv-cru"]);
    assert!(
        raw.starts_with(
            "seq,operacao,chave,preco,dataConsulta,compradoEm,conta,finalidade,baseLegal,hashConteudo,hashAnterior,hash,expurgadoEm\n"
        ),
        "{raw}"
    );
    assert!(raw.contains(",1.00,"), "{raw}");
    let json: serde_json::Value = serde_json::from_str(&export(&["-o", "json"])).unwrap();
    assert!(json.is_array() || json.is_object(), "{json}");
    let o = s
        .cmd()
        .args([
            "acervo",
            "exportar",
            "-o",
            "csv",
            "--saida",
            "auditoria.csv",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let file = std::fs::read_to_string(s.work_dir().join("auditoria.csv")).unwrap();
    assert_eq!(file, sheet, "the file is what stdout shows");

    // listar and mostrar: Brasília time, never UTC.
    let raw_at = raw
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(5)
        .unwrap()
        .to_owned();
    let at = chrono::DateTime::parse_from_rfc3339(&raw_at).unwrap();
    let brasilia = at
        .with_timezone(&chrono_tz::America::Sao_Paulo)
        .format("%d/%m/%Y %H:%M")
        .to_string();
    for args in [&["acervo", "listar"][..], &["acervo", "mostrar", "1"][..]] {
        let o = s.cmd().args(args).output().unwrap();
        let out = stdout(&o);
        assert!(!out.contains("UTC"), "{out}");
        assert!(out.contains(&brasilia), "{brasilia}: {out}");
    }
}

/// One byte of an archived answer edited in the file: `carapi car` refuses it naming the entry
/// (exit non-zero, nothing bought); `--comprar` buys it again as a new entry.
#[test]
fn an_altered_answer_is_refused_not_printed() {
    let s = with_archive();
    let o = s.cmd().args(["car", CODES[0]]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let conn = rusqlite::Connection::open(archive_file(&s)).unwrap();
    conn.execute(
        "UPDATE contents SET body = CAST(replace(CAST(body AS TEXT), 'a', 'b') AS BLOB) WHERE seq = 1",
        [],
    )
    .unwrap();
    drop(conn);
    let o = s
        .cmd()
        .args(["-o", "json", "car", CODES[0]])
        .output()
        .unwrap();
    assert!(!o.status.success(), "refused");
    assert!(o.stdout.is_empty(), "nothing printed as the answer");
    let err = stderr(&o);
    assert!(
        err.contains("entrada 1") && err.contains("--comprar"),
        "{err}"
    );
    assert_eq!(s.charged().len(), 1, "nothing bought");
    let o = s
        .cmd()
        .args(["car", CODES[0], "--comprar"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.charged().len(), 2);
    let o = s.cmd().args(["car", CODES[0]]).output().unwrap();
    assert!(
        o.status.success(),
        "the new entry is served: {}",
        stderr(&o)
    );
}

/// A purged document: `titular` lists the purge, `proprietario` refuses it before any request,
/// `--comprar` is the explicit override.
#[test]
fn a_purged_owner_is_not_bought_again_without_comprar() {
    let s = with_archive();
    let (_, doc) = record_with_owner();
    let o = s.cmd().args(["proprietario", &doc]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s
        .cmd()
        .args(["acervo", "expurgar", "--documento", &doc, "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let o = s.cmd().args(["acervo", "titular", &doc]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("expurgado a pedido do titular"),
        "{}",
        stderr(&o)
    );
    let o = s.cmd().args(["proprietario", &doc]).output().unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("TITULAR_EXPURGADO") || stderr(&o).contains("eliminação"),
        "{}",
        stderr(&o)
    );
    assert_eq!(s.charged().len(), 1, "nothing sent");
    let o = s
        .cmd()
        .args(["proprietario", &doc, "--comprar"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.charged().len(), 2);
}
