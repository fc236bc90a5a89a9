//! The test mode over HTTP: `/_teste/...` routes for tests written in other languages and for
//! the CLI, behind their own bearer token (`Authorization: Bearer <token>`, never an API key).
//! Present only on a test-mode server; documented in `openapi.json` under the tag `teste`.
//!
//! | method and path | body | answer |
//! |---|---|---|
//! | `POST /_teste/falhas` | a [`FaultRule`] | 201 `{"id": n}` |
//! | `DELETE /_teste/falhas` | | 204, every rule removed |
//! | `GET /_teste/relogio` | | 200 `{"now": "<UTC>"}` |
//! | `POST /_teste/relogio/avancar` | `{"segundos": n}` | 200 [`super::Advance`] |
//! | `POST /_teste/contas` | a [`TestNovaConta`] | 201 `{"contaId": n, "apiKey": "car_..."}` |
//! | `GET /_teste/contas/{contaId}` | | 200 [`super::operations::ContaState`] |
//! | `POST /_teste/recargas/{recargaId}/pagar` | `{"webhook": true}` (default) | 204 |
//! | `POST /_teste/imoveis/{codigoCar}` | an [`ImovelChange`] | 200 `{"codigoCar": ..., "proprietarios": n, "areaTotalHa": "..."}` |

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

use super::TestMode;
use super::faults::FaultRule;
use super::operations::{self, ImovelChange, TestNovaConta};
use carapi_service::ServerError;
use carapi_service::api_error::{ApiError, PARAMETER_INVALID};
use carapi_service::auth;
use carapi_service::http::Segment;
use carapi_service::http::client_addr::client_address;
use carapi_service::http::routes::Route;
use carapi_service::http::unauthenticated;
use carapi_service::state::AppState;
use carapi_service::store::ContaId;

const POST: &[Method] = &[Method::POST];
const GET: &[Method] = &[Method::GET];

/// The `/_teste` routes and their methods (the edge middleware checks requests against them
/// on a test-mode server, as it does [`carapi_service::http::routes::routes`]).
pub(crate) const ROUTES: &[Route] = &[
    Route::new("/_teste/falhas", &[Method::POST, Method::DELETE]),
    Route::new("/_teste/relogio", GET),
    Route::new("/_teste/relogio/avancar", POST),
    Route::new("/_teste/contas", POST),
    Route::new("/_teste/contas/{contaId}", GET),
    Route::new("/_teste/recargas/{recargaId}/pagar", POST),
    Route::new("/_teste/imoveis/{codigoCar}", POST),
];

/// What the `/_teste` handlers reach: the server's state and the test mode's.
#[derive(Debug, Clone)]
pub(crate) struct TestState {
    /// The server's state (its clock is the test clock).
    pub(crate) st: AppState,
    /// The test mode.
    pub(crate) mode: Arc<TestMode>,
}

impl FromRef<TestState> for AppState {
    fn from_ref(e: &TestState) -> AppState {
        e.st.clone()
    }
}

impl FromRef<TestState> for Arc<TestMode> {
    fn from_ref(e: &TestState) -> Arc<TestMode> {
        e.mode.clone()
    }
}

/// The `/_teste` router, behind the token check.
pub fn router(st: AppState, mode: Arc<TestMode>) -> Router<AppState> {
    Router::new()
        .route("/_teste/falhas", post(inject).delete(clear_faults))
        .route("/_teste/relogio", get(clock))
        .route("/_teste/relogio/avancar", post(advance))
        .route("/_teste/contas", post(create_conta))
        .route("/_teste/contas/{contaId}", get(conta))
        .route("/_teste/recargas/{recargaId}/pagar", post(pay))
        .route("/_teste/imoveis/{codigoCar}", post(change_imovel))
        .route_layer(middleware::from_fn_with_state(
            TestState {
                st: st.clone(),
                mode: mode.clone(),
            },
            require_token,
        ))
        .with_state(TestState { st, mode })
}

