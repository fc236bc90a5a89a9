//! The one error type of the SDK ([`Error`]) and the decoded API error ([`ApiError`]).

use std::fmt;
use std::time::Duration;

use rust_decimal::Decimal;
use uuid::Uuid;

use crate::domain::{ValidationError, brl, mask};
use crate::{ApiErrorBody, ErrorCode, RecargaStatus};

/// An error and its causes, `: `-separated, each cause once (a cause whose text already ends
/// the line is not repeated): `error sending request: client error (Connect): tcp connect
/// error: Connection refused`. For logs and messages of any error, the SDK's and others'; the
/// SDK's errors hold no URL, key or document (see [`Error`]).
#[must_use]
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let t = c.to_string();
        if !text.ends_with(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        cause = c.source();
    }
    text
}

/// `Result` with the SDK's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything a call of the SDK can fail with.
///
/// Its `Display` and `Debug`, and those of its parts, never show a CPF/CNPJ or a value that may
/// be a name unmasked (see [`ValidationError`], [`ApiError`], [`DecodeError`]), so logging an
/// error (`error = %e`, `{e:?}`) writes no personal data; a CAR code may appear.
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
    ///
    /// See [`Error::may_have_charged`] and [`Error::is_retryable`] for what to do next.
    ///
    /// `Display` says this level only (operation, attempt, whether it may have been charged);
    /// the cause (`tcp connect error`, `operation timed out`, …) is [`source`](std::error::Error::source)'s,
    /// as for every variant, so `anyhow`'s `{:#}`, `eyre` and `tracing` print each cause once.
    #[error("falha de comunicação em {operation} (tentativa {attempts}; {})",
        if !*sent { "requisição não enviada" }
        else if *chargeable { "a consulta pode ter sido cobrada" }
        else { "a requisição pode ter chegado ao servidor" })]
    Transport {
        /// The SDK method, e.g. `"car"`.
        operation: &'static str,
        /// False when the request certainly never reached the server.
        sent: bool,
        /// True when the operation is a charged lookup (`car`, `car_completo`, `proprietario`,
        /// the receipt) of a value that is not a sandbox value: a lost answer to it may have
        /// been charged.
        chargeable: bool,
        /// Attempts made, the failed one included.
        attempts: u32,
        /// The underlying HTTP client error.
        #[source]
        source: reqwest::Error,
    },

    /// A successful response whose body did not match the contract's shape; `path` is the JSON
    /// path that failed (`dados.dataConsulta`, `itens[3].valor`, `.` for the root).
    #[error("resposta inesperada de {operation} (HTTP {status}) em `{path}`")]
    Decode {
        /// The SDK method, e.g. `"saldo"`.
        operation: &'static str,
        /// HTTP status of the response.
        status: u16,
        /// JSON path of the value that failed to decode.
        path: String,
        /// serde_json's error, with the values it quotes from the body masked.
        #[source]
        source: DecodeError,
    },

    /// Refused before sending: the lookup would take this client's spend past the cap set with
    /// [`ClientBuilder::max_spend`](crate::ClientBuilder::max_spend). Amounts in BRL.
    ///
    /// A lookup that would fit once the lookups in flight settle waits for them instead; this
    /// error means it cannot fit even if every lookup in flight ends without a charge.
    #[error(
        "limite de gasto do cliente atingido: gasto {} + reservado {} + preço {} ultrapassaria o limite de {}",
        brl::format(*gasto), brl::format(*reservado), brl::format(*preco), brl::format(*limite)
    )]
    SpendLimit {
        /// The cap, BRL.
        limite: Decimal,
        /// Spent by this client: confirmed charges plus uncertain ones (answers lost after
        /// sending), BRL; see [`Gasto`](crate::Gasto).
        gasto: Decimal,
        /// Reserved by this client's lookups in flight when the lookup was refused, BRL.
        reservado: Decimal,
        /// Price of the refused lookup, BRL.
        preco: Decimal,
    },

    /// [`Client::wait_for_recarga`](crate::Client::wait_for_recarga) gave up: the top-up was
    /// still not final when the time was up.
    #[error("recarga {recarga_id} ainda {} após {}s", last_status.map_or("sem status", |s| s.as_str()), waited.as_secs())]
    Timeout {
        /// The top-up being waited on.
        recarga_id: Uuid,
        /// How long the waiter waited.
        waited: Duration,
        /// The last status read (`Pendente`), if any read succeeded.
        last_status: Option<RecargaStatus>,
    },

    /// A local file could not be written (receipt to a file); the I/O error is the `source`.
    #[error("erro de E/S no arquivo local")]
    Io(#[from] std::io::Error),

    /// The client is misconfigured (missing base URL or key, bad URL, …).
    #[error("configuração inválida: {0}")]
    Config(String),

    /// The call was cancelled by its token ([`Client::with_cancel`](crate::Client::with_cancel))
    /// before its request was sent: nothing was sent, nothing charged.
    #[error("{operation} cancelada antes do envio: nada foi enviado nem cobrado")]
    Cancelled {
        /// The SDK method, e.g. `"car"`.
        operation: &'static str,
    },

    /// A charged lookup's purchase ended without an answer for its caller: its task was
    /// stopped (the runtime shut down) or failed. Its request may have been sent, so it may
    /// have been charged ([`Error::may_have_charged`]).
    #[error("compra de {operation} interrompida: a consulta pode ter sido cobrada")]
    Interrupted {
        /// The SDK method, e.g. `"car"`.
        operation: &'static str,
    },

    /// The archive of paid answers refused the lookup (cargo feature `archive`): it could not
    /// be read, its pool had no connection free in time, the answer it holds was altered, or
    /// the document was purged at its owner's request ([`ArchiveError::kind`](crate::archive::ArchiveError::kind)
    /// says which). The lookup was not sent: an archive that cannot be trusted is reported,
    /// never silently re-bought.
    #[cfg(feature = "archive")]
    #[cfg_attr(docsrs, doc(cfg(feature = "archive")))]
    #[error(transparent)]
    Archive(#[from] crate::archive::ArchiveError),
}

impl Error {
    /// The HTTP status, for [`Error::Api`] and [`Error::Decode`].
    #[must_use]
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api(e) => Some(e.status),
            Self::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The contract's error code, for [`Error::Api`] (`Copy`: compare with
    /// `e.code() == Some(ErrorCode::SaldoInsuficiente)`).
    #[must_use]
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Self::Api(e) => Some(e.code),
            _ => None,
        }
    }

    /// The decoded API error, for [`Error::Api`].
    #[must_use]
    pub fn api(&self) -> Option<&ApiError> {
        match self {
            Self::Api(e) => Some(e),
            _ => None,
        }
    }

    /// True when sending the same call again is safe and may soon succeed:
    ///
    /// - a [`Error::Transport`] that never reached the server (`sent: false`), or that did
    ///   but on an operation that cannot charge (free endpoints, sandbox values);
    /// - a 429 of the per-second rate ([`EscopoLimite::Taxa`]);
    /// - 502 and 503 (errors never debit, contract "Errors");
    /// - an archive that could not be reached, or whose connection pool had no connection free
    ///   in time, before anything was sent ([`ArchiveErrorKind::Unavailable`](crate::archive::ArchiveErrorKind::Unavailable),
    ///   [`ArchiveErrorKind::PoolTimeout`](crate::archive::ArchiveErrorKind::PoolTimeout); feature `archive`).
    ///
    /// False for a lost answer to a charged lookup (it may have been charged: see
    /// [`Error::may_have_charged`]), for a 429 of the daily or monthly consumption limit
    /// (it lasts until Brasília midnight or the next month), and for everything else. The
    /// client's [`RetryPolicy`](crate::RetryPolicy) has already retried what was worth it.
    #[must_use]
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Transport {
                sent, chargeable, ..
            } => !*sent || !*chargeable,
            Self::Api(e) => match e.status {
                429 => e.limite == Some(EscopoLimite::Taxa),
                502 | 503 => true,
                _ => false,
            },
            #[cfg(feature = "archive")]
            Self::Archive(e) => e.kind().is_retryable(),
            _ => false,
        }
    }

    /// True when the call may have debited the balance although it returned an error: the
    /// request of a charged lookup (not a sandbox value) was sent and its answer was lost
    /// (time-out, connection reset, body cut off). Every 200 of a lookup is charged (contract,
    /// "Prices"), so re-sending may charge twice; [`Client::gasto`](crate::Client::gasto)
    /// counts it as `incerto` until
    /// [`Client::settle_incertos`](crate::Client::settle_incertos) settles it against the
    /// free history. Also true for [`Error::Interrupted`]. False for every other error
    /// (errors never debit, contract "Errors").
    #[must_use]
    pub fn may_have_charged(&self) -> bool {
        matches!(
            self,
            Self::Transport {
                sent: true,
                chargeable: true,
                ..
            } | Self::Interrupted { .. }
        )
    }

    /// Which limit a 429 `LIMITE_EXCEDIDO` came from (see [`EscopoLimite`]).
    #[must_use]
    pub fn limite(&self) -> Option<EscopoLimite> {
        self.api().and_then(|e| e.limite)
    }

    /// True for [`Error::Transport`].
    #[must_use]
    pub fn is_transport(&self) -> bool {
        matches!(self, Self::Transport { .. })
    }

    /// True when the error came from a reserved sandbox value (`sandbox: true` in the body).
    #[must_use]
    pub fn is_sandbox(&self) -> bool {
        matches!(self, Self::Api(e) if e.sandbox)
    }
}

