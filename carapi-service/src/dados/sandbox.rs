//! Fixed example data for the contract's reserved sandbox values (contract, "Sandbox";
//! [`carapi_sdk::sandbox`]). Nothing here reads the base: the server answers reserved values from
//! these functions and marks the responses `sandbox: true`.

use carapi_sdk::{CodigoCar, CpfCnpj, ProprietarioItem, ProprietarioResponse, sandbox};
use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::{Imovel, Proprietario, StatusImovel, TipoImovel, Uf};

/// Ceiling of items per owner lookup (contract, "Limits": 200).
pub(crate) const ITEMS_LIMIT: u32 = 200;

/// The example record answered for [`sandbox::CAR_BASICO`] by the basic, complete and receipt
/// lookups (the receipt is rendered from it): a 12.3456 ha chácara in Brasília (DF) at the
/// IBGE centroid of Brasília, one fictitious CPF owner (`000.000.001-91`, "Fulano de Tal
/// Sandbox"), registered 15/01/2020 10:30:00, with a receipt.
pub(crate) fn imovel() -> Imovel {
    let data = |y, m, d, h, min, s| {
        NaiveDate::from_ymd_opt(y, m, d)
            .and_then(|day| day.and_hms_opt(h, min, s))
            .expect("data fixa do sandbox")
    };
    Imovel {
        codigo_car: CodigoCar::parse(sandbox::CAR_BASICO).expect("código sandbox"),
        status_imovel: StatusImovel::Ativo,
        condicao: Some("Aguardando análise".to_owned()),
        nome_imovel: Some("Chácara Sandbox Exemplo".to_owned()),
        area_total_ha: Decimal::new(12_3456, 4),
        modulos_fiscais: Some(Decimal::new(2_4691, 4)),
        data_cadastro: data(2020, 1, 15, 10, 30, 0),
        data_atualizacao: Some(data(2023, 6, 1, 9, 0, 0)),
        tipo_imovel: TipoImovel::Rural,
        municipio: "Brasília".to_owned(),
        codigo_municipio_ibge: 5300108,
        uf: Uf::parse("DF").expect("UF do sandbox"),
        codigo_protocolo: Some("DF-5300108-0000.0000.0000.0000.0000.0000.0000.0001".to_owned()),
        // Centroid of Brasília in the IBGE list (carapi-loader/data/ibge/municipios.csv).
        latitude: Some(Decimal::new(-157_795, 4)),
        longitude: Some(Decimal::new(-479_297, 4)),
        matricula_numero: Some("12345".to_owned()),
        matricula_data: Some("10/03/2008".to_owned()),
        matricula_cartorio: Some(
            "Cartório de Registro de Imóveis de Brasília (fictício)".to_owned(),
        ),
        proprietarios: vec![Proprietario {
            documento: CpfCnpj::from_base("000000001").expect("CPF fixo do sandbox"),
            nome: "Fulano de Tal Sandbox".to_owned(),
        }],
        has_recibo: true,
    }
}

