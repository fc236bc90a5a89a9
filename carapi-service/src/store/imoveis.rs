//! CAR records and their owners as stored.

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, CpfCnpj};

use super::StoreError;
use crate::dados::Imovel;

/// CAR records and their owners.
#[async_trait]
pub trait ImoveisStore {
    /// Number of stored records.
    async fn count_imoveis(&self) -> Result<u64, StoreError>;
    /// Inserts or replaces records by CAR code (idempotent); returns how many were written.
    async fn write_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError>;
    /// The record of `codigo`.
    async fn imovel(&self, codigo: &CodigoCar) -> Result<Option<Imovel>, StoreError>;
    /// The first `limite` records tied to `documento`, ordered by CAR code, and whether there
    /// are more.
    async fn imoveis_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError>;
    /// What `GET /v1/proprietario/{cpfCnpj}` shows of the first `limite` records tied to
    /// `documento`, ordered by CAR code, and whether there are more: one indexed query reading
    /// only the item's columns (no owners, no dates), whatever the owner's size.
    async fn itens_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<OwnerImovel>, bool), StoreError>;
}

/// The columns of a record that an owner lookup's item shows (contract, `ProprietarioItem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerImovel {
    /// CAR code.
    pub codigo_car: CodigoCar,
    /// Protocol number.
    pub(crate) codigo_protocolo: Option<String>,
    /// Property name.
    pub(crate) nome_imovel: Option<String>,
    /// Registry (matrícula) number.
    pub(crate) matricula_numero: Option<String>,
    /// Municipality name.
    pub(crate) municipio: String,
    /// State code (`MT`).
    pub(crate) uf: crate::dados::Uf,
    /// Total area, hectares.
    pub(crate) area_total_ha: rust_decimal::Decimal,
}

impl From<&Imovel> for OwnerImovel {
    fn from(i: &Imovel) -> Self {
        OwnerImovel {
            codigo_car: i.codigo_car.clone(),
            codigo_protocolo: i.codigo_protocolo.clone(),
            nome_imovel: i.nome_imovel.clone(),
            matricula_numero: i.matricula_numero.clone(),
            municipio: i.municipio.clone(),
            uf: i.uf,
            area_total_ha: i.area_total_ha,
        }
    }
}
