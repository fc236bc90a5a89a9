//! The table of operations: every path the server answers and the methods it accepts there
//! (contract, "Endpoints", plus `POST /webhooks/pix`, `GET /openapi.json` and the probes
//! `/livez` and `/readyz`, which alone accept `HEAD`, and `GET /metrics`). The edge
//! middleware ([`super::edge`]) checks a request against it before routing, so `HEAD`,
//! `OPTIONS` and every other method the contract does not list get 405 with `Allow` before
//! anything is authenticated, charged or counted (axum's `get` would answer `HEAD` by running
//! the `GET` handler).

use std::borrow::Cow;
use std::sync::LazyLock;

use axum::http::Method;
use carapi_sdk::EndpointConsulta;

/// One path pattern and its methods. In a pattern, `{x}` matches one non-empty segment and
/// `{*x}` the non-empty rest of the path.
#[derive(Debug, Clone)]
pub struct Route {
    /// Pattern in axum's syntax (`/v1/car/{codigoCar}`).
    pattern: Cow<'static, str>,
    /// Accepted methods.
    pub methods: &'static [Method],
    /// The charged lookup this route serves, if it is one of the four.
    consulta: Option<EndpointConsulta>,
}

const GET: &[Method] = &[Method::GET];
const POST: &[Method] = &[Method::POST];
/// The probes answer `HEAD` too (load balancers send it); `/v1` never does.
const PROBE: &[Method] = &[Method::GET, Method::HEAD];

/// The routes of the server besides the four charged lookups, which come from the SDK's table
/// ([`EndpointConsulta`]; [`routes`] holds both).
const FREE_ROUTES: &[Route] = &[
    Route::new("/v1/saldo", GET),
    Route::new("/v1/historico", GET),
    Route::new("/v1/limites", &[Method::GET, Method::PUT]),
    Route::new("/v1/uso", GET),
    Route::new("/v1/recarga/faixas", GET),
    Route::new("/v1/recarga", POST),
    Route::new("/v1/recarga/{recargaId}", GET),
    Route::new("/v1/recargas", GET),
    Route::new("/webhooks/pix", POST),
    Route::new("/openapi.json", GET),
    Route::new("/livez", PROBE),
    Route::new("/readyz", PROBE),
    Route::new("/metrics", GET),
];

/// Every route of the server: the four charged lookups, then [`FREE_ROUTES`] (kept equal to
/// the router by a test).
static ROUTES: LazyLock<Vec<Route>> = LazyLock::new(|| {
    EndpointConsulta::ALL
        .into_iter()
        .map(Route::of_consulta)
        .chain(FREE_ROUTES.iter().cloned())
        .collect()
});

/// Every route of the server, the charged lookups first.
pub fn routes() -> &'static [Route] {
    &ROUTES
}

/// The pattern the server serves the charged lookup `endpoint` at (see [`Route::of_consulta`]).
pub(crate) fn consulta_pattern(endpoint: EndpointConsulta) -> &'static str {
    routes()
        .iter()
        .find(|r| r.consulta == Some(endpoint))
        .map_or_else(|| endpoint.route(), Route::pattern)
}

impl Route {
    /// A route that is no charged lookup: `pattern` (axum's syntax) with its `methods`.
    #[must_use]
    pub const fn new(pattern: &'static str, methods: &'static [Method]) -> Self {
        Route {
            pattern: Cow::Borrowed(pattern),
            methods,
            consulta: None,
        }
    }

    /// The route of a charged lookup: the contract's template ([`EndpointConsulta::route`]),
    /// `GET` only; the owner's document takes the rest of the path (`{*cpfCnpj}`), so that a
    /// masked CNPJ (`12.ABC.345/01DE-35`) works whether or not the client percent-encodes its
    /// `/`.
    fn of_consulta(endpoint: EndpointConsulta) -> Self {
        let template = endpoint.route();
        let pattern = if endpoint.takes_codigo_car() {
            Cow::Borrowed(template)
        } else {
            Cow::Owned(template.replacen('{', "{*", 1))
        };
        Route {
            pattern,
            methods: GET,
            consulta: Some(endpoint),
        }
    }

    /// The pattern, in axum's syntax (`/v1/car/{codigoCar}`).
    #[must_use]
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// The charged lookup this route serves (`None` for every other route).
    #[must_use]
    pub fn consulta(&self) -> Option<EndpointConsulta> {
        self.consulta
    }

    /// True when `path` (raw, still percent-encoded) matches this pattern.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let mut parts = path.split('/');
        for p in self.pattern.split('/') {
            if p.starts_with("{*") {
                let rest: Vec<&str> = parts.by_ref().collect();
                return !rest.is_empty() && rest.iter().any(|s| !s.is_empty());
            }
            match parts.next() {
                Some(s) if p.starts_with('{') => {
                    if s.is_empty() {
                        return false;
                    }
                }
                Some(s) if s == p => {}
                _ => return false,
            }
        }
        parts.next().is_none()
    }

    /// The `Allow` header value: the methods, comma-separated.
    pub(crate) fn allow(&self) -> String {
        self.methods
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The route `path` belongs to, if any.
pub fn route(path: &str) -> Option<&'static Route> {
    routes().iter().find(|r| r.matches(path))
}

/// The route the edge matched a request to ([`super::edge`] puts it in the request's
/// extensions before routing): the lookups read their [`EndpointConsulta`] from it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MatchedRoute(pub(crate) &'static Route);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_their_patterns_only() {
        let p = |s| route(s).map(|r| r.pattern());
        assert_eq!(p("/v1/car/X"), Some("/v1/car/{codigoCar}"));
        assert_eq!(
            p("/v1/car/X/completo"),
            Some("/v1/car/{codigoCar}/completo")
        );
        assert_eq!(p("/v1/car/X/outro"), None);
        assert_eq!(p("/v1/car/"), None);
        assert_eq!(p("/v1/car//completo"), None);
        assert_eq!(
            p("/v1/proprietario/12.345/0001"),
            Some("/v1/proprietario/{*cpfCnpj}")
        );
        assert_eq!(p("/v1/proprietario/"), None);
        assert_eq!(p("/v1/recarga/faixas"), Some("/v1/recarga/faixas"));
        assert_eq!(p("/v1/recarga/abc"), Some("/v1/recarga/{recargaId}"));
        assert_eq!(p("/v1/saldo/"), None);
        assert_eq!(p("/v1/saldo"), Some("/v1/saldo"));
        assert_eq!(p("/"), None);
        assert_eq!(route("/v1/limites").unwrap().allow(), "GET, PUT");
    }

    #[test]
    fn each_charged_route_maps_to_its_endpoint() {
        for e in EndpointConsulta::ALL {
            let sample = e
                .route()
                .replace("{codigoCar}", "X")
                .replace("{cpfCnpj}", "1/2");
            let r = route(&sample).expect("a charged lookup has a route");
            assert_eq!(r.consulta(), Some(e), "{sample}");
            assert_eq!(consulta_pattern(e), r.pattern());
        }
        assert_eq!(
            consulta_pattern(EndpointConsulta::Proprietario),
            "/v1/proprietario/{*cpfCnpj}"
        );
        let free = routes().iter().filter(|r| r.consulta().is_none()).count();
        assert_eq!(free, FREE_ROUTES.len());
    }
}
