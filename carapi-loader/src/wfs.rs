//! The GeoJSON of the public SICAR GeoServer WFS (layer `sicar:sicar_imoveis_<uf>`,
//! `outputFormat=application/json`): a FeatureCollection of features whose `properties` are the
//! public SICAR CSV columns and whose `geometry` is a MultiPolygon in longitude,latitude degrees
//! (EPSG:4674 or EPSG:4326), or `null` when the query did not ask for it. Real examples:
//! `carapi-loader/data/sicar-wfs/` (its README describes the shape and quirks).
//!
//! The file is read as a stream, one feature at a time (a MultiPolygon in memory at most), so a
//! whole state's extract never sits in memory. Each feature's properties go through the CSV
//! row rules ([`crate::import::parse_csv`]); with a geometry, the record's coordinates are
//! the polygon's centroid instead of the municipality's.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;

use geo::{Centroid, Contains, Coord, InteriorPoint, LineString, MultiPolygon, Polygon};
use rust_decimal::Decimal;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::import::{CsvRow, ImportError, complete_record, validate};
use carapi_service::dados::Imovel;

/// Decimal places kept of a centroid's degrees (1e-7 degree is about 1 cm).
const CENTROID_DECIMALS: u32 = 7;

/// Brazil's extent with a margin, degrees: `(lon_min, lat_min, lon_max, lat_max)`. Its extreme
/// points are about 73.99 W, 33.75 S, 28.85 W (oceanic islands) and 5.27 N.
const BRAZIL_BOUNDS: (f64, f64, f64, f64) = (-75.0, -35.0, -28.0, 6.0);

/// Why a WFS GeoJSON file was refused. Nothing is imported when any feature is bad.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WfsError {
    /// The file is not a GeoJSON FeatureCollection (outside any feature).
    #[error("GeoJSON inválido (esperada uma FeatureCollection do WFS do SICAR): {0}")]
    Collection(String),
    /// Feature `indice` (0-based position in `features`) is unreadable or breaks a rule.
    #[error("feição {index} (features[{index}]): {why}")]
    Feature {
        /// 0-based index in the collection's `features` array.
        index: u64,
        /// What is wrong, in Portuguese.
        why: String,
    },
}

/// One valid feature: the record completed like any imported record, with the polygon's
/// centroid as coordinates when the feature has a geometry.
#[derive(Debug, Clone)]
pub(crate) struct Feature {
    /// The completed record.
    pub(crate) imovel: Imovel,
}

/// Reads a WFS FeatureCollection from `input`, calling `f` with each valid feature in file
/// order; returns how many features were read. Stops at the first bad feature or the first
/// error of `f`.
///
/// # Errors
/// [`WfsError`] (converted into `E`) for a bad file or feature; the error of `f` as it came.
pub(crate) fn walk<E: From<WfsError>>(
    input: impl Read,
    mut f: impl FnMut(Feature) -> Result<(), E>,
) -> Result<u64, E> {
    let mut state = ParseState {
        f: &mut f,
        error: None,
        parsed: 0,
    };
    let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::new(input));
    let r = Collection(&mut state)
        .deserialize(&mut de)
        .and_then(|()| de.end());
    match (r, state.error) {
        (_, Some(e)) => Err(e),
        (Err(e), None) => Err(WfsError::Collection(e.to_string()).into()),
        (Ok(()), None) => Ok(state.parsed),
    }
}

/// Every valid feature of `input`, with the versions of one `cod_imovel` reduced to the newest
/// ([`newest`]), in order of first appearance. Holds the records in memory: for the bundled
/// files and tests; the bulk import streams with [`percorrer`].
///
/// # Errors
/// [`WfsError`] for a bad file or feature.
#[cfg(test)]
pub(crate) fn read(input: impl Read) -> Result<Vec<Imovel>, WfsError> {
    let mut all: Vec<Imovel> = Vec::new();
    let mut position = std::collections::HashMap::new();
    walk(input, |f: Feature| -> Result<(), WfsError> {
        match position.get(f.imovel.codigo_car.as_str()) {
            Some(&i) => {
                let atual: &mut Imovel = &mut all[i];
                if newest(&f.imovel, atual) {
                    *atual = f.imovel;
                }
            }
            None => {
                position.insert(f.imovel.codigo_car.to_string(), all.len());
                all.push(f.imovel);
            }
        }
        Ok(())
    })?;
    Ok(all)
}

