//! The PostgreSQL store ([`carapi_service::store::PgStore`]) against a real server.
//!
//! Needs `DATABASE_URL` (e.g. `postgres://postgres@127.0.0.1:5432/test`); every test prints a
//! message and passes when it is unset. Each test runs in its own database
//! `carapi_t_<random>`, created on `DATABASE_URL`'s server and dropped when the test ends
//! (also when it panics), so tests run in parallel without seeing each other's rows.
//!
//! The store-level scenarios ([`loja`], [`concorrencia`]) run against SQLite too, so both
//! stores are held to the same assertions.

mod concorrencia;
mod loja;
mod routes;

use std::sync::Arc;

use carapi_service::store::{PgStore, SqliteStore, Store};
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use tempfile::TempDir;

/// `DATABASE_URL`, or `None` after printing why the test is skipped.
pub fn database_url(teste: &str) -> Option<String> {
    match std::env::var("DATABASE_URL") {
        Ok(u) if !u.trim().is_empty() => Some(u),
        _ => {
            println!("{teste}: DATABASE_URL not set; skipping the PostgreSQL test");
            None
        }
    }
}

/// `url` with its database name replaced by `nome` (query string kept).
pub fn com_banco(url: &str, nome: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let inicio_host = base.find("://").map_or(0, |i| i + 3);
    let raiz = match base[inicio_host..].find('/') {
        Some(i) => &base[..inicio_host + i],
        None => base,
    };
    format!("{raiz}/{nome}{query}")
}

/// A database of one test: dropped (with `WITH (FORCE)`) when this value is dropped.
pub struct BancoTeste {
    /// URL of the server's maintenance connection (`DATABASE_URL`).
    admin: String,
    /// Name of the test database.
    pub nome: String,
    /// URL of the test database.
    pub url: String,
}

impl BancoTeste {
    /// A fresh, empty and not yet created database name on `DATABASE_URL`'s server; `None`
    /// (after a message) when `DATABASE_URL` is unset.
    pub fn reserve(teste: &str) -> Option<BancoTeste> {
        let admin = database_url(teste)?;
        let nome = format!("carapi_t_{}", uuid::Uuid::new_v4().simple());
        let url = com_banco(&admin, &nome);
        Some(BancoTeste { admin, nome, url })
    }

    /// [`BancoTeste::reserve`] and create it.
    pub async fn create(teste: &str) -> Option<BancoTeste> {
        let b = Self::reserve(teste)?;
        let mut c = PgConnection::connect(&b.admin)
            .await
            .expect("connect DATABASE_URL");
        sqlx::query(&format!("CREATE DATABASE \"{}\"", b.nome))
            .execute(&mut c)
            .await
            .expect("CREATE DATABASE");
        c.close().await.ok();
        Some(b)
    }

    /// A migrated store over this database.
    pub async fn store(&self) -> Arc<PgStore> {
        Arc::new(PgStore::connect(&self.url).await.expect("PgStore::connect"))
    }
}

impl Drop for BancoTeste {
    fn drop(&mut self) {
        let (admin, nome) = (self.admin.clone(), self.nome.clone());
        // Drop may run inside the test's runtime: use a thread with its own runtime.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let mut c = PgConnection::connect(&admin).await.ok()?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS \"{nome}\" WITH (FORCE)"))
                    .execute(&mut c)
                    .await
                    .ok()?;
                c.close().await.ok()
            })
        })
        .join();
    }
}

/// A store under test and what keeps it alive.
pub struct Loja {
    /// `"sqlite"` or `"postgres"` (for assertion messages).
    pub nome: &'static str,
    /// The store.
    pub store: Arc<dyn Store>,
    _banco: Option<BancoTeste>,
    _dir: Option<TempDir>,
}

/// A fresh SQLite store in a temporary directory.
pub async fn loja_sqlite() -> Loja {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
    let store = Arc::new(SqliteStore::connect(&url).await.unwrap());
    Loja {
        nome: "sqlite",
        store,
        _banco: None,
        _dir: Some(dir),
    }
}

/// A fresh PostgreSQL store in its own database, when `DATABASE_URL` is set.
pub async fn loja_postgres(teste: &str) -> Option<Loja> {
    let database = BancoTeste::create(teste).await?;
    let store = database.store().await;
    Some(Loja {
        nome: "postgres",
        store,
        _banco: Some(database),
        _dir: None,
    })
}

/// SQLite always, and PostgreSQL when `DATABASE_URL` is set.
pub async fn lojas(teste: &str) -> Vec<Loja> {
    let mut v = vec![loja_sqlite().await];
    v.extend(loja_postgres(teste).await);
    v
}

#[test]
fn database_name_is_replaced_and_the_query_kept() {
    assert_eq!(
        com_banco("postgres://postgres@127.0.0.1:5432/test", "x"),
        "postgres://postgres@127.0.0.1:5432/x"
    );
    assert_eq!(
        com_banco("postgresql://u:p@h/db?sslmode=disable", "y"),
        "postgresql://u:p@h/y?sslmode=disable"
    );
    assert_eq!(com_banco("postgres://h:5432", "z"), "postgres://h:5432/z");
}
