//! CAR records and their owners.

use async_trait::async_trait;
use std::collections::HashMap;

use carapi_sdk::{CodigoCar, CpfCnpj};
use sqlx::Row;

use super::PgStore;
use super::rows::{IMOVEL_COLUMNS, corrupt, imovel_of, owner_item_of, proprietarios_of};
use crate::dados::{Imovel, Proprietario};
use crate::store::{ImoveisStore, OwnerImovel, StoreError};

/// Records written per transaction by [`write_imoveis`].
const BATCH: usize = 2000;

/// The first codes of an owner, by the index `(documento, codigo_car)`: binds the document and
/// how many codes.
pub const CODIGOS_DO_DOCUMENTO: &str = "SELECT DISTINCT codigo_car FROM imovel_proprietarios WHERE documento = $1 ORDER BY codigo_car LIMIT $2";
/// The item columns of the first `$2` records of owner `$1`, in code order (one query: the
/// owner index gives the codes in order, each record by primary key).
pub const ITENS_DO_DOCUMENTO: &str = "SELECT i.codigo_car, i.codigo_protocolo, i.nome_imovel,
    i.matricula_numero, i.municipio, i.uf, i.area_total_ha::text AS area_total_ha
  FROM (SELECT DISTINCT codigo_car FROM imovel_proprietarios WHERE documento = $1
        ORDER BY codigo_car LIMIT $2) d
  JOIN imoveis i ON i.codigo_car = d.codigo_car
  ORDER BY d.codigo_car";
/// The owners of an array of codes, by primary key `(codigo_car, ordem)`, in stored order.
pub const OWNERS_BY_CODIGOS: &str = "SELECT codigo_car, documento, nome FROM imovel_proprietarios WHERE codigo_car = ANY($1) ORDER BY codigo_car, ordem";

/// The records of an array of codes, by primary key, in code order.
pub fn imoveis_by_codigos() -> String {
    format!("SELECT {IMOVEL_COLUMNS} FROM imoveis WHERE codigo_car = ANY($1) ORDER BY codigo_car")
}