/// Whether `nova` replaces `atual` (two versions of one `cod_imovel`): the later
/// `data_atualizacao` wins (a missing one counts as the earliest), then the later
/// `dat_criacao`; on a tie the one read last (`nova`) wins. The bulk writers apply the same
/// rule in SQL (`carga/sqlite.rs`, `carga/postgres.rs`).
#[cfg(test)]
pub(crate) fn newest(fresh: &Imovel, atual: &Imovel) -> bool {
    (fresh.data_atualizacao, fresh.data_cadastro) >= (atual.data_atualizacao, atual.data_cadastro)
}

struct ParseState<'a, E> {
    f: &'a mut dyn FnMut(Feature) -> Result<(), E>,
    error: Option<E>,
    parsed: u64,
}

struct Collection<'a, 'b, E>(&'a mut ParseState<'b, E>);

impl<'de, E: From<WfsError>> DeserializeSeed<'de> for Collection<'_, '_, E> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, E: From<WfsError>> Visitor<'de> for Collection<'_, '_, E> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("um objeto FeatureCollection")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut tipo: Option<String> = None;
        let mut com_features = false;
        while let Some(chave) = map.next_key::<String>()? {
            match chave.as_str() {
                "type" => tipo = Some(map.next_value()?),
                "features" => {
                    map.next_value_seed(Features(&mut *self.0))?;
                    com_features = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if tipo.as_deref() != Some("FeatureCollection") {
            return Err(de::Error::custom(format!(
                "\"type\" é {tipo:?}, esperado \"FeatureCollection\""
            )));
        }
        if !com_features {
            return Err(de::Error::custom("sem o membro \"features\""));
        }
        Ok(())
    }
}

struct Features<'a, 'b, E>(&'a mut ParseState<'b, E>);

impl<'de, E: From<WfsError>> DeserializeSeed<'de> for Features<'_, '_, E> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, E: From<WfsError>> Visitor<'de> for Features<'_, '_, E> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("uma lista de feições")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let state = self.0;
        loop {
            let index = state.parsed;
            let raw = match seq.next_element::<RawFeature>() {
                Ok(Some(b)) => b,
                Ok(None) => return Ok(()),
                Err(e) => {
                    let why = format!("ilegível: {e}");
                    state.error = Some(WfsError::Feature { index, why }.into());
                    return Err(e);
                }
            };
            let r = convert(raw, index)
                .map_err(E::from)
                .and_then(|f| (state.f)(f));
            if let Err(e) = r {
                state.error = Some(e);
                return Err(de::Error::custom("interrompido"));
            }
            state.parsed += 1;
        }
    }
}

#[derive(Deserialize)]
struct RawFeature {
    #[serde(rename = "type")]
    tipo: Option<String>,
    #[serde(default)]
    geometry: Option<Geometry>,
    #[serde(default)]
    properties: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct Geometry {
    #[serde(rename = "type")]
    tipo: String,
    coordinates: Value,
}

fn convert(b: RawFeature, index: u64) -> Result<Feature, WfsError> {
    let error = |why: String| WfsError::Feature { index, why };
    if b.tipo.as_deref() != Some("Feature") {
        return Err(error(format!(
            "\"type\" é {:?}, esperado \"Feature\"",
            b.tipo
        )));
    }
    let props = b
        .properties
        .ok_or_else(|| error("sem \"properties\"".into()))?;
    let record = validate(csv_row(&props), index).map_err(|e| match e {
        ImportError::Field {
            field, valor, why, ..
        } => error(format!("campo {field} inválido ({valor:?}): {why}")),
        other => error(other.to_string()),
    })?;
    let centre = b
        .geometry
        .map(|g| centroid(&g).map_err(|m| error(format!("geometria inválida: {m}"))))
        .transpose()?;
    let mut imovel = complete_record(record);
    if let Some((latitude, longitude)) = centre {
        imovel.latitude = Some(latitude);
        imovel.longitude = Some(longitude);
    }
    Ok(Feature { imovel })
}

/// The properties written out as CSV fields: strings as they are, numbers in their shortest
/// decimal form, `null` or a missing key as the empty string (an absent optional value).
fn csv_row(p: &Map<String, Value>) -> CsvRow<'_> {
    let text = |k: &str| match p.get(k) {
        None | Some(Value::Null) => Cow::Borrowed(""),
        Some(Value::String(s)) => Cow::Borrowed(s.trim()),
        Some(other) => Cow::Owned(other.to_string()),
    };
    CsvRow {
        cod_imovel: text("cod_imovel"),
        status_imovel: text("status_imovel"),
        dat_criacao: text("dat_criacao"),
        data_atualizacao: text("data_atualizacao"),
        area: text("area"),
        condicao: text("condicao"),
        uf: text("uf"),
        municipio: text("municipio"),
        cod_municipio_ibge: text("cod_municipio_ibge"),
        m_fiscal: text("m_fiscal"),
        tipo_imovel: text("tipo_imovel"),
    }
}

