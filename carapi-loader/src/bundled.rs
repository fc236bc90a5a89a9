//! The generator of the 80 real public SICAR records bundled in `carapi-loader/data/` (MIT, see the LICENSE files
//! there), embedded at compile time: 20 from the public CSV in `sicar/` (10 in Brasília, DF, and
//! 10 in Sorriso, MT) and 60 from the GeoServer WFS GeoJSON in `sicar-wfs/imoveis.geojson`
//! (DF, GO, MG, MS, MT, RS, SP; 24 of them with their polygon).

use carapi_service::dados::Imovel;

use crate::import;

const IMOVEIS_DF: &str = include_str!("../data/sicar/imoveis_df.csv");
const IMOVEIS_MT: &str = include_str!("../data/sicar/imoveis_mt.csv");
const IMOVEIS_WFS: &str = include_str!("../data/sicar-wfs/imoveis.geojson");

/// The 80 bundled real records: the DF CSV, then the MT CSV, then the WFS GeoJSON, each in file
/// order, completed exactly as an import completes any file: fictitious owners (the first always
/// one of a fixed set of 7, so owners repeat across records), matrícula, protocol code, and as
/// coordinates the polygon's centroid (a point inside it when the centroid falls outside) for
/// the 24 WFS records with a geometry, the IBGE
/// centroid of the municipality for the others.
///
/// One CSV record, `DF-5300108-277959445CC745B68C065E77AB1F2B42`, has status `PE` and therefore
/// no receipt (404 `RECIBO_NAO_ENCONTRADO`), as do the WFS records in status `PE` or `CA`; the
/// others have one, including `DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47`.
///
/// Parsing the embedded files cannot fail on user input; a failure would be a broken build and
/// panics with the file's error.
pub fn bundled() -> Vec<Imovel> {
    let mut v: Vec<Imovel> = [
        ("data/sicar/imoveis_df.csv", IMOVEIS_DF),
        ("data/sicar/imoveis_mt.csv", IMOVEIS_MT),
    ]
    .into_iter()
    .flat_map(|(nome, csv)| {
        import::parse_csv(csv.as_bytes()).unwrap_or_else(|e| panic!("{nome}: {e}"))
    })
    .collect();
    v.extend(
        crate::wfs::read(IMOVEIS_WFS.as_bytes())
            .unwrap_or_else(|e| panic!("data/sicar-wfs/imoveis.geojson: {e}")),
    );
    v
}

