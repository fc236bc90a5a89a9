//! The record that a load started and did not finish: a row `carga_em_andamento` in the
//! `configuracao` table (migration 0010), written and committed before the first record is
//! written and deleted once the load has committed its last one. A load killed in between
//! (`kill -9`, a crash, a power cut) leaves it, so a base that may hold part of a load does not
//! look complete: `serve` says so when it starts and the next `import` or `seed` says so when
//! it begins (and, finishing, clears it).
//!
//! The row is written through a connection of its own, in its own transaction, as the load's
//! writers use theirs ([`super::sqlite`], [`super::postgres`]).

use std::str::FromStr;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, PgConnection, SqliteConnection};

use super::CargaError;
use carapi_service::store::postgres::eh_url_postgres;

/// Key of the row in `configuracao`.
pub const CHAVE: &str = "carga_em_andamento";

const LER: &str = "SELECT valor FROM configuracao WHERE chave = $1";
const GRAVAR: &str = "INSERT INTO configuracao (chave, valor) VALUES ($1, $2) \
     ON CONFLICT (chave) DO UPDATE SET valor = excluded.valor";
const APAGAR: &str = "DELETE FROM configuracao WHERE chave = $1";

enum Conexao {
    Pg(PgConnection),
    Sqlite(SqliteConnection),
}

async fn conectar(url: &str) -> Result<Conexao, sqlx::Error> {
    if eh_url_postgres(url) {
        return Ok(Conexao::Pg(PgConnection::connect(url).await?));
    }
    let opcoes = SqliteConnectOptions::from_str(url)?
        .create_if_missing(false)
        .busy_timeout(std::time::Duration::from_secs(30));
    Ok(Conexao::Sqlite(
        SqliteConnection::connect_with(&opcoes).await?,
    ))
}

async fn ler_em(c: &mut Conexao) -> Result<Option<String>, sqlx::Error> {
    match c {
        Conexao::Pg(c) => sqlx::query_scalar(LER).bind(CHAVE).fetch_optional(c).await,
        Conexao::Sqlite(c) => sqlx::query_scalar(LER).bind(CHAVE).fetch_optional(c).await,
    }
}

async fn executar(c: &mut Conexao, sql: &str, valor: Option<&str>) -> Result<(), sqlx::Error> {
    match c {
        Conexao::Pg(c) => {
            let mut q = sqlx::query(sql).bind(CHAVE);
            if let Some(v) = valor {
                q = q.bind(v);
            }
            q.execute(c).await?;
        }
        Conexao::Sqlite(c) => {
            let mut q = sqlx::query(sql).bind(CHAVE);
            if let Some(v) = valor {
                q = q.bind(v);
            }
            q.execute(c).await?;
        }
    }
    Ok(())
}

async fn fechar(c: Conexao) {
    let _ = match c {
        Conexao::Pg(c) => c.close().await,
        Conexao::Sqlite(c) => c.close().await,
    };
}

/// The load that started on the base of `url` and did not finish (its description, as
/// [`marcar`] wrote it), if any. A base that does not exist yet, or has no such table, has
/// none.
pub async fn interrompida(url: &str) -> Option<String> {
    let mut c = conectar(url).await.ok()?;
    let r = ler_em(&mut c).await.ok().flatten();
    fechar(c).await;
    r
}

/// Records that the load `descricao` starts writing into the (migrated) base of `url`;
/// returns the earlier load that had not finished, if any (this one replaces its record).
///
/// # Errors
/// [`CargaError::Store`] when the base cannot be written.
pub(super) async fn marcar(url: &str, descricao: &str) -> Result<Option<String>, CargaError> {
    let mut c = conectar(url).await.map_err(banco)?;
    let anterior = ler_em(&mut c).await.map_err(banco)?;
    executar(&mut c, GRAVAR, Some(descricao))
        .await
        .map_err(banco)?;
    fechar(c).await;
    Ok(anterior)
}

/// Records that the load on the base of `url` finished.
///
/// # Errors
/// [`CargaError::Store`] when the base cannot be written.
pub(super) async fn concluir(url: &str) -> Result<(), CargaError> {
    let mut c = conectar(url).await.map_err(banco)?;
    executar(&mut c, APAGAR, None).await.map_err(banco)?;
    fechar(c).await;
    Ok(())
}

fn banco(e: sqlx::Error) -> CargaError {
    CargaError::Store(e.into())
}