/// The owner-lookup answer for a reserved document, `None` for any other value (including
/// [`sandbox::CPF_NAO_ENCONTRADO`], which the server answers with 404
/// `CPF_CNPJ_NAO_ENCONTRADO`). `documento` is the bare form, as the contract lists it.
///
/// - [`sandbox::CPF_DOIS_CARS`] (`00000000000`): 2 items, `total` 2, `truncado` false.
/// - [`sandbox::CNPJ_TRUNCADO`] (`00000000000000`): 200 items, `total` 200, `truncado` true.
///
/// Both have `sandbox: true`, `limite` 200 and items ordered by CAR code. The last item of each is
/// [`sandbox::CAR_BASICO`] (so a client can follow it up in the sandbox); the others are fixed,
/// obviously fake codes `DF-5300108-000…0NNN` that exist in no base.
pub(crate) fn proprietario(documento: &str) -> Option<ProprietarioResponse> {
    let (how_many, truncado) = match documento.trim() {
        sandbox::CPF_DOIS_CARS => (2, false),
        sandbox::CNPJ_TRUNCADO => (ITEMS_LIMIT, true),
        _ => return None,
    };
    let consultado = CpfCnpj::parse(documento.trim()).ok().map(|d| d.formatted());
    let example = imovel();
    let mut itens: Vec<ProprietarioItem> = (1..how_many)
        .map(|i| ProprietarioItem {
            registro_car: format!("DF-5300108-{i:032X}"),
            codigo_protocolo: Some(format!(
                "DF-5300108-0000.0000.0000.0000.0000.0000.0001.{i:04X}"
            )),
            nome_imovel: Some(format!("Sítio Sandbox {i}")),
            matricula_numero: Some(format!("{}", 10_000 + i)),
            municipio: Some("Brasília".to_owned()),
            uf: Some("Distrito Federal".to_owned()),
            area_total_ha: Some(format!("{},{:04}", 10 + i % 90, (i * 37) % 10_000)),
            proprietario_consultado: consultado.clone(),
        })
        .collect();
    let basicos = example.dados_basicos();
    itens.push(ProprietarioItem {
        registro_car: basicos.codigo_car,
        codigo_protocolo: basicos.codigo_protocolo,
        nome_imovel: basicos.nome_imovel,
        matricula_numero: basicos.matricula_numero,
        municipio: basicos.municipio,
        uf: basicos.uf,
        area_total_ha: basicos.area_total_ha,
        proprietario_consultado: consultado,
    });
    itens.sort_by(|a, b| a.registro_car.cmp(&b.registro_car));
    Some(ProprietarioResponse {
        success: true,
        sandbox: true,
        total: how_many,
        limite: ITEMS_LIMIT,
        truncado,
        itens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imovel_do_sandbox_tem_os_campos_do_contrato() {
        let d = imovel().dados_completos();
        assert_eq!(d.basicos.codigo_car, sandbox::CAR_BASICO);
        assert_eq!(d.basicos.area_total_ha.as_deref(), Some("12,3456"));
        assert_eq!(d.basicos.modulos_fiscais.as_deref(), Some("2,4691"));
        assert_eq!(d.basicos.uf.as_deref(), Some("Distrito Federal"));
        assert_eq!(
            d.basicos.data_cadastro.as_deref(),
            Some("15/01/2020 10:30:00")
        );
        assert_eq!(d.basicos.latitude.as_deref(), Some("15°46'46,20 S"));
        assert_eq!(d.basicos.longitude.as_deref(), Some("47°55'46,92 O"));
        assert_eq!(d.proprietarios_cpfs.as_deref(), Some("000.000.001-91"));
        assert!(imovel().has_recibo);
    }

    #[test]
    fn coordenadas_do_sandbox_sao_o_centroide_do_ibge() {
        // The IBGE centroid of Brasília (carapi-loader checks its list gives the same).
        let i = imovel();
        assert_eq!(
            (i.latitude, i.longitude),
            (
                Some(Decimal::new(-157_795, 4)),
                Some(Decimal::new(-479_297, 4))
            )
        );
    }

    #[test]
    fn documento_com_dois_cars() {
        let r = proprietario("00000000000").expect("reservado");
        assert!(r.success && r.sandbox && !r.truncado);
        assert_eq!((r.total, r.limite, r.itens.len()), (2, 200, 2));
        assert_eq!(r.itens[1].registro_car, sandbox::CAR_BASICO);
        assert_eq!(
            r.itens[0].proprietario_consultado.as_deref(),
            Some("000.000.000-00")
        );
    }

    #[test]
    fn documento_truncado_tem_200_itens_ordenados_e_distintos() {
        let r = proprietario("00000000000000").expect("reservado");
        assert!(r.sandbox && r.truncado);
        assert_eq!((r.total, r.limite, r.itens.len()), (200, 200, 200));
        assert!(
            r.itens
                .windows(2)
                .all(|w| w[0].registro_car < w[1].registro_car)
        );
        for item in &r.itens {
            let codigo = CodigoCar::parse(&item.registro_car).expect(&item.registro_car);
            assert_eq!(codigo.as_str(), item.registro_car);
            let area = item.area_total_ha.as_deref().unwrap_or_default();
            assert!(
                carapi_sdk::domain::br::parse_decimal(area).is_ok(),
                "{area}"
            );
            assert_eq!(area.split(',').nth(1).map(str::len), Some(4), "{area}");
        }
    }

    #[test]
    fn outros_documentos_nao_sao_do_sandbox() {
        assert!(proprietario(sandbox::CPF_NAO_ENCONTRADO).is_none());
        assert!(proprietario("52998224725").is_none());
    }
}
