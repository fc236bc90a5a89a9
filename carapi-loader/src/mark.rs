//! The record that a load started and did not finish: a row `load_in_progress` in the
//! `configuracao` table (migration 0010), written and committed before the first record is
//! written and deleted once the load has committed its last one. A load killed in between
//! (`kill -9`, a crash, a power cut) leaves it, so a base that may hold part of a load does not
//! look complete: `serve` says so when it starts and the next `import` or `seed` says so when
//! it begins (and, finishing, clears it).
//!
//! The row is written through a connection of its own, in its own transaction, as the load's
//! writers use theirs (`super::sqlite`, `super::postgres`).

use std::str::FromStr;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, PgConnection, SqliteConnection};

use super::LoadError;
use carapi_service::store::postgres::is_postgres_url;

/// Key of the row in `configuracao`.
pub(crate) const MARK_KEY: &str = "carga_em_andamento";

const READ_SQL: &str = "SELECT valor FROM configuracao WHERE chave = $1";
const WRITE: &str = "INSERT INTO configuracao (chave, valor) VALUES ($1, $2) \
     ON CONFLICT (chave) DO UPDATE SET valor = excluded.valor";
const DELETE_MARK: &str = "DELETE FROM configuracao WHERE chave = $1";

enum MarkConnection {
    Pg(PgConnection),
    Sqlite(SqliteConnection),
}

async fn connect_db(url: &str) -> Result<MarkConnection, sqlx::Error> {
    if is_postgres_url(url) {
        return Ok(MarkConnection::Pg(PgConnection::connect(url).await?));
    }
    let options = SqliteConnectOptions::from_str(url)?
        .create_if_missing(false)
        .busy_timeout(std::time::Duration::from_secs(30));
    Ok(MarkConnection::Sqlite(
        SqliteConnection::connect_with(&options).await?,
    ))
}

async fn read_at(c: &mut MarkConnection) -> Result<Option<String>, sqlx::Error> {
    match c {
        MarkConnection::Pg(c) => {
            sqlx::query_scalar(READ_SQL)
                .bind(MARK_KEY)
                .fetch_optional(c)
                .await
        }
        MarkConnection::Sqlite(c) => {
            sqlx::query_scalar(READ_SQL)
                .bind(MARK_KEY)
                .fetch_optional(c)
                .await
        }
    }
}

async fn run_once(
    c: &mut MarkConnection,
    sql: &str,
    valor: Option<&str>,
) -> Result<(), sqlx::Error> {
    match c {
        MarkConnection::Pg(c) => {
            let mut q = sqlx::query(sql).bind(MARK_KEY);
            if let Some(v) = valor {
                q = q.bind(v);
            }
            q.execute(c).await?;
        }
        MarkConnection::Sqlite(c) => {
            let mut q = sqlx::query(sql).bind(MARK_KEY);
            if let Some(v) = valor {
                q = q.bind(v);
            }
            q.execute(c).await?;
        }
    }
    Ok(())
}

async fn close_db(c: MarkConnection) {
    let _ = match c {
        MarkConnection::Pg(c) => c.close().await,
        MarkConnection::Sqlite(c) => c.close().await,
    };
}

/// The load that started on the base of `url` and did not finish (its description, as
/// `tag` wrote it), if any. A base that does not exist yet, or has no such table, has
/// none.
pub async fn interrupted(url: &str) -> Option<String> {
    let mut c = connect_db(url).await.ok()?;
    let r = read_at(&mut c).await.ok().flatten();
    close_db(c).await;
    r
}

/// Records that the load `descricao` starts writing into the (migrated) base of `url`;
/// returns the earlier load that had not finished, if any (this one replaces its record).
///
/// # Errors
/// [`LoadError::Store`] when the base cannot be written.
pub(super) async fn tag(url: &str, description: &str) -> Result<Option<String>, LoadError> {
    let mut c = connect_db(url).await.map_err(database)?;
    let previous = read_at(&mut c).await.map_err(database)?;
    run_once(&mut c, WRITE, Some(description))
        .await
        .map_err(database)?;
    close_db(c).await;
    Ok(previous)
}

/// Records that the load on the base of `url` finished.
///
/// # Errors
/// [`LoadError::Store`] when the base cannot be written.
pub(super) async fn finish(url: &str) -> Result<(), LoadError> {
    let mut c = connect_db(url).await.map_err(database)?;
    run_once(&mut c, DELETE_MARK, None)
        .await
        .map_err(database)?;
    close_db(c).await;
    Ok(())
}

fn database(e: sqlx::Error) -> LoadError {
    LoadError::Store(e.into())
}
