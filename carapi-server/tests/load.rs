//! Bulk load through the `carapi-server` binary (`seed`, `import`), read back through the
//! stores and the API: streaming CSV import refusing a bad line with nothing written, the real
//! SICAR WFS GeoJSON (centroids inside their polygons, versions resolved, bad geometry refused
//! with its feature index), a seeded large owner, the same on PostgreSQL when `DATABASE_URL`
//! is set.

use std::path::{Path, PathBuf};
use std::process::Command;

use carapi_loader::synthetic::{Synthetic, large_owners};
use carapi_sdk::CodigoCar;
use carapi_sdk::domain::{br, dms};
use carapi_service::dados::Imovel;
use carapi_service::store::SqliteStore;
use carapi_service::store::prelude::*;
use geo::{Contains, Coord, LineString, MultiPolygon, Point, Polygon};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde_json::Value;

use crate::postgres::TestDatabase;

const BIN: &str = env!("CARGO_BIN_EXE_carapi-server");

fn dados(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../carapi-loader/data")
        .join(relative)
}

/// Runs the binary; `(success, stdout, stderr)`.
fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("CARAPI_DATABASE_URL")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn import(file: &Path, url: &str) -> (bool, String, String) {
    run(&["import", &file.display().to_string(), "--database", url])
}

fn sqlite_url(dir: &tempfile::TempDir) -> String {
    format!("sqlite://{}", dir.path().join("carga.db").display())
}

/// `n` synthetic records written as a public SICAR CSV (header on line 1).
fn synthetic_csv(n: usize) -> String {
    let mut bytes = Vec::new();
    carapi_loader::import::write_csv(&mut bytes, Synthetic::new(n, 11)).unwrap();
    String::from_utf8(bytes).unwrap()
}

