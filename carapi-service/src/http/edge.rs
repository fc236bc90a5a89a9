//! The edge of the server: what runs on every request before routing and authentication.
//!
//! 1. The path must be one of the contract's routes ([`routes::routes`]; else 404 `SPEC_NAO_ENCONTRADA`) and the
//!    method one it lists (else 405 with `Allow`): `HEAD` on a lookup is neither charged nor
//!    recorded nor counted toward any limit.
//! 2. A path segment longer than `MAX_SEGMENT` bytes is refused at once, without a
//!    database write: 400 with the route's own code for a lookup, 404 otherwise.
//! 3. A body (`POST`, `PUT`) is read whole, at most [`Edge::max_body`] bytes (else 413)
//!    within [`Edge::body_timeout`] (else 408), before any handler sees it: here for the
//!    routes outside `/v1` and the webhook, after authentication for `/v1`
//!    (`super::authenticate`) and after the signature header's form and timestamp for the
//!    webhook (`super::webhooks`), so that a slow body with a wrong key or signature holds no
//!    connection.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use carapi_sdk::ErrorCode;
use http_body_util::{BodyExt, Limited};

use super::routes;
use crate::api_error::{ApiError, PARAMETER_INVALID, ROUTE_NOT_FOUND};
pub use crate::config::Edge;
use crate::state::AppState;

/// Longest accepted path segment, bytes (percent-encoded): a CAR code has 43 characters and a
/// masked CNPJ 18, so anything this long is garbage (a 60,000-character code, say).
pub(crate) const MAX_SEGMENT: usize = 256;

/// The state of [`edge`]: the application's, and the routes added to the contract's.
#[derive(Debug, Clone)]
pub(crate) struct EdgeState {
    /// The application state.
    pub(crate) st: AppState,
    /// Routes beyond the contract's ([`super::Extensions::routes`]); empty on a normal server.
    pub(crate) extra_routes: &'static [routes::Route],
}

/// The edge middleware (see the module documentation); records every answer in the metrics
/// ([`crate::metrics`]) under its route template, never the raw path.
pub(crate) async fn edge(State(e): State<EdgeState>, req: Request, next: Next) -> Response {
    let start = std::time::Instant::now();
    let path = req.uri().path();
    let pattern = routes::route(path)
        .or_else(|| e.extra_routes.iter().find(|r| r.matches(path)))
        .map_or("desconhecida", routes::Route::pattern);
    let resp = checked(&e, req, next).await;
    let status = resp.status();
    crate::metrics::request(pattern, status.as_u16(), start.elapsed());
    if status == StatusCode::TOO_MANY_REQUESTS
        && let Some(limite) = resp.headers().get(crate::api_error::LIMIT_HEADER)
    {
        crate::metrics::refused(limite.to_str().unwrap_or("outro"));
    }
    resp
}

async fn checked(e: &EdgeState, req: Request, next: Next) -> Response {
    let st = &e.st;
    let path = req.uri().path();
    let route = routes::route(path).or_else(|| e.extra_routes.iter().find(|r| r.matches(path)));
    let Some(route) = route else {
        return unknown_route(req.method(), path).into_response();
    };
    if !route.methods.contains(req.method()) {
        return ApiError::with_status(
            StatusCode::METHOD_NOT_ALLOWED,
            ROUTE_NOT_FOUND,
            format!(
                "Método {} não permitido em {}; use {}.",
                req.method(),
                show(path),
                route.allow()
            ),
        )
        .header(
            header::ALLOW,
            HeaderValue::from_str(&route.allow()).expect("method names are valid header text"),
        )
        .into_response();
    }
    if let Some(error) = absurd_segment(route, path) {
        return error.into_response();
    }
    let read_now = has_body(req.method()) && !checked_before_body(path);
    let mut req = req;
    req.extensions_mut().insert(routes::MatchedRoute(route));
    let req = if read_now {
        match read_body(st, req).await {
            Ok(r) => r,
            Err(e) => return e.into_response(),
        }
    } else {
        req
    };
    next.run(req).await
}

