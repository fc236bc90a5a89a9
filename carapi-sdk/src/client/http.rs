//! The request pipeline shared by every operation: limiter, time-out, retries, error decoding,
//! spend commit and tracing (route templates only: never a CAR code or a document).

use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, RETRY_AFTER, USER_AGENT};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use tracing::Instrument;
use tracing::field::Empty;
use url::Url;

use super::{Client, Op};
use crate::error::HEADER_LIMITE;
use crate::retry::Outcome;
use crate::spend::{DatedAnswer, Reservation, date_of_header};
use crate::{ApiError, Error, EscopoLimite, Result};

/// One request of an operation.
pub(crate) struct Req {
    pub(crate) op: Op,
    pub(crate) method: Method,
    pub(crate) url: Url,
    pub(crate) body: Option<Vec<u8>>,
    /// True for the receipt (longer time-out).
    pub(crate) recibo: bool,
    /// Sandbox value: costs nothing.
    pub(crate) sandbox: bool,
    /// The normalised key of a lookup (CAR code, bare document), to settle a lost answer
    /// against the history; empty for other operations. Never logged.
    pub(crate) chave: String,
}

impl Req {
    pub(crate) fn get(op: Op, url: Url) -> Self {
        Self {
            op,
            method: Method::GET,
            url,
            body: None,
            recibo: false,
            sandbox: false,
            chave: String::new(),
        }
    }

    /// A `GET` of a lookup of `chave` (normalised).
    pub(crate) fn lookup(op: Op, url: Url, chave: &str, sandbox: bool) -> Self {
        Self {
            sandbox,
            chave: chave.to_owned(),
            ..Self::get(op, url)
        }
    }

    pub fn json(op: Op, method: Method, url: Url, body: &impl serde::Serialize) -> Result<Self> {
        let body = serde_json::to_vec(body)
            .map_err(|e| Error::Config(format!("corpo não serializável: {e}")))?;
        Ok(Self {
            method,
            body: Some(body),
            ..Self::get(op, url)
        })
    }

    /// A charged lookup of a value that is not a sandbox value.
    pub(crate) fn chargeable(&self) -> bool {
        self.op.is_charged() && !self.sandbox
    }
}

/// A successful answer: buffered, or with the body still to be read (receipt streaming).
pub(crate) enum Answer {
    Buffered {
        status: u16,
        headers: HeaderMap,
        bytes: Bytes,
    },
    Streaming(reqwest::Response),
}

impl Answer {
    /// Status, headers and the whole body (read now for a streaming answer).
    pub(crate) async fn into_parts(
        self,
        op: Op,
        chargeable: bool,
    ) -> Result<(u16, HeaderMap, Bytes)> {
        match self {
            Answer::Buffered {
                status,
                headers,
                bytes,
            } => Ok((status, headers, bytes)),
            Answer::Streaming(resp) => {
                let status = resp.status().as_u16();
                let headers = resp.headers().clone();
                let bytes = resp
                    .bytes()
                    .await
                    .map_err(|e| transport(op, chargeable, true, 1, e))?;
                Ok((status, headers, bytes))
            }
        }
    }
}

/// How one attempt ended.
enum Attempt {
    Done(Answer),
    /// Failed; `Some(outcome)` when the retry policy may consider it.
    Failed(Option<Outcome>, Error),
}

impl Client {
    /// `GET /v1/saldo` without the spend guard (which calls this for the prices).
    pub(crate) async fn fetch_saldo(&self) -> Result<crate::SaldoResponse> {
        let req = Req::get(Op::Saldo, self.url(&["saldo"])?);
        let (status, _, bytes) = self
            .execute(req, true, Reservation::nenhuma())
            .await?
            .into_parts(Op::Saldo, false)
            .await?;
        decode(Op::Saldo, status, &bytes)
    }

    /// Sends `req` (reserving its price if it is a charged lookup) and decodes the JSON body
    /// of the 2xx answer into `T`.
    pub(crate) async fn call_json<T: DeserializeOwned>(&self, req: Req) -> Result<T> {
        let op = req.op;
        let chargeable = req.chargeable();
        let (status, _, bytes) = self
            .execute_charged(req, true)
            .await?
            .into_parts(op, chargeable)
            .await?;
        decode(op, status, &bytes)
    }