/// The CSV with line `linha` (1-based, header = 1) given a bad `area`.
fn break_line(csv: &str, line: usize) -> String {
    csv.lines()
        .enumerate()
        .map(|(n, l)| {
            if n + 1 == line {
                let mut fields: Vec<&str> = l.split(',').collect();
                fields[4] = "-3.5";
                fields.join(",")
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn csv_grande_com_linha_ruim_e_recusado_sem_gravar_nada() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let good = synthetic_csv(5_000);
    let bad = dir.path().join("ruim.csv");
    std::fs::write(&bad, break_line(&good, 4_321)).unwrap();

    // On an empty base, then on a base that already holds records: nothing changes.
    for already_has in [0u64, 40] {
        if already_has > 0 {
            let (ok, _, err) = run(&["seed", "--synthetic", "40", "--database", &url]);
            assert!(ok, "{err}");
        }
        let (ok, _, err) = import(&bad, &url);
        assert!(!ok, "a bad line must refuse the file");
        assert!(
            err.contains("linha 4321") && err.contains("campo area"),
            "{err}"
        );
        let store = SqliteStore::connect(&url).await.unwrap();
        assert_eq!(
            store.count_imoveis().await.unwrap(),
            already_has,
            "nothing written"
        );
        store.close().await;
    }

    let file = dir.path().join("bom.csv");
    std::fs::write(&file, &good).unwrap();
    let (ok, out, err) = import(&file, &url);
    assert!(ok, "{err}");
    assert!(out.contains("5.000 registros"), "{out}");
    let store = SqliteStore::connect(&url).await.unwrap();
    assert_eq!(store.count_imoveis().await.unwrap(), 5_040);
    // Each record reads back as the CSV path completes it.
    let wanted = carapi_loader::import::parse_csv(good.as_bytes()).unwrap();
    for e in wanted.iter().step_by(97) {
        let chunk = store.imovel(&e.codigo_car).await.unwrap().expect("gravado");
        assert_eq!(&chunk, e);
    }
    assert_integer_indices(&url).await;
}

#[tokio::test]
async fn csv_salvo_no_windows_diz_a_linha_certa() {
    // CRLF terminators and blank lines (a file saved by a spreadsheet on Windows): the error
    // names the line an editor shows, not the csv crate's own count, which falls behind.
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let bad = break_line(&synthetic_csv(300), 250);
    let mut lines: Vec<&str> = bad.lines().collect();
    lines.insert(100, "");
    lines.insert(100, "");
    let file = dir.path().join("windows.csv");
    std::fs::write(&file, lines.join("\r\n") + "\r\n").unwrap();
    let (ok, _, err) = import(&file, &url);
    assert!(!ok, "a bad line must refuse the file");
    assert!(err.contains("linha 252:"), "{err}");
}

/// The secondary indexes the migrations define are all there after a bulk load.
async fn assert_integer_indices(url: &str) {
    let empty = tempfile::tempdir().unwrap();
    let reference = SqliteStore::connect(&sqlite_url(&empty)).await.unwrap();
    reference.close().await;
    let names = |u: String| async move {
        let path = u.trim_start_matches("sqlite://").to_owned();
        let c = rusqlite::Connection::open(path).unwrap();
        let mut st = c
            .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name")
            .unwrap();
        st.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
    };
    assert_eq!(
        names(url.to_owned()).await,
        names(sqlite_url(&empty)).await,
        "same indexes as a freshly migrated base"
    );
}

#[tokio::test]
async fn seed_grava_o_que_o_gerador_da_e_o_dono_grande() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let (ok, out, err) = run(&[
        "seed",
        "--synthetic",
        "3000",
        "--seed",
        "3",
        "--dono-grande",
        "2500",
        "--database",
        &url,
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("3.000 registros"), "{out}");
    let store = SqliteStore::connect(&url).await.unwrap();
    assert_eq!(store.count_imoveis().await.unwrap(), 3_000);
    let generated: Vec<Imovel> = Synthetic::new(3000, 3).with_large_owner(2500).collect();
    for g in generated.iter().step_by(131) {
        assert_eq!(store.imovel(&g.codigo_car).await.unwrap().as_ref(), Some(g));
    }
    let owner = &large_owners()[0].documento;
    let (cars, truncado) = store.imoveis_of_documento(owner, 200).await.unwrap();
    assert_eq!((cars.len(), truncado), (200, true));
    let (ok, _, err) = run(&[
        "seed",
        "--synthetic",
        "10",
        "--dono-grande",
        "11",
        "--database",
        &url,
    ]);
    assert!(!ok && err.contains("--dono-grande"), "{err}");
    assert_integer_indices(&url).await;
}

/// The features of a WFS GeoJSON file as JSON values.
fn features(file: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    v["features"].as_array().unwrap().clone()
}

fn multipolygon(g: &Value) -> MultiPolygon<f64> {
    let ring = |a: &Value| {
        LineString::new(
            a.as_array()
                .unwrap()
                .iter()
                .map(|p| Coord {
                    x: p[0].as_f64().unwrap(),
                    y: p[1].as_f64().unwrap(),
                })
                .collect(),
        )
    };
    MultiPolygon(
        g["coordinates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let rings = p.as_array().unwrap();
                Polygon::new(ring(&rings[0]), rings[1..].iter().map(ring).collect())
            })
            .collect(),
    )
}

#[tokio::test]
async fn wfs_embutido_centroide_dentro_do_poligono_e_sem_posicao_sem_geometria() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let file = dados("sicar-wfs/imoveis.geojson");
    let (ok, out, err) = import(&file, &url);
    assert!(ok, "{err}");
    assert!(out.contains("60 registros"), "{out}");
    let store = SqliteStore::connect(&url).await.unwrap();
    assert_eq!(store.count_imoveis().await.unwrap(), 60);
    let (mut with_polygon, mut without) = (0, 0);
    for f in features(&file) {
        let p = &f["properties"];
        let codigo = CodigoCar::parse(p["cod_imovel"].as_str().unwrap()).unwrap();
        let i = store.imovel(&codigo).await.unwrap().expect("importado");
        if f["geometry"].is_null() {
            // No polygon, no position: never the municipal seat presented as the property's.
            assert_eq!((i.latitude, i.longitude), (None, None), "{codigo}");
            without += 1;
        } else {
            let (lat, lon) = (i.latitude.unwrap(), i.longitude.unwrap());
            let point = Point::new(lon.to_f64().unwrap(), lat.to_f64().unwrap());
            assert!(
                multipolygon(&f["geometry"]).contains(&point),
                "{codigo}: centroid {point:?} outside its polygon"
            );
            with_polygon += 1;
        }
        // The contract's DMS of the stored degrees, as the API answers it.
        let d = i.dados_basicos();
        if let Some(lat) = i.latitude {
            let back = dms::parse(d.latitude.as_deref().unwrap()).unwrap();
            assert!((back - lat).abs() < Decimal::new(1, 5), "{back} {lat}");
        } else {
            assert_eq!(d.latitude, None);
        }
        // WFS instants are UTC; the record holds Brasília wall time.
        let creation = p["dat_criacao"].as_str().unwrap();
        let utc = chrono::DateTime::parse_from_rfc3339(creation).unwrap();
        let brasilia = utc.with_timezone(&chrono_tz::America::Sao_Paulo);
        assert_eq!(
            br::format_data(i.data_cadastro),
            br::format_data(brasilia.naive_local()),
            "{codigo}"
        );
    }
    assert_eq!((with_polygon, without), (24, 36));
}

#[tokio::test]
async fn wfs_versoes_a_mais_nova_vence_em_qualquer_ordem() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    // (file, code prefix, the FID kept: later data_atualizacao, else later dat_criacao)
    let cases = [
        (
            "ms_5007901_geo.json",
            "MS-5007901-FEB499C3",
            "sicar_imoveis_ms.16369495",
        ),
        (
            "ms_5007901_geo.json",
            "MS-5007901-2C83353F",
            "sicar_imoveis_ms.16369101",
        ),
        (
            "mt_5103353_geo.json",
            "MT-5103353-6F7F7D76",
            "sicar_imoveis_mt.16367477",
        ),
        (
            "rs_4320552_geo.json",
            "RS-4320552-32E9122B",
            "sicar_imoveis_rs.16368593",
        ),
        (
            "go_duplicates.json",
            "GO-5205802-FC2998F9",
            "sicar_imoveis_go.16341644",
        ),
    ];
    let mut versions = 0;
    for file in [
        "ms_5007901_geo.json",
        "mt_5103353_geo.json",
        "rs_4320552_geo.json",
        "go_duplicates.json",
    ] {
        let (ok, _, err) = import(&dados(&format!("sicar-wfs/versoes/{file}")), &url);
        assert!(ok, "{file}: {err}");
        versions += features(&dados(&format!("sicar-wfs/versoes/{file}"))).len();
    }
    let store = SqliteStore::connect(&url).await.unwrap();
    assert_eq!(store.count_imoveis().await.unwrap() as usize, versions - 5);
    for (file, prefix, fid) in cases {
        let all = features(&dados(&format!("sicar-wfs/versoes/{file}")));
        let kept = all.iter().find(|f| f["id"] == fid).expect(fid);
        let p = &kept["properties"];
        let codigo = CodigoCar::parse(p["cod_imovel"].as_str().unwrap()).unwrap();
        assert!(codigo.as_str().starts_with(prefix));
        let i = store.imovel(&codigo).await.unwrap().unwrap();
        let brasilia = |s: &str| {
            chrono::DateTime::parse_from_rfc3339(s)
                .unwrap()
                .with_timezone(&chrono_tz::America::Sao_Paulo)
                .naive_local()
        };
        assert_eq!(
            br::format_data(i.data_cadastro),
            br::format_data(brasilia(p["dat_criacao"].as_str().unwrap())),
            "{fid}"
        );
        assert_eq!(
            i.data_atualizacao.map(br::format_data),
            p["data_atualizacao"]
                .as_str()
                .map(|s| br::format_data(brasilia(s))),
            "{fid}"
        );
    }
    // Importing again changes nothing, and an older version alone never replaces a newer one.
    let (ok, out, err) = import(&dados("sicar-wfs/versoes/ms_5007901_geo.json"), &url);
    assert!(ok && out.contains("ignoradas"), "{out} {err}");
    assert_eq!(store.count_imoveis().await.unwrap() as usize, versions - 5);
}

