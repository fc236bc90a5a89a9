//! The table of operations: every path the server answers and the methods it accepts there
//! (contract, "Endpoints", plus `POST /webhooks/pix`, `GET /openapi.json` and the probes
//! `/livez` and `/readyz`, which alone accept `HEAD`, and `GET /metrics`). The edge
//! middleware ([`super::edge`]) checks a request against it before routing, so `HEAD`,
//! `OPTIONS` and every other method the contract does not list get 405 with `Allow` before
//! anything is authenticated, charged or counted (axum's `get` would answer `HEAD` by running
//! the `GET` handler).

use axum::http::Method;

/// One path pattern and its methods. In a pattern, `{x}` matches one non-empty segment and
/// `{*x}` the non-empty rest of the path.
#[derive(Debug, Clone, Copy)]
pub struct Route {
    /// Pattern in axum's syntax (`/v1/car/{codigoCar}`).
    pub padrao: &'static str,
    /// Accepted methods.
    pub methods: &'static [Method],
}

const GET: &[Method] = &[Method::GET];
const POST: &[Method] = &[Method::POST];
/// The probes answer `HEAD` too (load balancers send it); `/v1` never does.
const PROBE: &[Method] = &[Method::GET, Method::HEAD];

/// Every route of the server (kept equal to the router by a test).
pub const ROUTES: &[Route] = &[
    Route {
        padrao: "/v1/car/{codigoCar}",
        methods: GET,
    },
    Route {
        padrao: "/v1/car/{codigoCar}/completo",
        methods: GET,
    },
    Route {
        padrao: "/v1/car/{codigoCar}/recibo",
        methods: GET,
    },
    Route {
        padrao: "/v1/proprietario/{*cpfCnpj}",
        methods: GET,
    },
    Route {
        padrao: "/v1/saldo",
        methods: GET,
    },
    Route {
        padrao: "/v1/historico",
        methods: GET,
    },
    Route {
        padrao: "/v1/limites",
        methods: &[Method::GET, Method::PUT],
    },
    Route {
        padrao: "/v1/uso",
        methods: GET,
    },
    Route {
        padrao: "/v1/recarga/faixas",
        methods: GET,
    },
    Route {
        padrao: "/v1/recarga",
        methods: POST,
    },
    Route {
        padrao: "/v1/recarga/{recargaId}",
        methods: GET,
    },
    Route {
        padrao: "/v1/recargas",
        methods: GET,
    },
    Route {
        padrao: "/webhooks/pix",
        methods: POST,
    },
    Route {
        padrao: "/openapi.json",
        methods: GET,
    },
    Route {
        padrao: "/livez",
        methods: PROBE,
    },
    Route {
        padrao: "/readyz",
        methods: PROBE,
    },
    Route {
        padrao: "/metrics",
        methods: GET,
    },
];

impl Route {
    /// True when `path` (raw, still percent-encoded) matches this pattern.
    pub(crate) fn matches(&self, path: &str) -> bool {
        let mut parts = path.split('/');
        for p in self.padrao.split('/') {
            if p.starts_with("{*") {
                let resto: Vec<&str> = parts.by_ref().collect();
                return !resto.is_empty() && resto.iter().any(|s| !s.is_empty());
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
    ROUTES.iter().find(|r| r.matches(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_their_patterns_only() {
        let p = |s| route(s).map(|r| r.padrao);
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
}
