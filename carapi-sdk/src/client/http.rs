//! The request pipeline shared by every operation: limiter, time-out, retries, error decoding,
//! spend commit and tracing (route templates only: never a CAR code or a document).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, RETRY_AFTER, USER_AGENT};
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use tracing::field::Empty;
use url::Url;

use super::{Client, Op};
use crate::error::HEADER_LIMITE;
use crate::limiter::Permit;
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
    pub(crate) fn consulta(op: Op, url: Url, chave: &str, sandbox: bool) -> Self {
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

/// A successful reply: buffered, or with the body still to be read (receipt streaming).
pub(crate) enum Reply {
    Buffered {
        status: u16,
        headers: HeaderMap,
        bytes: Bytes,
    },
    Streaming(reqwest::Response),
}

impl Reply {
    /// Status, headers and the whole body (read now for a streaming reply).
    pub(crate) async fn into_parts(
        self,
        op: Op,
        chargeable: bool,
    ) -> Result<(u16, HeaderMap, Bytes)> {
        match self {
            Reply::Buffered {
                status,
                headers,
                bytes,
            } => Ok((status, headers, bytes)),
            Reply::Streaming(resp) => {
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
    Done(Reply),
    /// Failed; `Some(outcome)` when the retry policy may consider it.
    Failed(Option<Outcome>, Error),
}

impl Client {
    /// `GET /v1/saldo` without the spend guard (which calls this for the prices).
    pub(crate) async fn fetch_saldo(&self) -> Result<crate::SaldoResponse> {
        let req = Req::get(Op::Saldo, self.url(&["saldo"])?);
        let (status, _, bytes) = self
            .execute(req, true)
            .await?
            .into_parts(Op::Saldo, false)
            .await?;
        decode(Op::Saldo, status, &bytes)
    }

    /// Sends `req`, a free operation, and decodes the JSON body of the 2xx answer into `T`.
    pub(crate) async fn call_json<T: DeserializeOwned>(&self, req: Req) -> Result<T> {
        let op = req.op;
        let (status, _, bytes) = self.execute(req, true).await?.into_parts(op, false).await?;
        decode(op, status, &bytes)
    }

    /// The pipeline of a free operation or a sandbox value, on the caller's task (dropping the
    /// call stops it: nothing it does can charge). Error statuses become [`Error::Api`]; with
    /// `buffer` the body of the 2xx answer is read inside the retry loop.
    ///
    /// Spans and events carry the route template ([`Op::route`]), never the path: the path
    /// holds the CAR code or the owner's document (contract, "What the service does": the client
    /// is the data controller of what it looks up).
    pub(crate) async fn execute(&self, req: Req, buffer: bool) -> Result<Reply> {
        crate::runtime::check()?;
        let call = Attempts {
            req,
            buffer,
            reservation: Reservation::free(),
            slot: None,
            left: None,
        };
        let span = call_span(&call.req);
        self.cancellable(call.req.op, self.attempts(call).instrument(span))
            .await
    }

    /// The retry loop of one call: a permit of the limiter before each attempt (the first one
    /// may come with the call), the attempt, the retry policy. A call whose caller `left` (a
    /// purchase task whose caller is gone) sends nothing more: no retry, and no first attempt
    /// either when the caller left before it.
    pub(crate) async fn attempts(&self, call: Attempts) -> Result<Reply> {
        let Attempts {
            req,
            buffer,
            reservation,
            mut slot,
            left,
        } = call;
        let op = req.op;
        let mut retries = Retries {
            op,
            resend_safe: !req.chargeable() || self.inner.retry_charged_consultas,
            tokens_spent: 0,
            rate_limited: 0,
        };
        let span = tracing::Span::current();
        let mut reservation = Some(reservation);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            span.record("attempt", attempt);
            let slot = match slot.take() {
                Some(s) => s,
                None => until_left(op, left.as_ref(), self.slot(&req)).await?,
            };
            if left.as_ref().is_some_and(CancellationToken::is_cancelled) {
                return Err(Error::Cancelled {
                    operation: op.name(),
                });
            }
            let sent = Sent {
                slot,
                attempt,
                buffer,
            };
            let (outcome, error) = match self.attempt(&req, sent, &mut reservation).await {
                Attempt::Done(answer) => {
                    self.inner.budget.refund(retries.tokens_spent.max(1));
                    return Ok(answer);
                }
                Attempt::Failed(outcome, error) => (outcome, error),
            };
            let Some(outcome) = outcome else {
                return Err(error);
            };
            let failed = Failed {
                attempt,
                outcome: &outcome,
                reservation: reservation.as_ref(),
                error: &error,
            };
            let Some(wait) = self.retry_wait(&mut retries, &failed) else {
                return Err(error);
            };
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
            until_left(op, left.as_ref(), async {
                tokio::time::sleep(wait).await;
                Ok(())
            })
            .await?;
        }
    }

    /// The wait before the next attempt, when the policy and the budget allow one (a WARN event
    /// when the retries ran out).
    fn retry_wait(&self, retries: &mut Retries, failed: &Failed<'_>) -> Option<Duration> {
        let policy = &self.inner.retry;
        let Failed {
            attempt,
            outcome,
            reservation,
            error,
        } = *failed;
        let rate_limited = matches!(
            outcome,
            Outcome::Status {
                status: 429,
                retry_after: Some(w),
            } if *w <= policy.max_retry_after()
        );
        let decided = if rate_limited && retries.rate_limited < policy.rate_retries() {
            retries.rate_limited += 1;
            policy.decide(0, outcome, retries.resend_safe)
        } else {
            policy.decide(attempt - retries.rate_limited, outcome, retries.resend_safe)
        };
        let Some(wait) = decided else {
            if policy.decide(0, outcome, retries.resend_safe).is_some() {
                log_exhausted(
                    retries.op,
                    attempt,
                    reservation,
                    error,
                    "tentativas esgotadas",
                );
            }
            return None;
        };
        let cost = policy.cost(outcome);
        if !self.inner.budget.try_acquire(cost) {
            log_exhausted(
                retries.op,
                attempt,
                reservation,
                error,
                "orçamento de novas tentativas esgotado",
            );
            return None;
        }
        retries.tokens_spent += cost;
        Some(wait)
    }

    /// What `req` needs before it goes: one of the client's connections
    /// ([`ClientBuilder::max_in_flight`](crate::ClientBuilder::max_in_flight)), then a place in
    /// the limiter's window (none without a limiter, and none for a sandbox value: the contract
    /// exempts reserved values from every limit, contract "Sandbox"). Cancel-safe.
    ///
    /// `GET /v1/saldo` takes no connection of the bound: the account's prices are read (once,
    /// shared) alongside purchases that hold theirs until the prices are known, so the read
    /// must never wait for one of them.
    pub(crate) async fn slot(&self, req: &Req) -> Result<Slot> {
        let connection = if req.op == Op::Saldo {
            None
        } else {
            let permit = Arc::clone(&self.inner.in_flight)
                .acquire_owned()
                .await
                .map_err(|_| Error::Config("cliente encerrado".into()))?;
            Some(permit)
        };
        let rate = match &self.inner.limiter {
            Some(limiter) if !req.sandbox => Some(limiter.acquire().await),
            _ => None,
        };
        Ok(Slot {
            rate,
            _connection: connection,
        })
    }

    /// One attempt: send, then classify the answer.
    async fn attempt(
        &self,
        req: &Req,
        sent: Sent,
        reservation: &mut Option<Reservation>,
    ) -> Attempt {
        let Sent {
            slot,
            attempt,
            buffer,
        } = sent;
        let started = Instant::now();
        if let Some(r) = reservation.as_mut() {
            // From here until an answer, dropping the call leaves the lookup uncertain.
            r.about_to_send();
        }
        // The connection stays held until this attempt ends (its body read, if buffered).
        let _connection = slot.sent();
        let mut resp = match self.request(req).send().await {
            Ok(resp) => resp,
            Err(e) => return send_failed(req, e, attempt, started, reservation.as_mut()),
        };
        let data = date_of_header(resp.headers());
        if let Some(data) = data {
            self.inner.spend.observe(DatedAnswer {
                data,
                sent: Some(started),
                received: Instant::now(),
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
            r.uncharged();
        }
        if !status.is_success() {
            return self.failed_status(req, resp, reservation.as_ref()).await;
        }
        if !buffer {
            return Attempt::Done(Reply::Streaming(resp));
        }
        let headers = std::mem::take(resp.headers_mut());
        match resp.bytes().await {
            Ok(bytes) => Attempt::Done(Reply::Buffered {
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
        let timeout = self.call.timeout.unwrap_or(if req.recibo {
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
        let scope = resp
            .headers()
            .get(HEADER_LIMITE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = resp.bytes().await.unwrap_or_default();
        let mut api = ApiError::from_body(status, &body, retry_after);
        api.operation = Some(req.op.name());
        api.preco = match reservation.and_then(Reservation::preco) {
            Some(p) => Some(p),
            None if req.chargeable() => self.known_precos().map(|p| req.op.preco(&p)),
            None => None,
        };
        let mut outcome = Some(Outcome::Status {
            status,
            retry_after,
        });
        if status == 429 {
            let e = EscopoLimite::of_429(scope.as_deref(), retry_after, req.chargeable());
            api.limite = Some(e);
            if e == EscopoLimite::Taxa {
                if let Some(limiter) = self.inner.limiter.as_ref().filter(|_| !req.sandbox) {
                    limiter.rate_exceeded(retry_after);
                }
            } else {
                // The daily or monthly limit: not worth waiting for.
                outcome = None;
            }
        }
        Attempt::Failed(outcome, Error::Api(api))
    }
}

/// One call's retry loop, as [`Client::attempts`] runs it.
pub(crate) struct Attempts {
    pub(crate) req: Req,
    /// Read the body of the 2xx answer inside the retry loop.
    pub(crate) buffer: bool,
    /// The spend guard's reservation of a charged lookup (none for the others).
    pub(crate) reservation: Reservation,
    /// The first attempt's connection and place in the limiter, when the caller took them.
    pub(crate) slot: Option<Slot>,
    /// Cancelled when the caller left (a purchase task's).
    pub(crate) left: Option<CancellationToken>,
}

/// What a request needs before it goes ([`Client::slot`]).
#[derive(Debug)]
pub(crate) struct Slot {
    rate: Option<Permit>,
    _connection: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Slot {
    /// The request leaves now: its place in the limiter is kept; the connection is held
    /// until the returned guard goes.
    fn sent(self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        if let Some(r) = self.rate {
            r.sent();
        }
        self._connection
    }
}

/// What one attempt needs besides the request.
struct Sent {
    slot: Slot,
    attempt: u32,
    buffer: bool,
}

/// The retry state of one call.
struct Retries {
    op: Op,
    resend_safe: bool,
    tokens_spent: u32,
    /// Rate 429s absorbed besides the attempts ([`crate::RetryPolicy::with_rate_retries`]).
    rate_limited: u32,
}

/// An attempt that failed, as the retry decision reads it.
#[derive(Clone, Copy)]
struct Failed<'a> {
    attempt: u32,
    outcome: &'a Outcome,
    reservation: Option<&'a Reservation>,
    error: &'a Error,
}

/// The span of one call: operation, method and route template (never the path).
pub(crate) fn call_span(req: &Req) -> tracing::Span {
    tracing::debug_span!(
        "carapi_sdk.request",
        operation = req.op.name(),
        method = %req.method,
        route = req.op.route(),
        attempt = Empty,
        status = Empty,
    )
}

/// `fut`, unless the caller `left` (or cancelled its token) first ([`Error::Cancelled`]).
pub(super) async fn until_left<T>(
    op: Op,
    left: Option<&CancellationToken>,
    fut: impl Future<Output = Result<T>>,
) -> Result<T> {
    match left {
        None => fut.await,
        Some(left) => left
            .run_until_cancelled(fut)
            .await
            .unwrap_or(Err(Error::Cancelled {
                operation: op.name(),
            })),
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
        error = %crate::error_chain(&e),
        sent,
        elapsed_ms = elapsed_ms(started),
        attempt,
        "falha de transporte"
    );
    if !sent {
        if let Some(r) = reservation {
            r.uncharged();
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

/// The retries of a call ran out (attempts or budget): a WARN event, with the price when the
/// operation is a charged lookup.
fn log_exhausted(
    op: Op,
    attempts: u32,
    reservation: Option<&Reservation>,
    error: &Error,
    reason: &str,
) {
    tracing::warn!(
        target: "carapi_sdk::http",
        operation = op.name(),
        route = op.route(),
        attempts,
        preco = reservation
            .and_then(Reservation::preco)
            .map(|p| tracing::field::display(crate::spend::brl(p))),
        error = %crate::error_chain(error),
        "{reason}"
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
