//! Extractors whose rejections are contract `ApiError`s, never axum's plain-text ones.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::request::Parts;
use carapi_sdk::{ErrorCode, LimitesUpdate, NovaRecarga};
use serde::de::DeserializeOwned;

use super::routes::MatchedRoute;
use crate::api_error::ApiError;
use crate::flow::consulta;
use crate::state::AppState;
use crate::store::{Conta, ContaId};

/// The error code of a JSON body that does not decode, per body type, and its number fields.
pub(crate) trait CodeBody {
    /// Code of a malformed or missing body.
    const CODE: ErrorCode;
    /// Fields that must be JSON numbers (or `null`) when present: a string such as `"500"` is
    /// refused with [`CodeBody::CODE`] (contract: these fields are of type number).
    const NUMBERS: &'static [&'static str];

    /// The body with its amounts replaced by the numbers exactly as written in `bytes` (a JSON
    /// number decoded through `f64` loses digits): by default, the body as decoded.
    ///
    /// # Errors
    /// 400 with [`CodeBody::CODE`] for an amount that no `Decimal` holds.
    fn exact(self, _bytes: &[u8]) -> Result<Self, ApiError>
    where
        Self: Sized,
    {
        Ok(self)
    }
}

impl CodeBody for NovaRecarga {
    const CODE: ErrorCode = ErrorCode::ValorInvalido;
    const NUMBERS: &'static [&'static str] = &["valor"];
}

impl CodeBody for LimitesUpdate {
    const CODE: ErrorCode = ErrorCode::LimiteInvalido;
    const NUMBERS: &'static [&'static str] = &["limiteDiarioRequisicoes", "limiteMensalReais"];

    /// `limiteMensalReais` as written: `100.0000000000000000001` keeps its digits and is refused
    /// like `100.001` (at most 2 decimals, contract "PUT /v1/limites").
    fn exact(mut self, bytes: &[u8]) -> Result<Self, ApiError> {
        if let Some(Some(_)) = self.limite_mensal_reais {
            let as_written = exact_number(bytes, "limiteMensalReais").ok_or_else(|| {
                ApiError::new(
                    Self::CODE,
                    "limiteMensalReais deve estar entre 0 e 1000000 (em reais, até 2 casas decimais).",
                )
            })?;
            self.limite_mensal_reais = Some(Some(as_written));
        }
        Ok(self)
    }
}

/// A JSON body (any or no `Content-Type`); a missing, malformed or mistyped body is a 400 with
/// the body type's code and the path of the field that failed.
#[derive(Debug)]
pub(crate) struct JsonBody<T>(pub T);

impl<S, T> FromRequest<S> for JsonBody<T>
where
    S: Send + Sync,
    T: DeserializeOwned + CodeBody,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = body_bytes::<T, S>(req, state).await?;
        read_body::<T>(&bytes)?.exact(&bytes).map(JsonBody)
    }
}

/// The raw body; one that cannot be read is a 400 with `T`'s [`CodeBody::CODE`].
async fn body_bytes<T: CodeBody, S: Send + Sync>(
    req: Request,
    state: &S,
) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state)
        .await
        .map_err(|_| ApiError::new(T::CODE, "Corpo da requisição ilegível."))
}

/// Decodes a JSON body of type `T` with the rules of [`JsonBody`].
///
/// # Errors
/// 400 with `T`'s [`CodeBody::CODE`] and a Portuguese message for an empty, malformed or
/// mistyped body (naming the field that failed) or one that repeats a field (JSON leaves
/// that to the reader: here it is refused, never "the last wins").
pub(crate) fn read_body<T: DeserializeOwned + CodeBody>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::new(T::CODE, "Corpo JSON obrigatório."));
    }
    let valor: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        let location = format!("linha {}, coluna {}", e.line(), e.column());
        let msg = if e.is_eof() {
            format!("JSON incompleto ({location}).")
        } else {
            format!("JSON inválido ({location}).")
        };
        ApiError::new(T::CODE, msg)
    })?;
    let Some(object) = valor.as_object() else {
        return Err(ApiError::new(T::CODE, "O corpo deve ser um objeto JSON."));
    };
    if let Ok(UniqueKeys(Some(chave))) = serde_json::from_slice::<UniqueKeys>(bytes) {
        return Err(ApiError::new(
            T::CODE,
            format!(
                "Campo '{}' repetido no corpo JSON.",
                chave.chars().take(64).collect::<String>()
            ),
        ));
    }
    for field in T::NUMBERS {
        if object
            .get(*field)
            .is_some_and(|v| !v.is_number() && !v.is_null())
        {
            return Err(ApiError::new(
                T::CODE,
                format!("Campo '{field}' deve ser um número JSON."),
            ));
        }
    }
    serde_path_to_error::deserialize(valor).map_err(|e| {
        ApiError::new(
            T::CODE,
            format!("Campo '{}' inválido: {}.", e.path(), reason(e.inner())),
        )
    })
}

