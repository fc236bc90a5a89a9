//! What an analyst does with a batch: SICAR exports and stdin as input, `--coluna`, and outputs
//! read back by other tools (calamine for the `.xlsx`, the geojson crate for the map, a `;` CSV
//! reader for the spreadsheet CSV).

use calamine::{Data, Reader, Xlsx, open_workbook};

use crate::harness::*;

/// Four bundled records with a known position (their WFS polygon's centroid) and, last, one
/// from the public CSV, which carries none: its position is empty, never made up.
const CODES: [&str; 5] = [
    "DF-5300108-0000AE7221F4458582BE077E36495213",
    "MS-5007901-2C83353FC2E54B57A0C218B4EDD18454",
    "MT-5103353-0F85980D7A004BDDB75A8ABF9CFEEB8A",
    "RS-4320552-32E9122BE61B442E80001F0953035414",
    "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
];

/// True for the codes of [`CODES`] that have a position.
fn mapped(code: &str) -> bool {
    code != CODES[4]
}

fn sicar(s: &TestServer) -> std::path::PathBuf {
    let mut t = String::from("\u{feff}municipio;cod_imovel;area_ha\n");
    for (i, c) in CODES.iter().enumerate() {
        t.push_str(&format!("Município {i};{c};1,5\n"));
    }
    write_file(&s.work_dir(), "sicar.csv", &t)
}

#[test]
fn xlsx_has_typed_cells_in_input_order_and_a_summary_sheet() {
    let s = TestServer::new();
    let file_path = sicar(&s);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.xlsx", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut wb: Xlsx<_> = open_workbook(s.work_dir().join("r.xlsx")).unwrap();
    let r = wb.worksheet_range("Resultados").unwrap();
    let lines: Vec<&[Data]> = r.rows().collect();
    let headers: Vec<String> = lines[0].iter().map(ToString::to_string).collect();
    let col = |n: &str| headers.iter().position(|c| c == n).unwrap();
    assert_eq!(lines.len(), 1 + CODES.len(), "one row per key");
    for (i, l) in lines[1..].iter().enumerate() {
        assert_eq!(l[col("Chave")].to_string(), CODES[i], "input order");
        assert!(
            matches!(l[col("Área total (ha)")], Data::Float(a) if a > 0.0),
            "area as a number: {:?}",
            l[col("Área total (ha)")]
        );
        assert!(
            if mapped(CODES[i]) {
                matches!(l[col("Latitude")], Data::Float(v) if (-34.0..6.0).contains(&v))
            } else {
                matches!(l[col("Latitude")], Data::Empty)
            },
            "{:?}",
            l[col("Latitude")]
        );
        assert!(
            matches!(l[col("Data da consulta")], Data::DateTime(_)),
            "date as a date: {:?}",
            l[col("Data da consulta")]
        );
        assert!(matches!(l[col("Cobrado")], Data::Bool(true)));
        assert!(
            matches!(l[col("Data da matrícula")], Data::DateTime(_) | Data::Empty),
            "matriculaData as a date like the others: {:?}",
            l[col("Data da matrícula")]
        );
    }
    assert!(
        lines[1..]
            .iter()
            .any(|l| matches!(l[col("Data da matrícula")], Data::DateTime(_))),
        "some record has a registration date"
    );
    assert!(
        headers.contains(&"HTTP".to_owned()) && headers.contains(&"Código do erro".to_owned()),
        "{headers:?}"
    );
    let summary = wb.worksheet_range("Resumo").unwrap();
    let text: Vec<String> = summary.rows().flatten().map(ToString::to_string).collect();
    assert!(text.iter().any(|t| t == "Encontradas"), "{text:?}");
    assert_eq!(s.charged().len(), CODES.len());
    // Beside the workbook: its records and the lock, both hidden; a rerun buys nothing.
    let mut hidden: Vec<_> = std::fs::read_dir(s.work_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    hidden.sort();
    assert_eq!(hidden, [".r.xlsx.registros.jsonl", ".r.xlsx.trava"]);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.xlsx", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.charged().len(), CODES.len(), "nothing bought twice");
    // A workbook the CLI did not write (no records beside it) is refused: nothing is bought.
    std::fs::copy(s.work_dir().join("r.xlsx"), s.work_dir().join("outro.xlsx")).unwrap();
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "outro.xlsx", "--sim"])
        .output()
        .unwrap();
    assert_error(&o, 2, "USO");
    assert_eq!(s.charged().len(), CODES.len());
}

