//! The accept loop: HTTP/1.1 over hyper with the edge's time-outs and a bound on open
//! connections ([`super::borda::Borda`]).
//!
//! - Each connection holds a permit of a semaphore of [`Borda::conexoes_maximas`]; with none
//!   left the loop stops accepting (new clients wait in the kernel's backlog) instead of
//!   running out of file descriptors.
//! - hyper closes a connection that has not sent a request's headers within
//!   [`Borda::tempo_cabecalho`], counted from when it starts waiting: a silent or idle
//!   keep-alive connection frees its permit after that time.
//! - A failed `accept` (e.g. `EMFILE`) is logged and retried after a short pause, never in a
//!   busy loop.
//! - On cancellation the loop stops accepting and waits (at most [`ESPERA_ENCERRAMENTO`]) for
//!   in-flight requests.
//!
//! Only HTTP/1.1: every client of the contract speaks it, and hyper's automatic HTTP/2
//! detection would wait for a silent client's first bytes without a time-out.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use axum::http::Request;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use super::borda::Borda;

/// Longest wait for in-flight requests on shutdown.
pub const ESPERA_ENCERRAMENTO: Duration = Duration::from_secs(10);

/// Pause after a failed `accept`.
const PAUSA_ACCEPT: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` until `parar` is cancelled.
pub async fn servir(listener: TcpListener, app: Router, borda: Borda, parar: CancellationToken) {
    let permissoes = Arc::new(Semaphore::new(borda.conexoes_maximas.max(1)));
    let mut h1 = http1::Builder::new();
    h1.timer(TokioTimer::new())
        .header_read_timeout(borda.tempo_cabecalho)
        .keep_alive(true);
    let graceful = GracefulShutdown::new();
    loop {
        let permissao = tokio::select! {
            p = permissoes.clone().acquire_owned() => p.expect("the semaphore is never closed"),
            () = parar.cancelled() => break,
        };
        let (tcp, endereco) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(erro = %e, "accept falhou; nova tentativa em breve");
                    tokio::time::sleep(PAUSA_ACCEPT).await;
                    continue;
                }
            },
            () = parar.cancelled() => break,
        };
        let _ = tcp.set_nodelay(true);
        // The client address goes into each request (the per-address limit of
        // unauthenticated requests reads it).
        let servico = app.clone().map_request(move |mut req: Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(endereco));
            req
        });
        let conexao = h1.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(servico));
        let conexao = graceful.watch(conexao);
        tokio::spawn(async move {
            if let Err(e) = conexao.await {
                tracing::debug!(erro = %e, %endereco, "conexão encerrada com erro");
            }
            drop(permissao);
        });
    }
    drop(listener);
    if tokio::time::timeout(ESPERA_ENCERRAMENTO, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requisições ainda em curso após a espera de encerramento");
    }
}
