//! Faults on demand: what the test mode does to the next requests that match a rule, instead of
//! (or on top of) answering them normally.
//!
//! A rule ([`RegraFalha`]) is a [`Falha`] plus filters: the route (its template, as in
//! docs/contrato.md, "Endpoints": `/v1/car/{codigoCar}`; placeholder names do not matter), the
//! method, the account, and how many matching requests it applies to (one by default, or every
//! one). Rules apply to authenticated `/v1` requests, in the order they were registered; the
//! first that matches a request is used and its count goes down.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::http::Method;
use carapi_sdk::ErrorCode;
use serde::{Deserialize, Serialize};

use carapi_service::http::rotas;
use carapi_service::store::ContaId;

/// What happens to a request a rule catches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(
    tag = "tipo",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum Falha {
    /// The contract error `codigo` with its status (docs/contrato.md, "Error codes"), answered
    /// before the handler runs: nothing is charged or recorded. `retry_after` (seconds) adds
    /// `Retry-After`; for `LIMITE_EXCEDIDO`, `limite` says which limit (`Carapi-Limite`),
    /// `taxa` when absent.
    Erro {
        /// The error code; its status comes from the contract's table.
        #[cfg_attr(feature = "openapi", schema(value_type = String, example = "ERRO_INTERNO"))]
        codigo: ErrorCode,
        /// Seconds for `Retry-After`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<u64>,
        /// Which limit a 429 reports.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limite: Option<LimiteFalha>,
    },
    /// Waits this many milliseconds, then handles the request normally (client time-outs).
    Atraso {
        /// Milliseconds.
        ms: u64,
    },
    /// Resets the connection (TCP RST) before the handler runs: no answer, nothing charged.
    ResetarConexao,
    /// Handles the request (a charged lookup commits its charge), then resets the connection
    /// instead of answering: the lost charged answer that the SDK refuses to re-send.
    PerderRespostaAposCobrar,
    /// Handles the request, sends the status, the headers and the first `bytes` bytes of the
    /// body, then resets the connection: a receipt PDF cut mid-stream after its 200 (charged:
    /// the contract's 502 `RECIBO_INDISPONIVEL` can only be sent before the headers, which
    /// [`Falha::Erro`] does).
    CortarCorpo {
        /// Body bytes sent before the cut.
        bytes: u64,
    },
}

/// Which limit a [`Falha::Erro`] of `LIMITE_EXCEDIDO` reports (`Carapi-Limite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum LimiteFalha {
    /// Requests per second.
    Taxa,
    /// Charged lookups per Brasília day.
    Diario,
    /// Spending per Brasília month.
    Mensal,
}

impl Falha {
    /// [`Falha::Erro`] with `codigo`'s status, no `Retry-After`.
    pub fn erro(codigo: ErrorCode) -> Self {
        Falha::Erro {
            codigo,
            retry_after: None,
            limite: None,
        }
    }

    /// 429 `LIMITE_EXCEDIDO` for `limite` with `Retry-After: retry_after_s` (seconds).
    pub fn limite(limite: LimiteFalha, retry_after_s: u64) -> Self {
        Falha::Erro {
            codigo: ErrorCode::LimiteExcedido,
            retry_after: Some(retry_after_s),
            limite: Some(limite),
        }
    }