/// 401 `TOKEN_INVALIDO` unless the request carries the test mode's token. A wrong or missing
/// token counts as a failed authentication of the client address, like a wrong API key
/// ([`carapi_service::http::unauthenticated`]: 429 once the address is over its rate).
async fn require_token(State(e): State<TestState>, req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(auth::bearer);
    let ok = token.is_some_and(|t| e.mode.token_matches(t));
    if !ok {
        let ip = client_address(&req, &e.st.config.edge);
        let invalid = ApiError::new(
            ErrorCode::TokenInvalido,
            "Token do modo de teste ausente ou inválido (Authorization: Bearer <token-teste>).",
        );
        return unauthenticated(&e.st, ip, invalid).into_response();
    }
    next.run(req).await
}

fn invalid(msg: impl Into<String>) -> ApiError {
    ApiError::with_status(
        StatusCode::BAD_REQUEST,
        ErrorCode::Other(PARAMETER_INVALID.into()),
        msg,
    )
}

/// A JSON body; an empty one reads as `{}`.
fn json<T: DeserializeOwned>(bytes: &Bytes) -> Result<T, ApiError> {
    let text: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        bytes
    };
    let mut de = serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(&mut de)
        .map_err(|e| invalid(format!("Campo '{}' inválido: {}", e.path(), e.inner())))
}

fn server_error(e: ServerError) -> ApiError {
    match e {
        ServerError::Invalid(m) => invalid(m),
        ServerError::NotFound(m) => ApiError::with_status(
            StatusCode::NOT_FOUND,
            ErrorCode::Other("NAO_ENCONTRADO".into()),
            format!("Não encontrado: {m}."),
        ),
        ServerError::Store(e) => e.into(),
        other => ApiError::internal(other),
    }
}

/// `POST /_teste/falhas`: registers a fault rule ([`FaultRule`]).
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/falhas", tag = "teste", security(("tokenTeste" = [])),
    request_body = FaultRule,
    responses(
        (status = 201, description = "Rule registered: `{\"id\": n}`", body = serde_json::Value),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body or value", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn inject(
    State(mode): State<Arc<TestMode>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let rule: FaultRule = json(&body)?;
    let id = mode.faults.register(rule).map_err(|e| invalid(e.0))?;
    Ok((StatusCode::CREATED, Json(serde_json::json!({ "id": id }))).into_response())
}