    /// A charged lookup's JSON: through the archive when the client has one (feature
    /// `archive`), else [`Client::call_json`].
    pub(crate) async fn lookup_json<T: DeserializeOwned>(&self, req: Req) -> Result<T> {
        #[cfg(feature = "archive")]
        if self.archive_for(&req).is_some() {
            let op = req.op;
            let bytes = self.lookup_bytes_archived(req).await?;
            return decode(op, 200, &bytes);
        }
        self.call_json(req).await
    }

    /// [`Client::execute`] with the spend guard: a charged lookup reserves its price first
    /// ([`Client::reserve_lookup`]); when the account's prices are still unknown and there is no
    /// cap, they are read alongside the lookup (one free `GET /v1/saldo`, off the lookup's
    /// path), and the call returns once both ended, so [`Client::gasto`] is exact then.
    pub(crate) async fn execute_charged(&self, req: Req, buffer: bool) -> Result<Answer> {
        let (reservation, ler_precos) =
            self.reserve_lookup(req.op, req.sandbox, &req.chave).await?;
        if !ler_precos {
            return self.execute(req, buffer, reservation).await;
        }
        let op = req.op;
        let (resposta, precos) =
            crate::join::ambos(self.execute(req, buffer, reservation), self.precos()).await;
        if let Err(e) = precos {
            tracing::debug!(target: "carapi_sdk::spend", operation = op.name(), error = %e, "preços desconhecidos: consulta contada sem preço");
            if resposta.as_ref().err().is_some_and(Error::may_have_charged) {
                crate::spend::warn_money(
                    op,
                    None,
                    "resposta perdida de consulta cobrável, preço desconhecido: pode ter sido cobrada",
                );
            }
        }
        resposta
    }

    /// The pipeline. Error statuses become [`Error::Api`]; with `buffer` the body of the 2xx
    /// answer is read inside the retry loop (a body cut off counts as a lost answer).
    /// `reservation` is the spend-guard reservation of a charged lookup, committed on 200.
    ///
    /// Spans and events carry the route template ([`Op::route`]), never the path: the path
    /// holds the CAR code or the owner's document (contract, "What the service does": the client
    /// is the data controller of what it looks up).
    pub(crate) async fn execute(
        &self,
        req: Req,
        buffer: bool,
        reservation: Reservation,
    ) -> Result<Answer> {
        crate::runtime::check()?;
        let span = tracing::debug_span!(
            "carapi_sdk.request",
            operation = req.op.name(),
            method = %req.method,
            route = req.op.route(),
            attempt = Empty,
            status = Empty,
        );
        self.attempts(req, buffer, reservation)
            .instrument(span)
            .await
    }

