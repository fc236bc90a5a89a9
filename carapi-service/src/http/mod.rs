//! The HTTP layer: one module per route group, each exporting `router()`, composed here behind
//! the edge middleware ([`edge`]: route table, methods, absurd paths, bodies) with
//! authentication, the per-key rate limit (sandbox lookups exempt), the per-address limit of
//! failed authentications and JSON answers for panics.

pub mod access_log;
pub mod api_doc;
pub mod client_addr;
pub(crate) mod consulta;
pub(crate) mod conta;
pub mod edge;
pub(crate) mod extract;
pub use extract::Segment;
pub(crate) mod probes;
pub(crate) mod recarga;
pub mod routes;
pub(crate) mod send;
pub mod server;
pub(crate) mod webhooks;

use std::any::Any;
use std::net::IpAddr;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use tower_http::catch_panic::CatchPanicLayer;

use crate::api_error::{ApiError, Limite};
use crate::auth;
use crate::cache::KeyOwner;
use crate::clock::Clock;
use crate::flow;
use crate::rate_limit::{self, seconds_above};
use crate::state::AppState;

/// The whole application: `/v1` (bearer key and rate limit on every route), `/webhooks/pix`
/// and `/openapi.json`, behind the edge middleware, which runs before routing.
pub fn router(state: AppState) -> Router {
    router_with(state, Extensions::default())
}

/// A change to the `/v1` router (e.g. one more `route_layer`).
pub(crate) type V1Layer = Box<dyn FnOnce(Router<AppState>) -> Router<AppState> + Send>;

/// What the place that assembles a server may add to [`router`]'s application (a test double
/// does: its fault layer and its own routes); [`Extensions::default`] adds nothing.
#[derive(Default)]
pub struct Extensions {
    /// Applied to the `/v1` routes inside authentication: a layer added here sees the
    /// authenticated account ([`crate::store::ContaId`] in the request's extensions).
    pub v1: Option<V1Layer>,
    /// More routes outside `/v1`, with the table the edge checks their paths and methods
    /// against (`edge::edge`).
    pub routes: Option<(Router<AppState>, &'static [routes::Route])>,
    /// The OpenAPI document served at `GET /openapi.json` instead of the committed one
    /// ([`api_doc::OPENAPI_DOCUMENT`]): a test double serves it merged with its own routes'.
    pub documento: Option<String>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Acrescimos")
            .field("v1", &self.v1.is_some())
            .field("rotas", &self.routes.as_ref().map(|r| r.1))
            .field("documento", &self.documento.as_ref().map(String::len))
            .finish()
    }
}

/// [`router`] with `acrescimos`.
pub(crate) fn router_with(state: AppState, extensions: Extensions) -> Router {
    let mut v1 = Router::new()
        .merge(consulta::router())
        .merge(conta::router())
        .merge(recarga::router());
    if let Some(layer) = extensions.v1 {
        v1 = layer(v1);
    }
    let v1 = v1.route_layer(middleware::from_fn_with_state(state.clone(), authenticate));
    let mut all = Router::new().merge(v1);
    let mut table_extra: &'static [routes::Route] = &[];
    if let Some((extra, table)) = extensions.routes {
        all = all.merge(extra);
        table_extra = table;
    }
    let all = all
        .merge(webhooks::router())
        .merge(probes::router())
        .merge(api_doc::router(extensions.documento))
        .fallback(unknown_route)
        .with_state(state.clone());
    let clock = state.clock.clone();
    let edge = edge::EdgeState {
        st: state,
        extra_routes: table_extra,
    };
    // A router with only a fallback: its layers run before the inner router picks a route.
    Router::new()
        .fallback_service(all)
        .layer(middleware::from_fn_with_state(edge.clone(), edge::edge))
        .layer(CatchPanicLayer::custom(panic_answer))
        .layer(middleware::from_fn_with_state(edge, access_log::access_log))
        .layer(middleware::map_response_with_state(clock, date_of_clock))
}

/// The `Date` header of every answer, from the server's clock (a test double's movable clock
/// included), so that a client can place what it sent in the server's time (RFC 9110
/// §6.6.1; hyper adds its own, from the system clock, only when the answer has none).
async fn date_of_clock(State(clock): State<Clock>, mut resp: Response) -> Response {
    let date = clock.now().format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    if let Ok(v) = header::HeaderValue::from_str(&date) {
        resp.headers_mut().insert(header::DATE, v);
    }
    resp
}