/// The area-weighted centroid `(latitude, longitude)` of a MultiPolygon (or Polygon), degrees
/// rounded to [`CENTROID_DECIMALS`] places; when it falls outside the area (a concave or split
/// property), geo's interior point instead, so the coordinates always lie on the property.
///
/// # Errors
/// The reason, in Portuguese: another geometry type, a malformed position or ring (fewer than
/// 4 positions, not closed), a coordinate out of range or outside Brazil, or no area.
pub(crate) fn centroid_of(tipo: &str, coordinates: &Value) -> Result<(Decimal, Decimal), String> {
    let polygons = match tipo {
        "MultiPolygon" => list_of(coordinates, "MultiPolygon")?
            .iter()
            .map(polygon)
            .collect::<Result<Vec<_>, _>>()?,
        "Polygon" => vec![polygon(coordinates)?],
        other => return Err(format!("tipo {other:?}, esperado MultiPolygon")),
    };
    if polygons.is_empty() {
        return Err("MultiPolygon sem polígonos".into());
    }
    let area = MultiPolygon(polygons);
    let c = area
        .centroid()
        .filter(|c| c.x().is_finite() && c.y().is_finite())
        .ok_or("polígono sem área")?;
    // The centroid of a concave property can fall outside it: then a point inside instead.
    let c = if area.contains(&c) {
        c
    } else {
        area.interior_point().unwrap_or(c)
    };
    let degree = |v: f64| {
        Decimal::try_from(v)
            .map(|d| d.round_dp(CENTROID_DECIMALS))
            .map_err(|_| format!("coordenada {v} ilegível"))
    };
    Ok((degree(c.y())?, degree(c.x())?))
}

fn centroid(g: &Geometry) -> Result<(Decimal, Decimal), String> {
    centroid_of(&g.tipo, &g.coordinates)
}

fn list_of<'v>(v: &'v Value, what: &str) -> Result<&'v Vec<Value>, String> {
    v.as_array()
        .ok_or_else(|| format!("{what}: esperada uma lista, veio {v}"))
}

fn polygon(v: &Value) -> Result<Polygon<f64>, String> {
    let mut rings = list_of(v, "polígono")?
        .iter()
        .map(ring)
        .collect::<Result<Vec<_>, _>>()?
        .into_iter();
    let exterior = rings.next().ok_or("polígono sem anéis")?;
    Ok(Polygon::new(exterior, rings.collect()))
}

fn ring(v: &Value) -> Result<LineString<f64>, String> {
    let points = list_of(v, "anel")?
        .iter()
        .map(position)
        .collect::<Result<Vec<_>, _>>()?;
    if points.len() < 4 {
        return Err(format!(
            "anel com {} posições (mínimo 4, a última igual à primeira)",
            points.len()
        ));
    }
    if points.first() != points.last() {
        return Err("anel não fechado (a última posição difere da primeira)".into());
    }
    Ok(LineString::new(points))
}