/// The first key a JSON object repeats, if any (its values are skipped).
struct UniqueKeys(Option<String>);

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = UniqueKeys;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("um objeto JSON")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<UniqueKeys, A::Error> {
                let mut seen = std::collections::HashSet::new();
                let mut repeated = None;
                while let Some(chave) = m.next_key::<String>()? {
                    m.next_value::<serde::de::IgnoredAny>()?;
                    if repeated.is_none() && !seen.insert(chave.clone()) {
                        repeated = Some(chave);
                    }
                }
                Ok(UniqueKeys(repeated))
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// Why serde refused a value, in Portuguese (serde's own messages are English: `invalid type:
/// string, expected u32`), without echoing the value.
fn reason(e: &impl std::fmt::Display) -> &'static str {
    let text = e.to_string();
    if text.starts_with("duplicate field") {
        "repetido"
    } else if text.starts_with("unknown variant") {
        "fora dos valores aceitos"
    } else if text.starts_with("missing field") {
        "obrigatório"
    } else if text.contains("too large") || text.contains("out of range") {
        "fora da faixa aceita"
    } else {
        "tipo ou valor não aceito"
    }
}

/// The body of `POST /v1/recarga` with its `valor` also read exactly from the JSON text.
///
/// A JSON number decoded through `f64` loses digits: `500.0000000000000000001` would become
/// 500.00 while `500.001` is refused. `exato` is the number as written (plain or with an
/// exponent), `None` when it does not fit a `Decimal` (28 significant digits) or the body
/// repeats the field, so that every amount with more than 2 decimals is refused alike.
#[derive(Debug)]
pub(crate) struct RecargaBody {
    /// The body as the contract's type.
    pub(crate) body: NovaRecarga,
    /// `valor` exactly as sent, BRL.
    pub(crate) as_written: Option<rust_decimal::Decimal>,
}

impl<S: Send + Sync> FromRequest<S> for RecargaBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let bytes = body_bytes::<NovaRecarga, S>(req, state).await?;
        Ok(RecargaBody {
            body: read_body::<NovaRecarga>(&bytes)?,
            as_written: exact_number(&bytes, "valor"),
        })
    }
}

/// The number `campo` of a JSON object as written, read without floating point; `None` when
/// absent, not a number or beyond what a `Decimal` holds (28 significant digits).
fn exact_number(bytes: &[u8], field: &str) -> Option<rust_decimal::Decimal> {
    let raw: std::collections::HashMap<String, &serde_json::value::RawValue> =
        serde_json::from_slice(bytes).ok()?;
    let text = raw.get(field)?.get();
    if text.contains(['e', 'E']) {
        rust_decimal::Decimal::from_scientific(text).ok()
    } else {
        rust_decimal::Decimal::from_str_exact(text).ok()
    }
}

/// Query parameters; a malformed one is 400 `PARAMETER_INVALID` naming it. A `page` or
/// `size` made only of digits is inside the contract's schema however large it is: one that
/// does not fit 32 bits is read as `u32::MAX` (a page past the end; a size reduced to 100).
#[derive(Debug)]
pub(crate) struct Params<T>(pub T);

impl<S, T> FromRequestParts<S> for Params<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        let query = clamp_pagination(parts.uri.query().unwrap_or(""));
        let d = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(d)
            .map(Params)
            .map_err(|e| {
                let why = reason(e.inner());
                let name = e.path().to_string();
                let msg = match repeated_name(&e.inner().to_string()) {
                    Some(duplicate) => format!("Parâmetro de consulta '{duplicate}' repetido."),
                    None if name.is_empty() || name == "." => {
                        format!("Parâmetro de consulta inválido: {why}.")
                    }
                    None => format!("Parâmetro de consulta '{name}' inválido: {why}."),
                };
                ApiError::param(msg)
            })
    }
}