    /// [`Falha::Atraso`] of `d` (whole milliseconds).
    pub fn atraso(d: Duration) -> Self {
        Falha::Atraso {
            ms: u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// A rule with this fault on the route template `rota` (see [`RegraFalha::em`]).
    pub fn em(self, rota: impl Into<String>) -> RegraFalha {
        RegraFalha::from(self).em(rota)
    }

    /// A rule with this fault for the next `n` matching requests.
    pub fn proximas(self, n: u32) -> RegraFalha {
        RegraFalha::from(self).proximas(n)
    }

    /// A rule with this fault for every matching request until removed.
    pub fn sempre(self) -> RegraFalha {
        RegraFalha::from(self).sempre()
    }

    /// A rule with this fault only for requests of `conta`.
    pub fn da_conta(self, conta: ContaId) -> RegraFalha {
        RegraFalha::from(self).da_conta(conta)
    }
}

/// A fault and the requests it applies to. Built from a [`Falha`] (the next request of any
/// account on any route) and narrowed with its methods; the HTTP form is the same JSON
/// (`{"falha": {"tipo": "erro", "codigo": "ERRO_INTERNO"}, "rota": "/v1/saldo", "vezes": 2}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct RegraFalha {
    /// The fault.
    pub falha: Falha,
    /// Route template (`/v1/car/{codigoCar}`); `None` = every `/v1` route.
    #[serde(default)]
    pub rota: Option<String>,
    /// HTTP method (`GET`, `PUT`, `POST`); `None` = any.
    #[serde(default)]
    pub metodo: Option<String>,
    /// Only this account's requests; `None` = every account.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub conta: Option<ContaId>,
    /// How many matching requests it applies to; `None` = every one. Default 1.
    #[serde(default = "uma_vez")]
    pub vezes: Option<u32>,
}

fn uma_vez() -> Option<u32> {
    Some(1)
}

impl From<Falha> for RegraFalha {
    fn from(falha: Falha) -> Self {
        RegraFalha {
            falha,
            rota: None,
            metodo: None,
            conta: None,
            vezes: uma_vez(),
        }
    }
}

impl RegraFalha {
    /// Only on the route template `rota` (`/v1/car/{codigoCar}`, `/v1/recarga`); checked
    /// against the server's routes when registered.
    pub fn em(mut self, rota: impl Into<String>) -> Self {
        self.rota = Some(rota.into());
        self
    }

    /// Only for requests with this method.
    pub fn metodo(mut self, metodo: &Method) -> Self {
        self.metodo = Some(metodo.as_str().to_owned());
        self
    }

    /// Only for requests of `conta`.
    pub fn da_conta(mut self, conta: ContaId) -> Self {
        self.conta = Some(conta);
        self
    }

    /// For the next `n` matching requests (0 registers nothing that ever applies).
    pub fn proximas(mut self, n: u32) -> Self {
        self.vezes = Some(n);
        self
    }

    /// For every matching request until the rules are cleared.
    pub fn sempre(mut self) -> Self {
        self.vezes = None;
        self
    }
}

/// Why a rule was refused.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RegraInvalida(pub String);

/// Identifier of a registered rule.
pub type IdFalha = u64;

#[derive(Debug)]
struct Registrada {
    id: IdFalha,
    regra: RegraFalha,
    /// The server's pattern the rule's template resolved to.
    padrao: Option<&'static str>,
    metodo: Option<Method>,
}

/// The registered rules of a test-mode server.
#[derive(Debug, Default)]
pub struct Falhas {
    regras: Mutex<Vec<Registrada>>,
    proximo: AtomicU64,
}

impl Falhas {
    /// Registers `regra` after it; returns its id.
    ///
    /// # Errors
    /// [`RegraInvalida`] when the route template is not one of the server's `/v1` routes or the
    /// method is not an HTTP method.
    pub fn registrar(&self, regra: RegraFalha) -> Result<IdFalha, RegraInvalida> {
        let padrao = regra.rota.as_deref().map(padrao_de).transpose()?;
        let metodo = regra
            .metodo
            .as_deref()
            .map(|m| {
                Method::from_bytes(m.to_ascii_uppercase().as_bytes())
                    .map_err(|_| RegraInvalida(format!("método inválido: {m:?}")))
            })
            .transpose()?;
        let id = self.proximo.fetch_add(1, Ordering::Relaxed) + 1;
        let mut regras = self.regras.lock().unwrap_or_else(|e| e.into_inner());
        regras.push(Registrada {
            id,
            regra,
            padrao,
            metodo,
        });
        Ok(id)
    }

    /// Removes rule `id`; false when it is gone already (exhausted or cleared).
    pub fn remover(&self, id: IdFalha) -> bool {
        let mut regras = self.regras.lock().unwrap_or_else(|e| e.into_inner());
        let antes = regras.len();
        regras.retain(|r| r.id != id);
        regras.len() < antes
    }