/// A decoded error response (contract, "ApiError" and "Errors").
///
/// `Display` reads `402 SALDO_INSUFICIENTE: <message>`. When the body is not an `ApiError`
/// (a proxy's HTML page, an empty body), `code` is [`ErrorCode::Other`] with `HTTP_<status>` and
/// `message` is the start of the body or the status reason. `Display` and `Debug` mask any
/// CPF/CNPJ in the message (`***.456.789-**`); the `message` field holds it as the server sent it.
#[derive(Clone, PartialEq, Eq)]
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
    /// For a 429 `LIMITE_EXCEDIDO`: which limit was hit (see [`EscopoLimite`]); `None` for
    /// other statuses.
    pub limite: Option<EscopoLimite>,
    /// The SDK method that got the error (`"car"`, `"proprietario"`, …), when it came through
    /// a [`Client`](crate::Client).
    pub operation: Option<&'static str>,
    /// For an error of a charged lookup: its price at the account's prices, BRL, when the
    /// client knew them (given to the builder or learned from `GET /v1/saldo`). On a 402
    /// `SALDO_INSUFICIENTE` this is what the balance lacked room for;
    /// [`Client::falta`](crate::Client::falta) computes the shortfall.
    pub preco: Option<Decimal>,
}

/// Which limit a 429 `LIMITE_EXCEDIDO` came from (contract, "Limits": the per-second rate,
/// the daily request limit and the monthly spending limit all answer 429).
///
/// Read from the server's `Carapi-Limite` header (`taxa`, `diario`, `mensal`). A server that
/// does not send it is read as: the per-second rate when `Retry-After` is at most 1 s or the
/// operation is free (the consumption limits count charged lookups only); otherwise the daily
/// limit when `Retry-After` is at most 24 h, the monthly one beyond.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EscopoLimite {
    /// 10 requests per second per key: over within a second, worth retrying
    /// ([`Error::is_retryable`] is true).
    Taxa,
    /// The account's daily limit of charged requests (resets at Brasília midnight).
    Diario,
    /// The account's monthly spending limit, BRL (resets on the first of the month, Brasília).
    Mensal,
}

