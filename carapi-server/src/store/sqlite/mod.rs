//! [`Store`] over SQLite (sqlx 0.8) in WAL mode.
//!
//! Writes go through a single-connection pool and every read-then-write transaction starts with
//! `BEGIN IMMEDIATE`, so the balance check and the debit cannot interleave with another writer,
//! in this process or another one sharing the file (`busy_timeout` makes other processes wait
//! instead of failing). Reads use a separate pool and never block writers (WAL).
//!
//! On a database file, the lookups (charges and uncharged history rows) go to a dedicated
//! writer thread instead ([`escritor`]): the same transaction, in one hop, group-committed.

mod escritor;

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, CpfCnpj, EndpointConsulta, RecargaStatus, StatusConsulta};
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Utc};
use rust_decimal::Decimal;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, SqlitePool, Transaction};
use uuid::Uuid;

use super::*;
use crate::dados::{Imovel, Proprietario};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

const DATA_HORA: &str = "%Y-%m-%d %H:%M:%S";

/// SQLite implementation of [`Store`].
#[derive(Debug, Clone)]
pub struct SqliteStore {
    escrita: SqlitePool,
    leitura: SqlitePool,
    /// The lookup writer; `None` for an in-memory database (one connection only sees it).
    escritor: Option<escritor::Escritor>,
}

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn instante(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt(what.into())
}

fn primeiro_dia_mes(dia: NaiveDate) -> (String, String) {
    let inicio = dia.with_day(1).unwrap_or(dia);
    let (y, m) = if dia.month() == 12 {
        (dia.year() + 1, 1)
    } else {
        (dia.year(), dia.month() + 1)
    };
    let fim = NaiveDate::from_ymd_opt(y, m, 1).unwrap_or(dia);
    (inicio.to_string(), fim.to_string())
}

impl SqliteStore {
    /// Opens (creating when missing) and migrates the database at `url` (`sqlite://file.db`,
    /// `sqlite::memory:`).
    ///
    /// # Errors
    /// [`StoreError`] when the URL is invalid, the file cannot be opened or migrations fail.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let memoria = url.contains(":memory:") || url.contains("mode=memory");
        let opts = SqliteConnectOptions::from_str(url)?
            .create_if_missing(true)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(30));
        let opts = if memoria {
            opts
        } else {
            opts.journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
        };
        let escrita = SqlitePoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(opts.clone())
            .await?;
        MIGRATOR.run(&escrita).await?;
        let (leitura, escritor) = if memoria {
            (escrita.clone(), None)
        } else {
            let escritor = escritor::Escritor::abrir(opts.get_filename())?;
            let leitura = SqlitePoolOptions::new()
                .max_connections(4)
                .acquire_timeout(Duration::from_secs(60))
                .connect_with(opts)
                .await?;
            (leitura, Some(escritor))
        };
        Ok(SqliteStore {
            escrita,
            leitura,
            escritor,
        })
    }

    async fn imediata(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.escrita.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// Closes both pools.
    pub async fn close(&self) {
        self.escrita.close().await;
        self.leitura.close().await;
    }
}

fn conta_de(row: &SqliteRow) -> Result<Conta, StoreError> {
    let documento: Option<String> = row.try_get("documento")?;
    Ok(Conta {
        id: ContaId(row.try_get("id")?),
        chave_hash: row.try_get("chave_hash")?,
        saldo: Centavos(row.try_get("saldo_centavos")?),
        legado: row.try_get::<i64, _>("legado")? != 0,
        documento: documento
            .map(|d| CpfCnpj::parse(&d).map_err(|_| corrupt("documento da conta")))
            .transpose()?,
        email: row.try_get("email")?,
        limite_diario: row
            .try_get::<Option<i64>, _>("limite_diario")?
            .map(|v| v as u32),
        limite_mensal: row
            .try_get::<Option<i64>, _>("limite_mensal_centavos")?
            .map(Centavos),
    })
}

fn decimal(s: Option<String>, campo: &str) -> Result<Option<Decimal>, StoreError> {
    s.map(|s| Decimal::from_str(&s).map_err(|_| corrupt(format!("imóvel: {campo}"))))
        .transpose()
}