fn position(v: &Value) -> Result<Coord<f64>, String> {
    let p = v
        .as_array()
        .ok_or_else(|| format!("posição {v}: esperados [longitude, latitude]"))?;
    let (Some(x), Some(y)) = (
        p.first().and_then(Value::as_f64),
        p.get(1).and_then(Value::as_f64),
    ) else {
        return Err(format!("posição {v}: esperados [longitude, latitude]"));
    };
    let (lon_min, lat_min, lon_max, lat_max) = BRAZIL_BOUNDS;
    if !(lon_min..=lon_max).contains(&x) || !(lat_min..=lat_max).contains(&y) {
        return Err(format!(
            "posição [{x}, {y}] fora do Brasil (esperados graus longitude,latitude)"
        ));
    }
    Ok(Coord { x, y })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const PROPS: &str = r#""properties":{"cod_imovel":"DF-5300108-0000AE7221F4458582BE077E36495213","status_imovel":"AT","dat_criacao":"2019-05-14T22:30:08.576Z","data_atualizacao":null,"area":2,"condicao":"Aguardando análise","uf":"DF","municipio":"Brasília","cod_municipio_ibge":5300108,"m_fiscal":0.4,"tipo_imovel":"IRU"}"#;

    fn collection(features: &[String]) -> String {
        format!(
            r#"{{"type":"FeatureCollection","totalFeatures":{},"features":[{}],"crs":null}}"#,
            features.len(),
            features.join(",")
        )
    }

    fn feature(geometry: &str) -> String {
        format!(r#"{{"type":"Feature","id":"x.1","geometry":{geometry},{PROPS}}}"#)
    }

    const SQUARE: &str = r#"{"type":"MultiPolygon","coordinates":[[[[-47.8,-15.9],[-47.7,-15.9],[-47.7,-15.8],[-47.8,-15.8],[-47.8,-15.9]]]]}"#;

    #[test]
    fn centroide_de_um_quadrado_e_o_centro() {
        let v = read(collection(&[feature(SQUARE)]).as_bytes()).unwrap();
        assert_eq!(v[0].latitude, Some(Decimal::new(-1585, 2)));
        assert_eq!(v[0].longitude, Some(Decimal::new(-4775, 2)));
        assert_eq!(v[0].area_total_ha, Decimal::from(2));
        // 22:30 UTC on 14/05/2019 is 19:30 in Brasília.
        assert_eq!(
            carapi_sdk::domain::br::format_data(v[0].data_cadastro),
            "14/05/2019 19:30:08"
        );
        assert_eq!(v[0].data_atualizacao, None);
    }

    #[test]
    fn buraco_desloca_o_centroide() {
        let with_hole = json!({"type": "Polygon", "coordinates": [
            [[0.0, 0.0], [4.0, 0.0], [4.0, 2.0], [0.0, 2.0], [0.0, 0.0]],
            [[2.0, 0.5], [3.5, 0.5], [3.5, 1.5], [2.0, 1.5], [2.0, 0.5]]
        ]});
        // Outside Brazil on purpose: shifted into it.
        let mut v = with_hole.clone();
        for ring in v["coordinates"].as_array_mut().unwrap() {
            for p in ring.as_array_mut().unwrap() {
                p[0] = json!(p[0].as_f64().unwrap() - 50.0);
                p[1] = json!(p[1].as_f64().unwrap() - 10.0);
            }
        }
        let (lat, lon) = centroid_of("Polygon", &v["coordinates"]).unwrap();
        assert!(lon < Decimal::from(-48), "{lon}");
        assert_eq!(lat, Decimal::from(-9));
    }

    #[test]
    fn colecao_vazia_e_sem_features() {
        assert!(read(collection(&[]).as_bytes()).unwrap().is_empty());
        assert!(matches!(
            read(r#"{"type":"FeatureCollection"}"#.as_bytes()),
            Err(WfsError::Collection(_))
        ));
        assert!(matches!(
            read(r#"{"type":"Feature","features":[]}"#.as_bytes()),
            Err(WfsError::Collection(_))
        ));
        assert!(matches!(
            read("[1,2]".as_bytes()),
            Err(WfsError::Collection(_))
        ));
    }

    #[test]
    fn feicao_ruim_diz_o_indice() {
        let bad = feature(
            r#"{"type":"MultiPolygon","coordinates":[[[[-47.8,-15.9],[-47.7,-15.9],[-47.8,-15.9]]]]}"#,
        );
        let text = collection(&[feature(SQUARE), feature("null"), bad]);
        match read(text.as_bytes()) {
            Err(WfsError::Feature { index: 2, why }) => {
                assert!(why.contains("3 posições"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        let without_uf = collection(&[feature("null").replace(r#""uf":"DF","#, "")]);
        match read(without_uf.as_bytes()) {
            Err(WfsError::Feature { index: 0, why }) => {
                assert!(why.contains("campo uf"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        let integer = collection(&[feature(SQUARE), feature(SQUARE)]);
        assert!(matches!(
            read(&integer.as_bytes()[..integer.len() - 40]),
            Err(WfsError::Feature { index: 1, .. })
        ));
    }

    #[test]
    fn versao_mais_nova_por_atualizacao_depois_criacao() {
        let base = read(collection(&[feature("null")]).as_bytes())
            .unwrap()
            .remove(0);
        let at = |d: &str| chrono::NaiveDateTime::parse_from_str(d, "%Y-%m-%d %H:%M").unwrap();
        let version = |creation: &str, update: Option<&str>| Imovel {
            data_cadastro: at(creation),
            data_atualizacao: update.map(at),
            ..base.clone()
        };
        let a = version("2026-09-22 20:45", Some("2026-09-22 21:23"));
        let b = version("2026-09-22 20:00", Some("2026-09-22 21:33"));
        assert!(newest(&b, &a) && !newest(&a, &b), "atualização manda");
        let without = version("2026-09-22 23:00", None);
        assert!(
            newest(&a, &without) && !newest(&without, &a),
            "sem atualização é a mais velha"
        );
        let c = version("2026-09-22 17:40", None);
        let d = version("2026-09-22 17:37", None);
        assert!(newest(&c, &d) && !newest(&d, &c), "depois a criação");
        assert!(newest(&a, &a), "empate: a lida por último");
    }
}
