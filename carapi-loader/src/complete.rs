//! Completion of a public SICAR record into a full [`Imovel`]: the one code path behind
//! [`bundled`](super::bundled), [`import::parse_csv`](crate::import::parse_csv) and
//! [`synthetic`](crate::synthetic).
//!
//! SICAR publishes no owners, documents or matrículas (docs/dominio.md "Public SICAR record fields"),
//! so they are synthesised from an RNG seeded with the CAR code: the same code always gets the
//! same owners, matrícula, protocol and name.

use std::sync::LazyLock;

use carapi_sdk::{CodigoCar, CpfCnpj};
use chrono::NaiveDateTime;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;

use crate::fictitious::{self, Rng8};
use carapi_service::dados::{Imovel, Proprietario, StatusImovel, TipoImovel, Uf};

/// The public SICAR columns of one record, typed (what the CSV gives us).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SicarRecord {
    pub(crate) codigo_car: CodigoCar,
    pub(crate) status_imovel: StatusImovel,
    pub(crate) condicao: Option<String>,
    pub(crate) data_cadastro: NaiveDateTime,
    pub(crate) data_atualizacao: Option<NaiveDateTime>,
    pub(crate) area_total_ha: Decimal,
    pub(crate) modulos_fiscais: Option<Decimal>,
    pub(crate) tipo_imovel: TipoImovel,
    pub(crate) municipio: String,
    pub(crate) codigo_municipio_ibge: u32,
    pub(crate) uf: Uf,
}

/// Fixed fictitious owners shared by the bundled and imported records: each such record gets one
/// of them as first owner, so an owner lookup on real data returns several CARs. Documents are
/// docs/dominio.md's example numbers (valid check digits).
static KNOWN: LazyLock<Vec<Proprietario>> = LazyLock::new(|| {
    [
        ("385211390", "Fulano de Tal Exemplo"),
        ("529982247", "Beltrana Modelo de Tal"),
        ("112223330001", "Agropecuária Fictícia Boa Esperança Ltda"),
        ("111444777", "Sicrano Teste de Tal"),
        ("12ABC34501DE", "Fazendas Exemplo Santa Luzia S.A."),
        ("123456789", "Joana Amostra de Tal"),
        ("SY99M4WL0001", "Cooperativa Fictícia Vale do Sol"),
    ]
    .into_iter()
    .map(|(base, nome)| Proprietario {
        documento: CpfCnpj::from_base(base).expect("base de documento fixa inválida"),
        nome: nome.to_owned(),
    })
    .collect()
});

/// The fixed owners of [`KNOWN`].
pub(crate) fn known() -> &'static [Proprietario] {
    &KNOWN
}

/// Completes a public record: the first owner is one of the fixed [`known`], then 0 to 2
/// fresh fictitious owners, all drawn from an RNG seeded with the CAR code.
pub(crate) fn complete(r: SicarRecord) -> Imovel {
    let mut rng = Rng8::seed_from_u64(fictitious::seed_of(r.codigo_car.as_str()));
    let mut proprietarios = vec![known()[rng.random_range(0..known().len())].clone()];
    for _ in 1..fictitious::owner_count(&mut rng) {
        proprietarios.push(fictitious::proprietario(&mut rng));
    }
    complete_with(r, proprietarios, &mut rng)
}

/// Completes a record with the given owners: property name, matrícula and protocol code. No
/// position: a real record without a known position answers `null` (the contract's
/// coordinates are nullable); a position is never made up and presented as the property's
/// (the WFS reader sets a polygon's centroid, the synthetic generator its own).
///
/// A receipt exists unless the record is `PE` (pendente: not issued yet) or `CA` (cancelado);
/// requests for those get 404 `RECIBO_NAO_ENCONTRADO`.
pub(crate) fn complete_with(
    r: SicarRecord,
    proprietarios: Vec<Proprietario>,
    rng: &mut Rng8,
) -> Imovel {
    let nome_imovel = fictitious::nome_imovel(rng, r.area_total_ha);
    let (numero, data, cartorio) = fictitious::matricula(rng, r.data_cadastro, &r.municipio);
    let protocolo = fictitious::protocolo(rng, r.uf.as_str(), r.codigo_municipio_ibge);
    let has_recibo = r.status_imovel.has_recibo();
    Imovel {
        codigo_car: r.codigo_car,
        status_imovel: r.status_imovel,
        condicao: r.condicao,
        nome_imovel: Some(nome_imovel),
        area_total_ha: r.area_total_ha,
        modulos_fiscais: r.modulos_fiscais,
        data_cadastro: r.data_cadastro,
        data_atualizacao: r.data_atualizacao,
        tipo_imovel: r.tipo_imovel,
        municipio: r.municipio,
        codigo_municipio_ibge: r.codigo_municipio_ibge,
        uf: r.uf,
        codigo_protocolo: Some(protocolo),
        latitude: None,
        longitude: None,
        matricula_numero: Some(numero),
        matricula_data: Some(data),
        matricula_cartorio: Some(cartorio),
        proprietarios,
        has_recibo,
    }
}
