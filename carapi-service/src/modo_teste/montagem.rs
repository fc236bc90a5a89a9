//! How a test-mode server is assembled: the production server of [`crate::startup`] with the
//! test clock as its clock, the fault layer inside authentication and the `/_teste` routes
//! ([`crate::http::Acrescimos`]), sockets a fault can reset ([`Cortaveis`]) and a job loop
//! that follows the test clock ([`tarefas`]).

use std::sync::Arc;
use std::time::Duration;

use axum::middleware;
use tokio_util::sync::CancellationToken;

use super::conexao::Cortaveis;
use super::{ConfigTeste, ModoTeste, aplicar, rotas};
use crate::config::Config;
use crate::erro::ServerError;
use crate::http::Acrescimos;
use crate::startup::{self, RunningServer};
use crate::state::AppState;

/// Starts a test-mode server for `config` (as [`crate::spawn`] does a normal one) and returns
/// it with its test mode.
///
/// # Errors
/// [`ServerError::Store`] when the database cannot be opened; [`ServerError::Io`] when the
/// address cannot be bound.
pub async fn iniciar(
    config: Config,
    teste: &ConfigTeste,
) -> Result<(RunningServer, Arc<ModoTeste>), ServerError> {
    if let Some(t) = &teste.token
        && t.chars().count() < super::TOKEN_MINIMO
    {
        return Err(ServerError::Invalido(format!(
            "o token do modo de teste precisa de ao menos {} caracteres",
            super::TOKEN_MINIMO
        )));
    }
    let (state, listener) = startup::preparar(config).await?;
    let modo = Arc::new(ModoTeste::new(teste));
    let state = state.com_relogio(modo.relogio.relogio());
    let _ = modo.endereco.set(listener.local_addr()?);
    let camada = modo.clone();
    let acrescimos = Acrescimos {
        v1: Some(Box::new(move |v1| {
            v1.route_layer(middleware::from_fn_with_state(camada, aplicar::aplicar))
        })),
        rotas: Some((rotas::router(state.clone(), modo.clone()), rotas::ROTAS)),
    };
    let jobs = modo.clone();
    let servidor = startup::iniciar(state, listener, acrescimos, Cortaveis, move |st, parar| {
        tarefas(jobs, st, parar)
    })?;
    Ok((servidor, modo))
}

/// The job loop of a test-mode server: every second, the reconciliation pass that the test
/// clock made due ([`ModoTeste::rodar_tarefas`]) and the trim of the rate limiter, until
/// `parar` fires.
pub async fn tarefas(modo: Arc<ModoTeste>, st: AppState, parar: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = parar.cancelled() => break,
            _ = tick.tick() => {
                if let Err(e) = modo.rodar_tarefas(&st).await {
                    tracing::error!(erro = %e, "reconciliação falhou");
                }
                if let Some(l) = &st.limitador {
                    l.limpar();
                }
                if let Some(l) = &st.limitador_ip {
                    l.limpar();
                }
            }
        }
    }
}
