//! The edge of the server: what runs on every request before routing and authentication.
//!
//! 1. The path must be one of the contract's routes (`rotas::ROTAS`; else 404 `SPEC_NAO_ENCONTRADA`) and the
//!    method one it lists (else 405 with `Allow`): `HEAD` on a lookup is neither charged nor
//!    recorded nor counted toward any limit.
//! 2. A path segment longer than [`SEGMENTO_MAXIMO`] bytes is refused at once, without a
//!    database write: 400 with the route's own code for a lookup, 404 otherwise.
//! 3. A body (`POST`, `PUT`) is read whole, at most [`Borda::corpo_maximo`] bytes (else 413)
//!    within [`Borda::tempo_corpo`] (else 408), before any handler sees it.

use std::net::IpAddr;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use carapi_sdk::ErrorCode;
use http_body_util::{BodyExt, Limited};

use super::error::{ApiError, PARAMETRO_INVALIDO, ROTA_NAO_ENCONTRADA};
use super::rotas;
pub use crate::config::Borda;
use crate::state::AppState;

/// Longest accepted path segment, bytes (percent-encoded): a CAR code has 43 characters and a
/// masked CNPJ 18, so anything this long is garbage (a 60,000-character code, say).
pub const SEGMENTO_MAXIMO: usize = 256;

/// The state of [`borda`]: the application's, and the routes added to the contract's.
#[derive(Debug, Clone)]
pub struct EstadoBorda {
    /// The application state.
    pub st: AppState,
    /// Routes beyond the contract's ([`super::Acrescimos::rotas`]); empty on a normal server.
    pub rotas_extra: &'static [rotas::Rota],
}

/// The edge middleware (see the module documentation).
pub async fn borda(State(e): State<EstadoBorda>, req: Request, next: Next) -> Response {
    let st = &e.st;
    let path = req.uri().path();
    let rota = rotas::rota(path).or_else(|| e.rotas_extra.iter().find(|r| r.casa(path)));
    let Some(rota) = rota else {
        return rota_desconhecida(req.method(), path).into_response();
    };
    if !rota.metodos.contains(req.method()) {
        return ApiError::com_status(
            StatusCode::METHOD_NOT_ALLOWED,
            ROTA_NAO_ENCONTRADA,
            format!(
                "Método {} não permitido em {}; use {}.",
                req.method(),
                mostrar(path),
                rota.allow()
            ),
        )
        .cabecalho(
            header::ALLOW,
            HeaderValue::from_str(&rota.allow()).expect("method names are valid header text"),
        )
        .into_response();
    }
    if let Some(erro) = segmento_absurdo(rota.padrao, path) {
        return erro.into_response();
    }
    let req = if req.method() == Method::POST || req.method() == Method::PUT {
        match ler_corpo(st, req).await {
            Ok(r) => r,
            Err(e) => return e.into_response(),
        }
    } else {
        req
    };
    next.run(req).await
}

/// 404 `SPEC_NAO_ENCONTRADA` for a path no route has.
pub fn rota_desconhecida(metodo: &Method, path: &str) -> ApiError {
    ApiError::com_status(
        StatusCode::NOT_FOUND,
        ROTA_NAO_ENCONTRADA,
        format!("Rota não encontrada: {metodo} {}", mostrar(path)),
    )
}

/// At most [`SEGMENTO_MAXIMO`] characters of `path`, for messages.
fn mostrar(path: &str) -> String {
    path.chars().take(SEGMENTO_MAXIMO).collect()
}

fn segmento_absurdo(padrao: &str, path: &str) -> Option<ApiError> {
    if path.split('/').all(|s| s.len() <= SEGMENTO_MAXIMO) {
        return None;
    }
    Some(erro_de_segmento(
        padrao,
        format!("Parâmetro de caminho com mais de {SEGMENTO_MAXIMO} bytes."),
    ))
}

/// The contract's answer to a path parameter that cannot be what the route expects (too
/// long, not UTF-8 once decoded): 400 `CODIGO_CAR_INVALIDO` / `CPF_CNPJ_INVALIDO` for the
/// lookups, 404 `RECARGA_NAO_ENCONTRADA` for a top-up, 404 `SPEC_NAO_ENCONTRADA` otherwise.
pub fn erro_de_segmento(path: &str, msg: String) -> ApiError {
    if path.starts_with("/v1/car/") {
        ApiError::new(ErrorCode::CodigoCarInvalido, msg)
    } else if path.starts_with("/v1/proprietario/") {
        ApiError::new(ErrorCode::CpfCnpjInvalido, msg)
    } else if path.starts_with("/v1/recarga/") {
        ApiError::new(ErrorCode::RecargaNaoEncontrada, msg)
    } else {
        ApiError::com_status(StatusCode::NOT_FOUND, ROTA_NAO_ENCONTRADA, msg)
    }
}

/// The code of the edge's own refusals (408, 413, a broken body): the contract has none, so
/// the server's one extension code, listed in `openapi.json` where it can occur.
fn codigo_borda() -> ErrorCode {
    ErrorCode::Other(PARAMETRO_INVALIDO.into())
}

/// Reads the body whole within the edge's time and size bounds; hands the request back with
/// the buffered body.
async fn ler_corpo(st: &AppState, req: Request) -> Result<Request, ApiError> {
    let borda = &st.config.borda;
    let (partes, corpo) = req.into_parts();
    let limitado = Limited::new(corpo, borda.corpo_maximo);
    let bytes = match tokio::time::timeout(borda.tempo_corpo, limitado.collect()).await {
        Err(_) => {
            return Err(ApiError::com_status(
                StatusCode::REQUEST_TIMEOUT,
                codigo_borda(),
                format!(
                    "Corpo da requisição não chegou em {} s.",
                    borda.tempo_corpo.as_secs()
                ),
            )
            .cabecalho(header::CONNECTION, HeaderValue::from_static("close")));
        }
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(ApiError::com_status(
                StatusCode::PAYLOAD_TOO_LARGE,
                codigo_borda(),
                format!(
                    "Corpo da requisição maior que {} bytes.",
                    borda.corpo_maximo
                ),
            )
            .cabecalho(header::CONNECTION, HeaderValue::from_static("close")));
        }
        Ok(Err(_)) => {
            return Err(ApiError::com_status(
                StatusCode::BAD_REQUEST,
                codigo_borda(),
                "Corpo da requisição interrompido ou mal formado.",
            ));
        }
        Ok(Ok(c)) => c.to_bytes(),
    };
    Ok(Request::from_parts(partes, Body::from(bytes)))
}

/// The client address of a request served over a socket (absent through `oneshot`).
pub fn endereco(req: &Request) -> Option<IpAddr> {
    req.extensions()
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip())
}
