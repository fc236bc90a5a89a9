//! Import of CAR records in the public SICAR CSV columns (DOMAIN.md "Public SICAR record
//! fields"; the files in `carapi-server/data/sicar/` are examples):
//!
//! `FID,cod_imovel,status_imovel,dat_criacao,data_atualizacao,area,condicao,uf,municipio,cod_municipio_ibge,m_fiscal,tipo_imovel`
//!
//! `FID` is optional and ignored; extra columns are ignored. Each row is checked and completed
//! exactly as the bundled records are (synthetic owners, matrícula, protocol, centroid), so
//! importing the same file twice gives the same records.

use std::io::Read;
use std::str::FromStr;

use carapi_sdk::CodigoCar;
use carapi_sdk::domain::{br, uf};
use chrono::NaiveDateTime;
use rust_decimal::Decimal;
use serde::Deserialize;

use super::completar::{RegistroSicar, completar};
use super::{Imovel, municipios};

/// The columns an import file must have (any order; others are ignored).
pub const COLUNAS: [&str; 11] = [
    "cod_imovel",
    "status_imovel",
    "dat_criacao",
    "data_atualizacao",
    "area",
    "condicao",
    "uf",
    "municipio",
    "cod_municipio_ibge",
    "m_fiscal",
    "tipo_imovel",
];

/// Why an import file was refused. Nothing is imported when any row is bad.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The header lacks required columns (see [`COLUNAS`]).
    #[error("cabeçalho sem as colunas obrigatórias: {}", faltando.join(", "))]
    Cabecalho {
        /// The missing column names.
        faltando: Vec<&'static str>,
    },
    /// The file is not readable CSV at this line (I/O error, bad UTF-8, wrong field count).
    #[error("linha {linha}: CSV ilegível: {source}")]
    Csv {
        /// 1-based line number in the file (the header is line 1).
        linha: u64,
        /// The parser's error.
        #[source]
        source: csv::Error,
    },
    /// A field holds a value the registry does not allow.
    #[error("linha {linha}: campo {campo} inválido ({valor:?}): {motivo}")]
    Campo {
        /// 1-based line number in the file (the header is line 1).
        linha: u64,
        /// Column name.
        campo: &'static str,
        /// The value as found.
        valor: String,
        /// What is expected, in Portuguese.
        motivo: String,
    },
}

#[derive(Deserialize)]
struct Linha {
    cod_imovel: String,
    status_imovel: String,
    dat_criacao: String,
    data_atualizacao: String,
    area: String,
    condicao: String,
    uf: String,
    municipio: String,
    cod_municipio_ibge: String,
    m_fiscal: String,
    tipo_imovel: String,
}

/// Parses a SICAR CSV (UTF-8, comma-separated, header row, optional byte-order mark) into
/// completed records, in file order.
///
/// Rules per row: `cod_imovel` a valid CAR code (not a sandbox code); `status_imovel` one of
/// `AT`, `PE`, `SU`, `CA`; `dat_criacao` required and `data_atualizacao` optional, ISO
/// (`2014-05-09T17:16:10.119`) or `dd/MM/yyyy HH:mm:ss`; `area` (hectares) and optional
/// `m_fiscal` non-negative decimals with a dot or a comma; `uf` a known UF agreeing with the
/// first two digits of `cod_municipio_ibge`, itself a real IBGE municipality; `tipo_imovel` one
/// of `IRU`, `AST`, `PCT`; an empty `municipio` takes the IBGE name.
///
/// # Errors
/// [`ImportError`] naming the line and the field of the first bad row.
pub fn parse_csv(input: impl Read) -> Result<Vec<Imovel>, ImportError> {
    let mut leitor = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(input);
    let cabecalho: csv::StringRecord = leitor
        .headers()
        .map_err(|source| ImportError::Csv { linha: 1, source })?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}'))
        .collect();
    let faltando: Vec<&'static str> = COLUNAS
        .iter()
        .copied()
        .filter(|c| !cabecalho.iter().any(|h| h == *c))
        .collect();
    if !faltando.is_empty() {
        return Err(ImportError::Cabecalho { faltando });
    }

    let mut imoveis = Vec::new();
    for registro in leitor.records() {
        let linha_de = |e: &csv::Error| e.position().map_or(0, csv::Position::line);
        let registro = registro.map_err(|source| ImportError::Csv {
            linha: linha_de(&source),
            source,
        })?;
        let linha = registro.position().map_or(0, csv::Position::line);
        let campos: Linha = registro
            .deserialize(Some(&cabecalho))
            .map_err(|source| ImportError::Csv { linha, source })?;
        imoveis.push(completar(validar(campos, linha)?));
    }
    Ok(imoveis)
}