fn data_hora(s: Option<String>, campo: &str) -> Result<Option<NaiveDateTime>, StoreError> {
    s.map(|s| {
        NaiveDateTime::parse_from_str(&s, DATA_HORA)
            .map_err(|_| corrupt(format!("imóvel: {campo}")))
    })
    .transpose()
}

fn imovel_de(row: &SqliteRow) -> Result<Imovel, StoreError> {
    let codigo: String = row.try_get("codigo_car")?;
    Ok(Imovel {
        codigo_car: CodigoCar::parse(&codigo)
            .map_err(|_| corrupt(format!("código CAR {codigo}")))?,
        status_imovel: row.try_get("status_imovel")?,
        condicao: row.try_get("condicao")?,
        nome_imovel: row.try_get("nome_imovel")?,
        area_total_ha: decimal(row.try_get("area_total_ha")?, "area")?.unwrap_or_default(),
        modulos_fiscais: decimal(row.try_get("modulos_fiscais")?, "modulos")?,
        data_cadastro: data_hora(row.try_get("data_cadastro")?, "data_cadastro")?
            .unwrap_or_default(),
        data_atualizacao: data_hora(row.try_get("data_atualizacao")?, "data_atualizacao")?,
        tipo_imovel: row.try_get("tipo_imovel")?,
        municipio: row.try_get("municipio")?,
        codigo_municipio_ibge: row.try_get::<i64, _>("codigo_municipio_ibge")? as u32,
        uf: row.try_get("uf")?,
        codigo_protocolo: row.try_get("codigo_protocolo")?,
        latitude: decimal(row.try_get("latitude")?, "latitude")?,
        longitude: decimal(row.try_get("longitude")?, "longitude")?,
        matricula_numero: row.try_get("matricula_numero")?,
        matricula_data: row.try_get("matricula_data")?,
        matricula_cartorio: row.try_get("matricula_cartorio")?,
        proprietarios: Vec::new(),
        tem_recibo: row.try_get::<i64, _>("tem_recibo")? != 0,
    })
}

fn recarga_de(row: &SqliteRow) -> Result<Recarga, StoreError> {
    let id: String = row.try_get("id")?;
    let status: String = row.try_get("status")?;
    Ok(Recarga {
        id: Uuid::parse_str(&id).map_err(|_| corrupt("id da recarga"))?,
        conta: ContaId(row.try_get("conta_id")?),
        payment_id: row.try_get("payment_id")?,
        valor: Centavos(row.try_get("valor_centavos")?),
        percentual_bonus: row.try_get::<i64, _>("percentual_bonus")? as u32,
        bonus: Centavos(row.try_get("bonus_centavos")?),
        status: status.parse().map_err(|_| corrupt("status da recarga"))?,
        qr_code: row.try_get("qr_code")?,
        criada_em: instante(row.try_get("criada_em")?),
        confirmada_em: row
            .try_get::<Option<i64>, _>("confirmada_em")?
            .map(instante),
    })
}

async fn proprietarios_de(
    pool: &SqlitePool,
    codigo: &str,
) -> Result<Vec<Proprietario>, StoreError> {
    let rows = sqlx::query(
        "SELECT documento, nome FROM imovel_proprietarios WHERE codigo_car = ? ORDER BY ordem",
    )
    .bind(codigo)
    .fetch_all(pool)
    .await?;
    rows.iter()
        .map(|r| {
            let d: String = r.try_get("documento")?;
            Ok(Proprietario {
                documento: CpfCnpj::parse(&d).map_err(|_| corrupt(format!("documento {d}")))?,
                nome: r.try_get("nome")?,
            })
        })
        .collect()
}

