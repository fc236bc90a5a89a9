//! Throw-away PostgreSQL databases on the server `DATABASE_URL` points at, for tests and
//! benchmarks that need a database of their own (the test double's reconciliation passes see
//! every pending top-up of their database, so parallel tests must not share one).

/// `url` with its database name replaced by `nome` (the query string is kept).
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, ""), |(b, q)| (b, q));
    let start = base.find("://").map_or(0, |i| i + 3);
    let root = base[start..].find('/').map_or(base, |i| &base[..start + i]);
    if query.is_empty() {
        format!("{root}/{name}")
    } else {
        format!("{root}/{name}?{query}")
    }
}

/// Drops database `nome` on `admin`'s server, closing its connections (`WITH (FORCE)`);
/// failures are ignored (a leftover database is harmless).
pub async fn drop_database(admin: &str, name: &str) {
    use sqlx::Connection;
    if let Ok(mut c) = sqlx::PgConnection::connect(admin).await {
        let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
            .execute(&mut c)
            .await;
    }
}

/// A fresh database name with `prefixo` (lowercase letters, digits and `_`).
pub fn unique_name(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_is_replaced_and_the_query_kept() {
        assert_eq!(
            with_database("postgres://u@h:5432/test?sslmode=disable", "x"),
            "postgres://u@h:5432/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://u@h/test", "y"),
            "postgres://u@h/y"
        );
    }
}
