//! Extractors whose rejections are contract `ApiError`s, never axum's plain-text ones.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use carapi_sdk::{ErrorCode, LimitesUpdate, NovaRecarga};
use serde::de::DeserializeOwned;

use super::error::ApiError;
use crate::state::AppState;
use crate::store::{Conta, ContaId};

/// The error code of a JSON body that does not decode, per body type.
pub trait CodigoCorpo {
    /// Code of a malformed or missing body.
    const CODIGO: ErrorCode;
}

impl CodigoCorpo for NovaRecarga {
    const CODIGO: ErrorCode = ErrorCode::ValorInvalido;
}

impl CodigoCorpo for LimitesUpdate {
    const CODIGO: ErrorCode = ErrorCode::LimiteInvalido;
}

/// A JSON body (any or no `Content-Type`); a missing, malformed or mistyped body is a 400 with
/// the body type's code and the path of the field that failed.
#[derive(Debug)]
pub struct Corpo<T>(pub T);

impl<S, T> FromRequest<S> for Corpo<T>
where
    S: Send + Sync,
    T: DeserializeOwned + CodigoCorpo,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|_| ApiError::new(T::CODIGO, "Corpo da requisição ilegível."))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(ApiError::new(T::CODIGO, "Corpo JSON obrigatório."));
        }
        let valor: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|e| ApiError::new(T::CODIGO, format!("JSON inválido: {e}")))?;
        if !valor.is_object() {
            return Err(ApiError::new(T::CODIGO, "O corpo deve ser um objeto JSON."));
        }
        serde_path_to_error::deserialize(valor)
            .map(Corpo)
            .map_err(|e| {
                ApiError::new(
                    T::CODIGO,
                    format!("Campo '{}' inválido: {}", e.path(), e.inner()),
                )
            })
    }
}

/// Query parameters; a malformed one is 400 `PARAMETRO_INVALIDO` naming it.
#[derive(Debug)]
pub struct Parametros<T>(pub T);

impl<S, T> FromRequestParts<S> for Parametros<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        serde_urlencoded::from_str(query)
            .map(Parametros)
            .map_err(|e| ApiError::parametro(format!("Parâmetro de consulta inválido: {e}")))
    }
}

/// The authenticated account as it is now (balance, limits, price table): the one the auth
/// middleware read, or read here when the middleware found the key in its cache.
#[derive(Debug, Clone)]
pub struct Autenticado(pub Conta);

impl FromRequestParts<AppState> for Autenticado {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, st: &AppState) -> Result<Self, ApiError> {
        if let Some(conta) = parts.extensions.get::<Conta>() {
            return Ok(Autenticado(conta.clone()));
        }
        let ContaAutenticada(id) = ContaAutenticada::from_request_parts(parts, st).await?;
        st.store
            .conta(id)
            .await?
            .map(Autenticado)
            .ok_or_else(ApiError::token_invalido)
    }
}

/// Only the id of the authenticated account (the lookups: the charge reads the account inside
/// its own transaction), put in the request by the auth middleware.
#[derive(Debug, Clone, Copy)]
pub struct ContaAutenticada(pub ContaId);

impl<S: Send + Sync> FromRequestParts<S> for ContaAutenticada {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<ContaId>()
            .copied()
            .map(ContaAutenticada)
            .ok_or_else(ApiError::token_invalido)
    }
}
