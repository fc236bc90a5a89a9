//! Faults on demand: what the test mode does to the next requests that match a rule, instead of
//! (or on top of) answering them normally.
//!
//! A rule ([`FaultRule`]) is a [`Fault`] plus filters: the route (its template, as in
//! docs/contrato.md, "Endpoints": `/v1/car/{codigoCar}`; placeholder names do not matter), the
//! method, the account, and how many matching requests it applies to (one by default, or every
//! one). Rules apply to authenticated `/v1` requests, in the order they were registered; the
//! first that matches a request is used and its count goes down.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::http::Method;
use carapi_sdk::{EndpointConsulta, ErrorCode};
use serde::{Deserialize, Serialize};

use carapi_service::http::routes;
use carapi_service::store::ContaId;

/// What happens to a request a rule catches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Falha))]
#[serde(
    tag = "tipo",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum Fault {
    /// The contract error `codigo` with its status (docs/contrato.md, "Error codes"), answered
    /// before the handler runs: nothing is charged or recorded. `retry_after` (seconds) adds
    /// `Retry-After`; for `LIMITE_EXCEDIDO`, `limite` says which limit (`Carapi-Limite`),
    /// `taxa` when absent.
    #[serde(rename = "erro")]
    Error {
        /// The error code; its status comes from the contract's table.
        #[cfg_attr(feature = "openapi", schema(value_type = String, example = "ERRO_INTERNO"))]
        codigo: ErrorCode,
        /// Seconds for `Retry-After`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<u64>,
        /// Which limit a 429 reports.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limite: Option<FaultLimit>,
    },
    /// Waits this many milliseconds, then handles the request normally (client time-outs).
    #[serde(rename = "atraso")]
    Delay {
        /// Milliseconds.
        ms: u64,
    },
    /// Resets the connection (TCP RST) before the handler runs: no answer, nothing charged.
    #[serde(rename = "resetar_conexao")]
    ResetConnection,
    /// Handles the request (a charged lookup commits its charge), then resets the connection
    /// instead of answering: the lost charged answer that the SDK refuses to re-send.
    #[serde(rename = "perder_resposta_apos_cobrar")]
    LoseReplyAfterCharge,
    /// Handles the request, sends the status, the headers and the first `bytes` bytes of the
    /// body, then resets the connection: a receipt PDF cut mid-stream after its 200 (charged:
    /// the contract's 502 `RECIBO_INDISPONIVEL` can only be sent before the headers, which
    /// [`Fault::Error`] does).
    #[serde(rename = "cortar_corpo")]
    CutBody {
        /// Body bytes sent before the cut.
        bytes: u64,
    },
}

/// Which limit a [`Fault::Error`] of `LIMITE_EXCEDIDO` reports (`Carapi-Limite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = LimiteFalha))]
#[serde(rename_all = "snake_case")]
pub enum FaultLimit {
    /// Requests per second.
    #[serde(rename = "taxa")]
    Rate,
    /// Charged lookups per Brasília day.
    Diario,
    /// Spending per Brasília month.
    Mensal,
}

impl Fault {
    /// [`Fault::Error`] with `codigo`'s status, no `Retry-After`.
    pub fn error(codigo: ErrorCode) -> Self {
        Fault::Error {
            codigo,
            retry_after: None,
            limite: None,
        }
    }

    /// 429 `LIMITE_EXCEDIDO` for `limite` with `Retry-After: retry_after_s` (seconds).
    pub fn limite(limite: FaultLimit, retry_after_s: u64) -> Self {
        Fault::Error {
            codigo: ErrorCode::LimiteExcedido,
            retry_after: Some(retry_after_s),
            limite: Some(limite),
        }
    }