/// Response header naming the limit of a 429: `Carapi-Limite: taxa|diario|mensal`.
pub const HEADER_LIMITE: &str = "Carapi-Limite";

impl EscopoLimite {
    /// The header's value: `taxa`, `diario` or `mensal`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Taxa => "taxa",
            Self::Diario => "diario",
            Self::Mensal => "mensal",
        }
    }

    /// Parses the `Carapi-Limite` header value (case-insensitive, `diário` accepted).
    #[must_use]
    pub fn parse(valor: &str) -> Option<Self> {
        match valor.trim().to_lowercase().as_str() {
            "taxa" => Some(Self::Taxa),
            "diario" | "diário" => Some(Self::Diario),
            "mensal" => Some(Self::Mensal),
            _ => None,
        }
    }

    /// The scope of a 429: the header when sent and known, else the fallback described on the
    /// type. `chargeable` is true for a charged lookup of a non-sandbox value.
    pub(crate) fn of_429(
        header: Option<&str>,
        retry_after: Option<Duration>,
        chargeable: bool,
    ) -> Self {
        if let Some(e) = header.and_then(Self::parse) {
            return e;
        }
        match retry_after {
            _ if !chargeable => Self::Taxa,
            Some(d) if d <= Duration::from_secs(1) => Self::Taxa,
            Some(d) if d > Duration::from_secs(86_400) => Self::Mensal,
            _ => Self::Diario,
        }
    }
}

