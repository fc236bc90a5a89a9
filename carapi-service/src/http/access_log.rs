//! The access log: one line per request at `info`, target [`TARGET`] (`carapi::access`), emitted
//! once the answer's body was sent (or dropped), and the request id of every answer.
//!
//! A line's fields, each a fact about the request and never one of its values:
//!
//! | field | what |
//! |---|---|
//! | `id` | the request id (also the answer's `X-Request-Id`) |
//! | `rota` | the route template (`/v1/car/{codigoCar}`), [`UNKNOWN_ROUTE`] for a path no route has; never the raw path |
//! | `metodo` | the HTTP method |
//! | `status` | the answer's status; [`CANCELLED`] when the client went away before the answer |
//! | `latency_ms` | milliseconds from the request to its body's last byte handed to the socket |
//! | `conta` | the account whose key authenticated the request (absent otherwise) |
//! | `cliente` | the client address the limits see ([`super::client_addr`]) |
//! | `bytes` | bytes of the answer's body |
//! | `cobrado_centavos` | what the lookup debited, centavos (absent when nothing was) |
//!
//! The request id is the client's `X-Request-Id` when it is 1 to [`MAX_REQUEST_ID`] visible
//! ASCII characters (a proxy's `$request_id`, a UUID), else a new UUID v4. Inside the request,
//! a span `pedido` at `error` level carries `id` and `rota`, so that the request's own warnings
//! and errors (a 500's `erro interno`) say which request and route they belong to.
//!
//! When `info` is off for [`TARGET`], only the request id is set: no span, no clock, no
//! counting of the body.

use std::net::IpAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use hyper::body::{Frame, SizeHint};
use tracing::Instrument;

use super::client_addr;
use super::edge::EdgeState;
use super::routes;
use crate::flow::consulta::Cobrado;
use crate::store::ContaId;

/// The tracing target of the access lines.
pub const TARGET: &str = "carapi::acesso";

/// The header of the request id, in the request and in the answer.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Longest request id kept from a client, characters.
pub const MAX_REQUEST_ID: usize = 128;

/// The `rota` of a path no route has.
pub const UNKNOWN_ROUTE: &str = "desconhecida";

/// The `status` of a request whose client went away before it was answered (nginx's 499).
pub const CANCELLED: u16 = 499;

/// The request id of a request: the client's `X-Request-Id` when it is acceptable (see the
/// module documentation), else a new UUID v4.
fn request_id(headers: &HeaderMap) -> HeaderValue {
    if let Some(v) = headers.get(&REQUEST_ID)
        && (1..=MAX_REQUEST_ID).contains(&v.len())
        && v.as_bytes().iter().all(u8::is_ascii_graphic)
    {
        return v.clone();
    }
    let uuid = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    HeaderValue::from_str(uuid.hyphenated().encode_lower(&mut buf))
        .expect("a UUID is valid header text")
}

/// The route template of `path` ([`routes::routes`] and the routes a test double adds).
fn template(e: &EdgeState, path: &str) -> &'static str {
    routes::route(path)
        .or_else(|| e.extra_routes.iter().find(|r| r.matches(path)))
        .map_or(UNKNOWN_ROUTE, routes::Route::pattern)
}

/// The middleware: the request id in and out, and the access line (see the module
/// documentation).
pub(crate) async fn access_log(State(e): State<EdgeState>, req: Request, next: Next) -> Response {
    let id = request_id(req.headers());
    let route = template(&e, req.uri().path());
    if !tracing::enabled!(target: TARGET, tracing::Level::INFO) {
        let mut resp = next.run(req).instrument(span(&id, route)).await;
        resp.headers_mut().insert(REQUEST_ID, id);
        return resp;
    }
    let mut line = Line {
        start: Instant::now(),
        id: id.clone(),
        route,
        method: req.method().clone(),
        client: client_addr::client_address(&req, &e.st.config.edge),
        status: None,
        conta: None,
        cobrado: None,
        bytes: 0,
    };
    let mut resp = next.run(req).instrument(span(&id, route)).await;
    line.status = Some(resp.status().as_u16());
    line.conta = resp.extensions().get::<ContaId>().copied();
    line.cobrado = resp.extensions().get::<Cobrado>().map(|c| c.0.get());
    resp.headers_mut().insert(REQUEST_ID, id);
    resp.map(|body| Body::new(Counted { body, line }))
}

/// The span of a request's own events: `pedido{id, rota}` at `error` level, so that it is on
/// whenever anything is logged.
fn span(id: &HeaderValue, route: &'static str) -> tracing::Span {
    tracing::error_span!(
        target: "carapi::pedido",
        "pedido",
        id = id.to_str().unwrap_or_default(),
        route
    )
}

/// What the access line of one request says; emitted when dropped (the answer's body done,
/// or the request cancelled before it was answered: `status` [`CANCELLED`]).
struct Line {
    start: Instant,
    id: HeaderValue,
    route: &'static str,
    method: Method,
    client: Option<IpAddr>,
    status: Option<u16>,
    conta: Option<ContaId>,
    cobrado: Option<i64>,
    bytes: u64,
}

impl Drop for Line {
    fn drop(&mut self) {
        let latency_ms = self.start.elapsed().as_secs_f64() * 1000.0;
        tracing::info!(
            target: TARGET,
            id = self.id.to_str().unwrap_or_default(),
            rota = self.route,
            metodo = self.method.as_str(),
            status = self.status.unwrap_or(CANCELLED),
            latencia_ms = (latency_ms * 1000.0).round() / 1000.0,
            conta = self.conta.map(|c| c.0),
            cliente = self.client.map(tracing::field::display),
            bytes = self.bytes,
            cobrado_centavos = self.cobrado,
            "acesso"
        );
    }
}

/// An answer's body that counts its bytes into its [`Line`], logged when the body is dropped.
struct Counted {
    body: Body,
    line: Line,
}

impl HttpBody for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.body).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &r
            && let Some(dados) = frame.data_ref()
        {
            this.line.bytes += dados.len() as u64;
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn com(v: &'static [u8]) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(REQUEST_ID, HeaderValue::from_bytes(v).unwrap());
        h
    }

    #[test]
    fn a_sane_request_id_is_kept_any_other_replaced() {
        assert_eq!(request_id(&com(b"abc-123")), "abc-123");
        let fresh = |h: &HeaderMap| {
            let id = request_id(h);
            uuid::Uuid::parse_str(id.to_str().unwrap()).unwrap();
            id
        };
        fresh(&HeaderMap::new());
        fresh(&com(b"com espaco"));
        fresh(&com(b"acentua\xc3\xa7\xc3\xa3o"));
        fresh(&com(&[b'a'; MAX_REQUEST_ID + 1]));
        assert_eq!(
            request_id(&com(&[b'a'; MAX_REQUEST_ID])).len(),
            MAX_REQUEST_ID
        );
        assert_ne!(fresh(&HeaderMap::new()), fresh(&HeaderMap::new()));
    }
}