#[async_trait]
impl ImoveisStore for PgStore {
    async fn count_imoveis(&self) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM imoveis")
            .fetch_one(&self.pool)
            .await?;
        Ok(n.unsigned_abs())
    }

    async fn write_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError> {
        let mut total = 0;
        for batch in imoveis.chunks(BATCH) {
            let mut tx = self.pool.begin().await?;
            for i in batch {
                let codigo = i.codigo_car.as_str();
                sqlx::query(
                "INSERT INTO imoveis (codigo_car, status_imovel, condicao, nome_imovel, area_total_ha, modulos_fiscais,
                   data_cadastro, data_atualizacao, tipo_imovel, municipio, codigo_municipio_ibge, uf, codigo_protocolo,
                   latitude, longitude, matricula_numero, matricula_data, matricula_cartorio, tem_recibo)
                 VALUES ($1, $2, $3, $4, $5::numeric, $6::numeric, $7, $8, $9, $10, $11, $12, $13, $14::numeric,
                   $15::numeric, $16, $17, $18, $19)
                 ON CONFLICT (codigo_car) DO UPDATE SET status_imovel = excluded.status_imovel,
                   condicao = excluded.condicao, nome_imovel = excluded.nome_imovel,
                   area_total_ha = excluded.area_total_ha, modulos_fiscais = excluded.modulos_fiscais,
                   data_cadastro = excluded.data_cadastro, data_atualizacao = excluded.data_atualizacao,
                   tipo_imovel = excluded.tipo_imovel, municipio = excluded.municipio,
                   codigo_municipio_ibge = excluded.codigo_municipio_ibge, uf = excluded.uf,
                   codigo_protocolo = excluded.codigo_protocolo, latitude = excluded.latitude,
                   longitude = excluded.longitude, matricula_numero = excluded.matricula_numero,
                   matricula_data = excluded.matricula_data, matricula_cartorio = excluded.matricula_cartorio,
                   tem_recibo = excluded.tem_recibo",
            )
            .bind(codigo)
            .bind(i.status_imovel.as_str())
            .bind(&i.condicao)
            .bind(&i.nome_imovel)
            .bind(i.area_total_ha.to_string())
            .bind(i.modulos_fiscais.map(|d| d.to_string()))
            .bind(i.data_cadastro)
            .bind(i.data_atualizacao)
            .bind(i.tipo_imovel.as_str())
            .bind(&i.municipio)
            .bind(i64::from(i.codigo_municipio_ibge))
            .bind(i.uf.as_str())
            .bind(&i.codigo_protocolo)
            .bind(i.latitude.map(|d| d.to_string()))
            .bind(i.longitude.map(|d| d.to_string()))
            .bind(&i.matricula_numero)
            .bind(&i.matricula_data)
            .bind(&i.matricula_cartorio)
            .bind(i.has_recibo)
            .execute(&mut *tx)
            .await?;
                sqlx::query("DELETE FROM imovel_proprietarios WHERE codigo_car = $1")
                    .bind(codigo)
                    .execute(&mut *tx)
                    .await?;
                if !i.proprietarios.is_empty() {
                    let orders: Vec<i64> = (0..i.proprietarios.len() as i64).collect();
                    let documentos: Vec<String> = i
                        .proprietarios
                        .iter()
                        .map(|p| p.documento.as_str().to_owned())
                        .collect();
                    let nomes: Vec<&str> =
                        i.proprietarios.iter().map(|p| p.nome.as_str()).collect();
                    sqlx::query(
                        "INSERT INTO imovel_proprietarios (codigo_car, ordem, documento, nome)
                     SELECT $1, * FROM UNNEST($2::bigint[], $3::text[], $4::text[])",
                    )
                    .bind(codigo)
                    .bind(&orders)
                    .bind(&documentos)
                    .bind(&nomes)
                    .execute(&mut *tx)
                    .await?;
                }
                total += 1;
            }
            tx.commit().await?;
        }
        Ok(total)
    }

    async fn imovel(&self, codigo: &CodigoCar) -> Result<Option<Imovel>, StoreError> {
        let Some(row) = sqlx::query(&format!(
            "SELECT {IMOVEL_COLUMNS} FROM imoveis WHERE codigo_car = $1"
        ))
        .bind(codigo.as_str())
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let mut imovel = imovel_of(&row)?;
        imovel.proprietarios = proprietarios_of(&self.pool, codigo.as_str()).await?;
        Ok(Some(imovel))
    }

    /// The first `limite` records of `documento` by CAR code (byte order), in two queries.
    async fn imoveis_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError> {
        let codigos: Vec<String> = sqlx::query_scalar(CODIGOS_DO_DOCUMENTO)
            .bind(documento.as_str())
            .bind(i64::from(limite) + 1)
            .fetch_all(&self.pool)
            .await?;
        let truncado = codigos.len() > limite as usize;
        let codigos: Vec<String> = codigos.into_iter().take(limite as usize).collect();
        let rows = sqlx::query(&imoveis_by_codigos())
            .bind(&codigos)
            .fetch_all(&self.pool)
            .await?;
        let mut owners: HashMap<String, Vec<Proprietario>> = HashMap::new();
        for r in sqlx::query(OWNERS_BY_CODIGOS)
            .bind(&codigos)
            .fetch_all(&self.pool)
            .await?
        {
            let d: String = r.try_get("documento")?;
            owners
                .entry(r.try_get("codigo_car")?)
                .or_default()
                .push(Proprietario {
                    documento: CpfCnpj::parse(&d).map_err(|_| corrupt("documento ilegível"))?,
                    nome: r.try_get("nome")?,
                });
        }
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut imovel = imovel_of(row)?;
            imovel.proprietarios = owners
                .remove(imovel.codigo_car.as_str())
                .unwrap_or_default();
            out.push(imovel);
        }
        Ok((out, truncado))
    }

    async fn itens_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<OwnerImovel>, bool), StoreError> {
        let rows = sqlx::query(ITENS_DO_DOCUMENTO)
            .bind(documento.as_str())
            .bind(i64::from(limite) + 1)
            .fetch_all(&self.pool)
            .await?;
        let truncado = rows.len() > limite as usize;
        let itens = rows
            .iter()
            .take(limite as usize)
            .map(owner_item_of)
            .collect::<Result<_, _>>()?;
        Ok((itens, truncado))
    }
}