fn validar(l: Linha, linha: u64) -> Result<RegistroSicar, ImportError> {
    let erro = |campo: &'static str, valor: &str, motivo: &str| ImportError::Campo {
        linha,
        campo,
        valor: valor.to_owned(),
        motivo: motivo.to_owned(),
    };
    let codigo_car = CodigoCar::parse(&l.cod_imovel)
        .ok()
        .filter(|c| !c.is_sandbox())
        .ok_or_else(|| {
            erro(
                "cod_imovel",
                &l.cod_imovel,
                "esperado UF-IIIIIII-<32 hexadecimais>",
            )
        })?;
    let status_imovel = l.status_imovel.to_ascii_uppercase();
    if !matches!(status_imovel.as_str(), "AT" | "PE" | "SU" | "CA") {
        return Err(erro(
            "status_imovel",
            &l.status_imovel,
            "esperado AT, PE, SU ou CA",
        ));
    }
    let data_cadastro = data(&l.dat_criacao).ok_or_else(|| {
        erro(
            "dat_criacao",
            &l.dat_criacao,
            "esperada data ISO ou dd/MM/yyyy HH:mm:ss",
        )
    })?;
    let data_atualizacao = match l.data_atualizacao.as_str() {
        "" => None,
        s => Some(data(s).ok_or_else(|| {
            erro(
                "data_atualizacao",
                s,
                "esperada data ISO ou dd/MM/yyyy HH:mm:ss",
            )
        })?),
    };
    let area_total_ha = decimal(&l.area)
        .ok_or_else(|| erro("area", &l.area, "esperado número de hectares não negativo"))?;
    let modulos_fiscais = match l.m_fiscal.as_str() {
        "" => None,
        s => Some(decimal(s).ok_or_else(|| erro("m_fiscal", s, "esperado número não negativo"))?),
    };
    let codigo_municipio_ibge: u32 = l.cod_municipio_ibge.parse().map_err(|_| {
        erro(
            "cod_municipio_ibge",
            &l.cod_municipio_ibge,
            "esperados 7 dígitos",
        )
    })?;
    let municipio_ibge = municipios::por_codigo(codigo_municipio_ibge).ok_or_else(|| {
        erro(
            "cod_municipio_ibge",
            &l.cod_municipio_ibge,
            "município inexistente na lista do IBGE",
        )
    })?;
    let sigla = l.uf.to_ascii_uppercase();
    match uf::codigo_ibge(&sigla) {
        Some(c) if c == municipio_ibge.codigo_uf => {}
        Some(_) => {
            return Err(erro(
                "uf",
                &l.uf,
                "UF diferente da do código IBGE do município",
            ));
        }
        None => return Err(erro("uf", &l.uf, "esperada sigla de UF (ex.: DF)")),
    }
    let tipo_imovel = l.tipo_imovel.to_ascii_uppercase();
    if !matches!(tipo_imovel.as_str(), "IRU" | "AST" | "PCT") {
        return Err(erro(
            "tipo_imovel",
            &l.tipo_imovel,
            "esperado IRU, AST ou PCT",
        ));
    }
    let municipio = if l.municipio.is_empty() {
        municipio_ibge.nome.clone()
    } else {
        l.municipio
    };
    Ok(RegistroSicar {
        codigo_car,
        status_imovel,
        condicao: (!l.condicao.is_empty()).then_some(l.condicao),
        data_cadastro,
        data_atualizacao,
        area_total_ha,
        modulos_fiscais,
        tipo_imovel,
        municipio,
        codigo_municipio_ibge,
        uf: sigla,
    })
}

/// ISO date-time with optional fraction (`2014-10-19T02:49:37.37`, `T` or space), or the
/// registry's `dd/MM/yyyy HH:mm:ss`.
fn data(s: &str) -> Option<NaiveDateTime> {
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
        .or_else(|| br::parse_data(s).ok())
}

