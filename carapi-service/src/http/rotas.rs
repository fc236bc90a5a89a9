//! The table of operations: every path the server answers and the methods it accepts there
//! (contract, "Endpoints", plus `POST /webhooks/pix` and `GET /openapi.json`). The edge
//! middleware ([`super::borda`]) checks a request against it before routing, so `HEAD`,
//! `OPTIONS` and every other method the contract does not list get 405 with `Allow` before
//! anything is authenticated, charged or counted (axum's `get` would answer `HEAD` by running
//! the `GET` handler).

use axum::http::Method;

/// One path pattern and its methods. In a pattern, `{x}` matches one non-empty segment and
/// `{*x}` the non-empty rest of the path.
#[derive(Debug, Clone, Copy)]
pub struct Rota {
    /// Pattern in axum's syntax (`/v1/car/{codigoCar}`).
    pub padrao: &'static str,
    /// Accepted methods.
    pub metodos: &'static [Method],
}

const GET: &[Method] = &[Method::GET];
const POST: &[Method] = &[Method::POST];

/// Every route of the server (kept equal to the router by a test).
pub const ROTAS: &[Rota] = &[
    Rota {
        padrao: "/v1/car/{codigoCar}",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/car/{codigoCar}/completo",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/car/{codigoCar}/recibo",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/proprietario/{*cpfCnpj}",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/saldo",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/historico",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/limites",
        metodos: &[Method::GET, Method::PUT],
    },
    Rota {
        padrao: "/v1/uso",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/recarga/faixas",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/recarga",
        metodos: POST,
    },
    Rota {
        padrao: "/v1/recarga/{recargaId}",
        metodos: GET,
    },
    Rota {
        padrao: "/v1/recargas",
        metodos: GET,
    },
    Rota {
        padrao: "/webhooks/pix",
        metodos: POST,
    },
    Rota {
        padrao: "/openapi.json",
        metodos: GET,
    },
];

impl Rota {
    /// True when `path` (raw, still percent-encoded) matches this pattern.
    pub fn casa(&self, path: &str) -> bool {
        let mut partes = path.split('/');
        for p in self.padrao.split('/') {
            if p.starts_with("{*") {
                let resto: Vec<&str> = partes.by_ref().collect();
                return !resto.is_empty() && resto.iter().any(|s| !s.is_empty());
            }
            match partes.next() {
                Some(s) if p.starts_with('{') => {
                    if s.is_empty() {
                        return false;
                    }
                }
                Some(s) if s == p => {}
                _ => return false,
            }
        }
        partes.next().is_none()
    }

    /// The `Allow` header value: the methods, comma-separated.
    pub fn allow(&self) -> String {
        self.metodos
            .iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The route `path` belongs to, if any.
pub fn rota(path: &str) -> Option<&'static Rota> {
    ROTAS.iter().find(|r| r.casa(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_match_their_patterns_only() {
        let p = |s| rota(s).map(|r| r.padrao);
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
        assert_eq!(rota("/v1/limites").unwrap().allow(), "GET, PUT");
    }
}