impl fmt::Display for EscopoLimite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ApiError {
    /// Builds an API error (for tests and adapters); `sandbox` false, no `Retry-After`, no
    /// limit, operation or price.
    pub fn new(status: u16, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            sandbox: false,
            retry_after: None,
            limite: None,
            operation: None,
            preco: None,
        }
    }

    /// Decodes an error response body; never fails (see the type's docs for the fallback).
    pub(crate) fn from_body(status: u16, body: &[u8], retry_after: Option<Duration>) -> Self {
        let mut e = match serde_json::from_slice::<ApiErrorBody>(body) {
            Ok(b) => {
                let mut e = Self::new(status, ErrorCode::parse(&b.error), b.message);
                e.sandbox = b.sandbox;
                e
            }
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
                Self::new(
                    status,
                    ErrorCode::Other(format!("HTTP_{status}").into()),
                    message,
                )
            }
        };
        e.retry_after = retry_after;
        e
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status,
            self.code,
            mask::documentos(&self.message)
        )
    }
}

impl fmt::Debug for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiError")
            .field("status", &self.status)
            .field("code", &self.code)
            .field("message", &mask::documentos(&self.message))
            .field("sandbox", &self.sandbox)
            .field("retry_after", &self.retry_after)
            .field("limite", &self.limite)
            .field("operation", &self.operation)
            .field("preco", &self.preco)
            .finish()
    }
}

/// Why a response body did not decode ([`Error::Decode`]): serde_json's error, with the values
/// it quotes from the body masked (`invalid type: string "***", expected u32`), since a body
/// may hold owner names and documents.
#[derive(Clone, PartialEq, Eq)]
pub struct DecodeError {
    message: String,
    line: usize,
    column: usize,
    category: serde_json::error::Category,
}

impl DecodeError {
    /// Line of the body where decoding stopped (1-based; 0 when unknown).
    #[must_use]
    pub fn line(&self) -> usize {
        self.line
    }

    /// Column of the body where decoding stopped (1-based; 0 when unknown).
    #[must_use]
    pub fn column(&self) -> usize {
        self.column
    }

    /// serde_json's kind of error: `Syntax` (not JSON), `Data` (JSON of another shape), `Eof`
    /// (cut off), `Io`.
    #[must_use]
    pub fn category(&self) -> serde_json::error::Category {
        self.category
    }
}