/// Bearer authentication then the per-key rate limit, then the body of a `POST`/`PUT` within
/// the edge's bounds (never before the key is checked); puts the [`crate::store::ContaId`] in
/// the request, and the [`crate::store::Conta`] too when it was read from the store (a key
/// found in the cache gives only the id; [`extract::Authenticated`] reads the account then).
/// The answer of an authenticated request carries the [`crate::store::ContaId`] in its
/// extensions too (the access log's `conta`: [`access_log`]).
async fn authenticate(State(st): State<AppState>, req: Request, next: Next) -> Response {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(auth::bearer);
    let ip = client_addr::client_address(&req, &st.config.edge);
    let holder = match token {
        None => Ok(None),
        Some(token) => st
            .caches
            .conta_of_key(st.store.as_ref(), &auth::key_hash(token), |h| {
                auth::matches_expected(token, h)
            })
            .await
            .map_err(ApiError::from),
    };
    let holder = match holder {
        Ok(Some(t)) => t,
        Ok(None) => return unauthenticated(&st, ip, ApiError::token_invalido()).into_response(),
        Err(e) => return e.into_response(),
    };
    let id = holder.id();
    let mut resp = match authenticated(&st, holder, req, next).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    };
    resp.extensions_mut().insert(id);
    resp
}

/// What [`authenticate`] does once the key named `titular`.
async fn authenticated(
    st: &AppState,
    holder: KeyOwner,
    req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let id = holder.id();
    // A lookup's key is parsed here, once: the sandbox exemption reads it, the handler takes it.
    let (mut parts, body) = req.into_parts();
    let consulta = extract::consulta_of(&mut parts).await;
    let mut req = Request::from_parts(parts, body);
    let sandbox = consulta
        .as_ref()
        .is_some_and(flow::consulta::Request::is_sandbox);
    if let Some(limiter) = &st.limiter
        && !sandbox
        && let Err(wait) = limiter.check(id).await
    {
        return Err(ApiError::limit_exceeded(
            Limite::Rate,
            seconds_above(wait),
            "Limite de requisições por segundo excedido para esta chave.",
        ));
    }
    // The body only now, once the key is known good (`edge`'s bounds).
    if edge::has_body(req.method()) {
        req = edge::read_body(st, req).await?;
    }
    req.extensions_mut().insert(id);
    if let Some(consulta) = consulta {
        req.extensions_mut().insert(consulta);
    }
    if let KeyOwner::Conta(conta) = holder {
        req.extensions_mut().insert(conta);
    }
    Ok(next.run(req).await)
}

/// 401 `TOKEN_INVALIDO`, or 429 (`Carapi-Limite: rate`) when the client address has failed
/// authentication more often than [`edge::Edge::unauthenticated_per_second`] allows.
/// Only failures are refused this way: a valid key from a blocked address is served (the
/// key is looked up first), so one client typing wrong keys behind a shared address locks
/// out nobody else there.
/// `recusa` is the 401 to answer (a wrong API key's, or a wrong test-mode token's).
pub fn unauthenticated(st: &AppState, ip: Option<IpAddr>, refusal: ApiError) -> ApiError {
    if let (Some(limiter), Some(ip)) = (&st.ip_limiter, ip) {
        if limiter.is_blocked(ip) {
            return too_many_failures(rate_limit::IP_BLOCK);
        }
        if let Err(wait) = limiter.failed(ip) {
            return too_many_failures(wait);
        }
    }
    refusal
}

fn too_many_failures(wait: std::time::Duration) -> ApiError {
    ApiError::limit_exceeded(
        Limite::Rate,
        seconds_above(wait),
        "Muitas requisições sem chave válida deste endereço; aguarde.",
    )
}

async fn unknown_route(req: Request) -> ApiError {
    edge::unknown_route(req.method(), req.uri().path())
}

fn panic_answer(error: Box<dyn Any + Send + 'static>) -> Response {
    let detail = error
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| error.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "pânico sem mensagem".into());
    ApiError::internal(format!("pânico num handler: {detail}")).into_response()
}