    async fn attempts(&self, req: Req, buffer: bool, reservation: Reservation) -> Result<Answer> {
        let inner = &self.inner;
        let op = req.op;
        let resend_safe = !req.chargeable() || inner.retry_charged_lookups;
        let span = tracing::Span::current();
        let mut reservation = Some(reservation);
        let mut tokens_spent = 0u32;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            span.record("attempt", attempt);
            if let Some(limiter) = &inner.limiter {
                limiter.until_ready().await;
            }
            let (outcome, error) = match self.attempt(&req, buffer, attempt, &mut reservation).await
            {
                Attempt::Done(answer) => {
                    inner.budget.refund(tokens_spent.max(1));
                    return Ok(answer);
                }
                Attempt::Failed(outcome, error) => (outcome, error),
            };
            let Some(outcome) = outcome else {
                return Err(error);
            };
            let Some(wait) = inner.retry.decide(attempt, &outcome, resend_safe) else {
                if inner.retry.decide(0, &outcome, resend_safe).is_some() {
                    esgotadas(
                        op,
                        attempt,
                        reservation.as_ref(),
                        &error,
                        "tentativas esgotadas",
                    );
                }
                return Err(error);
            };
            let cost = inner.retry.cost(&outcome);
            if !inner.budget.try_acquire(cost) {
                esgotadas(
                    op,
                    attempt,
                    reservation.as_ref(),
                    &error,
                    "orçamento de novas tentativas esgotado",
                );
                return Err(error);
            }
            tokens_spent += cost;
            tracing::debug!(
                target: "carapi_sdk::http",
                operation = op.name(),
                route = op.route(),
                attempt,
                wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                status = error.status(),
                code = error.code().map(tracing::field::display),
                "nova tentativa"
            );
            tokio::time::sleep(wait).await;
        }
    }

    /// One attempt: send, then classify the answer.
    async fn attempt(
        &self,
        req: &Req,
        buffer: bool,
        attempt: u32,
        reservation: &mut Option<Reservation>,
    ) -> Attempt {
        let started = Instant::now();
        if let Some(r) = reservation.as_mut() {
            // From here until an answer, dropping the call leaves the lookup uncertain.
            r.enviando();
        }
        let mut resp = match self.request(req).send().await {
            Ok(resp) => resp,
            Err(e) => return send_failed(req, e, attempt, started, reservation.as_mut()),
        };
        let data = date_of_header(resp.headers());
        if let Some(data) = data {
            self.inner.spend.observar(DatedAnswer {
                data,
                enviado: Some(started),
                recebido: Instant::now(),
            });
        }
        let status = resp.status();
        tracing::Span::current().record("status", status.as_u16());
        log_response(req, status, started, attempt);
        if status == StatusCode::OK {
            // Charged on every 200 (contract, "Prices"), whatever happens to the body.
            if let Some(r) = reservation.take() {
                r.commit(data);
            }
        } else if let Some(r) = reservation.as_mut() {
            r.sem_cobranca();
        }
        if !status.is_success() {
            return self.failed_status(req, resp, reservation.as_ref()).await;
        }
        if !buffer {
            return Attempt::Done(Answer::Streaming(resp));
        }
        let headers = std::mem::take(resp.headers_mut());
        match resp.bytes().await {
            Ok(bytes) => Attempt::Done(Answer::Buffered {
                status: status.as_u16(),
                headers,
                bytes,
            }),
            Err(e) => {
                // A charged 200 whose body was lost is never re-sent: it was charged.
                let outcome = (!req.chargeable()).then_some(Outcome::LostAfterSend {
                    timeout: e.is_timeout(),
                });
                Attempt::Failed(
                    outcome,
                    transport(req.op, req.chargeable(), true, attempt, e),
                )
            }
        }
    }

    /// The HTTP request of `req`: key, user agent, the time-out of this handle (the receipt's
    /// own unless overridden), and the JSON body.
    fn request(&self, req: &Req) -> reqwest::RequestBuilder {
        let inner = &self.inner;
        let timeout = self.timeout.unwrap_or(if req.recibo {
            inner.receipt_timeout
        } else {
            inner.timeout
        });
        let rb = inner
            .http
            .request(req.method.clone(), req.url.clone())
            .header(AUTHORIZATION, inner.auth.clone())
            .header(USER_AGENT, inner.user_agent.clone())
            .timeout(timeout);
        match &req.body {
            Some(body) => rb
                .header(CONTENT_TYPE, "application/json")
                .body(body.clone()),
            None => rb,
        }
    }

    /// An error status: the decoded [`ApiError`] with its operation, price and limit scope.
    async fn failed_status(
        &self,
        req: &Req,
        resp: reqwest::Response,
        reservation: Option<&Reservation>,
    ) -> Attempt {
        let status = resp.status().as_u16();
        let retry_after = retry_after(resp.headers());
        let escopo = resp
            .headers()
            .get(HEADER_LIMITE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = resp.bytes().await.unwrap_or_default();
        let mut api = ApiError::from_body(status, &body, retry_after);
        api.operation = Some(req.op.name());
        api.preco = match reservation.and_then(Reservation::preco) {
            Some(p) => Some(p),
            None if req.chargeable() => self.precos_conhecidos().map(|p| req.op.preco(&p)),
            None => None,
        };
        let mut outcome = Some(Outcome::Status {
            status,
            retry_after,
        });
        if status == 429 {
            let e = EscopoLimite::of_429(escopo.as_deref(), retry_after, req.chargeable());
            api.limite = Some(e);
            if e != EscopoLimite::Taxa {
                // The daily or monthly limit: not worth waiting for.
                outcome = None;
            }
        }
        Attempt::Failed(outcome, Error::Api(api))
    }
}

