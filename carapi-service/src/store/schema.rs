//! Schema versions: which migrations a database has applied, compared with the ones this
//! binary knows, before anything is migrated. Only `servir` migrates (and creates); the admin
//! commands open an existing database whose schema is exactly this binary's, and a binary older
//! than its database says so and names the version it needs, in Portuguese.

use std::collections::BTreeSet;

use sqlx::migrate::Migrator;

use super::StoreError;

/// How a store is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the database when it is missing and apply the migrations it lacks (`servir`).
    Migrate,
    /// Open an existing database whose schema is this binary's: never create a file or a
    /// database, never migrate (the admin commands: `razao conferir`, `conta`, `pix pagar`,
    /// `segredo-webhook`, `backup`).
    Existing,
    /// Create and migrate a database that is missing; an existing one as [`OpenMode::Existing`]
    /// (the loads `importar` and `semear`, and `--criar-banco`).
    CreateMissing,
}

/// The migration versions `migrator` knows (this binary's schema).
fn known(migrator: &Migrator) -> BTreeSet<i64> {
    migrator
        .iter()
        .filter(|m| !m.migration_type.is_down_migration())
        .map(|m| m.version)
        .collect()
}

/// The versions to apply to a database that has applied `applied`, opened as `mode` (with
/// `migrate` telling whether this open may migrate at all).
///
/// # Errors
/// [`StoreError::Schema`] with a Portuguese message when the database has a migration this
/// binary does not know (a newer binary migrated it: the message names the version needed), or
/// lacks some and this open may not migrate.
pub(crate) fn pending(
    applied: &BTreeSet<i64>,
    migrator: &Migrator,
    migrate: bool,
) -> Result<Vec<i64>, StoreError> {
    let known = known(migrator);
    let newest = known.iter().next_back().copied().unwrap_or(0);
    if let Some(v) = applied.iter().filter(|v| !known.contains(v)).max() {
        return Err(StoreError::Schema(format!(
            "o banco está no esquema {v}, mais novo que o deste carapi-server {} (conhece até o \
             esquema {newest}): use um carapi-server que conheça o esquema {v} (o que migrou \
             o banco ou um mais novo), ou restaure um backup anterior à atualização",
            env!("CARGO_PKG_VERSION")
        )));
    }
    let missing: Vec<i64> = known.difference(applied).copied().collect();
    if !migrate && !missing.is_empty() {
        let atual = applied.iter().next_back().copied().unwrap_or(0);
        return Err(StoreError::Schema(format!(
            "o banco está no esquema {atual} e este carapi-server {} precisa do esquema \
             {newest}: rode `carapi-server servir` com este binário (ele migra o banco) antes \
             deste comando",
            env!("CARGO_PKG_VERSION")
        )));
    }
    Ok(missing)
}

/// Logs what a store is about to apply (or that its schema is current) with the versions.
pub(crate) fn log_pending(database: &str, missing: &[i64], applied: &BTreeSet<i64>) {
    let atual = applied.iter().next_back().copied().unwrap_or(0);
    if missing.is_empty() {
        tracing::info!(banco = database, esquema = atual, "esquema do banco em dia");
    } else {
        tracing::info!(
            banco = database,
            de = atual,
            versoes = ?missing,
            "aplicando migrações {missing:?} (esquema {atual} → {})",
            missing.last().copied().unwrap_or(atual)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static MIGRATOR: Migrator = sqlx::migrate!("./migrations");

    #[test]
    fn newer_older_and_equal_schemas() {
        let all = known(&MIGRATOR);
        let last = *all.iter().next_back().unwrap();
        assert_eq!(pending(&all, &MIGRATOR, false).unwrap(), Vec::<i64>::new());
        let mut old = all.clone();
        old.remove(&last);
        assert_eq!(pending(&old, &MIGRATOR, true).unwrap(), vec![last]);
        let e = pending(&old, &MIGRATOR, false).unwrap_err().to_string();
        assert!(e.contains("servir"), "{e}");
        let mut fresh = all.clone();
        fresh.insert(last + 1);
        for migrate in [true, false] {
            let e = pending(&fresh, &MIGRATOR, migrate).unwrap_err().to_string();
            assert!(e.contains(&format!("esquema {}", last + 1)), "{e}");
        }
        assert_eq!(
            pending(&BTreeSet::new(), &MIGRATOR, true).unwrap().len(),
            all.len()
        );
    }
}
