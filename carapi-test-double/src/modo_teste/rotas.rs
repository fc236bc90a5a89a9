//! The test mode over HTTP: `/_teste/...` routes for tests written in other languages and for
//! the CLI, behind their own bearer token (`Authorization: Bearer <token>`, never an API key).
//! Present only on a test-mode server; documented in `openapi.json` under the tag `teste`.
//!
//! | method and path | body | answer |
//! |---|---|---|
//! | `POST /_teste/falhas` | a [`RegraFalha`] | 201 `{"id": n}` |
//! | `DELETE /_teste/falhas` | | 204, every rule removed |
//! | `GET /_teste/relogio` | | 200 `{"agora": "<UTC>"}` |
//! | `POST /_teste/relogio/avancar` | `{"segundos": n}` | 200 [`super::Avanco`] |
//! | `POST /_teste/contas` | a [`NovaContaTeste`] | 201 `{"contaId": n, "apiKey": "car_..."}` |
//! | `GET /_teste/contas/{contaId}` | | 200 [`super::operacoes::EstadoConta`] |
//! | `POST /_teste/recargas/{recargaId}/pagar` | `{"webhook": true}` (default) | 204 |

use axum::body::Bytes;
use std::sync::Arc;

use axum::extract::{FromRef, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use carapi_sdk::ErrorCode;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

use super::ModoTeste;
use super::falhas::RegraFalha;
use super::operacoes::{self, NovaContaTeste};
use carapi_service::ServerError;
use carapi_service::auth;
use carapi_service::http::cliente::endereco_cliente;
use carapi_service::http::consulta::Segmento;
use carapi_service::http::error::{ApiError, PARAMETRO_INVALIDO};
use carapi_service::http::nao_autenticado;
use carapi_service::http::rotas::Rota;
use carapi_service::state::AppState;
use carapi_service::store::ContaId;

const POST: &[Method] = &[Method::POST];
const GET: &[Method] = &[Method::GET];

/// The `/_teste` routes and their methods (the edge middleware checks requests against them
/// on a test-mode server, as it does [`carapi_service::http::rotas::ROTAS`]).
pub const ROTAS: &[Rota] = &[
    Rota {
        padrao: "/_teste/falhas",
        metodos: &[Method::POST, Method::DELETE],
    },
    Rota {
        padrao: "/_teste/relogio",
        metodos: GET,
    },
    Rota {
        padrao: "/_teste/relogio/avancar",
        metodos: POST,
    },
    Rota {
        padrao: "/_teste/contas",
        metodos: POST,
    },
    Rota {
        padrao: "/_teste/contas/{contaId}",
        metodos: GET,
    },
    Rota {
        padrao: "/_teste/recargas/{recargaId}/pagar",
        metodos: POST,
    },
];

/// What the `/_teste` handlers reach: the server's state and the test mode's.
#[derive(Debug, Clone)]
pub struct EstadoTeste {
    /// The server's state (its clock is the test clock).
    pub st: AppState,
    /// The test mode.
    pub modo: Arc<ModoTeste>,
}

impl FromRef<EstadoTeste> for AppState {
    fn from_ref(e: &EstadoTeste) -> AppState {
        e.st.clone()
    }
}

impl FromRef<EstadoTeste> for Arc<ModoTeste> {
    fn from_ref(e: &EstadoTeste) -> Arc<ModoTeste> {
        e.modo.clone()
    }
}

/// The `/_teste` router, behind the token check.
pub fn router(st: AppState, modo: Arc<ModoTeste>) -> Router<AppState> {
    Router::new()
        .route("/_teste/falhas", post(falhar).delete(limpar_falhas))
        .route("/_teste/relogio", get(relogio))
        .route("/_teste/relogio/avancar", post(avancar))
        .route("/_teste/contas", post(criar_conta))
        .route("/_teste/contas/{contaId}", get(conta))
        .route("/_teste/recargas/{recargaId}/pagar", post(pagar))
        .route_layer(middleware::from_fn_with_state(
            EstadoTeste {
                st: st.clone(),
                modo: modo.clone(),
            },
            exigir_token,
        ))
        .with_state(EstadoTeste { st, modo })
}

/// 401 `TOKEN_INVALIDO` unless the request carries the test mode's token. A wrong or missing
/// token counts as a failed authentication of the client address, like a wrong API key
/// ([`carapi_service::http::nao_autenticado`]: 429 once the address is over its rate).
async fn exigir_token(State(e): State<EstadoTeste>, req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(auth::bearer);
    let ok = token.is_some_and(|t| e.modo.confere_token(t));
    if !ok {
        let ip = endereco_cliente(&req, &e.st.config.borda.proxies_confiaveis);
        let invalido = ApiError::new(
            ErrorCode::TokenInvalido,
            "Token do modo de teste ausente ou inválido (Authorization: Bearer <token-teste>).",
        );
        return nao_autenticado(&e.st, ip, invalido).into_response();
    }
    next.run(req).await
}

fn invalido(msg: impl Into<String>) -> ApiError {
    ApiError::com_status(
        StatusCode::BAD_REQUEST,
        ErrorCode::Other(PARAMETRO_INVALIDO.into()),
        msg,
    )
}

/// A JSON body; an empty one reads as `{}`.
fn json<T: DeserializeOwned>(bytes: &Bytes) -> Result<T, ApiError> {
    let texto: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    let mut de = serde_json::Deserializer::from_slice(texto);
    serde_path_to_error::deserialize(&mut de)
        .map_err(|e| invalido(format!("Campo '{}' inválido: {}", e.path(), e.inner())))
}

fn erro_servidor(e: ServerError) -> ApiError {
    match e {
        ServerError::Invalido(m) => invalido(m),
        ServerError::NaoEncontrado(m) => ApiError::com_status(
            StatusCode::NOT_FOUND,
            ErrorCode::Other("NAO_ENCONTRADO".into()),
            format!("Não encontrado: {m}."),
        ),
        ServerError::Store(e) => e.into(),
        outro => ApiError::interno(outro),
    }
}

/// `POST /_teste/falhas`: registers a fault rule ([`RegraFalha`]).
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/falhas", tag = "teste", security(("tokenTeste" = [])),
    request_body = RegraFalha,
    responses(
        (status = 201, description = "Rule registered: `{\"id\": n}`", body = serde_json::Value),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body or value", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub async fn falhar(
    State(modo): State<Arc<ModoTeste>>,
    corpo: Bytes,
) -> Result<Response, ApiError> {
    let regra: RegraFalha = json(&corpo)?;
    let id = modo.falhas.registrar(regra).map_err(|e| invalido(e.0))?;
    Ok((StatusCode::CREATED, Json(serde_json::json!({ "id": id }))).into_response())
}

/// `DELETE /_teste/falhas`: removes every fault rule.
#[cfg_attr(feature = "openapi", utoipa::path(delete, path = "/_teste/falhas", tag = "teste", security(("tokenTeste" = [])),
    responses(
        (status = 204, description = "Every rule removed"),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub async fn limpar_falhas(State(modo): State<Arc<ModoTeste>>) -> StatusCode {
    modo.falhas.limpar();
    StatusCode::NO_CONTENT
}

/// `GET /_teste/relogio`: the server clock (UTC).
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/_teste/relogio", tag = "teste", security(("tokenTeste" = [])),
    responses(
        (status = 200, description = "The server clock: `{\"agora\": \"<UTC>\"}`", body = serde_json::Value),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub async fn relogio(State(st): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "agora": st.relogio.agora() }))
}