/// `file` with feature `indice` changed by `estragar`, written into `dir`.
fn broken_wfs(dir: &tempfile::TempDir, index: usize, spoil: impl Fn(&mut Value)) -> PathBuf {
    let original = dados("sicar-wfs/versoes/ms_5007901_geo.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(original).unwrap()).unwrap();
    spoil(&mut v["features"][index]);
    let output = dir.path().join(format!("estragado_{index}.geojson"));
    std::fs::write(&output, serde_json::to_vec(&v).unwrap()).unwrap();
    output
}

/// A corruption applied to a WFS feature.
type Damage = Box<dyn Fn(&mut Value)>;

#[tokio::test]
async fn wfs_geometria_ruim_e_recusada_com_o_indice_da_feicao() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let ring = |f: &mut Value| f["geometry"]["coordinates"][0][0].clone();
    let cases: Vec<(usize, Damage, &str)> = vec![
        (
            3,
            Box::new(move |f: &mut Value| {
                let mut a = ring(f);
                a.as_array_mut().unwrap().pop();
                f["geometry"]["coordinates"][0][0] = a;
            }),
            "não fechado",
        ),
        (
            2,
            Box::new(|f: &mut Value| {
                f["geometry"]["coordinates"][0][0] =
                    serde_json::json!([[-54.6, -20.9], [-54.5, -20.9], [-54.6, -20.9]]);
            }),
            "3 posições",
        ),
        (
            5,
            Box::new(|f: &mut Value| f["geometry"]["type"] = "Point".into()),
            "MultiPolygon",
        ),
        (
            1,
            Box::new(|f: &mut Value| {
                // Web Mercator metres instead of degrees.
                f["geometry"]["coordinates"][0][0][0] = serde_json::json!([-6078000.0, -2380000.0]);
            }),
            "fora do Brasil",
        ),
        (
            4,
            Box::new(|f: &mut Value| f["geometry"]["coordinates"][0][0][2] = "x".into()),
            "longitude, latitude",
        ),
    ];
    for (index, spoil, why) in cases {
        let file = broken_wfs(&dir, index, spoil);
        let (ok, _, err) = import(&file, &url);
        assert!(!ok, "feature {index} must be refused");
        assert!(
            err.contains(&format!("feição {index} ")) && err.contains(why),
            "{index}: {err}"
        );
    }
    let store = SqliteStore::connect(&url).await.unwrap();
    assert_eq!(store.count_imoveis().await.unwrap(), 0, "nothing written");
}

