//! The contract's error answer (`ApiError` in docs/contrato.md, "Errors"): every failure of a
//! use case or handler becomes its JSON body with a stable code; 5xx details are logged, never
//! sent.

use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use carapi_sdk::{ApiErrorBody, ErrorCode};

use crate::store::StoreError;

/// Code of a malformed query parameter (an extension: the contract has no code for it).
pub const PARAMETER_INVALID: &str = "PARAMETRO_INVALIDO";
/// Code of an unknown route or wrong method (`SPEC_NAO_ENCONTRADA` is in the contract's set
/// without a stated condition; this server uses it for "no such operation").
pub(crate) const ROUTE_NOT_FOUND: ErrorCode = ErrorCode::SpecNaoEncontrada;

/// Header of every 429 telling which limit was hit: `taxa` (requests per second, per key or,
/// before authentication, per client address), `diario` (charged lookups per day) or `mensal`
/// (spending per month). Clients use it to tell a wait of a second from one until tomorrow.
pub(crate) const LIMIT_HEADER: &str = "carapi-limite";

/// Which limit a 429 `LIMITE_EXCEDIDO` hit (the `LIMIT_HEADER` value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limite {
    /// Requests per second (contract, "Limits": 10 per key), or unauthenticated requests per
    /// client address.
    Rate,
    /// Daily charged-request limit (Brasília day).
    Diario,
    /// Monthly spending limit (BRL, Brasília month).
    Mensal,
}

impl Limite {
    /// The header value: `taxa`, `diario` or `mensal`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Limite::Rate => "taxa",
            Limite::Diario => "diario",
            Limite::Mensal => "mensal",
        }
    }
}

/// An HTTP error answer.
#[derive(Debug)]
pub enum ApiError {
    /// A contract error: status, code, Portuguese message.
    Contract {
        /// HTTP status.
        status: StatusCode,
        /// Stable code.
        codigo: ErrorCode,
        /// Message in Portuguese.
        message: String,
        /// From a sandbox reserved value.
        sandbox: bool,
        /// Extra response headers (`Retry-After`, `Allow`, `LIMIT_HEADER`).
        headers: Vec<(HeaderName, HeaderValue)>,
    },
    /// 500 `ERRO_INTERNO`; the detail is logged only.
    Internal(String),
}

impl ApiError {
    /// An error with the status the contract pairs with `codigo` (400 when unknown).
    pub fn new(codigo: ErrorCode, message: impl Into<String>) -> Self {
        let status = codigo
            .status()
            .and_then(|s| StatusCode::from_u16(s).ok())
            .unwrap_or(StatusCode::BAD_REQUEST);
        ApiError::Contract {
            status,
            codigo,
            message: message.into(),
            sandbox: false,
            headers: Vec::new(),
        }
    }

    /// An error with an explicit status.
    pub fn with_status(status: StatusCode, codigo: ErrorCode, message: impl Into<String>) -> Self {
        ApiError::Contract {
            status,
            codigo,
            message: message.into(),
            sandbox: false,
            headers: Vec::new(),
        }
    }

    /// 400 `PARAMETER_INVALID`.
    pub(crate) fn param(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Other(PARAMETER_INVALID.into()), message)
    }

    /// 401 `TOKEN_INVALIDO` (with `WWW-Authenticate: Bearer`, RFC 6750 section 3).
    pub(crate) fn token_invalido() -> Self {
        Self::new(
            ErrorCode::TokenInvalido,
            "Chave de API ausente ou inválida (Authorization: Bearer <chave>).",
        )
        .header(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"))
    }

    /// 500 `ERRO_INTERNO` with a detail for the log.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        ApiError::Internal(detail.to_string())
    }

    /// Marks the error as coming from a sandbox value.
    pub(crate) fn sandbox(mut self) -> Self {
        if let ApiError::Contract { sandbox, .. } = &mut self {
            *sandbox = true;
        }
        self
    }

    /// Adds a response header.
    pub(crate) fn header(mut self, name: HeaderName, valor: HeaderValue) -> Self {
        if let ApiError::Contract { headers, .. } = &mut self {
            headers.push((name, valor));
        }
        self
    }

    /// Adds `Retry-After` (seconds, at least 1).
    pub fn retry_after(self, seconds: u64) -> Self {
        self.header(header::RETRY_AFTER, HeaderValue::from(seconds.max(1)))
    }

    /// 429 `LIMITE_EXCEDIDO` for `limite`, with `Retry-After` (seconds, rounded up, at least 1)
    /// and the `LIMIT_HEADER` header.
    pub fn limit_exceeded(limite: Limite, retry_after: u64, message: impl Into<String>) -> Self {
        Self::new(ErrorCode::LimiteExcedido, message)
            .retry_after(retry_after)
            .header(
                HeaderName::from_static(LIMIT_HEADER),
                HeaderValue::from_static(limite.as_str()),
            )
    }

    /// The HTTP status.
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            ApiError::Contract { status, .. } => *status,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// True for an error from a sandbox value.
    pub(crate) fn is_sandbox(&self) -> bool {
        matches!(self, ApiError::Contract { sandbox: true, .. })
    }
}

/// Seconds of `Retry-After` on a 503 for a database that is away.
pub(crate) const RETRY_DATABASE_DOWN: u64 = 5;

/// True when `e` says the database could not be reached in time (no connection within the
/// store's wait): nothing was read or written, and the request can be retried.
pub(crate) fn database_down(e: &StoreError) -> bool {
    matches!(e, StoreError::Unavailable(_))
}

impl From<StoreError> for ApiError {
    /// 503 `SERVICO_INDISPONIVEL` with `Retry-After` when the database is away
    /// (`database_down`), else 500 `ERRO_INTERNO`; neither message claims anything about a
    /// charge (a 5xx never debits: the journal sees to a commit whose outcome was lost).
    fn from(e: StoreError) -> Self {
        if database_down(&e) {
            tracing::warn!(erro = %e, "banco de dados indisponível");
            return ApiError::new(
                ErrorCode::ServicoIndisponivel,
                "Banco de dados temporariamente indisponível; tente novamente.",
            )
            .retry_after(RETRY_DATABASE_DOWN);
        }
        ApiError::internal(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body, headers) = match self {
            ApiError::Contract {
                status,
                codigo,
                message,
                sandbox,
                headers,
            } => (
                status,
                ApiErrorBody {
                    success: false,
                    error: codigo.as_str().to_owned(),
                    message,
                    sandbox,
                },
                headers,
            ),
            ApiError::Internal(detail) => {
                tracing::error!(erro = %detail, "erro interno");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ApiErrorBody {
                        success: false,
                        error: ErrorCode::ErroInterno.as_str().to_owned(),
                        message: "Erro interno. Tente novamente mais tarde.".into(),
                        sandbox: false,
                    },
                    Vec::new(),
                )
            }
        };
        let mut resp = (status, axum::Json(body)).into_response();
        for (name, valor) in headers {
            resp.headers_mut().insert(name, valor);
        }
        resp
    }
}
