//! CAR records the reference server answers with: the bundled real SICAR records (completed with
//! synthetic owners, matrículas and coordinates), CSV import in the public SICAR columns, and a
//! deterministic synthetic generator.
//!
//! - [`bundled`]: the 80 real SICAR records in `carapi-service/data/sicar/` (CSV) and
//!   `carapi-service/data/sicar-wfs/` (WFS GeoJSON); [`exemplo_documento`] owns several of them.
//! - [`import::parse_csv`]: any file in the public SICAR columns, completed the same way.
//! - [`sinteticos`]: `n` records for a seed; [`grandes_proprietarios`] own more than 200 each.
//! - [`municipios`]: the IBGE municipality and state lists (centroids).
//! - `sandbox`: the fixed answers of the contract's reserved values.
//!
//! SICAR publishes no owners or matrículas: every record is completed with plainly fictitious
//! owners (valid CPF/CNPJ check digits), a matrícula in a fictitious cartório, a made-up protocol
//! code `UF-IIIIIII-XXXX.XXXX.XXXX.XXXX.XXXX.XXXX.XXXX.XXXX` and the municipality's IBGE centroid
//! as coordinates, all seeded from the CAR code so every run gives the same data.

mod completar;
mod embutidos;
mod ficticios;
pub mod import;
mod linhas_csv;
pub mod municipios;
pub(crate) mod sandbox;
mod sinteticos;

pub use embutidos::{bundled, exemplo_documento};
pub use sinteticos::{
    BLOCO, CARS_POR_GRANDE, MINIMO_PARA_GRANDES, Sinteticos, grandes_proprietarios, sinteticos,
};

use carapi_sdk::domain::{br, dms, uf};
use carapi_sdk::{CarDadosBasicos, CarDadosCompletos, CodigoCar, CpfCnpj};
use chrono::NaiveDateTime;
use rust_decimal::Decimal;

/// One owner of a CAR record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proprietario {
    /// CPF or CNPJ with valid check digits.
    pub documento: CpfCnpj,
    /// Name (plainly fictitious in synthetic data).
    pub nome: String,
}

/// A CAR record as the server stores it: typed values, formatted into the registry's strings
/// only at the edge ([`Imovel::dados_basicos`], [`Imovel::dados_completos`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imovel {
    /// The CAR code.
    pub codigo_car: CodigoCar,
    /// SICAR `status_imovel`: `AT`, `PE`, `SU` or `CA`.
    pub status_imovel: String,
    /// SICAR `condicao` (analysis stage), free text.
    pub condicao: Option<String>,
    /// Property name.
    pub nome_imovel: Option<String>,
    /// Total area, hectares.
    pub area_total_ha: Decimal,
    /// Fiscal modules.
    pub modulos_fiscais: Option<Decimal>,
    /// Registration date-time (Brasília local time).
    pub data_cadastro: NaiveDateTime,
    /// Last update in the origin base (Brasília local time); `dataExpiracao` of the response.
    pub data_atualizacao: Option<NaiveDateTime>,
    /// `IRU`, `AST` or `PCT`.
    pub tipo_imovel: String,
    /// Municipality name.
    pub municipio: String,
    /// IBGE municipality code (7 digits) of the record's current municipality.
    pub codigo_municipio_ibge: u32,
    /// Two-letter UF.
    pub uf: String,
    /// Registration protocol code.
    pub codigo_protocolo: Option<String>,
    /// Centroid latitude, decimal degrees.
    pub latitude: Option<Decimal>,
    /// Centroid longitude, decimal degrees.
    pub longitude: Option<Decimal>,
    /// Matrícula number.
    pub matricula_numero: Option<String>,
    /// Matrícula date, `dd/MM/yyyy`.
    pub matricula_data: Option<String>,
    /// Registry office (cartório).
    pub matricula_cartorio: Option<String>,
    /// Owners, in order.
    pub proprietarios: Vec<Proprietario>,
    /// Whether a receipt PDF exists for the record (404 `RECIBO_NAO_ENCONTRADO` when false).
    pub tem_recibo: bool,
}

impl Imovel {
    /// The record as the contract's `CarDadosBasicos`: areas and módulos with a decimal comma and
    /// 4 decimals, dates `dd/MM/yyyy HH:mm:ss`, coordinates in DMS, `uf` written out in full.
    pub fn dados_basicos(&self) -> CarDadosBasicos {
        CarDadosBasicos {
            codigo_car: self.codigo_car.to_string(),
            nome_imovel: self.nome_imovel.clone(),
            area_total_ha: Some(br::format_decimal(self.area_total_ha, 4)),
            data_cadastro: Some(br::format_data(self.data_cadastro)),
            matricula_numero: self.matricula_numero.clone(),
            matricula_data: self.matricula_data.clone(),
            matricula_cartorio: self.matricula_cartorio.clone(),
            tipo_imovel: Some(self.tipo_imovel.clone()),
            municipio: Some(self.municipio.clone()),
            uf: Some(uf::nome(&self.uf).unwrap_or(&self.uf).to_owned()),
            codigo_protocolo: self.codigo_protocolo.clone(),
            latitude: self.latitude.map(|v| dms::format(v, dms::Eixo::Latitude)),
            longitude: self.longitude.map(|v| dms::format(v, dms::Eixo::Longitude)),
            modulos_fiscais: self.modulos_fiscais.map(|m| br::format_decimal(m, 4)),
        }
    }

    /// The record as `CarDadosCompletos`: the basic fields plus owner names and formatted
    /// documents, each joined with `", "`.
    pub fn dados_completos(&self) -> CarDadosCompletos {
        let join = |f: &dyn Fn(&Proprietario) -> String| {
            (!self.proprietarios.is_empty()).then(|| {
                self.proprietarios
                    .iter()
                    .map(f)
                    .collect::<Vec<_>>()
                    .join(", ")
            })
        };
        CarDadosCompletos {
            basicos: self.dados_basicos(),
            proprietarios_nomes: join(&|p| p.nome.clone()),
            proprietarios_cpfs: join(&|p| p.documento.formatado()),
        }
    }
}