#[test]
fn geojson_has_a_point_in_brazil_per_record() {
    let s = TestServer::new();
    let file_path = sicar(&s);
    let o = s
        .cmd()
        .args(["lote", "completo"])
        .arg(&file_path)
        .args(["--saida", "mapa.geojson", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(s.work_dir().join("mapa.geojson")).unwrap();
    let gj: geojson::GeoJson = text.parse().unwrap();
    let geojson::GeoJson::FeatureCollection(fc) = gj else {
        panic!("not a FeatureCollection")
    };
    assert_eq!(fc.features.len(), CODES.len());
    for (f, code) in fc.features.iter().zip(CODES) {
        if !mapped(code) {
            assert!(f.geometry.is_none(), "no position, no point: {f:?}");
            let props = f.properties.as_ref().unwrap();
            assert_eq!(props["semPosicao"], "o registro não tem coordenadas");
            continue;
        }
        let geojson::Value::Point(p) = &f.geometry.as_ref().unwrap().value else {
            panic!("not a point")
        };
        let (lon, lat) = (p[0], p[1]);
        assert!((-74.0..-34.0).contains(&lon), "{lon}");
        assert!((-34.0..6.0).contains(&lat), "{lat}");
        let props = f.properties.as_ref().unwrap();
        assert_eq!(props["chave"], code);
        assert!(
            props["entrada_municipio"].is_string(),
            "the input's own column, renamed"
        );
        assert!(
            props["areaTotalHa"].is_number(),
            "{:?}",
            props["areaTotalHa"]
        );
        assert!(props["cobrado"].is_boolean());
        assert!(props["proprietariosNomes"].is_string());
        assert_eq!(props["httpStatus"], 200, "an integer, not 200.0");
        assert!(props["httpStatus"].is_i64(), "{:?}", props["httpStatus"]);
    }

    // `car -o geojson`: the same shape for one lookup.
    let o = s
        .cmd()
        .args(["car", CODES[0], "-o", "geojson"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let gj: geojson::GeoJson = stdout(&o).parse().unwrap();
    assert!(matches!(gj, geojson::GeoJson::FeatureCollection(ref fc) if fc.features.len() == 1));
    // Only car and proprietario have a map form.
    let o = s.cmd().args(["saldo", "-o", "geojson"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn csv_output_is_for_a_portuguese_spreadsheet() {
    let s = TestServer::new();
    let file_path = sicar(&s);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.csv", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(s.work_dir().join("r.csv")).unwrap();
    assert!(bytes.starts_with("\u{feff}".as_bytes()), "UTF-8 BOM");
    let text = String::from_utf8(bytes[3..].to_vec()).unwrap();
    assert!(!text.contains('{'), "no JSON blobs: {text}");
    let mut rd = csv::ReaderBuilder::new()
        .delimiter(b';')
        .from_reader(text.as_bytes());
    let headers = rd.headers().unwrap().clone();
    let col = |n: &str| headers.iter().position(|c| c == n).unwrap();
    let rows: Vec<_> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), CODES.len());
    for (r, c) in rows.iter().zip(CODES) {
        assert_eq!(&r[col("Chave")], c, "input order");
        let area = &r[col("Área total (ha)")];
        assert!(
            area.contains(',') && !area.contains('.'),
            "decimal comma: {area}"
        );
        assert!(
            if mapped(c) {
                r[col("Latitude")].starts_with('-')
            } else {
                r[col("Latitude")].is_empty()
            },
            "{}",
            &r[col("Latitude")]
        );
    }
}

#[test]
fn stdin_coluna_and_an_input_without_keys() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["lote", "car", "-", "--sim"])
        .write_stdin(format!("{}\n{}\n", CODES[0], CODES[1]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));

    let file_path = write_file(
        &s.work_dir(),
        "x.csv",
        &format!("nome,meu codigo\nA,{}\n", CODES[2]),
    );
    for column in ["meu codigo", "2"] {
        let o = s
            .cmd()
            .args(["lote", "car", "--sim", "--coluna", column])
            .arg(&file_path)
            .output()
            .unwrap();
        assert!(o.status.success(), "{column}: {}", stderr(&o));
        assert!(stdout(&o).contains(CODES[2]));
    }

    let file_path = write_file(&s.work_dir(), "nada.txt", "abc\nxyz-123\n");
    let o = s
        .cmd()
        .args(["lote", "car", "--sim"])
        .arg(&file_path)
        .output()
        .unwrap();
    assert_error(&o, 2, "USO");
    assert!(
        stderr(&o).contains("nenhuma chave válida"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_stopped_xlsx_batch_resumes_from_its_records() {
    let s = TestServer::new();
    let file_path = sicar(&s);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.xlsx", "--sim", "--max-custo", "2"])
        .output()
        .unwrap();
    assert_error(&o, 1, "CUSTO_MAXIMO");
    assert!(s.work_dir().join(".r.xlsx.registros.jsonl").exists());
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.xlsx", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.charged().len(), CODES.len(), "each key bought once");
}

/// The `.xlsx` as Excel users' tools read it (openpyxl): Portuguese titles in a frozen header
/// row with a filter, a price column in reais, one row per input line (invalid keys with their
/// reason, a repeated key marked and not charged again, a code pasted with spaces), the input's
/// own column carried through, and the whole batch's true counts.
#[test]
fn xlsx_read_back_with_openpyxl_has_every_input_line_titles_prices_and_true_counts() {
    let s = TestServer::new();
    let pasted = CODES[1].replace('-', " ");
    let text = format!(
        "fornecedor;cod_imovel\n101;{}\n102;XX-123\n103;{pasted}\n104;{}\n105;DF-5300108-00000000000000000000000000000000\n",
        CODES[0],
        CODES[0].to_lowercase(),
    );
    let file_path = write_file(&s.work_dir(), "fornecedores.csv", &text);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.xlsx", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let Some(wb) = openpyxl_read(&s.work_dir().join("r.xlsx")) else {
        return;
    };
    let sheet = &wb["Resultados"];
    assert_eq!(
        sheet["freeze"], "A2",
        "header row frozen: {}",
        sheet["freeze"]
    );
    let rows = sheet["rows"].as_array().unwrap();
    let header: Vec<&str> = rows[0]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["v"].as_str().unwrap())
        .collect();
    let filter = sheet["filter"].as_str().unwrap_or_default();
    assert!(
        filter.starts_with("A1:") && filter.ends_with(&(rows.len()).to_string()),
        "a filter over the header and every row: {filter}"
    );
    assert_eq!(
        header[..5],
        ["Linha", "fornecedor", "Chave", "Situação", "Repetida"]
    );
    for title in [
        "Preço (R$)",
        "Área total (ha)",
        "Código CAR",
        "Cobrado",
        "Mensagem",
    ] {
        assert!(header.contains(&title), "{title}: {header:?}");
    }
    assert!(!header.contains(&"areaTotalHa"), "{header:?}");
    let col = |t: &str| header.iter().position(|h| *h == t).unwrap();
    let cell = |r: usize, t: &str| rows[r][col(t)]["v"].clone();
    assert_eq!(rows.len(), 6, "a header and one row per input line");
    for (r, supplier) in (1..=5).zip(["101", "102", "103", "104", "105"]) {
        assert_eq!(
            cell(r, "fornecedor"),
            supplier,
            "the input's column, in order"
        );
        assert_eq!(cell(r, "Linha"), r + 1);
    }
    assert_eq!(cell(1, "Situação"), "encontrado");
    assert_eq!(cell(1, "Preço (R$)"), 1);
    assert!(
        rows[1][col("Preço (R$)")]["fmt"]
            .as_str()
            .unwrap()
            .contains("R$"),
        "{}",
        rows[1][col("Preço (R$)")]
    );
    assert_eq!(cell(2, "Situação"), "invalida");
    assert_eq!(cell(2, "Chave"), "XX-123");
    assert!(
        cell(2, "Mensagem")
            .as_str()
            .unwrap()
            .contains("código CAR inválido"),
        "{}",
        cell(2, "Mensagem")
    );
    assert_eq!(cell(3, "Chave"), CODES[1], "a pasted code, normalised");
    assert_eq!(cell(3, "Situação"), "encontrado");
    assert_eq!(cell(4, "Chave"), CODES[0]);
    assert_eq!(cell(4, "Repetida"), true);
    assert_eq!(cell(4, "Cobrado"), false, "a repeat is bought once");
    assert!(cell(4, "Preço (R$)").is_null());
    assert_eq!(
        cell(4, "Código CAR"),
        CODES[0],
        "the repeat shows the data too"
    );
    assert_eq!(cell(5, "Situação"), "nao_encontrado");
    let summary: std::collections::HashMap<String, serde_json::Value> = wb["Resumo"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| Some((r[0]["v"].as_str()?.to_owned(), r[1]["v"].clone())))
        .collect();
    for (label, n) in [
        ("Linhas na entrada", 5.0),
        ("Chaves distintas", 3.0),
        ("Repetidas (consultadas uma vez)", 1.0),
        ("Inválidas (não enviadas)", 1.0),
        ("Encontradas", 2.0),
        ("Não encontradas", 1.0),
        ("Cobrado no lote (todas as execuções)", 2.0),
    ] {
        assert_eq!(summary[label].as_f64(), Some(n), "{label}: {summary:?}");
    }
    assert_eq!(s.charged().len(), 2);
}

/// A batch whose lookups failed (the server answered 503) and was run again: its `.csv` holds
/// one row per input line, the newest answer, not the failures beside their retries.
#[test]
fn a_resumed_csv_has_one_row_per_input_line() {
    use carapi_sdk::ErrorCode;
    use carapi_test_double::{Fault, TestServer as Double};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (srv, conta) = rt.block_on(async {
        let srv = Double::start().await.unwrap();
        let conta = srv.conta().saldo(dec("100")).create().await.unwrap();
        (srv, conta)
    });
    let dir = tempfile::tempdir().unwrap();
    let list = write_file(dir.path(), "lista.txt", &format!("{}\n", CODES.join("\n")));
    let run = || {
        assert_cmd::Command::cargo_bin("carapi")
            .unwrap()
            .env_remove("CARAPI_LOCAL")
            .env("CARAPI_CONFIG_DIR", dir.path().join("config"))
            .env("CARAPI_DATA_DIR", dir.path().join("data"))
            .env("CARAPI_KEYRING", "off")
            .env("CARAPI_BASE_URL", srv.base_url())
            .env("CARAPI_API_KEY", &conta.api_key)
            .current_dir(dir.path())
            .args(["lote", "car"])
            .arg(&list)
            .args(["--saida", "r.csv", "--sim"])
            .output()
            .unwrap()
    };
    let fault = srv.inject(
        Fault::error(ErrorCode::ServicoIndisponivel)
            .on("/v1/car/{codigoCar}")
            .always(),
    );
    let o = run();
    assert_eq!(o.status.code(), Some(7), "{}", stderr(&o));
    srv.remove_fault(fault);
    let o = run();
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(dir.path().join("r.csv")).unwrap();
    let mut rd = csv::ReaderBuilder::new()
        .delimiter(b';')
        .from_reader(&bytes[3..]);
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), CODES.len(), "one row per input line: {rows:?}");
    assert!(rows.iter().all(|r| &r[2] == "encontrado"), "{rows:?}");
    let records = std::fs::read_to_string(dir.path().join(".r.csv.registros.jsonl")).unwrap();
    assert_eq!(
        records.lines().count(),
        CODES.len(),
        "records compacted too"
    );
    rt.block_on(srv.shutdown());
}

/// The owner lookup's answer has no position (docs/contrato.md): its features say so instead
/// of carrying a point the API never gave.
#[test]
fn owner_features_say_why_they_have_no_point() {
    let s = TestServer::new();
    let docs = write_file(&s.work_dir(), "docs.txt", "00000000000\n");
    let o = s
        .cmd()
        .args(["lote", "proprietario"])
        .arg(&docs)
        .args(["--saida", "mapa.geojson", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let from_file = std::fs::read_to_string(s.work_dir().join("mapa.geojson")).unwrap();
    let o = s
        .cmd()
        .args(["proprietario", "00000000000", "-o", "geojson"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for text in [from_file, stdout(&o)] {
        let g: serde_json::Value = serde_json::from_str(&text).unwrap();
        let features = g["features"].as_array().unwrap();
        assert_eq!(features.len(), 2, "two CARs: {text}");
        for f in features {
            assert!(f["geometry"].is_null());
            let why = f["properties"]["semPosicao"].as_str().unwrap();
            assert!(why.contains("não traz a posição"), "{why}");
        }
    }
}
