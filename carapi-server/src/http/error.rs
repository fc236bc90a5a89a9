//! The one error type of the HTTP layer: every failure becomes the contract's `ApiError` JSON
//! body with a stable code; 5xx details are logged, never sent.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use carapi_sdk::{ApiErrorBody, ErrorCode};

use crate::store::StoreError;

/// Code of a malformed query parameter (an extension: the contract has no code for it).
pub const PARAMETRO_INVALIDO: &str = "PARAMETRO_INVALIDO";
/// Code of an unknown route or wrong method (`SPEC_NAO_ENCONTRADA` is in the contract's set
/// without a stated condition; this server uses it for "no such operation").
pub const ROTA_NAO_ENCONTRADA: ErrorCode = ErrorCode::SpecNaoEncontrada;

/// An HTTP error answer.
#[derive(Debug)]
pub enum ApiError {
    /// A contract error: status, code, Portuguese message.
    Contrato {
        /// HTTP status.
        status: StatusCode,
        /// Stable code.
        codigo: ErrorCode,
        /// Message in Portuguese.
        mensagem: String,
        /// From a sandbox reserved value.
        sandbox: bool,
        /// `Retry-After`, seconds (429).
        retry_after: Option<u64>,
    },
    /// 500 `ERRO_INTERNO`; the detail is logged only.
    Interno(String),
}

impl ApiError {
    /// An error with the status the contract pairs with `codigo` (400 when unknown).
    pub fn new(codigo: ErrorCode, mensagem: impl Into<String>) -> Self {
        let status = codigo
            .status()
            .and_then(|s| StatusCode::from_u16(s).ok())
            .unwrap_or(StatusCode::BAD_REQUEST);
        ApiError::Contrato {
            status,
            codigo,
            mensagem: mensagem.into(),
            sandbox: false,
            retry_after: None,
        }
    }

    /// An error with an explicit status.
    pub fn com_status(status: StatusCode, codigo: ErrorCode, mensagem: impl Into<String>) -> Self {
        ApiError::Contrato {
            status,
            codigo,
            mensagem: mensagem.into(),
            sandbox: false,
            retry_after: None,
        }
    }

    /// 400 `PARAMETRO_INVALIDO`.
    pub fn parametro(mensagem: impl Into<String>) -> Self {
        Self::new(ErrorCode::Other(PARAMETRO_INVALIDO.into()), mensagem)
    }

    /// 401 `TOKEN_INVALIDO`.
    pub fn token_invalido() -> Self {
        Self::new(
            ErrorCode::TokenInvalido,
            "Chave de API ausente ou inválida (Authorization: Bearer <chave>).",
        )
    }

    /// 500 `ERRO_INTERNO` with a detail for the log.
    pub fn interno(detalhe: impl std::fmt::Display) -> Self {
        ApiError::Interno(detalhe.to_string())
    }

    /// Marks the error as coming from a sandbox value.
    pub fn sandbox(mut self) -> Self {
        if let ApiError::Contrato { sandbox, .. } = &mut self {
            *sandbox = true;
        }
        self
    }

    /// Adds `Retry-After`.
    pub fn retry_after(mut self, segundos: u64) -> Self {
        if let ApiError::Contrato { retry_after, .. } = &mut self {
            *retry_after = Some(segundos.max(1));
        }
        self
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Contrato { status, .. } => *status,
            ApiError::Interno(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// True for an error from a sandbox value.
    pub fn is_sandbox(&self) -> bool {
        matches!(self, ApiError::Contrato { sandbox: true, .. })
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        ApiError::interno(e)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body, retry) = match self {
            ApiError::Contrato {
                status,
                codigo,
                mensagem,
                sandbox,
                retry_after,
            } => (
                status,
                ApiErrorBody {
                    success: false,
                    error: codigo.as_str().to_owned(),
                    message: mensagem,
                    sandbox,
                },
                retry_after,
            ),
            ApiError::Interno(detalhe) => {
                tracing::error!(erro = %detalhe, "erro interno");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ApiErrorBody {
                        success: false,
                        error: ErrorCode::ErroInterno.as_str().to_owned(),
                        message: "Erro interno. Tente novamente mais tarde.".into(),
                        sandbox: false,
                    },
                    None,
                )
            }
        };
        let mut resp = (status, axum::Json(body)).into_response();
        if let Some(s) = retry {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        resp
    }
}
