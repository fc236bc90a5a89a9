//! Running a batch: lookups [`super::CONCORRENCIA`] at a time through one SDK client (its rate
//! limiter keeps the contract's 10 requests/s; `--max-custo` is the SDK's `max_spend` guard),
//! answers written in input order as they arrive, a progress bar with ETA on stderr.
//!
//! Stops (in-flight lookups finish and are written) on 402, 401, 429, the `--max-custo` cap,
//! [`super::MAX_ERROS_SEGUIDOS`] network/server errors in a row, or Ctrl-C (a second Ctrl-C quits
//! at once).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use carapi_sdk::{Client, Error as SdkError};
use futures::StreamExt;
use rust_decimal::Decimal;

use super::saida::{Escritor, Resultado, StatusLote};
use super::{CONCORRENCIA, MAX_ERROS_SEGUIDOS, Resumo, TipoLote, diario};
use crate::error::{CliError, Result};

/// Why a batch stopped before its end.
#[derive(Debug)]
pub enum Parada {
    /// 401, 402 or 429: the API's error.
    Api(CliError),
    /// The `--max-custo` cap.
    MaxCusto(String),
    /// Too many network/server errors in a row.
    Rede,
}

/// What a run needs besides where it writes.
#[derive(Debug)]
pub struct Execucao {
    /// The client (prices known, spend cap set).
    pub client: Client,
    /// The journal of keys in flight (with `--saida`).
    pub diario: Option<Arc<diario::Diario>>,
    /// Lookup kind.
    pub tipo: TipoLote,
    /// Price of one charged lookup, BRL.
    pub preco: Decimal,
    /// Keys to look up, in input order.
    pub pendentes: Vec<String>,
    /// Where receipt PDFs go.
    pub pdf_dir: PathBuf,
}

/// How a run ended.
#[derive(Debug, Default)]
pub struct Fim {
    /// Why it stopped early, if it did.
    pub parada: Option<Parada>,
    /// True after Ctrl-C.
    pub interrompido: bool,
}

struct Resposta {
    resposta: Option<serde_json::Value>,
    arquivo: Option<String>,
    sandbox: bool,
}

async fn consultar(
    client: &Client,
    tipo: TipoLote,
    chave: &str,
    pdf_dir: &Path,
) -> Result<Resposta, SdkError> {
    let json = |v: serde_json::Result<serde_json::Value>| v.ok();
    let (sandbox, resposta) = match tipo {
        TipoLote::Car => {
            let r = client.car(chave).await?;
            (r.sandbox, json(serde_json::to_value(&r)))
        }
        TipoLote::Completo => {
            let r = client.car_completo(chave).await?;
            (r.sandbox, json(serde_json::to_value(&r)))
        }
        TipoLote::Proprietario => {
            let r = client.proprietario(chave).await?;
            (r.sandbox, json(serde_json::to_value(&r)))
        }
        TipoLote::Recibo => {
            let info = client
                .recibo_to_file(chave, pdf_dir.join(format!("{chave}.pdf")))
                .await?;
            return Ok(Resposta {
                sandbox: tipo.is_sandbox(chave),
                resposta: None,
                arquivo: Some(info.path.display().to_string()),
            });
        }
    };
    Ok(Resposta {
        sandbox,
        resposta,
        arquivo: None,
    })
}

