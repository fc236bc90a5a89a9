//! The reference server as a test double (`carapi_test_double`): one test per fault kind
//! and per clock-driven rule, each run on SQLite and, when `DATABASE_URL` is set, on
//! PostgreSQL; the SDK's retry, lost-answer, spend-cap and waiter behaviours against it; the
//! same over the `/_teste` HTTP routes.

mod clock;
mod faults;
mod http;
mod sdk;

use std::future::Future;

use carapi_test_double::TestServer;
use carapi_tests::pg;

/// Runs `cenario` against a fresh test server over in-memory SQLite, then, when
/// `DATABASE_URL` is set, over a PostgreSQL database of its own (created, then dropped; a
/// message says when it is skipped).
pub(crate) async fn on_each_database<F, Fut>(scenario: F)
where
    F: Fn(TestServer) -> Fut,
    Fut: Future<Output = ()>,
{
    let srv = TestServer::start()
        .await
        .expect("servidor de teste em SQLite");
    scenario(srv).await;
    let Some(admin) = std::env::var("DATABASE_URL").ok().filter(|u| !u.is_empty()) else {
        eprintln!("DATABASE_URL não definida: cenário só em SQLite");
        return;
    };
    let name = pg::unique_name("carapi_duble");
    let srv = TestServer::builder()
        .database(pg::with_database(&admin, &name))
        .start()
        .await
        .unwrap_or_else(|e| panic!("servidor de teste em PostgreSQL: {e}"));
    scenario(srv).await;
    pg::drop_database(&admin, &name).await;
}
