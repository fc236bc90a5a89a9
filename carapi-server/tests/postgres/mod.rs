//! The PostgreSQL store ([`carapi_service::store::PgStore`]) against a real server.
//!
//! Needs `DATABASE_URL` (e.g. `postgres://postgres@127.0.0.1:5432/test`); every test prints a
//! message and passes when it is unset. Each test runs in its own database
//! `carapi_t_<random>`, created on `DATABASE_URL`'s server and dropped when the test ends
//! (also when it panics), so tests run in parallel without seeing each other's rows.
//!
//! The store-level scenarios ([`loja`], [`concorrencia`]) run against SQLite too, so both
//! stores are held to the same assertions.

mod backend;
mod concurrency;
mod routes;

use std::sync::Arc;

use carapi_service::store::{PgStore, SqliteStore, Store};
use sqlx::Connection;
use sqlx::postgres::PgConnection;
use tempfile::TempDir;

/// `DATABASE_URL`, or `None` after printing why the test is skipped.
pub fn database_url(test: &str) -> Option<String> {
    match std::env::var("DATABASE_URL") {
        Ok(u) if !u.trim().is_empty() => Some(u),
        _ => {
            println!("{test}: DATABASE_URL not set; skipping the PostgreSQL test");
            None
        }
    }
}

/// `url` with its database name replaced by `nome` (query string kept).
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let start_host = base.find("://").map_or(0, |i| i + 3);
    let root = match base[start_host..].find('/') {
        Some(i) => &base[..start_host + i],
        None => base,
    };
    format!("{root}/{name}{query}")
}

/// A database of one test: dropped (with `WITH (FORCE)`) when this value is dropped.
pub struct TestDatabase {
    /// URL of the server's maintenance connection (`DATABASE_URL`).
    admin: String,
    /// Name of the test database.
    pub name: String,
    /// URL of the test database.
    pub url: String,
}

impl TestDatabase {
    /// A fresh, empty and not yet created database name on `DATABASE_URL`'s server; `None`
    /// (after a message) when `DATABASE_URL` is unset.
    pub fn reserve(test: &str) -> Option<TestDatabase> {
        let admin = database_url(test)?;
        let name = format!("carapi_t_{}", uuid::Uuid::new_v4().simple());
        let url = with_database(&admin, &name);
        Some(TestDatabase { admin, name, url })
    }

    /// [`TestDatabase::reserve`] and create it.
    pub async fn create(test: &str) -> Option<TestDatabase> {
        let b = Self::reserve(test)?;
        let mut c = PgConnection::connect(&b.admin)
            .await
            .expect("connect DATABASE_URL");
        sqlx::query(&format!("CREATE DATABASE \"{}\"", b.name))
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

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let (admin, name) = (self.admin.clone(), self.name.clone());
        // Drop may run inside the test's runtime: use a thread with its own runtime.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let mut c = PgConnection::connect(&admin).await.ok()?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
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
pub struct Backend {
    /// `"sqlite"` or `"postgres"` (for assertion messages).
    pub name: &'static str,
    /// The store.
    pub store: Arc<dyn Store>,
    _database: Option<TestDatabase>,
    _dir: Option<TempDir>,
}

/// A fresh SQLite store in a temporary directory.
pub async fn sqlite_backend() -> Backend {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
    let store = Arc::new(SqliteStore::connect(&url).await.unwrap());
    Backend {
        name: "sqlite",
        store,
        _database: None,
        _dir: Some(dir),
    }
}

/// A fresh PostgreSQL store in its own database, when `DATABASE_URL` is set.
pub async fn postgres_backend(test: &str) -> Option<Backend> {
    let database = TestDatabase::create(test).await?;
    let store = database.store().await;
    Some(Backend {
        name: "postgres",
        store,
        _database: Some(database),
        _dir: None,
    })
}

/// SQLite always, and PostgreSQL when `DATABASE_URL` is set.
pub async fn backends(test: &str) -> Vec<Backend> {
    let mut v = vec![sqlite_backend().await];
    v.extend(postgres_backend(test).await);
    v
}

#[test]
fn database_name_is_replaced_and_the_query_kept() {
    assert_eq!(
        with_database("postgres://postgres@127.0.0.1:5432/test", "x"),
        "postgres://postgres@127.0.0.1:5432/x"
    );
    assert_eq!(
        with_database("postgresql://u:p@h/db?sslmode=disable", "y"),
        "postgresql://u:p@h/y?sslmode=disable"
    );
    assert_eq!(
        with_database("postgres://h:5432", "z"),
        "postgres://h:5432/z"
    );
}