/// Body of `POST /_teste/relogio/avancar`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Avancar {
    /// Seconds to move the clock forward.
    pub segundos: u64,
}

/// `POST /_teste/relogio/avancar`: moves the clock and runs what became due.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/relogio/avancar", tag = "teste", security(("tokenTeste" = [])),
    request_body = Avancar,
    responses(
        (status = 200, description = "Clock moved; due jobs ran (reconciliation every 2 minutes of clock)", body = super::Avanco),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body or value", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub async fn avancar(
    State(st): State<AppState>,
    State(modo): State<Arc<ModoTeste>>,
    corpo: Bytes,
) -> Result<Response, ApiError> {
    let Avancar { segundos } = json(&corpo)?;
    let avanco = modo
        .avancar(&st, std::time::Duration::from_secs(segundos))
        .await?;
    Ok(Json(avanco).into_response())
}

/// `POST /_teste/contas`: creates an account ([`NovaContaTeste`]); the key is in the answer.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/contas", tag = "teste", security(("tokenTeste" = [])),
    request_body = NovaContaTeste,
    responses(
        (status = 201, description = "Account created: `contaId` and `apiKey`", body = serde_json::Value),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body or value", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub async fn criar_conta(State(st): State<AppState>, corpo: Bytes) -> Result<Response, ApiError> {
    let nova: NovaContaTeste = json(&corpo)?;
    let criada = operacoes::criar_conta(&st, nova)
        .await
        .map_err(erro_servidor)?;
    Ok((StatusCode::CREATED, Json(criada)).into_response())
}

/// `GET /_teste/contas/{contaId}`: the account as stored, with the ledger check.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/_teste/contas/{contaId}", tag = "teste", security(("tokenTeste" = [])),
    params(("contaId" = i64, Path, description = "Account id")),
    responses(
        (status = 200, description = "The account as stored, with the ledger check", body = super::operacoes::EstadoConta),
        (status = 404, description = "No such account", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub async fn conta(
    State(st): State<AppState>,
    Segmento(id): Segmento,
) -> Result<Response, ApiError> {
    let id: ContaId = id
        .parse()
        .map_err(|_| invalido(format!("contaId inválido: {id:?}")))?;
    let estado = operacoes::estado_conta(&st, id)
        .await
        .map_err(erro_servidor)?;
    Ok(Json(estado).into_response())
}

/// Body of `POST /_teste/recargas/{recargaId}/pagar`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Pagamento {
    /// Deliver the signed webhook (default true); false leaves it to reconciliation.
    #[serde(default = "sim")]
    pub webhook: bool,
}

fn sim() -> bool {
    true
}

/// `POST /_teste/recargas/{recargaId}/pagar`: pays a top-up at the simulated PSP.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/recargas/{recargaId}/pagar", tag = "teste", security(("tokenTeste" = [])),
    params(("recargaId" = uuid::Uuid, Path, description = "Top-up id")),
    request_body = Pagamento,
    responses(
        (status = 204, description = "Paid at the PSP (and the webhook delivered unless `webhook: false`)"),
        (status = 404, description = "No such top-up", body = carapi_sdk::ApiErrorBody),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body or value", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub async fn pagar(
    State(st): State<AppState>,
    State(modo): State<Arc<ModoTeste>>,
    Segmento(id): Segmento,
    corpo: Bytes,
) -> Result<StatusCode, ApiError> {
    let id: Uuid = id
        .parse()
        .map_err(|_| invalido(format!("recargaId inválido: {id:?}")))?;
    let Pagamento { webhook } = json(&corpo)?;
    operacoes::pagar(&st, &modo, id, webhook)
        .await
        .map_err(erro_servidor)?;
    Ok(StatusCode::NO_CONTENT)
}
