//! What an analyst does with a batch: SICAR exports and stdin as input, `--coluna`, and outputs
//! read back by other tools (calamine for the `.xlsx`, the geojson crate for the map, a `;` CSV
//! reader for the spreadsheet CSV).

use calamine::{Data, Reader, Xlsx, open_workbook};

use crate::harness::*;

fn sicar(s: &Servidor) -> std::path::PathBuf {
    let mut t = String::from("\u{feff}municipio;cod_imovel;area_ha\n");
    for (i, c) in CODIGOS.iter().enumerate() {
        t.push_str(&format!("Município {i};{c};1,5\n"));
    }
    escrever(&s.trabalho(), "sicar.csv", &t)
}

#[test]
fn xlsx_has_typed_cells_in_input_order_and_a_summary_sheet() {
    let s = Servidor::novo();
    let arq = sicar(&s);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&arq)
        .args(["--saida", "r.xlsx", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut wb: Xlsx<_> = open_workbook(s.trabalho().join("r.xlsx")).unwrap();
    let r = wb.worksheet_range("Resultados").unwrap();
    let linhas: Vec<&[Data]> = r.rows().collect();
    let cab: Vec<String> = linhas[0].iter().map(ToString::to_string).collect();
    let col = |n: &str| cab.iter().position(|c| c == n).unwrap();
    assert_eq!(linhas.len(), 1 + CODIGOS.len(), "one row per key");
    for (i, l) in linhas[1..].iter().enumerate() {
        assert_eq!(l[col("chave")].to_string(), CODIGOS[i], "input order");
        assert!(
            matches!(l[col("areaTotalHa")], Data::Float(a) if a > 0.0),
            "area as a number: {:?}",
            l[col("areaTotalHa")]
        );
        assert!(
            matches!(l[col("latitude")], Data::Float(v) if (-34.0..6.0).contains(&v)),
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
        linhas[1..]
            .iter()
            .any(|l| matches!(l[col("matriculaData")], Data::DateTime(_))),
        "some record has a registration date"
    );
    assert!(
        cab.contains(&"httpStatus".to_owned()) && cab.contains(&"codigoErro".to_owned()),
        "{cab:?}"
    );
    let resumo = wb.worksheet_range("Resumo").unwrap();
    let texto: Vec<String> = resumo.rows().flatten().map(ToString::to_string).collect();
    assert!(texto.iter().any(|t| t == "Encontradas"), "{texto:?}");
    assert_eq!(s.cobradas().len(), CODIGOS.len());
    // A finished batch leaves no hidden file beside the workbook, and a rerun into it is refused:
    // nothing bought twice.
    let ocultos: Vec<_> = std::fs::read_dir(s.trabalho())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(ocultos.is_empty(), "{ocultos:?}");
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&arq)
        .args(["--saida", "r.xlsx", "--sim"])
        .output()
        .unwrap();
    assert_erro(&o, 2, "USO");
    assert!(stderr(&o).contains("lote terminado"), "{}", stderr(&o));
    assert_eq!(s.cobradas().len(), CODIGOS.len());
}

#[test]
fn geojson_has_a_point_in_brazil_per_record() {
    let s = Servidor::novo();
    let arq = sicar(&s);
    let o = s
        .cmd()
        .args(["lote", "completo"])
        .arg(&arq)
        .args(["--saida", "mapa.geojson", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let texto = std::fs::read_to_string(s.trabalho().join("mapa.geojson")).unwrap();
    let gj: geojson::GeoJson = texto.parse().unwrap();
    let geojson::GeoJson::FeatureCollection(fc) = gj else {
        panic!("not a FeatureCollection")
    };
    assert_eq!(fc.features.len(), CODIGOS.len());
    for (f, codigo) in fc.features.iter().zip(CODIGOS) {
        let geojson::Value::Point(p) = &f.geometry.as_ref().unwrap().value else {
            panic!("not a point")
        };
        let (lon, lat) = (p[0], p[1]);
        assert!((-74.0..-34.0).contains(&lon), "{lon}");
        assert!((-34.0..6.0).contains(&lat), "{lat}");
        let props = f.properties.as_ref().unwrap();
        assert_eq!(props["chave"], codigo);
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
        .args(["car", CODIGOS[0], "-o", "geojson"])
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
    let s = Servidor::novo();
    let arq = sicar(&s);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&arq)
        .args(["--saida", "r.csv", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let bytes = std::fs::read(s.trabalho().join("r.csv")).unwrap();
    assert!(bytes.starts_with("\u{feff}".as_bytes()), "UTF-8 BOM");
    let texto = String::from_utf8(bytes[3..].to_vec()).unwrap();
    assert!(!texto.contains('{'), "no JSON blobs: {texto}");
    let mut rd = csv::ReaderBuilder::new()
        .delimiter(b';')
        .from_reader(texto.as_bytes());
    let cab = rd.headers().unwrap().clone();
    let col = |n: &str| cab.iter().position(|c| c == n).unwrap();
    let rows: Vec<_> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), CODIGOS.len());
    for (r, c) in rows.iter().zip(CODIGOS) {
        assert_eq!(&r[col("chave")], c, "input order");
        let area = &r[col("areaTotalHa")];
        assert!(
            area.contains(',') && !area.contains('.'),
            "decimal comma: {area}"
        );
        assert!(
            r[col("latitude")].starts_with('-'),
            "{}",
            &r[col("latitude")]
        );
    }
}

#[test]
fn stdin_coluna_and_an_input_without_keys() {
    let s = Servidor::novo();
    let o = s
        .cmd()
        .args(["lote", "car", "-", "--sim"])
        .write_stdin(format!("{}\n{}\n", CODIGOS[0], CODIGOS[1]))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 2, "{}", stdout(&o));

    let arq = escrever(
        &s.trabalho(),
        "x.csv",
        &format!("nome,meu codigo\nA,{}\n", CODIGOS[2]),
    );
    for coluna in ["meu codigo", "2"] {
        let o = s
            .cmd()
            .args(["lote", "car", "--sim", "--coluna", coluna])
            .arg(&arq)
            .output()
            .unwrap();
        assert!(o.status.success(), "{coluna}: {}", stderr(&o));
        assert!(stdout(&o).contains(CODIGOS[2]));
    }

    let arq = escrever(&s.trabalho(), "nada.txt", "abc\nxyz-123\n");
    let o = s
        .cmd()
        .args(["lote", "car", "--sim"])
        .arg(&arq)
        .output()
        .unwrap();
    assert_erro(&o, 2, "USO");
    assert!(
        stderr(&o).contains("nenhuma chave válida"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_stopped_xlsx_batch_resumes_from_its_records() {
    let s = Servidor::novo();
    let arq = sicar(&s);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&arq)
        .args(["--saida", "r.xlsx", "--sim", "--max-custo", "2"])
        .output()
        .unwrap();
    assert_erro(&o, 1, "CUSTO_MAXIMO");
    assert!(s.trabalho().join(".r.xlsx.registros.jsonl").exists());
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&arq)
        .args(["--saida", "r.xlsx", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.cobradas().len(), CODIGOS.len(), "each key bought once");
    assert!(!s.trabalho().join(".r.xlsx.registros.jsonl").exists());
}