/// The field that serde's "duplicate field `x`" names.
fn repeated_name(text: &str) -> Option<&str> {
    text.strip_prefix("duplicate field `")?.split('`').next()
}

/// `query` with every all-digit `page`/`size` too large for `u32` replaced by `u32::MAX`.
fn clamp_pagination(query: &str) -> std::borrow::Cow<'_, str> {
    let Ok(pares) = serde_urlencoded::from_str::<Vec<(String, String)>>(query) else {
        return query.into();
    };
    let large = |k: &str, v: &str| {
        matches!(k, "page" | "size")
            && !v.is_empty()
            && v.bytes().all(|b| b.is_ascii_digit())
            && v.parse::<u32>().is_err()
    };
    if !pares.iter().any(|(k, v)| large(k, v)) {
        return query.into();
    }
    let pares: Vec<(String, String)> = pares
        .into_iter()
        .map(|(k, v)| {
            let v = if large(&k, &v) {
                u32::MAX.to_string()
            } else {
                v
            };
            (k, v)
        })
        .collect();
    serde_urlencoded::to_string(pares).map_or(query.into(), Into::into)
}

/// The authenticated account as it is now (balance, limits, price table): the one the auth
/// middleware read, or read here when the middleware found the key in its cache.
#[derive(Debug, Clone)]
pub(crate) struct Authenticated(pub Conta);

impl FromRequestParts<AppState> for Authenticated {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, st: &AppState) -> Result<Self, ApiError> {
        if let Some(conta) = parts.extensions.get::<Conta>() {
            return Ok(Authenticated(conta.clone()));
        }
        let AuthenticatedConta(id) = AuthenticatedConta::from_request_parts(parts, st).await?;
        st.store
            .conta(id)
            .await?
            .map(Authenticated)
            .ok_or_else(ApiError::token_invalido)
    }
}

/// Only the id of the authenticated account (the lookups: the charge reads the account inside
/// its own transaction), put in the request by the auth middleware.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AuthenticatedConta(pub ContaId);

impl<S: Send + Sync> FromRequestParts<S> for AuthenticatedConta {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .get::<ContaId>()
            .copied()
            .map(AuthenticatedConta)
            .ok_or_else(ApiError::token_invalido)
    }
}

/// The single path parameter of a route, decoded; one that does not decode to UTF-8 gets the
/// route's own contract error (`super::edge::segment_error`).
#[derive(Debug)]
pub struct Segment(pub String);

impl<S: Send + Sync> FromRequestParts<S> for Segment {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(s)| Segment(s))
            .map_err(|_| {
                super::edge::segment_error(
                    parts.extensions.get::<MatchedRoute>().map(|m| m.0),
                    parts.uri.path(),
                    "Parâmetro de caminho inválido: não é texto UTF-8.".to_owned(),
                )
            })
    }
}

/// The lookup of a charged route, its key parsed once per request: taken as authentication
/// parsed it ([`super::authenticate`] puts it in the request), else parsed here from the path
/// parameter ([`Segment`]) for the lookup of the route the edge matched ([`MatchedRoute`]).
#[derive(Debug)]
pub(crate) struct ConsultaRequest(pub consulta::Request);

impl<S: Send + Sync> FromRequestParts<S> for ConsultaRequest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        if let Some(req) = parts.extensions.remove::<consulta::Request>() {
            return Ok(ConsultaRequest(req));
        }
        let endpoint = endpoint_of(parts)
            .ok_or_else(|| ApiError::internal("rota de consulta sem endpoint conhecido"))?;
        let Segment(raw) = Segment::from_request_parts(parts, state).await?;
        Ok(ConsultaRequest(consulta::Request::new(endpoint, raw)))
    }
}

/// The charged lookup of the route the edge matched, if it is one.
fn endpoint_of(parts: &Parts) -> Option<carapi_sdk::EndpointConsulta> {
    parts.extensions.get::<MatchedRoute>()?.0.consulta()
}

/// The lookup a request to a charged route asks for, parsed once (`None` for another route or
/// a path parameter that does not decode, which the handler then answers).
pub(super) async fn consulta_of(parts: &mut Parts) -> Option<consulta::Request> {
    let endpoint = endpoint_of(parts)?;
    let Path(raw) = Path::<String>::from_request_parts(parts, &()).await.ok()?;
    Some(consulta::Request::new(endpoint, raw))
}