/// [`bundled`] as `carapi-service/data/imoveis.jsonl` holds it: one JSON record per line, in
/// order, with a trailing newline (the service embeds that file and answers with it).
pub(crate) fn jsonl() -> String {
    bundled()
        .iter()
        .map(|i| serde_json::to_string(i).expect("a record serialises") + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use carapi_sdk::CodigoCar;
    use carapi_sdk::domain::dms;

    use carapi_sdk::CpfCnpj;

    use super::*;
    use crate::{complete, municipios};

    /// The service embeds `carapi-service/data/imoveis.jsonl`: it must be what this generator
    /// gives (`CARAPI_UPDATE_BUNDLED=1 cargo test -p carapi-loader bundled` rewrites it).
    #[test]
    fn bundled_file_of_the_service_is_the_generated_one() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../carapi-service/data/imoveis.jsonl"
        );
        let generated = jsonl();
        if std::env::var_os("CARAPI_UPDATE_BUNDLED").is_some() {
            std::fs::write(path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(path).expect("the bundled file exists");
        assert!(
            committed == generated,
            "carapi-service/data/imoveis.jsonl is out of date: run `CARAPI_UPDATE_BUNDLED=1 cargo test -p carapi-loader bundled` and commit it"
        );
        assert_eq!(carapi_service::dados::bundled(), bundled());
        assert_eq!(
            carapi_service::dados::example_documento(),
            complete::known()[0].documento
        );
    }

    #[test]
    fn oitenta_registros_reais_com_codigos_validos() {
        let v = bundled();
        assert_eq!(v.len(), 80);
        let codigos: HashSet<&str> = v.iter().map(|i| i.codigo_car.as_str()).collect();
        assert_eq!(codigos.len(), 80);
        let mut with_polygon = 0;
        for (n, i) in v.iter().enumerate() {
            assert_eq!(
                CodigoCar::parse(i.codigo_car.as_str()).as_ref(),
                Ok(&i.codigo_car)
            );
            assert!(!i.codigo_car.is_sandbox());
            assert!((1..=3).contains(&i.proprietarios.len()));
            for p in &i.proprietarios {
                assert_eq!(
                    CpfCnpj::parse(p.documento.formatted()).as_ref(),
                    Ok(&p.documento)
                );
                assert!(!p.nome.is_empty());
            }
            assert!(
                municipios::by_code(i.codigo_municipio_ibge).is_some(),
                "município"
            );
            assert_eq!(i.latitude.is_some(), i.longitude.is_some());
            if i.latitude.is_some() {
                assert!(n >= 20, "os do CSV não têm posição: nunca uma inventada");
                with_polygon += 1;
            }
            let cartorio = i.matricula_cartorio.as_deref().unwrap_or_default();
            assert!(
                cartorio.ends_with(&format!("{} (fictício)", i.municipio)),
                "{cartorio}"
            );
        }
        assert_eq!(
            with_polygon, 24,
            "os 24 do WFS com polígono têm o centroide dele"
        );
    }

    #[test]
    fn registro_conhecido_tem_os_valores_do_sicar_e_recibo() {
        let v = bundled();
        let i = v
            .iter()
            .find(|i| i.codigo_car.as_str() == "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47")
            .expect("registro DF conhecido");
        assert!(i.has_recibo);
        let d = i.dados_completos();
        assert_eq!(d.basicos.area_total_ha.as_deref(), Some("2,0131"));
        assert_eq!(d.basicos.modulos_fiscais.as_deref(), Some("0,4026"));
        assert_eq!(
            d.basicos.data_cadastro.as_deref(),
            Some("09/05/2014 17:16:10")
        );
        assert_eq!(d.basicos.uf.as_deref(), Some("Distrito Federal"));
        assert_eq!(d.basicos.municipio.as_deref(), Some("Brasília"));
        assert_eq!(d.basicos.tipo_imovel.as_deref(), Some("IRU"));
        assert_eq!(
            i.condicao.as_deref(),
            Some("Analisado, aguardando atendimento a notificação")
        );
        assert_eq!(
            i.data_atualizacao
                .map(carapi_sdk::domain::br::format_data)
                .as_deref(),
            Some("12/11/2018 11:49:43")
        );
        // The public CSV carries no position: `null`, never the municipal seat's.
        assert_eq!(d.basicos.latitude, None);
        assert_eq!(d.basicos.longitude, None);
        let protocolo = d.basicos.codigo_protocolo.unwrap_or_default();
        assert!(
            protocolo.starts_with("DF-5300108-") && protocolo.len() == 11 + 39,
            "{protocolo}"
        );
    }

    #[test]
    fn coordenadas_no_formato_do_contrato() {
        for i in bundled() {
            let d = i.dados_basicos();
            for (s, end) in [(d.latitude, " S"), (d.longitude, " O")] {
                let Some(s) = s else { continue };
                assert!(s.ends_with(end), "{s}");
                let (degrees, rest) = s.split_once('°').expect("°");
                let (min, seg) = rest.split_once('\'').expect("'");
                let seg = seg.trim_end_matches(end);
                let (int, cent) = seg.split_once(',').expect(",");
                assert!(degrees.parse::<u8>().is_ok() && min.len() == 2 && int.len() == 2);
                assert_eq!(cent.len(), 2, "{s}");
                assert!(dms::parse(&s).is_ok(), "{s}");
            }
        }
    }

    #[test]
    fn sem_recibo_so_pendentes_e_cancelados() {
        let v = bundled();
        let without: Vec<&str> = v[..20]
            .iter()
            .filter(|i| !i.has_recibo)
            .map(|i| i.codigo_car.as_str())
            .collect();
        assert_eq!(without, ["DF-5300108-277959445CC745B68C065E77AB1F2B42"]);
        for i in &v {
            let pending = matches!(i.status_imovel.as_str(), "PE" | "CA");
            assert_eq!(i.has_recibo, !pending, "{}", i.codigo_car);
        }
        assert_eq!(v.iter().filter(|i| !i.has_recibo).count(), 7);
    }

    #[test]
    fn documento_de_exemplo_tem_varios_cars() {
        let doc = carapi_service::dados::example_documento();
        assert_eq!(doc.formatted(), "385.211.390-39");
        let cars: HashSet<String> = bundled()
            .into_iter()
            .filter(|i| i.proprietarios.iter().any(|p| p.documento == doc))
            .map(|i| i.codigo_car.to_string())
            .collect();
        assert_eq!(cars.len(), 5, "{cars:?}");
    }

    #[test]
    fn completar_e_deterministico() {
        assert_eq!(bundled(), bundled());
    }
}
