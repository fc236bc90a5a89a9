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
        assert_eq!(l[col("chave")].to_string(), CODES[i], "input order");
        assert!(
            matches!(l[col("areaTotalHa")], Data::Float(a) if a > 0.0),
            "area as a number: {:?}",
            l[col("areaTotalHa")]
        );
        assert!(
            if mapped(CODES[i]) {
                matches!(l[col("latitude")], Data::Float(v) if (-34.0..6.0).contains(&v))
            } else {
                matches!(l[col("latitude")], Data::Empty)
            },
            "{:?}",
            l[col("latitude")]
        );
        assert!(
            matches!(l[col("dataConsulta")], Data::DateTime(_)),
            "date as a date: {:?}",
            l[col("dataConsulta")]
        );
        assert!(matches!(l[col("cobrado")], Data::Bool(true)));
        assert!(
            matches!(l[col("matriculaData")], Data::DateTime(_) | Data::Empty),
            "matriculaData as a date like the others: {:?}",
            l[col("matriculaData")]
        );
    }
    assert!(
        lines[1..]
            .iter()
            .any(|l| matches!(l[col("matriculaData")], Data::DateTime(_))),
        "some record has a registration date"
    );
    assert!(
        headers.contains(&"httpStatus".to_owned()) && headers.contains(&"codigoErro".to_owned()),
        "{headers:?}"
    );
    let summary = wb.worksheet_range("Resumo").unwrap();
    let text: Vec<String> = summary.rows().flatten().map(ToString::to_string).collect();
    assert!(text.iter().any(|t| t == "Encontradas"), "{text:?}");
    assert_eq!(s.charged().len(), CODES.len());
    // A finished batch leaves no hidden file beside the workbook, and a rerun into it is refused:
    // nothing bought twice.
    let hidden: Vec<_> = std::fs::read_dir(s.work_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.xlsx", "--sim"])
        .output()
        .unwrap();
    assert_error(&o, 2, "USO");
    assert!(stderr(&o).contains("lote terminado"), "{}", stderr(&o));
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
        assert_eq!(&r[col("chave")], c, "input order");
        let area = &r[col("areaTotalHa")];
        assert!(
            area.contains(',') && !area.contains('.'),
            "decimal comma: {area}"
        );
        assert!(
            if mapped(c) {
                r[col("latitude")].starts_with('-')
            } else {
                r[col("latitude")].is_empty()
            },
            "{}",
            &r[col("latitude")]
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
    assert!(!s.work_dir().join(".r.xlsx.registros.jsonl").exists());
}
