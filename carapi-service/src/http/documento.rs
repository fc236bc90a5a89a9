//! `GET /openapi.json`: the committed OpenAPI document (`carapi-service/openapi.json`, generated
//! by `crate::openapi` under the cargo feature `openapi`), served in every build.

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::state::AppState;

/// The committed document (`carapi-service/openapi.json`), as served.
pub const DOCUMENTO: &str = include_str!("../../openapi.json");

/// Route of the document (public: no key needed to read the API description).
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/openapi.json",
        get(|| async { ([(header::CONTENT_TYPE, "application/json")], DOCUMENTO).into_response() }),
    )
}
