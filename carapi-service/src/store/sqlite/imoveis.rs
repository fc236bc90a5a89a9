//! CAR records and their owners.

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, CpfCnpj};

use super::SqliteStore;
use super::rows::DATE_TIME;
use crate::dados::Imovel;
use crate::store::{ImoveisStore, OwnerImovel, StoreError};

#[async_trait]
impl ImoveisStore for SqliteStore {
    async fn count_imoveis(&self) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM imoveis")
            .fetch_one(&self.reading)
            .await?;
        Ok(n as u64)
    }

    async fn write_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError> {
        let mut total = 0;
        for batch in imoveis.chunks(2000) {
            let mut tx = self.begin_immediate().await?;
            for i in batch {
                let codigo = i.codigo_car.as_str();
                sqlx::query(
                "INSERT INTO imoveis (codigo_car, status_imovel, condicao, nome_imovel, area_total_ha, modulos_fiscais,
                   data_cadastro, data_atualizacao, tipo_imovel, municipio, codigo_municipio_ibge, uf, codigo_protocolo,
                   latitude, longitude, matricula_numero, matricula_data, matricula_cartorio, tem_recibo)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
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
            .bind(i.data_cadastro.format(DATE_TIME).to_string())
            .bind(i.data_atualizacao.map(|d| d.format(DATE_TIME).to_string()))
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
            .bind(i64::from(i.has_recibo))
            .execute(&mut *tx)
            .await?;
                sqlx::query("DELETE FROM imovel_proprietarios WHERE codigo_car = ?")
                    .bind(codigo)
                    .execute(&mut *tx)
                    .await?;
                for (order, p) in i.proprietarios.iter().enumerate() {
                    sqlx::query("INSERT INTO imovel_proprietarios (codigo_car, ordem, documento, nome) VALUES (?, ?, ?, ?)")
                    .bind(codigo)
                    .bind(order as i64)
                    .bind(p.documento.as_str())
                    .bind(&p.nome)
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
        self.readers.imovel(codigo).await
    }

    async fn imoveis_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError> {
        self.readers.imoveis_of_documento(documento, limite).await
    }

    async fn itens_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<OwnerImovel>, bool), StoreError> {
        self.readers.itens_of_documento(documento, limite).await
    }
}