impl From<serde_json::Error> for DecodeError {
    fn from(e: serde_json::Error) -> Self {
        Self {
            message: mask::serde(&e.to_string()),
            line: e.line(),
            column: e.column(),
            category: e.classify(),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DecodeError")
            .field("message", &self.message)
            .field("category", &self.category)
            .finish_non_exhaustive()
    }
}

impl std::error::Error for DecodeError {}

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
    fn display_and_debug_mask_documents_and_names() {
        let e = Error::Api(ApiError::from_body(
            404,
            br#"{"success":false,"error":"CPF_CNPJ_NAO_ENCONTRADO","message":"Nenhum CAR para 529.982.247-25 (52998224725)"}"#,
            None,
        ));
        for text in [e.to_string(), format!("{e:?}"), format!("{e:#?}")] {
            assert!(
                !text.contains("529.982.247-25") && !text.contains("52998224725"),
                "{text}"
            );
            assert!(text.contains("***.982.247-**"), "{text}");
        }
        let v = Error::from(crate::CpfCnpj::parse("Fulano de Tal").unwrap_err());
        for text in [v.to_string(), format!("{v:?}")] {
            assert!(!text.contains("Fulano"), "{text}");
        }
        let v = Error::from(crate::CodigoCar::parse("123.456.789-00").unwrap_err());
        assert!(v.to_string().contains("***.456.789-**"), "{v}");
        let json = serde_json::from_str::<u32>("\"Fulano de Tal 529.982.247-25\"").unwrap_err();
        let d = Error::Decode {
            operation: "car",
            status: 200,
            path: ".".into(),
            source: json.into(),
        };
        let chain = format!("{d} {d:?} {}", std::error::Error::source(&d).unwrap());
        assert!(
            !chain.contains("Fulano") && !chain.contains("982"),
            "{chain}"
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
    fn limit_scope_from_header_or_fallback() {
        let s = |secs| Some(Duration::from_secs(secs));
        assert_eq!(
            EscopoLimite::of_429(Some("mensal"), s(1), true),
            EscopoLimite::Mensal
        );
        assert_eq!(
            EscopoLimite::of_429(Some("Diario"), s(1), false),
            EscopoLimite::Diario
        );
        assert_eq!(
            EscopoLimite::of_429(Some("taxa"), s(50_000), true),
            EscopoLimite::Taxa
        );
        assert_eq!(EscopoLimite::of_429(None, s(1), true), EscopoLimite::Taxa);
        assert_eq!(
            EscopoLimite::of_429(None, s(3600), false),
            EscopoLimite::Taxa
        );
        assert_eq!(
            EscopoLimite::of_429(None, s(3600), true),
            EscopoLimite::Diario
        );
        assert_eq!(EscopoLimite::of_429(None, None, true), EscopoLimite::Diario);
        assert_eq!(
            EscopoLimite::of_429(Some("?"), s(900_000), true),
            EscopoLimite::Mensal
        );
    }

    #[test]
    fn retryable_classification() {
        let e = |s| Error::Api(ApiError::new(s, ErrorCode::Other("".into()), ""));
        assert!(!e(400).is_retryable());
        assert!(!e(402).is_retryable());
        assert!(
            !e(429).is_retryable(),
            "429 without Retry-After may be a daily limit"
        );
        assert!(e(502).is_retryable());
        assert_eq!(e(404).status(), Some(404));
        let limite = |scope| {
            let mut a = ApiError::new(429, ErrorCode::LimiteExcedido, "");
            a.retry_after = Some(Duration::from_secs(1));
            a.limite = Some(scope);
            Error::Api(a)
        };
        assert!(limite(EscopoLimite::Taxa).is_retryable());
        assert!(!limite(EscopoLimite::Diario).is_retryable());
        assert!(!limite(EscopoLimite::Mensal).is_retryable());
        assert_eq!(
            limite(EscopoLimite::Mensal).limite(),
            Some(EscopoLimite::Mensal)
        );
        for e in [limite(EscopoLimite::Taxa), e(402), e(503)] {
            assert!(!e.may_have_charged());
        }
    }
}
