//! The one error type of the SDK ([`Error`]) and the decoded API error ([`ApiError`]).

use std::fmt;
use std::time::Duration;

use rust_decimal::Decimal;
use uuid::Uuid;

use crate::domain::{ValidationError, brl};
use crate::{ApiErrorBody, ErrorCode, RecargaStatus};

/// `Result` with the SDK's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything a call of the SDK can fail with.
///
/// Match on the variant, or use the helpers ([`Error::status`], [`Error::code`],
/// [`Error::is_retryable`], [`Error::is_transport`]). New variants may be added in a minor
/// version.
///
/// ```
/// # use carapi_sdk::{Error, ErrorCode};
/// fn explain(e: &Error) -> &'static str {
///     match e.code() {
///         Some(ErrorCode::SaldoInsuficiente) => "recarregue o saldo",
///         Some(ErrorCode::TokenInvalido) => "verifique a chave",
///         _ if e.is_retryable() => "tente de novo mais tarde",
///         _ => "erro",
///     }
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with an error status and (normally) an `ApiError` body (contract,
    /// "Errors"). Errors never debit the balance.
    #[error(transparent)]
    Api(ApiError),

    /// The input was refused locally, before any request was sent (malformed CAR code, CPF/CNPJ
    /// with wrong check digits, …).
    #[error(transparent)]
    Validation(#[from] ValidationError),

    /// The request could not be completed: connection refused, DNS, TLS, time-out, connection
    /// reset, or the body broke off while being read.
    ///
    /// `sent` is false only when the failure happened before the request could reach the server
    /// (connection not established); when true, the server may have processed it, and for a
    /// charged lookup may have charged it (contract, "Prices": charging applies to every 200).
    #[error("falha de comunicação em {operation} (tentativa {attempts}; {}): {}",
        if *sent { "a requisição pode ter chegado ao servidor" } else { "requisição não enviada" },
        cadeia(source))]
    Transport {
        /// The SDK method, e.g. `"car"`.
        operation: &'static str,
        /// False when the request certainly never reached the server.
        sent: bool,
        /// Attempts made, the failed one included.
        attempts: u32,
        /// The underlying HTTP client error.
        #[source]
        source: reqwest::Error,
    },

    /// A successful response whose body did not match the contract's shape; `path` is the JSON
    /// path that failed (`dados.dataConsulta`, `itens[3].valor`, `.` for the root).
    #[error("resposta inesperada de {operation} (HTTP {status}) em `{path}`: {source}")]
    Decode {
        /// The SDK method, e.g. `"saldo"`.
        operation: &'static str,
        /// HTTP status of the response.
        status: u16,
        /// JSON path of the value that failed to decode.
        path: String,
        /// The serde error.
        #[source]
        source: serde_json::Error,
    },

    /// Refused before sending: the lookup would take this client's spend past the cap set with
    /// [`ClientBuilder::max_spend`](crate::ClientBuilder::max_spend). Amounts in BRL.
    #[error(
        "limite de gasto do cliente atingido: gasto {} + preço {} ultrapassaria o limite de {}",
        brl::format(*gasto), brl::format(*preco), brl::format(*limite)
    )]
    SpendLimit {
        /// The cap, BRL.
        limite: Decimal,
        /// Spent so far by this client plus what in-flight lookups have reserved, BRL.
        gasto: Decimal,
        /// Price of the refused lookup, BRL.
        preco: Decimal,
    },

    /// [`Client::aguardar_recarga`](crate::Client::aguardar_recarga) gave up: the top-up was
    /// still not final when the time was up.
    #[error("recarga {recarga_id} ainda {} após {}s", ultimo_status.map_or("sem status", |s| s.as_str()), waited.as_secs())]
    Timeout {
        /// The top-up being waited on.
        recarga_id: Uuid,
        /// How long the waiter waited.
        waited: Duration,
        /// The last status read (`Pendente`), if any read succeeded.
        ultimo_status: Option<RecargaStatus>,
    },

    /// A local file could not be written (receipt to a file).
    #[error("erro de E/S: {0}")]
    Io(#[from] std::io::Error),

    /// The client is misconfigured (missing base URL or key, bad URL, …).
    #[error("configuração inválida: {0}")]
    Config(String),
}

