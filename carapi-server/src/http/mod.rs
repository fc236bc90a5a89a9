//! The HTTP layer: one module per route group, each exporting `router()`, composed here with
//! authentication, the per-key rate limit (sandbox lookups exempt) and JSON answers for unknown
//! routes, wrong methods and panics.

pub mod car;
pub mod consulta;
pub mod conta;
pub mod error;
pub mod extract;
pub mod paginacao;
pub mod proprietario;
pub mod recarga;
pub mod webhooks;

use std::any::Any;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use carapi_sdk::{CodigoCar, ErrorCode, sandbox};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

use crate::auth;
use crate::cache::Titular;
use crate::state::AppState;
use error::{ApiError, ROTA_NAO_ENCONTRADA};

/// The whole application: `/v1` (bearer key and rate limit on every route), `/webhooks/pix`
/// and `/openapi.json`.
pub fn router(state: AppState) -> Router {
    let v1 = Router::new()
        .merge(car::router())
        .merge(proprietario::router())
        .merge(conta::router())
        .merge(recarga::router())
        .route_layer(middleware::from_fn_with_state(state.clone(), autenticar));
    Router::new()
        .merge(v1)
        .merge(webhooks::router())
        .merge(crate::openapi::router())
        .fallback(rota_desconhecida)
        .method_not_allowed_fallback(metodo_nao_permitido)
        .layer(CatchPanicLayer::custom(panico))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Bearer authentication then the per-key rate limit; puts the [`crate::store::ContaId`] in
/// the request, and the [`crate::store::Conta`] too when it was read from the store (a key
/// found in the cache gives only the id; [`extract::Autenticado`] reads the account then).
async fn autenticar(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(auth::bearer);
    let Some(token) = token else {
        return ApiError::token_invalido().into_response();
    };
    let titular = match st
        .caches
        .conta_da_chave(st.store.as_ref(), &auth::hash_chave(token), |h| {
            auth::confere(token, h)
        })
        .await
    {
        Ok(Some(t)) => t,
        Ok(None) => return ApiError::token_invalido().into_response(),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let id = titular.id();
    if let Some(limitador) = &st.limitador
        && !eh_sandbox(req.uri().path())
        && let Err(espera) = limitador.verificar(id).await
    {
        let segundos = espera.as_secs() + u64::from(espera.subsec_nanos() > 0);
        return ApiError::new(
            ErrorCode::LimiteExcedido,
            "Limite de requisições por segundo excedido para esta chave.",
        )
        .retry_after(segundos)
        .into_response();
    }
    req.extensions_mut().insert(id);
    if let Titular::Conta(conta) = titular {
        req.extensions_mut().insert(conta);
    }
    next.run(req).await
}

/// True for a lookup of a reserved sandbox value, which counts toward no limit (contract,
/// "Limits": "Sandbox reserved values do not count toward any limit"), the request rate
/// included.
fn eh_sandbox(path: &str) -> bool {
    if let Some(resto) = path.strip_prefix("/v1/car/") {
        let codigo = resto.split('/').next().unwrap_or("");
        CodigoCar::parse(codigo).is_ok_and(|c| c.is_sandbox())
    } else if let Some(doc) = path.strip_prefix("/v1/proprietario/") {
        sandbox::is_documento(doc)
    } else {
        false
    }
}

async fn rota_desconhecida(req: Request) -> ApiError {
    ApiError::com_status(
        StatusCode::NOT_FOUND,
        ROTA_NAO_ENCONTRADA,
        format!("Rota não encontrada: {} {}", req.method(), req.uri().path()),
    )
}

async fn metodo_nao_permitido(req: Request) -> ApiError {
    ApiError::com_status(
        StatusCode::METHOD_NOT_ALLOWED,
        ROTA_NAO_ENCONTRADA,
        format!(
            "Método {} não permitido em {}",
            req.method(),
            req.uri().path()
        ),
    )
}

fn panico(erro: Box<dyn Any + Send + 'static>) -> Response {
    let detalhe = erro
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| erro.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "pânico sem mensagem".into());
    ApiError::interno(format!("pânico num handler: {detalhe}")).into_response()
}
