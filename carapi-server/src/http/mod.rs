//! The HTTP layer: one module per route group, each exporting `router()`, composed here behind
//! the edge middleware ([`borda`]: route table, methods, absurd paths, bodies) with
//! authentication, the per-key rate limit (sandbox lookups exempt), the per-address limit of
//! failed authentications and JSON answers for panics.

pub mod borda;
pub(crate) mod car;
pub(crate) mod cliente;
pub(crate) mod consulta;
pub(crate) mod conta;
pub(crate) mod documento;
pub(crate) mod envio;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod paginacao;
pub(crate) mod proprietario;
pub(crate) mod recarga;
pub(crate) mod rotas;
pub mod servidor;
pub(crate) mod webhooks;

use std::any::Any;
use std::net::IpAddr;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::header;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use carapi_sdk::{CodigoCar, sandbox};
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::trace::TraceLayer;

use crate::cache::Titular;
use crate::state::{AppState, Relogio};
use crate::{auth, limits};
use error::{ApiError, Limite};

/// The whole application: `/v1` (bearer key and rate limit on every route), `/webhooks/pix`
/// and `/openapi.json`, behind the edge middleware, which runs before routing.
pub fn router(state: AppState) -> Router {
    router_com(state, Acrescimos::default())
}

/// A change to the `/v1` router (e.g. one more `route_layer`).
pub type CamadaV1 = Box<dyn FnOnce(Router<AppState>) -> Router<AppState> + Send>;

/// What the place that assembles a server may add to [`router`]'s application (a test double
/// does: its fault layer and its own routes); [`Acrescimos::default`] adds nothing.
#[derive(Default)]
pub struct Acrescimos {
    /// Applied to the `/v1` routes inside authentication: a layer added here sees the
    /// authenticated account ([`crate::store::ContaId`] in the request's extensions).
    pub v1: Option<CamadaV1>,
    /// More routes outside `/v1`, with the table the edge checks their paths and methods
    /// against ([`borda::borda`]).
    pub rotas: Option<(Router<AppState>, &'static [rotas::Rota])>,
}

impl std::fmt::Debug for Acrescimos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Acrescimos")
            .field("v1", &self.v1.is_some())
            .field("rotas", &self.rotas.as_ref().map(|r| r.1))
            .finish()
    }
}

/// [`router`] with `acrescimos`.
pub fn router_com(state: AppState, acrescimos: Acrescimos) -> Router {
    let mut v1 = Router::new()
        .merge(car::router())
        .merge(proprietario::router())
        .merge(conta::router())
        .merge(recarga::router());
    if let Some(camada) = acrescimos.v1 {
        v1 = camada(v1);
    }
    let v1 = v1.route_layer(middleware::from_fn_with_state(state.clone(), autenticar));
    let mut todas = Router::new().merge(v1);
    let mut tabela_extra: &'static [rotas::Rota] = &[];
    if let Some((extra, tabela)) = acrescimos.rotas {
        todas = todas.merge(extra);
        tabela_extra = tabela;
    }
    let todas = todas
        .merge(webhooks::router())
        .merge(documento::router())
        .fallback(rota_desconhecida)
        .with_state(state.clone());
    let relogio = state.relogio.clone();
    let borda = borda::EstadoBorda {
        st: state,
        rotas_extra: tabela_extra,
    };
    // A router with only a fallback: its layers run before the inner router picks a route.
    Router::new()
        .fallback_service(todas)
        .layer(middleware::from_fn_with_state(borda, borda::borda))
        .layer(CatchPanicLayer::custom(panico))
        .layer(TraceLayer::new_for_http())
        .layer(middleware::map_response_with_state(
            relogio,
            data_do_relogio,
        ))
}

/// The `Date` header of every answer, from the server's clock (a test double's movable clock
/// included), so that a client can place what it sent in the server's time (RFC 9110
/// §6.6.1; hyper adds its own, from the system clock, only when the answer has none).
async fn data_do_relogio(State(relogio): State<Relogio>, mut resp: Response) -> Response {
    let data = relogio
        .agora()
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    if let Ok(v) = header::HeaderValue::from_str(&data) {
        resp.headers_mut().insert(header::DATE, v);
    }
    resp
}

/// Bearer authentication then the per-key rate limit; puts the [`crate::store::ContaId`] in
/// the request, and the [`crate::store::Conta`] too when it was read from the store (a key
/// found in the cache gives only the id; [`extract::Autenticado`] reads the account then).
async fn autenticar(
    State(st): State<AppState>,
    mut req: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let token = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(auth::bearer);
    let ip = cliente::endereco_cliente(&req, &st.config.borda.proxies_confiaveis);
    let titular = match token {
        None => None,
        Some(token) => st
            .caches
            .conta_da_chave(st.store.as_ref(), &auth::hash_chave(token), |h| {
                auth::confere(token, h)
            })
            .await
            .map_err(ApiError::from)?,
    };
    let Some(titular) = titular else {
        return Err(nao_autenticado(&st, ip, ApiError::token_invalido()));
    };
    let id = titular.id();
    if let Some(limitador) = &st.limitador
        && !eh_sandbox(req.uri().path())
        && let Err(espera) = limitador.verificar(id).await
    {
        return Err(ApiError::limite_excedido(
            Limite::Taxa,
            segundos_acima(espera),
            "Limite de requisições por segundo excedido para esta chave.",
        ));
    }
    req.extensions_mut().insert(id);
    if let Titular::Conta(conta) = titular {
        req.extensions_mut().insert(conta);
    }
    Ok(next.run(req).await)
}

/// 401 `TOKEN_INVALIDO`, or 429 (`Carapi-Limite: taxa`) when the client address has failed
/// authentication more often than [`borda::Borda::nao_autenticados_por_segundo`] allows.
/// Only failures are refused this way: a valid key from a blocked address is served (the
/// key is looked up first), so one client typing wrong keys behind a shared address locks
/// out nobody else there.
/// `recusa` is the 401 to answer (a wrong API key's, or a wrong test-mode token's).
pub fn nao_autenticado(st: &AppState, ip: Option<IpAddr>, recusa: ApiError) -> ApiError {
    if let (Some(limitador), Some(ip)) = (&st.limitador_ip, ip) {
        if limitador.bloqueado(ip) {
            return muitas_falhas(limits::BLOQUEIO_IP);
        }
        if let Err(espera) = limitador.falhou(ip) {
            return muitas_falhas(espera);
        }
    }
    recusa
}

fn muitas_falhas(espera: std::time::Duration) -> ApiError {
    ApiError::limite_excedido(
        Limite::Taxa,
        segundos_acima(espera),
        "Muitas requisições sem chave válida deste endereço; aguarde.",
    )
}

/// Whole seconds of `espera`, rounded up.
fn segundos_acima(espera: std::time::Duration) -> u64 {
    espera.as_secs() + u64::from(espera.subsec_nanos() > 0)
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
    borda::rota_desconhecida(req.method(), req.uri().path())
}

fn panico(erro: Box<dyn Any + Send + 'static>) -> Response {
    let detalhe = erro
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| erro.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "pânico sem mensagem".into());
    ApiError::interno(format!("pânico num handler: {detalhe}")).into_response()
}
