//! `carapi-server backup DESTINO [--banco URL]`: a consistent copy of a SQLite database, taken
//! while the server runs (`VACUUM INTO`: one read transaction, writers go on), mode `0600`.
//! PostgreSQL is refused with a pointer to `pg_dump`.

use std::path::PathBuf;
use std::process::ExitCode;

use carapi_service::store::{OpenMode, SqliteStore, is_postgres_url};

/// Opções de `backup`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// A cópia a gravar (não pode existir): um arquivo SQLite, modo 0600.
    #[arg(id = "destino")]
    destination: PathBuf,
    #[command(flatten)]
    database: super::DatabaseArgs,
}

/// Writes the copy; exit 2 for PostgreSQL or a destination that exists.
pub(super) async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if is_postgres_url(&a.database.database) {
        eprintln!(
            "erro: backup copia bancos SQLite; para PostgreSQL use `pg_dump -Fc` (e \
             `pg_restore` para restaurar), ou o backup contínuo do seu provedor"
        );
        return Ok(ExitCode::from(2));
    }
    if a.destination.exists() {
        eprintln!(
            "erro: {} já existe; escolha outro destino",
            a.destination.display()
        );
        return Ok(ExitCode::from(2));
    }
    let store = SqliteStore::open(&a.database.database, OpenMode::Existing)
        .await
        .map_err(|e| anyhow::anyhow!("abrindo o banco: {e}"))?;
    let start = std::time::Instant::now();
    let r = store.backup_into(&a.destination).await;
    store.close().await;
    r.map_err(|e| anyhow::anyhow!("copiando o banco: {e}"))?;
    eprintln!(
        "cópia em {} ({} bytes, {:.2} s; modo 0600)",
        a.destination.display(),
        std::fs::metadata(&a.destination).map_or(0, |m| m.len()),
        start.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}