#[tokio::test]
async fn servidor_local_responde_o_centroide_real_em_dms() {
    let dir = tempfile::tempdir().unwrap();
    let url = sqlite_url(&dir);
    let server = carapi_service::spawn(carapi_service::Config::local(url))
        .await
        .unwrap();
    assert_eq!(
        server.store().count_imoveis().await.unwrap(),
        carapi_service::dados::bundled().len() as u64
    );
    let conta = server
        .create_conta(carapi_service::NovaConta::default())
        .await
        .unwrap();
    // A DF record with its polygon (bundled data/sicar-wfs/imoveis.geojson, first feature).
    let codigo = "DF-5300108-0000AE7221F4458582BE077E36495213";
    let resp = reqwest::Client::new()
        .get(format!("{}/v1/car/{codigo}", server.base_url()))
        .bearer_auth(&conta.api_key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let v: Value = resp.json().await.unwrap();
    let lat = v["dados"]["latitude"].as_str().expect("latitude");
    let lon = v["dados"]["longitude"].as_str().expect("longitude");
    let degrees = |s: &str| dms::parse(s).unwrap().to_f64().unwrap();
    let f = &features(&dados("sicar-wfs/imoveis.geojson"))[0];
    assert_eq!(f["properties"]["cod_imovel"], codigo);
    let polygon = multipolygon(&f["geometry"]);
    assert!(
        polygon.contains(&Point::new(degrees(lon), degrees(lat))),
        "{lat} {lon}"
    );
    // Not Brasília's IBGE centroid (15°46'46,20 S).
    assert_ne!(lat, "15°46'46,20 S");
    server.shutdown().await;
}

#[tokio::test]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn postgres_seed_import_versoes_e_linha_ruim() {
    let Some(database) = TestDatabase::create("postgres_seed_import_versoes_e_linha_ruim").await
    else {
        return;
    };
    let url = database.url.clone();
    let dir = tempfile::tempdir().unwrap();
    let (ok, _, err) = run(&[
        "seed",
        "--synthetic",
        "1500",
        "--seed",
        "4",
        "--database",
        &url,
    ]);
    assert!(ok, "{err}");
    let store = database.store().await;
    assert_eq!(store.count_imoveis().await.unwrap(), 1_500);
    for g in Synthetic::new(1500, 4).step_by(101) {
        assert_eq!(
            store.imovel(&g.codigo_car).await.unwrap().as_ref(),
            Some(&g)
        );
    }
    let bad = dir.path().join("ruim.csv");
    std::fs::write(&bad, break_line(&synthetic_csv(2_000), 1_234)).unwrap();
    let (ok, _, err) = import(&bad, &url);
    assert!(!ok && err.contains("linha 1234"), "{err}");
    assert_eq!(
        store.count_imoveis().await.unwrap(),
        1_500,
        "nothing written"
    );
    for file in ["ms_5007901_geo.json", "mt_5103353_geo.json"] {
        let (ok, _, err) = import(&dados(&format!("sicar-wfs/versoes/{file}")), &url);
        assert!(ok, "{err}");
    }
    assert_eq!(store.count_imoveis().await.unwrap(), 1_500 + 4 + 2);
    let ms = features(&dados("sicar-wfs/versoes/ms_5007901_geo.json"));
    let fresh = ms
        .iter()
        .find(|f| f["id"] == "sicar_imoveis_ms.16369495")
        .unwrap();
    let codigo = CodigoCar::parse(fresh["properties"]["cod_imovel"].as_str().unwrap()).unwrap();
    let i = store.imovel(&codigo).await.unwrap().unwrap();
    // 2026-09-22T21:33:53.633Z in Brasília (UTC-3).
    assert_eq!(
        i.data_atualizacao.map(br::format_data).as_deref(),
        Some("22/09/2026 18:33:53")
    );
    assert_ne!(i.latitude, Some(Decimal::ZERO));
}

/// A real bundled record whose origin (the public SICAR CSV) carries no position answers
/// `latitude`/`longitude` `null` (the contract allows it), never its municipal seat's.
#[tokio::test]
async fn a_real_record_without_a_known_position_answers_null() {
    let dir = tempfile::tempdir().unwrap();
    let server = carapi_service::spawn(carapi_service::Config::local(sqlite_url(&dir)))
        .await
        .unwrap();
    let conta = server
        .create_conta(carapi_service::NovaConta::default())
        .await
        .unwrap();
    let codigo = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";
    let v: Value = reqwest::Client::new()
        .get(format!("{}/v1/car/{codigo}", server.base_url()))
        .bearer_auth(&conta.api_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["success"], true, "{v}");
    assert!(v["dados"]["latitude"].is_null(), "{v}");
    assert!(v["dados"]["longitude"].is_null(), "{v}");
    assert_eq!(v["dados"]["municipio"], "Brasília");
    server.shutdown().await;
}