/// `DELETE /_teste/falhas`: removes every fault rule.
#[cfg_attr(feature = "openapi", utoipa::path(delete, path = "/_teste/falhas", tag = "teste", security(("tokenTeste" = [])),
    responses(
        (status = 204, description = "Every rule removed"),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn clear_faults(State(mode): State<Arc<TestMode>>) -> StatusCode {
    mode.faults.clear();
    StatusCode::NO_CONTENT
}

/// `GET /_teste/relogio`: the server clock (UTC).
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/_teste/relogio", tag = "teste", security(("tokenTeste" = [])),
    responses(
        (status = 200, description = "The server clock: `{\"agora\": \"<UTC>\"}`", body = serde_json::Value),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn clock(State(st): State<AppState>) -> Json<serde_json::Value> {
    Json(serde_json::json!({ "agora": st.clock.now() }))
}

/// Body of `POST /_teste/relogio/avancar`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Avancar))]
#[serde(deny_unknown_fields)]
pub(crate) struct AdvanceBody {
    /// Seconds to move the clock forward.
    #[serde(rename = "segundos")]
    pub(crate) seconds: u64,
}

/// `POST /_teste/relogio/avancar`: moves the clock and runs what became due.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/relogio/avancar", tag = "teste", security(("tokenTeste" = [])),
    request_body = AdvanceBody,
    responses(
        (status = 200, description = "Clock moved; due jobs ran (reconciliation every 2 minutes of clock)", body = super::Advance),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body or value", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn advance(
    State(st): State<AppState>,
    State(mode): State<Arc<TestMode>>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let AdvanceBody { seconds } = json(&body)?;
    let advance = mode
        .advance(&st, std::time::Duration::from_secs(seconds))
        .await?;
    Ok(Json(advance).into_response())
}

/// `POST /_teste/contas`: creates an account ([`TestNovaConta`]); the key is in the answer.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/contas", tag = "teste", security(("tokenTeste" = [])),
    request_body = TestNovaConta,
    responses(
        (status = 201, description = "Account created: `contaId` and `apiKey`", body = serde_json::Value),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body or value", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn create_conta(
    State(st): State<AppState>,
    body: Bytes,
) -> Result<Response, ApiError> {
    let fresh: TestNovaConta = json(&body)?;
    let created = operations::create_conta(&st, fresh)
        .await
        .map_err(server_error)?;
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// `GET /_teste/contas/{contaId}`: the account as stored, with the ledger check.
#[cfg_attr(feature = "openapi", utoipa::path(get, path = "/_teste/contas/{contaId}", tag = "teste", security(("tokenTeste" = [])),
    params(("contaId" = i64, Path, description = "Account id")),
    responses(
        (status = 200, description = "The account as stored, with the ledger check", body = super::operations::ContaState),
        (status = 404, description = "No such account", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn conta(
    State(st): State<AppState>,
    Segment(id): Segment,
) -> Result<Response, ApiError> {
    let id: ContaId = id
        .parse()
        .map_err(|_| invalid(format!("contaId inválido: {id:?}")))?;
    let state = operations::conta_state_of(&st, id)
        .await
        .map_err(server_error)?;
    Ok(Json(state).into_response())
}

/// Body of `POST /_teste/recargas/{recargaId}/pagar`.
#[derive(Debug, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Pagamento))]
#[serde(deny_unknown_fields)]
pub struct Payment {
    /// Deliver the signed webhook (default true); false leaves it to reconciliation.
    #[serde(default = "yes")]
    pub(crate) webhook: bool,
}

fn yes() -> bool {
    true
}

/// `POST /_teste/recargas/{recargaId}/pagar`: pays a top-up at the simulated PSP.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/recargas/{recargaId}/pagar", tag = "teste", security(("tokenTeste" = [])),
    params(("recargaId" = uuid::Uuid, Path, description = "Top-up id")),
    request_body = Payment,
    responses(
        (status = 204, description = "Paid at the PSP (and the webhook delivered unless `webhook: false`)"),
        (status = 404, description = "No such top-up", body = carapi_sdk::ApiErrorBody),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body or value", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn pay(
    State(st): State<AppState>,
    State(mode): State<Arc<TestMode>>,
    Segment(id): Segment,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let id: Uuid = id
        .parse()
        .map_err(|_| invalid(format!("recargaId inválido: {id:?}")))?;
    let Payment { webhook } = json(&body)?;
    operations::pay(&st, &mode, id, webhook)
        .await
        .map_err(server_error)?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /_teste/imoveis/{codigoCar}`: changes a CAR record's data ([`ImovelChange`]: owners,
/// area, name, matrícula); lookups answer the new data at once.
#[cfg_attr(feature = "openapi", utoipa::path(post, path = "/_teste/imoveis/{codigoCar}", tag = "teste", security(("tokenTeste" = [])),
    params(("codigoCar" = String, Path, description = "CAR code of a stored record")),
    request_body = ImovelChange,
    responses(
        (status = 200, description = "Record changed: `{\"codigoCar\": ..., \"proprietarios\": n, \"areaTotalHa\": \"...\"}`", body = serde_json::Value),
        (status = 400, description = "`PARAMETRO_INVALIDO`: malformed body, code, document or area", body = carapi_sdk::ApiErrorBody),
        (status = 404, description = "No record with this code", body = carapi_sdk::ApiErrorBody),
        (status = 401, description = "`TOKEN_INVALIDO`: test token missing or wrong", body = carapi_sdk::ApiErrorBody),
    )))]
pub(crate) async fn change_imovel(
    State(st): State<AppState>,
    Segment(codigo): Segment,
    body: Bytes,
) -> Result<Response, ApiError> {
    let change: ImovelChange = json(&body)?;
    let imovel = operations::change_imovel(&st, &codigo, change)
        .await
        .map_err(server_error)?;
    Ok(Json(serde_json::json!({
        "codigoCar": imovel.codigo_car.as_str(),
        "proprietarios": imovel.proprietarios.len(),
        "areaTotalHa": imovel.area_total_ha.to_string(),
    }))
    .into_response())
}