/// The error and its causes, `: `-separated (reqwest's own message alone says little).
fn cadeia(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

impl Error {
    /// The HTTP status, for [`Error::Api`] and [`Error::Decode`].
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api(e) => Some(e.status),
            Self::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The contract's error code, for [`Error::Api`].
    pub fn code(&self) -> Option<&ErrorCode> {
        match self {
            Self::Api(e) => Some(&e.code),
            _ => None,
        }
    }

    /// The decoded API error, for [`Error::Api`].
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(e) => Some(e),
            _ => None,
        }
    }

    /// True when the condition is transient and the same call may succeed later: transport
    /// failures, 429 with a `Retry-After`, 502 and 503.
    ///
    /// This says nothing about safety: a [`Error::Transport`] with `sent: true` on a charged
    /// lookup may already have been charged. The client's [`RetryPolicy`](crate::RetryPolicy)
    /// has already retried what was safe to retry.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Transport { .. } => true,
            Self::Api(e) => match e.status {
                429 => e.retry_after.is_some(),
                502 | 503 => true,
                _ => false,
            },
            _ => false,
        }
    }

    /// True for [`Error::Transport`].
    pub fn is_transport(&self) -> bool {
        matches!(self, Self::Transport { .. })
    }

    /// True when the error came from a reserved sandbox value (`sandbox: true` in the body).
    pub fn is_sandbox(&self) -> bool {
        matches!(self, Self::Api(e) if e.sandbox)
    }
}

/// A decoded error response (contract, "ApiError" and "Errors").
///
/// `Display` reads `402 SALDO_INSUFICIENTE: <message>`. When the body is not an `ApiError`
/// (a proxy's HTML page, an empty body), `code` is [`ErrorCode::Other`] with `HTTP_<status>` and
/// `message` is the start of the body or the status reason.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiError {
    /// HTTP status (400, 401, 402, 404, 429, 500, 502, 503).
    pub status: u16,
    /// The stable code of the `error` field.
    pub code: ErrorCode,
    /// The readable message (Portuguese) of the `message` field.
    pub message: String,
    /// True when the error came from a reserved sandbox value.
    pub sandbox: bool,
    /// The `Retry-After` header, when sent (seconds or HTTP date).
    pub retry_after: Option<Duration>,
}

impl ApiError {
    /// Builds an API error (for tests and adapters); `sandbox` false, no `Retry-After`.
    pub fn new(status: u16, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            sandbox: false,
            retry_after: None,
        }
    }

    /// Decodes an error response body; never fails (see the type's docs for the fallback).
    pub(crate) fn from_body(status: u16, body: &[u8], retry_after: Option<Duration>) -> Self {
        match serde_json::from_slice::<ApiErrorBody>(body) {
            Ok(b) => Self {
                status,
                code: ErrorCode::parse(&b.error),
                message: b.message,
                sandbox: b.sandbox,
                retry_after,
            },
            Err(_) => {
                let text = String::from_utf8_lossy(body);
                let text = text.trim();
                let message = if text.is_empty() {
                    reqwest::StatusCode::from_u16(status)
                        .ok()
                        .and_then(|s| s.canonical_reason())
                        .unwrap_or("sem corpo")
                        .to_owned()
                } else {
                    text.chars().take(200).collect()
                };
                Self {
                    status,
                    code: ErrorCode::Other(format!("HTTP_{status}")),
                    message,
                    sandbox: false,
                    retry_after,
                }
            }
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl From<ApiError> for Error {
    fn from(e: ApiError) -> Self {
        Self::Api(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_reads_status_code_message() {
        let e = ApiError::from_body(
            402,
            br#"{"success":false,"error":"SALDO_INSUFICIENTE","message":"Saldo insuficiente"}"#,
            None,
        );
        assert_eq!(e.code, ErrorCode::SaldoInsuficiente);
        assert_eq!(
            Error::Api(e).to_string(),
            "402 SALDO_INSUFICIENTE: Saldo insuficiente"
        );
    }

    #[test]
    fn non_json_body_falls_back() {
        let e = ApiError::from_body(502, b"<html>Bad Gateway</html>", None);
        assert_eq!(e.code, ErrorCode::Other("HTTP_502".into()));
        assert_eq!(e.message, "<html>Bad Gateway</html>");
        let e = ApiError::from_body(503, b"", Some(Duration::from_secs(2)));
        assert_eq!(e.message, "Service Unavailable");
        assert!(Error::Api(e).is_retryable());
    }

    #[test]
    fn retryable_classification() {
        let e = |s| Error::Api(ApiError::new(s, ErrorCode::Other(String::new()), ""));
        assert!(!e(400).is_retryable());
        assert!(!e(402).is_retryable());
        assert!(
            !e(429).is_retryable(),
            "429 without Retry-After may be a daily limit"
        );
        assert!(e(502).is_retryable());
        assert_eq!(e(404).status(), Some(404));
    }
}