    /// Removes every rule.
    pub fn limpar(&self) {
        self.regras
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// How many rules are registered (exhausted ones are removed).
    pub fn quantas(&self) -> usize {
        self.regras.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The fault for a request of `conta` with `metodo` on the route `padrao`, if a rule
    /// matches; the rule's count goes down and an exhausted rule is removed.
    pub fn tomar(&self, padrao: &str, metodo: &Method, conta: ContaId) -> Option<Falha> {
        let mut regras = self.regras.lock().unwrap_or_else(|e| e.into_inner());
        let i = regras.iter().position(|r| {
            r.regra.vezes != Some(0)
                && r.padrao.is_none_or(|p| p == padrao)
                && r.metodo.as_ref().is_none_or(|m| m == metodo)
                && r.regra.conta.is_none_or(|c| c == conta)
        })?;
        let falha = regras[i].regra.falha.clone();
        if let Some(n) = regras[i].regra.vezes.as_mut() {
            *n -= 1;
            if *n == 0 {
                regras.remove(i);
            }
        }
        Some(falha)
    }
}

/// The server pattern of the `/v1` route whose template is `rota` (placeholder names ignored:
/// `/v1/car/{codigo}` is `/v1/car/{codigoCar}`).
fn padrao_de(rota: &str) -> Result<&'static str, RegraInvalida> {
    let alvo = forma(rota);
    rotas::ROTAS
        .iter()
        .map(|r| r.padrao)
        .filter(|p| p.starts_with("/v1/"))
        .find(|p| forma(p) == alvo)
        .ok_or_else(|| {
            RegraInvalida(format!(
                "rota desconhecida: {rota:?}; use o modelo de uma rota /v1 (ex.: \
                 /v1/car/{{codigoCar}}, /v1/proprietario/{{cpfCnpj}}, /v1/recarga)"
            ))
        })
}

/// `rota` with every `{...}` segment as `{}`.
fn forma(rota: &str) -> String {
    rota.split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conta() -> ContaId {
        ContaId(7)
    }

    #[test]
    fn a_rule_applies_n_times_then_disappears() {
        let f = Falhas::default();
        f.registrar(
            Falha::erro(ErrorCode::ErroInterno)
                .em("/v1/car/{x}")
                .proximas(2),
        )
        .unwrap();
        let car = "/v1/car/{codigoCar}";
        assert!(f.tomar("/v1/saldo", &Method::GET, conta()).is_none());
        assert!(f.tomar(car, &Method::GET, conta()).is_some());
        assert!(f.tomar(car, &Method::GET, conta()).is_some());
        assert!(f.tomar(car, &Method::GET, conta()).is_none());
        assert_eq!(f.quantas(), 0);
        let id = f.registrar(Falha::ResetarConexao.sempre()).unwrap();
        assert!(f.remover(id));
        assert!(!f.remover(id));
        assert!(f.tomar(car, &Method::GET, conta()).is_none());
    }

    #[test]
    fn account_and_method_filters_hold() {
        let f = Falhas::default();
        let outra = ContaId(8);
        f.registrar(
            Falha::ResetarConexao
                .da_conta(conta())
                .metodo(&Method::PUT)
                .sempre(),
        )
        .unwrap();
        assert!(f.tomar("/v1/limites", &Method::PUT, outra).is_none());
        assert!(f.tomar("/v1/limites", &Method::GET, conta()).is_none());
        for _ in 0..3 {
            assert!(f.tomar("/v1/limites", &Method::PUT, conta()).is_some());
        }
    }

    #[test]
    fn unknown_templates_and_methods_are_refused() {
        let f = Falhas::default();
        assert!(f.registrar(Falha::ResetarConexao.em("/v1/carro")).is_err());
        assert!(
            f.registrar(Falha::ResetarConexao.em("/webhooks/pix"))
                .is_err()
        );
        let mut r = RegraFalha::from(Falha::ResetarConexao);
        r.metodo = Some("G T".into());
        assert!(f.registrar(r).is_err());
        assert!(
            f.registrar(Falha::ResetarConexao.em("/v1/proprietario/{doc}"))
                .is_ok()
        );
    }

    #[test]
    fn rules_read_from_json() {
        let r: RegraFalha = serde_json::from_str(
            r#"{"falha":{"tipo":"erro","codigo":"LIMITE_EXCEDIDO","retryAfter":3,"limite":"diario"},"rota":"/v1/car/{c}"}"#,
        )
        .unwrap();
        assert_eq!(r.falha, Falha::limite(LimiteFalha::Diario, 3));
        assert_eq!(r.vezes, Some(1));
        let r: RegraFalha =
            serde_json::from_str(r#"{"falha":{"tipo":"cortar_corpo","bytes":100},"vezes":null}"#)
                .unwrap();
        assert_eq!(r.falha, Falha::CortarCorpo { bytes: 100 });
        assert_eq!(r.vezes, None);
    }
}
