//! `GET /openapi.json`: the committed OpenAPI document (`carapi-service/openapi.json`, generated
//! by `crate::openapi` under the cargo feature `openapi`), served in every build.

use std::sync::Arc;

use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use serde_json::{Map, Value};

use crate::state::AppState;

/// The committed document (`carapi-service/openapi.json`), as served.
pub const OPENAPI_DOCUMENT: &str = include_str!("../../openapi.json");

/// Route of the document (public: no key needed to read the API description): `documento`
/// when given (an assembler's own, e.g. a test double's merged one), else [`OPENAPI_DOCUMENT`].
pub fn router(documento: Option<String>) -> Router<AppState> {
    let body: Arc<str> = documento.map_or_else(|| Arc::from(OPENAPI_DOCUMENT), Arc::from);
    Router::new().route(
        "/openapi.json",
        get(move || async move {
            (
                [(header::CONTENT_TYPE, "application/json")],
                body.to_string(),
            )
                .into_response()
        }),
    )
}

/// `base` (an OpenAPI document as JSON) with the `paths`, the `components` and the `tags` of
/// `extra` added: the served document of a server that adds routes of its own. Entries of
/// `extra` replace those of `base` with the same name.
///
/// # Errors
/// [`serde_json::Error`] when either text is not JSON.
pub fn merge_documents(base: &str, extra: &str) -> Result<String, serde_json::Error> {
    let mut doc: Value = serde_json::from_str(base)?;
    let extra: Value = serde_json::from_str(extra)?;
    if let Some(paths) = extra["paths"].as_object() {
        object(&mut doc, "paths").extend(paths.clone());
    }
    if let Some(components) = extra["components"].as_object() {
        let destination = object(&mut doc, "components");
        for (tipo, itens) in components {
            if let Some(itens) = itens.as_object() {
                object_in(destination, tipo).extend(itens.clone());
            }
        }
    }
    if let (Some(tags), Some(root)) = (extra["tags"].as_array(), doc.as_object_mut())
        && let Value::Array(destination) =
            root.entry("tags").or_insert_with(|| Value::Array(vec![]))
    {
        destination.extend(tags.iter().cloned());
    }
    let mut s = serde_json::to_string_pretty(&doc)?;
    s.push('\n');
    Ok(s)
}

/// The object under `chave` of the document's root (created empty when missing).
fn object<'a>(doc: &'a mut Value, chave: &str) -> &'a mut Map<String, Value> {
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let Value::Object(root) = doc else {
        unreachable!("made an object above")
    };
    object_in(root, chave)
}

/// The object under `chave` of `m` (replaced by an empty one when missing or not an object).
fn object_in<'a>(m: &'a mut Map<String, Value>, chave: &str) -> &'a mut Map<String, Value> {
    let v = m.entry(chave).or_insert_with(|| Value::Object(Map::new()));
    if !v.is_object() {
        *v = Value::Object(Map::new());
    }
    match v {
        Value::Object(o) => o,
        _ => unreachable!("made an object above"),
    }
}