/// Adds one lookup to the day's counters (same transaction as its history row).
async fn contar(
    tx: &mut Transaction<'static, Sqlite>,
    conta: ContaId,
    dia: NaiveDate,
    cobrada: bool,
    erro: bool,
    gasto: Centavos,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO uso_diario (conta_id, dia, requisicoes, cobradas, erros, gasto_centavos) VALUES (?, ?, 1, ?, ?, ?)
         ON CONFLICT (conta_id, dia) DO UPDATE SET requisicoes = requisicoes + 1,
           cobradas = cobradas + excluded.cobradas, erros = erros + excluded.erros,
           gasto_centavos = gasto_centavos + excluded.gasto_centavos",
    )
    .bind(conta.0)
    .bind(dia.to_string())
    .bind(i64::from(cobrada))
    .bind(i64::from(erro))
    .bind(gasto.0)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn inserir_consulta(
    tx: &mut Transaction<'static, Sqlite>,
    conta: ContaId,
    endpoint: EndpointConsulta,
    chave: Option<&str>,
    status: u16,
    valor: Centavos,
    saldo_antes: Option<Centavos>,
    saldo_depois: Option<Centavos>,
    em: DateTime<Utc>,
) -> Result<i64, StoreError> {
    let r = sqlx::query(
        "INSERT INTO consultas (conta_id, data_ms, endpoint, chave, status_http, cobrado, valor_centavos, saldo_antes, saldo_depois)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(conta.0)
    .bind(ms(em))
    .bind(endpoint.as_str())
    .bind(chave)
    .bind(i64::from(status))
    .bind(i64::from(valor.0 > 0))
    .bind(valor.0)
    .bind(saldo_antes.map(|c| c.0))
    .bind(saldo_depois.map(|c| c.0))
    .execute(&mut **tx)
    .await?;
    Ok(r.last_insert_rowid())
}

async fn saldo_em_tx(
    tx: &mut Transaction<'static, Sqlite>,
    conta: ContaId,
) -> Result<Option<Centavos>, StoreError> {
    let v: Option<i64> = sqlx::query_scalar("SELECT saldo_centavos FROM contas WHERE id = ?")
        .bind(conta.0)
        .fetch_optional(&mut **tx)
        .await?;
    Ok(v.map(Centavos))
}

const COLUNAS_RECARGA: &str = "id, conta_id, payment_id, valor_centavos, percentual_bonus, bonus_centavos, status, qr_code, criada_em, confirmada_em";

#[async_trait]
impl Store for SqliteStore {
    async fn criar_conta(&self, nova: NovaContaRegistro) -> Result<ContaId, StoreError> {
        let mut tx = self.imediata().await?;
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO contas (chave_hash, saldo_centavos, legado, documento, email, criada_em)
             VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&nova.chave_hash)
        .bind(nova.saldo.0)
        .bind(i64::from(nova.legado))
        .bind(nova.documento.as_ref().map(|d| d.as_str().to_owned()))
        .bind(&nova.email)
        .bind(ms(nova.em))
        .fetch_one(&mut *tx)
        .await?;
        if nova.saldo.0 > 0 {
            sqlx::query(
                "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, criado_em) VALUES (?, 'credito', ?, 'saldo_inicial', ?)",
            )
            .bind(id)
            .bind(nova.saldo.0)
            .bind(ms(nova.em))
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(ContaId(id))
    }

    async fn conta_por_chave(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError> {
        let row = sqlx::query("SELECT * FROM contas WHERE chave_hash = ?")
            .bind(chave_hash)
            .fetch_optional(&self.leitura)
            .await?;
        row.as_ref().map(conta_de).transpose()
    }

    async fn conta(&self, id: ContaId) -> Result<Option<Conta>, StoreError> {
        let row = sqlx::query("SELECT * FROM contas WHERE id = ?")
            .bind(id.0)
            .fetch_optional(&self.leitura)
            .await?;
        row.as_ref().map(conta_de).transpose()
    }

    async fn contas(&self) -> Result<Vec<ContaId>, StoreError> {
        let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM contas ORDER BY id")
            .fetch_all(&self.leitura)
            .await?;
        Ok(ids.into_iter().map(ContaId).collect())
    }

    async fn atualizar_limites(
        &self,
        id: ContaId,
        diario: Patch<u32>,
        mensal: Patch<Centavos>,
    ) -> Result<Option<Conta>, StoreError> {
        let mut tx = self.imediata().await?;
        if let Some(d) = diario {
            sqlx::query("UPDATE contas SET limite_diario = ? WHERE id = ?")
                .bind(d.map(i64::from))
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(m) = mensal {
            sqlx::query("UPDATE contas SET limite_mensal_centavos = ? WHERE id = ?")
                .bind(m.map(|c| c.0))
                .bind(id.0)
                .execute(&mut *tx)
                .await?;
        }
        let row = sqlx::query("SELECT * FROM contas WHERE id = ?")
            .bind(id.0)
            .fetch_optional(&mut *tx)
            .await?;
        tx.commit().await?;
        row.as_ref().map(conta_de).transpose()
    }

    async fn contar_imoveis(&self) -> Result<u64, StoreError> {
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM imoveis")
            .fetch_one(&self.leitura)
            .await?;
        Ok(n as u64)
    }

    async fn gravar_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError> {
        let mut total = 0;
        for lote in imoveis.chunks(2000) {
            let mut tx = self.imediata().await?;
            for i in lote {
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
                .bind(&i.status_imovel)
                .bind(&i.condicao)
                .bind(&i.nome_imovel)
                .bind(i.area_total_ha.to_string())
                .bind(i.modulos_fiscais.map(|d| d.to_string()))
                .bind(i.data_cadastro.format(DATA_HORA).to_string())
                .bind(i.data_atualizacao.map(|d| d.format(DATA_HORA).to_string()))
                .bind(&i.tipo_imovel)
                .bind(&i.municipio)
                .bind(i64::from(i.codigo_municipio_ibge))
                .bind(&i.uf)
                .bind(&i.codigo_protocolo)
                .bind(i.latitude.map(|d| d.to_string()))
                .bind(i.longitude.map(|d| d.to_string()))
                .bind(&i.matricula_numero)
                .bind(&i.matricula_data)
                .bind(&i.matricula_cartorio)
                .bind(i64::from(i.tem_recibo))
                .execute(&mut *tx)
                .await?;
                sqlx::query("DELETE FROM imovel_proprietarios WHERE codigo_car = ?")
                    .bind(codigo)
                    .execute(&mut *tx)
                    .await?;
                for (ordem, p) in i.proprietarios.iter().enumerate() {
                    sqlx::query("INSERT INTO imovel_proprietarios (codigo_car, ordem, documento, nome) VALUES (?, ?, ?, ?)")
                        .bind(codigo)
                        .bind(ordem as i64)
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
        let Some(row) = sqlx::query("SELECT * FROM imoveis WHERE codigo_car = ?")
            .bind(codigo.as_str())
            .fetch_optional(&self.leitura)
            .await?
        else {
            return Ok(None);
        };
        let mut imovel = imovel_de(&row)?;
        imovel.proprietarios = proprietarios_de(&self.leitura, codigo.as_str()).await?;
        Ok(Some(imovel))
    }

    async fn imoveis_do_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError> {
        let codigos: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT codigo_car FROM imovel_proprietarios WHERE documento = ? ORDER BY codigo_car LIMIT ?",
        )
        .bind(documento.as_str())
        .bind(i64::from(limite) + 1)
        .fetch_all(&self.leitura)
        .await?;
        let truncado = codigos.len() > limite as usize;
        let mut out = Vec::with_capacity(codigos.len().min(limite as usize));
        for codigo in codigos.iter().take(limite as usize) {
            if let Some(row) = sqlx::query("SELECT * FROM imoveis WHERE codigo_car = ?")
                .bind(codigo)
                .fetch_optional(&self.leitura)
                .await?
            {
                let mut imovel = imovel_de(&row)?;
                imovel.proprietarios = proprietarios_de(&self.leitura, codigo).await?;
                out.push(imovel);
            }
        }
        Ok((out, truncado))
    }

    async fn registrar_consulta(&self, r: RegistroConsulta) -> Result<(), StoreError> {
        if let Some(escritor) = &self.escritor {
            return escritor.registrar(r).await;
        }
        let mut tx = self.imediata().await?;
        let saldo = saldo_em_tx(&mut tx, r.conta).await?;
        inserir_consulta(
            &mut tx,
            r.conta,
            r.endpoint,
            r.chave.as_deref(),
            r.status,
            Centavos::ZERO,
            saldo,
            saldo,
            r.em,
        )
        .await?;
        contar(
            &mut tx,
            r.conta,
            r.dia,
            false,
            r.status != 200,
            Centavos::ZERO,
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn cobrar_consulta(&self, c: Cobranca) -> Result<ResultadoCobranca, StoreError> {
        if let Some(escritor) = &self.escritor {
            return escritor.cobrar(c).await;
        }
        let mut tx = self.imediata().await?;
        let row = sqlx::query("SELECT * FROM contas WHERE id = ?")
            .bind(c.conta.0)
            .fetch_one(&mut *tx)
            .await?;
        let conta = conta_de(&row)?;
        let preco = if conta.legado {
            c.preco_legado
        } else {
            c.preco_atual
        };
        let hoje: Option<(i64,)> =
            sqlx::query_as("SELECT cobradas FROM uso_diario WHERE conta_id = ? AND dia = ?")
                .bind(c.conta.0)
                .bind(c.dia.to_string())
                .fetch_optional(&mut *tx)
                .await?;
        let cobradas_hoje = hoje.map_or(0, |h| h.0);
        let (inicio, fim) = primeiro_dia_mes(c.dia);
        let gasto_mes: i64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(gasto_centavos), 0) FROM uso_diario WHERE conta_id = ? AND dia >= ? AND dia < ?",
        )
        .bind(c.conta.0)
        .bind(&inicio)
        .bind(&fim)
        .fetch_one(&mut *tx)
        .await?;

        let recusa = if let Some(limite) = conta
            .limite_diario
            .filter(|l| cobradas_hoje >= i64::from(*l))
        {
            Some((429, ResultadoCobranca::LimiteDiario { limite }))
        } else if let Some(limite) = conta.limite_mensal.filter(|l| gasto_mes + preco.0 > l.0) {
            Some((
                429,
                ResultadoCobranca::LimiteMensal {
                    limite,
                    gasto: Centavos(gasto_mes),
                },
            ))
        } else if conta.saldo < preco {
            Some((
                402,
                ResultadoCobranca::SaldoInsuficiente {
                    saldo: conta.saldo,
                    preco,
                },
            ))
        } else {
            None
        };
        if let Some((status, resultado)) = recusa {
            let s = Some(conta.saldo);
            inserir_consulta(
                &mut tx,
                c.conta,
                c.endpoint,
                Some(&c.chave),
                status,
                Centavos::ZERO,
                s,
                s,
                c.em,
            )
            .await?;
            contar(&mut tx, c.conta, c.dia, false, true, Centavos::ZERO).await?;
            tx.commit().await?;
            return Ok(resultado);
        }

        let debitou = sqlx::query("UPDATE contas SET saldo_centavos = saldo_centavos - ? WHERE id = ? AND saldo_centavos >= ?")
            .bind(preco.0)
            .bind(c.conta.0)
            .bind(preco.0)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        if debitou != 1 {
            // Cannot happen under BEGIN IMMEDIATE; refuse rather than go negative.
            tx.rollback().await?;
            return Err(corrupt("saldo mudou durante a transação"));
        }
        let saldo_depois = conta.saldo - preco;
        let id = inserir_consulta(
            &mut tx,
            c.conta,
            c.endpoint,
            Some(&c.chave),
            200,
            preco,
            Some(conta.saldo),
            Some(saldo_depois),
            c.em,
        )
        .await?;
        if preco.0 > 0 {
            sqlx::query(
                "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em) VALUES (?, 'debito', ?, 'consulta', ?, ?)",
            )
            .bind(c.conta.0)
            .bind(preco.0)
            .bind(id.to_string())
            .bind(ms(c.em))
            .execute(&mut *tx)
            .await?;
        }
        contar(&mut tx, c.conta, c.dia, true, false, preco).await?;
        let mut cache = false;
        if let Some(codigo) = &c.consolidar {
            let antes: Option<Option<i64>> =
                sqlx::query_scalar("SELECT consolidado_em FROM imoveis WHERE codigo_car = ?")
                    .bind(codigo.as_str())
                    .fetch_optional(&mut *tx)
                    .await?;
            cache = matches!(antes, Some(Some(_)));
            if matches!(antes, Some(None)) {
                sqlx::query("UPDATE imoveis SET consolidado_em = ? WHERE codigo_car = ?")
                    .bind(ms(c.em))
                    .bind(codigo.as_str())
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(ResultadoCobranca::Cobrada {
            valor: preco,
            saldo_antes: conta.saldo,
            saldo_depois,
            cache,
        })
    }

    async fn uso_periodo(&self, conta: ContaId, dia: NaiveDate) -> Result<UsoPeriodo, StoreError> {
        let hoje: Option<(i64, i64, i64, i64)> = sqlx::query_as(
            "SELECT requisicoes, cobradas, erros, gasto_centavos FROM uso_diario WHERE conta_id = ? AND dia = ?",
        )
        .bind(conta.0)
        .bind(dia.to_string())
        .fetch_optional(&self.leitura)
        .await?;
        let (inicio, fim) = primeiro_dia_mes(dia);
        let (mes_req, mes_gasto): (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(requisicoes), 0), COALESCE(SUM(gasto_centavos), 0) FROM uso_diario
             WHERE conta_id = ? AND dia >= ? AND dia < ?",
        )
        .bind(conta.0)
        .bind(&inicio)
        .bind(&fim)
        .fetch_one(&self.leitura)
        .await?;
        let (r, c, e, g) = hoje.unwrap_or_default();
        Ok(UsoPeriodo {
            hoje_requisicoes: r as u64,
            hoje_cobradas: c as u64,
            hoje_erros: e as u64,
            hoje_gasto: Centavos(g),
            mes_requisicoes: mes_req as u64,
            mes_gasto: Centavos(mes_gasto),
        })
    }

    async fn historico(
        &self,
        conta: ContaId,
        f: &FiltroHistorico,
    ) -> Result<(Vec<ConsultaRegistrada>, u64), StoreError> {
        let mut filtro = String::from(" FROM consultas WHERE conta_id = ?");
        if f.busca.is_some() {
            filtro.push_str(" AND (instr(upper(COALESCE(chave, '')), upper(?)) > 0 OR instr(upper(endpoint), upper(?)) > 0)");
        }
        if f.endpoint.is_some() {
            filtro.push_str(" AND endpoint = ?");
        }
        match f.status {
            Some(StatusConsulta::Sucesso) => filtro.push_str(" AND status_http = 200"),
            Some(StatusConsulta::Erro) => filtro.push_str(" AND status_http <> 200"),
            None => {}
        }
        macro_rules! bind_filtro {
            ($q:expr) => {{
                let mut q = $q.bind(conta.0);
                if let Some(b) = &f.busca {
                    q = q.bind(b.clone()).bind(b.clone());
                }
                if let Some(e) = f.endpoint {
                    q = q.bind(e.as_str());
                }
                q
            }};
        }
        let sql_total = format!("SELECT COUNT(*){filtro}");
        let total: i64 = bind_filtro!(sqlx::query_scalar(&sql_total))
            .fetch_one(&self.leitura)
            .await?;
        let sql = format!("SELECT *{filtro} ORDER BY id DESC LIMIT ? OFFSET ?");
        let offset = i64::from(f.page.max(1) - 1) * i64::from(f.size);
        let rows = bind_filtro!(sqlx::query(&sql))
            .bind(i64::from(f.size))
            .bind(offset)
            .fetch_all(&self.leitura)
            .await?;
        let itens = rows
            .iter()
            .map(|r| {
                Ok(ConsultaRegistrada {
                    em: instante(r.try_get("data_ms")?),
                    endpoint: r.try_get("endpoint")?,
                    chave: r.try_get("chave")?,
                    status: r.try_get::<i64, _>("status_http")? as u16,
                    cobrado: r.try_get::<i64, _>("cobrado")? != 0,
                    valor: Centavos(r.try_get("valor_centavos")?),
                    saldo_antes: r.try_get::<Option<i64>, _>("saldo_antes")?.map(Centavos),
                    saldo_depois: r.try_get::<Option<i64>, _>("saldo_depois")?.map(Centavos),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok((itens, total as u64))
    }

    async fn uso_por_endpoint(
        &self,
        conta: ContaId,
        desde: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        let rows: Vec<(String, i64, i64)> = sqlx::query_as(
            "SELECT endpoint, COUNT(*), COALESCE(SUM(valor_centavos), 0) FROM consultas
             WHERE conta_id = ? AND data_ms >= ? GROUP BY endpoint ORDER BY endpoint",
        )
        .bind(conta.0)
        .bind(ms(desde))
        .fetch_all(&self.leitura)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(endpoint, n, v)| UsoEndpoint {
                endpoint,
                quantidade: n as u64,
                valor_total: Centavos(v),
            })
            .collect())
    }

    async fn recarga_reaproveitavel(
        &self,
        conta: ContaId,
        valor: Centavos,
        desde: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ? AND valor_centavos = ? AND status = 'Pendente'
             AND criada_em >= ? ORDER BY criada_em DESC LIMIT 1"
        ))
        .bind(conta.0)
        .bind(valor.0)
        .bind(ms(desde))
        .fetch_optional(&self.leitura)
        .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    async fn inserir_recarga(
        &self,
        nova: Recarga,
        desde: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError> {
        let mut tx = self.imediata().await?;
        let existente = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ? AND valor_centavos = ? AND status = 'Pendente'
             AND criada_em >= ? ORDER BY criada_em DESC LIMIT 1"
        ))
        .bind(nova.conta.0)
        .bind(nova.valor.0)
        .bind(ms(desde))
        .fetch_optional(&mut *tx)
        .await?;
        if let Some(row) = existente {
            tx.commit().await?;
            return Ok((recarga_de(&row)?, true));
        }
        sqlx::query(&format!(
            "INSERT INTO recargas ({COLUNAS_RECARGA}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ))
        .bind(nova.id.to_string())
        .bind(nova.conta.0)
        .bind(&nova.payment_id)
        .bind(nova.valor.0)
        .bind(i64::from(nova.percentual_bonus))
        .bind(nova.bonus.0)
        .bind(nova.status.as_str())
        .bind(&nova.qr_code)
        .bind(ms(nova.criada_em))
        .bind(nova.confirmada_em.map(ms))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok((nova, false))
    }

    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE id = ? AND conta_id = ?"
        ))
        .bind(id.to_string())
        .bind(conta.0)
        .fetch_optional(&self.leitura)
        .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    async fn recarga_por_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE id = ?"
        ))
        .bind(id.to_string())
        .fetch_optional(&self.leitura)
        .await?;
        row.as_ref().map(recarga_de).transpose()
    }

    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError> {
        let filtro = if status.is_some() {
            " AND status = ?"
        } else {
            ""
        };
        let sql_total = format!("SELECT COUNT(*) FROM recargas WHERE conta_id = ?{filtro}");
        let mut q = sqlx::query_scalar(&sql_total).bind(conta.0);
        if let Some(s) = status {
            q = q.bind(s.as_str());
        }
        let total: i64 = q.fetch_one(&self.leitura).await?;
        let sql = format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE conta_id = ?{filtro} ORDER BY criada_em DESC, rowid DESC LIMIT ? OFFSET ?"
        );
        let mut q = sqlx::query(&sql).bind(conta.0);
        if let Some(s) = status {
            q = q.bind(s.as_str());
        }
        let rows = q
            .bind(i64::from(size))
            .bind(i64::from(page.max(1) - 1) * i64::from(size))
            .fetch_all(&self.leitura)
            .await?;
        let itens = rows.iter().map(recarga_de).collect::<Result<Vec<_>, _>>()?;
        Ok((itens, total as u64))
    }

    async fn recargas_pendentes(&self, limite: u32) -> Result<Vec<Recarga>, StoreError> {
        let rows = sqlx::query(&format!(
            "SELECT {COLUNAS_RECARGA} FROM recargas WHERE status = 'Pendente' ORDER BY criada_em LIMIT ?"
        ))
        .bind(i64::from(limite))
        .fetch_all(&self.leitura)
        .await?;
        rows.iter().map(recarga_de).collect()
    }

    async fn confirmar_recarga(
        &self,
        payment_id: &str,
        em: DateTime<Utc>,
    ) -> Result<Confirmacao, StoreError> {
        let mut tx = self.imediata().await?;
        let movida = sqlx::query(&format!(
            "UPDATE recargas SET status = 'Confirmado', confirmada_em = ? WHERE payment_id = ? AND status = 'Pendente'
             RETURNING {COLUNAS_RECARGA}"
        ))
        .bind(ms(em))
        .bind(payment_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = movida else {
            let atual = sqlx::query(&format!(
                "SELECT {COLUNAS_RECARGA} FROM recargas WHERE payment_id = ?"
            ))
            .bind(payment_id)
            .fetch_optional(&mut *tx)
            .await?;
            tx.commit().await?;
            return Ok(match atual {
                Some(r) => Confirmacao::JaFinal(recarga_de(&r)?),
                None => Confirmacao::NaoEncontrada,
            });
        };
        let recarga = recarga_de(&row)?;
        let total = recarga.valor + recarga.bonus;
        sqlx::query(
            "UPDATE contas SET saldo_centavos = saldo_centavos + ?, legado = 0 WHERE id = ?",
        )
        .bind(total.0)
        .bind(recarga.conta.0)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO lancamentos (conta_id, tipo, valor_centavos, origem, referencia, criado_em) VALUES (?, 'credito', ?, 'recarga', ?, ?)",
        )
        .bind(recarga.conta.0)
        .bind(total.0)
        .bind(recarga.id.to_string())
        .bind(ms(em))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Confirmacao::Creditada(recarga))
    }

    async fn psp_registrar(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        em: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut tx = self.imediata().await?;
        sqlx::query("INSERT INTO psp_cobrancas (payment_id, valor_centavos, documento, email, criada_em) VALUES (?, ?, ?, ?, ?)")
            .bind(payment_id)
            .bind(valor.0)
            .bind(documento.as_str())
            .bind(email)
            .bind(ms(em))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn psp_pagar(&self, payment_id: &str, em: DateTime<Utc>) -> Result<bool, StoreError> {
        let mut tx = self.imediata().await?;
        let existe: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM psp_cobrancas WHERE payment_id = ?")
                .bind(payment_id)
                .fetch_optional(&mut *tx)
                .await?;
        if existe.is_some() {
            sqlx::query(
                "UPDATE psp_cobrancas SET paga_em = ? WHERE payment_id = ? AND paga_em IS NULL",
            )
            .bind(ms(em))
            .bind(payment_id)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(existe.is_some())
    }

    async fn psp_situacao(
        &self,
        payment_id: &str,
    ) -> Result<Option<Option<DateTime<Utc>>>, StoreError> {
        let v: Option<Option<i64>> =
            sqlx::query_scalar("SELECT paga_em FROM psp_cobrancas WHERE payment_id = ?")
                .bind(payment_id)
                .fetch_optional(&self.leitura)
                .await?;
        Ok(v.map(|p| p.map(instante)))
    }

    async fn razao(&self, conta: ContaId) -> Result<Option<Razao>, StoreError> {
        // One read transaction: a consistent snapshot of the balance and the sums.
        let mut tx = self.leitura.begin().await?;
        let Some(saldo): Option<i64> =
            sqlx::query_scalar("SELECT saldo_centavos FROM contas WHERE id = ?")
                .bind(conta.0)
                .fetch_optional(&mut *tx)
                .await?
        else {
            return Ok(None);
        };
        let soma = |sql: &'static str| sqlx::query_scalar::<_, i64>(sql).bind(conta.0);
        let creditos = soma("SELECT COALESCE(SUM(valor_centavos), 0) FROM lancamentos WHERE conta_id = ? AND tipo = 'credito'")
            .fetch_one(&mut *tx)
            .await?;
        let debitos = soma("SELECT COALESCE(SUM(valor_centavos), 0) FROM lancamentos WHERE conta_id = ? AND tipo = 'debito'")
            .fetch_one(&mut *tx)
            .await?;
        let inicial = soma(
            "SELECT COALESCE(SUM(valor_centavos), 0) FROM lancamentos WHERE conta_id = ? AND origem = 'saldo_inicial'",
        )
        .fetch_one(&mut *tx)
        .await?;
        let historico = soma("SELECT COALESCE(SUM(valor_centavos), 0) FROM consultas WHERE conta_id = ? AND cobrado = 1")
            .fetch_one(&mut *tx)
            .await?;
        let recargas = soma(
            "SELECT COALESCE(SUM(valor_centavos + bonus_centavos), 0) FROM recargas WHERE conta_id = ? AND status = 'Confirmado'",
        )
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(Some(Razao {
            conta_id: conta,
            saldo: Centavos(saldo),
            creditos: Centavos(creditos),
            debitos: Centavos(debitos),
            cobrado_historico: Centavos(historico),
            creditado_recargas: Centavos(recargas),
            saldo_inicial: Centavos(inicial),
        }))
    }
}