/// Whether requests of `method` carry a body the edge reads.
pub(crate) fn has_body(method: &Method) -> bool {
    method == Method::POST || method == Method::PUT
}

/// The routes whose body is read only once the request's credentials were checked: `/v1`
/// (the bearer key) and the webhook (its signature header's form and timestamp).
fn checked_before_body(path: &str) -> bool {
    path.starts_with("/v1/") || path == "/webhooks/pix"
}

/// 404 `SPEC_NAO_ENCONTRADA` for a path no route has.
pub(crate) fn unknown_route(method: &Method, path: &str) -> ApiError {
    ApiError::with_status(
        StatusCode::NOT_FOUND,
        ROUTE_NOT_FOUND,
        format!("Rota não encontrada: {method} {}", show(path)),
    )
}

/// At most [`MAX_SEGMENT`] characters of `path`, for messages.
fn show(path: &str) -> String {
    path.chars().take(MAX_SEGMENT).collect()
}

fn absurd_segment(route: &routes::Route, path: &str) -> Option<ApiError> {
    if path.split('/').all(|s| s.len() <= MAX_SEGMENT) {
        return None;
    }
    Some(segment_error(
        Some(route),
        path,
        format!("Parâmetro de caminho com mais de {MAX_SEGMENT} bytes."),
    ))
}

/// The contract's answer to a path parameter that cannot be what the route expects (too
/// long, not UTF-8 once decoded): 400 `CODIGO_CAR_INVALIDO` / `CPF_CNPJ_INVALIDO` for the
/// lookups, 404 `RECARGA_NAO_ENCONTRADA` for a top-up, 404 `SPEC_NAO_ENCONTRADA` otherwise.
/// `route` is the route the edge matched (`None` when unknown), `path` the raw path.
pub(crate) fn segment_error(route: Option<&routes::Route>, path: &str, msg: String) -> ApiError {
    match route.and_then(routes::Route::consulta) {
        Some(e) if e.takes_codigo_car() => ApiError::new(ErrorCode::CodigoCarInvalido, msg),
        Some(_) => ApiError::new(ErrorCode::CpfCnpjInvalido, msg),
        None if path.starts_with("/v1/recarga/") => {
            ApiError::new(ErrorCode::RecargaNaoEncontrada, msg)
        }
        None => ApiError::with_status(StatusCode::NOT_FOUND, ROUTE_NOT_FOUND, msg),
    }
}

/// The code of the edge's own refusals (408, 413, a broken body): the contract has none, so
/// the server's one extension code, listed in `openapi.json` where it can occur.
fn edge_code() -> ErrorCode {
    ErrorCode::Other(PARAMETER_INVALID.into())
}

/// Reads the body whole within the edge's time and size bounds; hands the request back with
/// the buffered body.
///
/// # Errors
/// 408, 413 or 400 (`PARAMETER_INVALID`) for a body that came too late, too large or broken.
pub(crate) async fn read_body(st: &AppState, req: Request) -> Result<Request, ApiError> {
    let edge = &st.config.edge;
    let (parts, body) = req.into_parts();
    let limited = Limited::new(body, edge.max_body);
    let bytes = match tokio::time::timeout(edge.body_timeout, limited.collect()).await {
        Err(_) => {
            return Err(ApiError::with_status(
                StatusCode::REQUEST_TIMEOUT,
                edge_code(),
                format!(
                    "Corpo da requisição não chegou em {} s.",
                    edge.body_timeout.as_secs()
                ),
            )
            .header(header::CONNECTION, HeaderValue::from_static("close")));
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(ApiError::with_status(
                StatusCode::PAYLOAD_TOO_LARGE,
                edge_code(),
                format!("Corpo da requisição maior que {} bytes.", edge.max_body),
            )
            .header(header::CONNECTION, HeaderValue::from_static("close")));
        }
        Ok(Err(_)) => {
            return Err(ApiError::with_status(
                StatusCode::BAD_REQUEST,
                edge_code(),
                "Corpo da requisição interrompido ou mal formado.",
            ));
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    Ok(Request::from_parts(parts, Body::from(bytes)))
}