    /// [`Fault::Delay`] of `d` (whole milliseconds).
    pub fn delay(d: Duration) -> Self {
        Fault::Delay {
            ms: u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// A rule with this fault on the route template `route` (see `FaultRule::at`).
    pub fn on(self, route: impl Into<String>) -> FaultRule {
        FaultRule::from(self).on(route)
    }

    /// A rule with this fault for the next `n` matching requests.
    pub fn next_ones(self, n: u32) -> FaultRule {
        FaultRule::from(self).next_ones(n)
    }

    /// A rule with this fault for every matching request until removed.
    pub fn always(self) -> FaultRule {
        FaultRule::from(self).always()
    }

    /// A rule with this fault only for requests of `conta`.
    pub fn of_conta(self, conta: ContaId) -> FaultRule {
        FaultRule::from(self).of_conta(conta)
    }
}

/// A fault and the requests it applies to. Built from a [`Fault`] (the next request of any
/// account on any route) and narrowed with its methods; the HTTP form is the same JSON
/// (`{"falha": {"tipo": "erro", "codigo": "ERRO_INTERNO"}, "rota": "/v1/saldo", "vezes": 2}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = RegraFalha))]
#[serde(rename_all = "camelCase")]
pub struct FaultRule {
    /// The fault.
    #[serde(rename = "falha")]
    pub(crate) fault: Fault,
    /// Route template (`/v1/car/{codigoCar}`); `None` = every `/v1` route.
    #[serde(default, rename = "rota")]
    pub(crate) route: Option<String>,
    /// HTTP method (`GET`, `PUT`, `POST`); `None` = any.
    #[serde(default, rename = "metodo")]
    pub(crate) method: Option<String>,
    /// Only this account's requests; `None` = every account.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<i64>))]
    pub(crate) conta: Option<ContaId>,
    /// How many matching requests it applies to; `None` = every one. Default 1.
    #[serde(rename = "vezes")]
    #[serde(default = "once")]
    pub(crate) times: Option<u32>,
}

fn once() -> Option<u32> {
    Some(1)
}

impl From<Fault> for FaultRule {
    fn from(failure: Fault) -> Self {
        FaultRule {
            fault: failure,
            route: None,
            method: None,
            conta: None,
            times: once(),
        }
    }
}

impl FaultRule {
    /// Only on the route template `route` (`/v1/car/{codigoCar}`, `/v1/recarga`); checked
    /// against the server's routes when registered.
    pub(crate) fn on(mut self, route: impl Into<String>) -> Self {
        self.route = Some(route.into());
        self
    }

    /// Only for requests with this method.
    pub fn method(mut self, method: &Method) -> Self {
        self.method = Some(method.as_str().to_owned());
        self
    }

    /// Only for requests of `conta`.
    pub fn of_conta(mut self, conta: ContaId) -> Self {
        self.conta = Some(conta);
        self
    }

    /// For the next `n` matching requests (0 registers nothing that ever applies).
    pub fn next_ones(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    /// For every matching request until the rules are cleared.
    pub fn always(mut self) -> Self {
        self.times = None;
        self
    }
}

/// Why a rule was refused.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InvalidRule(pub String);

/// Identifier of a registered rule.
pub type FaultId = u64;

#[derive(Debug)]
struct Recorded {
    id: FaultId,
    rule: FaultRule,
    /// The server's pattern the rule's template resolved to.
    pattern: Option<&'static str>,
    method: Option<Method>,
}

/// The registered rules of a test-mode server.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    rules: Mutex<Vec<Recorded>>,
    next_item: AtomicU64,
}

impl Faults {
    /// Registers `regra` after it; returns its id.
    ///
    /// # Errors
    /// [`InvalidRule`] when the route template is not one of the server's `/v1` routes or the
    /// method is not an HTTP method.
    pub(crate) fn register(&self, rule: FaultRule) -> Result<FaultId, InvalidRule> {
        let pattern = rule.route.as_deref().map(pattern_of).transpose()?;
        let method = rule
            .method
            .as_deref()
            .map(|m| {
                Method::from_bytes(m.to_ascii_uppercase().as_bytes())
                    .map_err(|_| InvalidRule(format!("método inválido: {m:?}")))
            })
            .transpose()?;
        let id = self.next_item.fetch_add(1, Ordering::Relaxed) + 1;
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        rules.push(Recorded {
            id,
            rule,
            pattern,
            method,
        });
        Ok(id)
    }

    /// Removes rule `id`; false when it is gone already (exhausted or cleared).
    pub(crate) fn remove(&self, id: FaultId) -> bool {
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        let antes = rules.len();
        rules.retain(|r| r.id != id);
        rules.len() < antes
    }

    /// Removes every rule.
    pub(crate) fn clear(&self) {
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// How many rules are registered (exhausted ones are removed).
    #[cfg(test)]
    fn how_many(&self) -> usize {
        self.rules.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The fault for a request of `conta` with `method` on the route `padrao`, if a rule
    /// matches; the rule's count goes down and an exhausted rule is removed.
    pub(crate) fn take(&self, pattern: &str, method: &Method, conta: ContaId) -> Option<Fault> {
        let mut rules = self.rules.lock().unwrap_or_else(|e| e.into_inner());
        let i = rules.iter().position(|r| {
            r.rule.times != Some(0)
                && r.pattern.is_none_or(|p| p == pattern)
                && r.method.as_ref().is_none_or(|m| m == method)
                && r.rule.conta.is_none_or(|c| c == conta)
        })?;
        let failure = rules[i].rule.fault.clone();
        if let Some(n) = rules[i].rule.times.as_mut() {
            *n -= 1;
            if *n == 0 {
                rules.remove(i);
            }
        }
        Some(failure)
    }
}

/// The server pattern of the `/v1` route whose template is `route` (placeholder names ignored:
/// `/v1/car/{codigo}` is `/v1/car/{codigoCar}`).
fn pattern_of(route: &str) -> Result<&'static str, InvalidRule> {
    let target = shape(route);
    routes::routes()
        .iter()
        .map(routes::Route::pattern)
        .filter(|p| p.starts_with("/v1/"))
        .find(|p| shape(p) == target)
        .ok_or_else(|| {
            InvalidRule(format!(
                "rota desconhecida: {route:?}; use o modelo de uma rota /v1 (ex.: {}, {}, \
                 /v1/recarga)",
                EndpointConsulta::CarBasico.route(),
                EndpointConsulta::Proprietario.route(),
            ))
        })
}

/// `route` with every `{...}` segment as `{}`.
fn shape(route: &str) -> String {
    route
        .split('/')
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
        let f = Faults::default();
        f.register(
            Fault::error(ErrorCode::ErroInterno)
                .on("/v1/car/{x}")
                .next_ones(2),
        )
        .unwrap();
        let car = "/v1/car/{codigoCar}";
        assert!(f.take("/v1/saldo", &Method::GET, conta()).is_none());
        assert!(f.take(car, &Method::GET, conta()).is_some());
        assert!(f.take(car, &Method::GET, conta()).is_some());
        assert!(f.take(car, &Method::GET, conta()).is_none());
        assert_eq!(f.how_many(), 0);
        let id = f.register(Fault::ResetConnection.always()).unwrap();
        assert!(f.remove(id));
        assert!(!f.remove(id));
        assert!(f.take(car, &Method::GET, conta()).is_none());
    }

    #[test]
    fn account_and_method_filters_hold() {
        let f = Faults::default();
        let another = ContaId(8);
        f.register(
            Fault::ResetConnection
                .of_conta(conta())
                .method(&Method::PUT)
                .always(),
        )
        .unwrap();
        assert!(f.take("/v1/limites", &Method::PUT, another).is_none());
        assert!(f.take("/v1/limites", &Method::GET, conta()).is_none());
        for _ in 0..3 {
            assert!(f.take("/v1/limites", &Method::PUT, conta()).is_some());
        }
    }

    #[test]
    fn unknown_templates_and_methods_are_refused() {
        let f = Faults::default();
        assert!(f.register(Fault::ResetConnection.on("/v1/carro")).is_err());
        assert!(
            f.register(Fault::ResetConnection.on("/webhooks/pix"))
                .is_err()
        );
        let mut r = FaultRule::from(Fault::ResetConnection);
        r.method = Some("G T".into());
        assert!(f.register(r).is_err());
        assert!(
            f.register(Fault::ResetConnection.on("/v1/proprietario/{doc}"))
                .is_ok()
        );
    }

    #[test]
    fn rules_read_from_json() {
        let r: FaultRule = serde_json::from_str(
            r#"{"falha":{"tipo":"erro","codigo":"LIMITE_EXCEDIDO","retryAfter":3,"limite":"diario"},"rota":"/v1/car/{c}"}"#,
        )
        .unwrap();
        assert_eq!(r.fault, Fault::limite(FaultLimit::Diario, 3));
        assert_eq!(r.times, Some(1));
        let r: FaultRule =
            serde_json::from_str(r#"{"falha":{"tipo":"cortar_corpo","bytes":100},"vezes":null}"#)
                .unwrap();
        assert_eq!(r.fault, Fault::CutBody { bytes: 100 });
        assert_eq!(r.times, None);
    }
}
