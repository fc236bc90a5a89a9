//! The operator's probes, outside `/v1` and without a key (the contract's authentication rule
//! covers `/v1` only): `GET`/`HEAD /livez` answers 200 while the process serves requests;
//! `GET`/`HEAD /readyz` answers 200 when the database answers a `SELECT 1`
//! ([`crate::store::CoordinationStore::ping`]) and 503 while it does not, so that a load
//! balancer takes the process out of rotation while its database is away. `GET /metrics`
//! serves [`crate::metrics`], on the main address or on its own ([`metrics_router`]).

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::AppState;

/// Routes of this group.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
}

/// `GET /metrics` on the main address: [`metrics_text`], or 404 when the metrics have an
/// address of their own ([`crate::Config::metrics_bind`]) or the feature `metrics` is off.
async fn metrics(State(st): State<AppState>, req: axum::extract::Request) -> Response {
    if st.config.metrics_bind.is_some() {
        return super::edge::unknown_route(req.method(), req.uri().path()).into_response();
    }
    metrics_text(&st, &req)
}

/// The application of the metrics' own address: `GET /metrics` only, 404 for anything else.
pub(crate) fn metrics_router(st: AppState) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(
                |State(st): State<AppState>, req: axum::extract::Request| async move {
                    metrics_text(&st, &req)
                },
            ),
        )
        .fallback(|req: axum::extract::Request| async move {
            super::edge::unknown_route(req.method(), req.uri().path())
        })
        .with_state(st)
}

/// [`crate::metrics::render`] as Prometheus text, the pools' gauges read now; 404 without the
/// feature `metrics`.
fn metrics_text(st: &AppState, req: &axum::extract::Request) -> Response {
    crate::metrics::observe_pools(&st.store.pools());
    match crate::metrics::render() {
        Some(body) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            body,
        )
            .into_response(),
        None => super::edge::unknown_route(req.method(), req.uri().path()).into_response(),
    }
}

/// `GET /livez`: 200 `ok`.
async fn livez() -> Response {
    text(StatusCode::OK, "ok\n")
}

/// `GET /readyz`: 200 `ok` when the database answers, 503 otherwise (the error stays in the
/// log at `warn`, never in the answer).
async fn readyz(State(st): State<AppState>) -> Response {
    match st.store.ping().await {
        Ok(()) => text(StatusCode::OK, "ok\n"),
        Err(e) => {
            tracing::warn!(erro = %e, "readyz: banco de dados indisponível");
            text(
                StatusCode::SERVICE_UNAVAILABLE,
                "banco de dados indisponível\n",
            )
        }
    }
}

fn text(status: StatusCode, body: &'static str) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        body,
    )
        .into_response()
}