/// The request could not be sent, or its answer was lost: a lookup whose request left
/// (`sent`) may have been charged and is recorded as uncertain on its reservation.
fn send_failed(
    req: &Req,
    e: reqwest::Error,
    attempt: u32,
    started: Instant,
    reservation: Option<&mut Reservation>,
) -> Attempt {
    let e = e.without_url();
    let sent = !e.is_connect();
    tracing::debug!(
        target: "carapi_sdk::http",
        operation = req.op.name(),
        method = %req.method,
        route = req.op.route(),
        error = %cadeia(&e),
        sent,
        elapsed_ms = elapsed_ms(started),
        attempt,
        "falha de transporte"
    );
    if !sent {
        if let Some(r) = reservation {
            r.sem_cobranca();
        }
        return Attempt::Failed(
            Some(Outcome::NotSent),
            transport(req.op, req.chargeable(), false, attempt, e),
        );
    }
    if let Some(r) = reservation {
        // The server may have charged it: counted as uncertain (a WARN event).
        r.lost();
    }
    let outcome = Outcome::LostAfterSend {
        timeout: e.is_timeout(),
    };
    Attempt::Failed(
        Some(outcome),
        transport(req.op, req.chargeable(), true, attempt, e),
    )
}

fn transport(op: Op, chargeable: bool, sent: bool, attempts: u32, source: reqwest::Error) -> Error {
    Error::Transport {
        operation: op.name(),
        sent,
        chargeable,
        attempts,
        source: source.without_url(),
    }
}

/// An error and its causes, `: `-separated (`error sending request: client error (Connect):
/// tcp connect error: Connection refused`): the URL is never in it (`without_url`).
pub(crate) fn cadeia(e: &dyn std::error::Error) -> String {
    let mut texto = e.to_string();
    let mut causa = e.source();
    while let Some(c) = causa {
        let t = c.to_string();
        if !texto.ends_with(&t) {
            texto.push_str(": ");
            texto.push_str(&t);
        }
        causa = c.source();
    }
    texto
}

/// The retries of a call ran out (attempts or budget): a WARN event, with the price when the
/// operation is a charged lookup.
fn esgotadas(
    op: Op,
    attempts: u32,
    reservation: Option<&Reservation>,
    error: &Error,
    motivo: &str,
) {
    tracing::warn!(
        target: "carapi_sdk::http",
        operation = op.name(),
        route = op.route(),
        attempts,
        preco = reservation
            .and_then(Reservation::preco)
            .map(|p| tracing::field::display(crate::spend::brl(p))),
        error = %cadeia(error),
        "{motivo}"
    );
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn log_response(req: &Req, status: StatusCode, started: Instant, attempt: u32) {
    tracing::debug!(
        target: "carapi_sdk::http",
        method = %req.method,
        route = req.op.route(),
        status = status.as_u16(),
        elapsed_ms = elapsed_ms(started),
        attempt,
    );
}

/// Decodes a JSON body, naming the JSON path that failed. The body is decoded once by
/// `serde_json` alone; only a body that fails is decoded again to find the path (tracking the
/// path of every value costs time on every answer).
pub(crate) fn decode<T: DeserializeOwned>(op: Op, status: u16, bytes: &[u8]) -> Result<T> {
    if let Ok(value) = serde_json::from_slice(bytes) {
        return Ok(value);
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| Error::Decode {
        operation: op.name(),
        status,
        path: e.path().to_string(),
        source: e.into_inner().into(),
    })
}

/// `Retry-After` in seconds or as an HTTP date (RFC 9110 §10.2.3).
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(v).ok()?;
    let delta = when.signed_duration_since(chrono::Utc::now());
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        assert_eq!(retry_after(&h), None);
        h.insert(RETRY_AFTER, HeaderValue::from_static("3"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(3)));
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(
            retry_after(&h),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        h.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn decode_names_the_path() {
        let e =
            decode::<crate::SaldoResponse>(Op::Saldo, 200, br#"{"success":true,"saldoReais":"x"}"#)
                .unwrap_err();
        match e {
            Error::Decode {
                path,
                status,
                operation,
                ..
            } => {
                assert_eq!(path, "saldoReais");
                assert_eq!(status, 200);
                assert_eq!(operation, "saldo");
            }
            other => panic!("{other:?}"),
        }
    }
}
