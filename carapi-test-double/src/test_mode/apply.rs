//! The middleware that applies the registered faults ([`super::faults`]) to authenticated
//! `/v1` requests. It runs after authentication (the account is known) and before the handler;
//! only a test-mode server has it ([`super::assembly`]).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::{StreamExt, stream};

use super::TestMode;
use super::connection::ConnectionHandle;
use super::faults::{Fault, FaultLimit};
use carapi_service::api_error::{ApiError, Limite};
use carapi_service::http::routes;
use carapi_service::store::ContaId;

/// How long a cut body waits, after its first bytes, before the reset: enough for hyper to
/// flush the status, the headers and those bytes to the socket.
const WAIT_BEFORE_RESET: Duration = Duration::from_millis(50);

/// Applies the first matching fault rule, if any, to `req` (see [`Fault`] for what each does).
pub(crate) async fn apply(State(test): State<Arc<TestMode>>, req: Request, next: Next) -> Response {
    let Some(conta) = req.extensions().get::<ContaId>().copied() else {
        return next.run(req).await;
    };
    let pattern = routes::route(req.uri().path()).map_or("", routes::Route::pattern);
    let Some(failure) = test.faults.take(pattern, req.method(), conta) else {
        return next.run(req).await;
    };
    tracing::info!(falha = ?failure, route = pattern, %conta, "falha injetada pelo modo de teste");
    let connection = req.extensions().get::<ConnectionHandle>().cloned();
    match failure {
        Fault::Error {
            codigo,
            retry_after,
            limite,
        } => error_response(codigo, retry_after, limite).into_response(),
        Fault::Delay { ms } => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            next.run(req).await
        }
        Fault::ResetConnection => reset_db(connection).await,
        Fault::LoseReplyAfterCharge => {
            let response = next.run(req).await;
            drop(response);
            reset_db(connection).await
        }
        Fault::CutBody { bytes } => reset(next.run(req).await, bytes, connection).await,
    }
}

/// The contract error `codigo` with its status, `Retry-After` and, for a 429, `Carapi-Limite`.
fn error_response(
    codigo: carapi_sdk::ErrorCode,
    retry_after: Option<u64>,
    limite: Option<FaultLimit>,
) -> ApiError {
    let message = format!("Falha injetada pelo modo de teste: {}.", codigo.as_str());
    if codigo == carapi_sdk::ErrorCode::LimiteExcedido {
        let limite = match limite.unwrap_or(FaultLimit::Rate) {
            FaultLimit::Rate => Limite::Rate,
            FaultLimit::Diario => Limite::Diario,
            FaultLimit::Mensal => Limite::Mensal,
        };
        return ApiError::limit_exceeded(limite, retry_after.unwrap_or(1), message);
    }
    let e = ApiError::new(codigo, message);
    match retry_after {
        Some(s) => e.retry_after(s),
        None => e,
    }
}

/// Resets the connection and never answers (the connection task drops this future with it).
/// Without a connection (a request served in-process, not over a socket) it answers 500.
async fn reset_db(connection: Option<ConnectionHandle>) -> Response {
    match connection {
        Some(c) => {
            c.reset_db();
            std::future::pending().await
        }
        None => ApiError::internal("sem conexão para resetar (requisição fora de um socket)")
            .into_response(),
    }
}

/// `resposta` with its status and headers and only the first `bytes` bytes of its body, after
/// which the connection is reset.
async fn reset(response: Response, bytes: u64, connection: Option<ConnectionHandle>) -> Response {
    let (mut parts, body) = response.into_parts();
    let completo = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(_) => return reset_db(connection).await,
    };
    let n = usize::try_from(bytes)
        .unwrap_or(usize::MAX)
        .min(completo.len());
    let start: Bytes = completo.slice(..n);
    let cut = stream::once(async move { Ok::<Bytes, std::io::Error>(start) }).chain(stream::once(
        async move {
            // Pending for a moment first, so hyper writes the headers and the first bytes out
            // before the connection goes.
            tokio::time::sleep(WAIT_BEFORE_RESET).await;
            if let Some(c) = connection {
                c.reset_db();
            }
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "corpo cortado pelo modo de teste",
            ))
        },
    ));
    // The whole length is announced, as for the real body: the client sees a short body.
    parts.headers.insert(
        axum::http::header::CONTENT_LENGTH,
        axum::http::HeaderValue::from(completo.len()),
    );
    Response::from_parts(parts, Body::from_stream(cut))
}