/// A non-negative decimal written with a dot (`2.0131`) or a decimal comma (`2,0131`).
fn decimal(s: &str) -> Option<Decimal> {
    Decimal::from_str(s)
        .ok()
        .or_else(|| br::parse_decimal(s).ok())
        .filter(|d| !d.is_sign_negative())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CABECALHO: &str = "FID,cod_imovel,status_imovel,dat_criacao,data_atualizacao,area,condicao,uf,municipio,cod_municipio_ibge,m_fiscal,tipo_imovel\n";
    const BOA: &str = "x.1,DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47,AT,2014-05-09T17:16:10.119,2018-11-12T11:49:43.665,2.0131,\"Analisado, aguardando\",DF,Brasília,5300108,0.4026,IRU\n";

    fn erro_de(linha_ruim: &str) -> ImportError {
        let csv = format!("{CABECALHO}{BOA}{linha_ruim}");
        parse_csv(csv.as_bytes()).expect_err(linha_ruim)
    }

    #[test]
    fn importa_linha_boa_com_bom_e_sem_fid() {
        let csv = format!("\u{feff}{}{}", &CABECALHO[4..], &BOA[4..]);
        let v = parse_csv(csv.as_bytes()).expect("válido");
        assert_eq!(v.len(), 1);
        assert_eq!(
            v[0].codigo_car.as_str(),
            "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"
        );
        assert_eq!(v[0].condicao.as_deref(), Some("Analisado, aguardando"));
        assert_eq!(v[0].area_total_ha.to_string(), "2.0131");
        assert_eq!(br::format_data(v[0].data_cadastro), "09/05/2014 17:16:10");
    }

    #[test]
    fn mesma_linha_mesma_complecao() {
        let a = parse_csv(format!("{CABECALHO}{BOA}").as_bytes()).expect("válido");
        let b = parse_csv(format!("{CABECALHO}{BOA}").as_bytes()).expect("válido");
        assert_eq!(a, b);
    }

    #[test]
    fn erros_dizem_linha_e_campo() {
        let casos = [
            (
                BOA.replace("DF-5300108-B69B", "DF-5300108-XXXX"),
                "cod_imovel",
            ),
            (BOA.replace(",AT,", ",XX,"), "status_imovel"),
            (
                BOA.replace("2014-05-09T17:16:10.119", "ontem"),
                "dat_criacao",
            ),
            (
                BOA.replace("2018-11-12T11:49:43.665", "2018-13-12T11:49:43"),
                "data_atualizacao",
            ),
            (BOA.replace(",2.0131,", ",-2,"), "area"),
            (BOA.replace(",0.4026,", ",abc,"), "m_fiscal"),
            (BOA.replace(",DF,", ",MT,"), "uf"),
            (BOA.replace(",5300108,", ",5399999,"), "cod_municipio_ibge"),
            (BOA.replace(",IRU", ",XYZ"), "tipo_imovel"),
        ];
        for (linha, esperado) in casos {
            match erro_de(&linha) {
                ImportError::Campo {
                    linha: 3, campo, ..
                } => assert_eq!(campo, esperado),
                outro => panic!("{esperado}: {outro}"),
            }
        }
        let msg = erro_de(&BOA.replace(",IRU", ",XYZ")).to_string();
        assert!(msg.starts_with("linha 3: campo tipo_imovel"), "{msg}");
    }

    #[test]
    fn sandbox_e_recusado() {
        let linha = BOA.replace(
            "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47",
            carapi_sdk::sandbox::CAR_BASICO,
        );
        assert!(matches!(
            erro_de(&linha),
            ImportError::Campo {
                campo: "cod_imovel",
                ..
            }
        ));
    }

    #[test]
    fn numero_de_campos_errado_e_cabecalho_incompleto() {
        assert!(matches!(
            erro_de("a,b,c\n"),
            ImportError::Csv { linha: 3, .. }
        ));
        match parse_csv("cod_imovel,area\n".as_bytes()) {
            Err(ImportError::Cabecalho { faltando }) => {
                assert!(faltando.contains(&"status_imovel") && !faltando.contains(&"area"))
            }
            outro => panic!("{outro:?}"),
        }
    }

    #[test]
    fn aceita_datas_e_numeros_no_padrao_brasileiro() {
        let linha = BOA
            .replace("2014-05-09T17:16:10.119", "09/05/2014 17:16:10")
            .replace(",2.0131,", ",\"2,0131\",");
        let v = parse_csv(format!("{CABECALHO}{linha}").as_bytes()).expect("válido");
        assert_eq!(v[0].area_total_ha.to_string(), "2.0131");
        assert_eq!(br::format_data(v[0].data_cadastro), "09/05/2014 17:16:10");
    }
}