/// Looks up `ex.pendentes`, writing each answer to `escritor` and counting into `resumo`.
///
/// # Errors
/// Write errors of the output (a closed stdout is exit 0).
pub async fn rodar(
    ex: Execucao,
    escritor: &mut Escritor<'_>,
    resumo: &mut Resumo,
    pb: indicatif::ProgressBar,
) -> Result<Fim> {
    pb.set_length(ex.pendentes.len() as u64);
    let parar = Arc::new(AtomicBool::new(false));
    let (client, diario, tipo, pdf_dir) = (&ex.client, &ex.diario, ex.tipo, &ex.pdf_dir);
    let mut stream = futures::stream::iter(ex.pendentes)
        .map(|chave| {
            let parar = parar.clone();
            async move {
                if parar.load(Ordering::SeqCst) {
                    return (chave, None);
                }
                if let Some(d) = diario
                    && d.enviando(&chave).is_err()
                {
                    // Not journalled, not sent: a crash could otherwise charge it twice.
                    parar.store(true, Ordering::SeqCst);
                    return (chave, None);
                }
                let r = consultar(client, tipo, &chave, pdf_dir).await;
                (chave, Some(r))
            }
        })
        .buffered(CONCORRENCIA);
    let mut estado = Estado {
        fim: Fim::default(),
        seguidos: 0,
        preco: ex.preco,
        parar: parar.clone(),
    };
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let item = tokio::select! {
            item = stream.next() => item,
            _ = &mut ctrl_c, if !estado.fim.interrompido => {
                estado.fim.interrompido = true;
                parar.store(true, Ordering::SeqCst);
                limpar_eco_do_ctrl_c();
                pb.println("interrompendo: aguardando as consultas em andamento (Ctrl-C de novo sai já)");
                let barra = pb.clone();
                tokio::spawn(async move {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        // Leaving at once: the bar is cleared first, not left on the screen.
                        barra.finish_and_clear();
                        limpar_eco_do_ctrl_c();
                        std::process::exit(130);
                    }
                });
                continue;
            }
        };
        let Some((chave, r)) = item else { break };
        if let Some(registro) = estado.registrar(chave, r, resumo) {
            escritor.escrever(&registro)?;
            pb.inc(1);
        }
    }
    // The bar's last frame and the summary show the same count: the answers written.
    pb.finish_and_clear();
    Ok(estado.fim)
}

/// After a Ctrl-C under a bar: the terminal echoed `^C` after the bar, which indicatif leaves
/// at the right edge, so the echo went to a new line and indicatif's own clearing would miss the
/// bar. Clears the echo's line and the bar's line above it (stderr a terminal only).
fn limpar_eco_do_ctrl_c() {
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[2K\x1b[1A\r\x1b[2K");
    }
}

struct Estado {
    fim: Fim,
    seguidos: usize,
    preco: Decimal,
    parar: Arc<AtomicBool>,
}

impl Estado {
    /// Counts one outcome; the record to write, if any.
    fn registrar(
        &mut self,
        chave: String,
        r: Option<Result<Resposta, SdkError>>,
        resumo: &mut Resumo,
    ) -> Option<Resultado> {
        let Some(r) = r else {
            resumo.nao_enviados += 1;
            return None;
        };
        let e = match r {
            Ok(resp) => {
                self.seguidos = 0;
                resumo.encontrados += 1;
                let cobrado = !resp.sandbox;
                if cobrado {
                    resumo.cobrado += self.preco;
                }
                return Some(Resultado {
                    chave,
                    status: StatusLote::Encontrado,
                    http_status: Some(200),
                    codigo_erro: None,
                    mensagem: None,
                    cobrado,
                    arquivo: resp.arquivo,
                    resposta: resp.resposta,
                });
            }
            Err(e) => e,
        };
        match e.status() {
            Some(404) => {
                self.seguidos = 0;
                resumo.nao_encontrados += 1;
                Some(erro(chave, StatusLote::NaoEncontrado, &e))
            }
            Some(401 | 402 | 429) => {
                self.parar(resumo, || Parada::Api(e.into()));
                None
            }
            _ if matches!(e, SdkError::SpendLimit { .. }) => {
                self.parar(resumo, || Parada::MaxCusto(e.to_string()));
                None
            }
            _ => {
                resumo.erros += 1;
                self.seguidos += 1;
                if self.seguidos >= MAX_ERROS_SEGUIDOS && self.fim.parada.is_none() {
                    self.parar.store(true, Ordering::SeqCst);
                    self.fim.parada = Some(Parada::Rede);
                }
                Some(erro(chave, StatusLote::Erro, &e))
            }
        }
    }

    fn parar(&mut self, resumo: &mut Resumo, parada: impl FnOnce() -> Parada) {
        self.parar.store(true, Ordering::SeqCst);
        resumo.nao_enviados += 1;
        if self.fim.parada.is_none() {
            self.fim.parada = Some(parada());
        }
    }
}

fn erro(chave: String, status: StatusLote, e: &SdkError) -> Resultado {
    let (codigo, mensagem) = match e.api() {
        Some(a) => (Some(a.code.as_str().to_owned()), a.message.clone()),
        None => (None, crate::error::mensagem(e)),
    };
    Resultado {
        chave,
        status,
        http_status: e.status(),
        codigo_erro: codigo,
        mensagem: Some(mensagem),
        cobrado: false,
        arquivo: None,
        resposta: None,
    }
}
