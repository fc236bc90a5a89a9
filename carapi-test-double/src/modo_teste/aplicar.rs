//! The middleware that applies the registered faults ([`super::falhas`]) to authenticated
//! `/v1` requests. It runs after authentication (the account is known) and before the handler;
//! only a test-mode server has it ([`super::montagem`]).

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::{StreamExt, stream};

use super::ModoTeste;
use super::conexao::Conexao;
use super::falhas::{Falha, LimiteFalha};
use carapi_service::http::error::{ApiError, Limite};
use carapi_service::http::rotas;
use carapi_service::store::ContaId;

/// How long a cut body waits, after its first bytes, before the reset: enough for hyper to
/// flush the status, the headers and those bytes to the socket.
const ESPERA_ANTES_DO_CORTE: Duration = Duration::from_millis(50);

/// Applies the first matching fault rule, if any, to `req` (see [`Falha`] for what each does).
pub async fn aplicar(State(teste): State<Arc<ModoTeste>>, req: Request, next: Next) -> Response {
    let Some(conta) = req.extensions().get::<ContaId>().copied() else {
        return next.run(req).await;
    };
    let padrao = rotas::rota(req.uri().path()).map_or("", |r| r.padrao);
    let Some(falha) = teste.falhas.tomar(padrao, req.method(), conta) else {
        return next.run(req).await;
    };
    tracing::info!(?falha, rota = padrao, %conta, "falha injetada pelo modo de teste");
    let conexao = req.extensions().get::<Conexao>().cloned();
    match falha {
        Falha::Erro {
            codigo,
            retry_after,
            limite,
        } => erro(codigo, retry_after, limite).into_response(),
        Falha::Atraso { ms } => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            next.run(req).await
        }
        Falha::ResetarConexao => resetar(conexao).await,
        Falha::PerderRespostaAposCobrar => {
            let resposta = next.run(req).await;
            drop(resposta);
            resetar(conexao).await
        }
        Falha::CortarCorpo { bytes } => cortar(next.run(req).await, bytes, conexao).await,
    }
}

/// The contract error `codigo` with its status, `Retry-After` and, for a 429, `Carapi-Limite`.
fn erro(
    codigo: carapi_sdk::ErrorCode,
    retry_after: Option<u64>,
    limite: Option<LimiteFalha>,
) -> ApiError {
    let mensagem = format!("Falha injetada pelo modo de teste: {}.", codigo.as_str());
    if codigo == carapi_sdk::ErrorCode::LimiteExcedido {
        let limite = match limite.unwrap_or(LimiteFalha::Taxa) {
            LimiteFalha::Taxa => Limite::Taxa,
            LimiteFalha::Diario => Limite::Diario,
            LimiteFalha::Mensal => Limite::Mensal,
        };
        return ApiError::limite_excedido(limite, retry_after.unwrap_or(1), mensagem);
    }
    let e = ApiError::new(codigo, mensagem);
    match retry_after {
        Some(s) => e.retry_after(s),
        None => e,
    }
}

/// Resets the connection and never answers (the connection task drops this future with it).
/// Without a connection (a request served in-process, not over a socket) it answers 500.
async fn resetar(conexao: Option<Conexao>) -> Response {
    match conexao {
        Some(c) => {
            c.resetar();
            std::future::pending().await
        }
        None => ApiError::interno("sem conexão para resetar (requisição fora de um socket)")
            .into_response(),
    }
}

/// `resposta` with its status and headers and only the first `bytes` bytes of its body, after
/// which the connection is reset.
async fn cortar(resposta: Response, bytes: u64, conexao: Option<Conexao>) -> Response {
    let (mut partes, corpo) = resposta.into_parts();
    let completo = match axum::body::to_bytes(corpo, usize::MAX).await {
        Ok(b) => b,
        Err(_) => return resetar(conexao).await,
    };
    let n = usize::try_from(bytes)
        .unwrap_or(usize::MAX)
        .min(completo.len());
    let inicio: Bytes = completo.slice(..n);
    let corte = stream::once(async move { Ok::<Bytes, std::io::Error>(inicio) }).chain(
        stream::once(async move {
            // Pending for a moment first, so hyper writes the headers and the first bytes out
            // before the connection goes.
            tokio::time::sleep(ESPERA_ANTES_DO_CORTE).await;
            if let Some(c) = conexao {
                c.resetar();
            }
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "corpo cortado pelo modo de teste",
            ))
        }),
    );
    // The whole length is announced, as for the real body: the client sees a short body.
    partes.headers.insert(
        axum::http::header::CONTENT_LENGTH,
        axum::http::HeaderValue::from(completo.len()),
    );
    Response::from_parts(partes, Body::from_stream(corte))
}
