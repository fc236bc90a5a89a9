//! Batches (`carapi lote`): read keys from a file, confirm the cost, look them up at the SDK's
//! rate limit, write each answer as it arrives, resume without paying twice.
//!
//! 1. The input is parsed by [`entrada`]: one key per line or the first CSV column, normalised,
//!    duplicates dropped, invalid keys reported (stderr) and never sent.
//! 2. With `--saida FILE`, keys already answered in `FILE` (found or not found, see [`saida`]) are
//!    skipped. For `recibo`, PDFs are saved **in the directory of `--saida`** (the current
//!    directory without it) as `<codigoCar>.pdf`; a key whose PDF is already there is recorded
//!    as found without a request, so a crash between saving the PDF and writing its line never
//!    costs a second receipt. Keys a killed run had sent without writing their answer are
//!    checked against the free history (see [`diario`]): a charged one is not bought again.
//! 3. Before spending: how many lookups, the maximum cost at the account's effective prices
//!    (`saldo().precos`; sandbox keys are free), the balance, and `--max-custo`; then a prompt
//!    (`--yes` skips it; with no terminal and no `--yes` the batch is refused, nothing sent).
//! 4. Lookups run [`CONCORRENCIA`] at a time through one SDK client (its rate limiter keeps the
//!    contract's 10 requests/s; `--max-custo` is the SDK's `max_spend` guard), with a progress
//!    bar and ETA on stderr. Each answer is appended and flushed at once.
//! 5. The batch stops (in-flight lookups finish and are written) on 402 (says how to top up),
//!    401, 429 (daily/monthly limit), the `--max-custo` cap, 10 network/server errors in a row, or
//!    Ctrl-C (exit 130; a second Ctrl-C quits at once). Rerunning the same command resumes.
//! 6. Summary on stderr: found, not found, invalid, errors, not sent, total charged.
//!
//! Without `--saida`, results go to stdout (JSON Lines, or CSV with `-o csv`) and nothing can be
//! resumed.

pub mod diario;
pub mod entrada;
pub mod saida;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use carapi_sdk::domain::brl;
use carapi_sdk::{
    Client, CodigoCar, CpfCnpj, EndpointConsulta, Error as SdkError, HistoricoParams, Precos,
    StatusConsulta,
};
use futures::StreamExt;
use rust_decimal::Decimal;

use crate::context::Context;
use crate::error::{CliError, Kind, Result};
use entrada::TipoChave;
use saida::{Escritor, FormatoSaida, Resultado, StatusLote};

/// Lookups in flight at once (the SDK's rate limiter spaces them).
pub const CONCORRENCIA: usize = 4;

/// Network/server errors in a row that stop a batch.
pub const MAX_ERROS_SEGUIDOS: usize = 10;

/// Text appended to `carapi lote --help`.
pub const AJUDA: &str = "\
Saída (--saida): JSON Lines, uma linha por chave ({\"chave\",\"status\",\"httpStatus\",\"cobrado\",\"resposta\",...}),
ou CSV se o nome terminar em .csv (chave,status,http_status,codigo_erro,mensagem,cobrado,arquivo,resposta).
status: encontrado | nao_encontrado (respostas finais, puladas ao retomar) | erro (tentado de novo ao retomar).
Rodar o mesmo comando com o mesmo --saida retoma o lote sem pagar de novo pelo que já foi respondido
(nem pelo que foi cobrado numa execução interrompida: o diário .<saida>.enviando e o histórico dizem quais).
Recibos: os PDFs são gravados no diretório do --saida (ou no atual), como <codigoCar>.pdf;
um PDF já existente não é baixado de novo.";

/// Which lookup a batch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TipoLote {
    /// dados básicos do CAR (GET /v1/car/{codigo})
    Car,
    /// dados completos, com proprietários (GET /v1/car/{codigo}/completo)
    Completo,
    /// CARs de um CPF/CNPJ (GET /v1/proprietario/{cpfCnpj})
    Proprietario,
    /// recibo de inscrição em PDF (GET /v1/car/{codigo}/recibo)
    Recibo,
}

impl TipoLote {
    fn chave(self) -> TipoChave {
        if self == TipoLote::Proprietario {
            TipoChave::Documento
        } else {
            TipoChave::Car
        }
    }

    /// The account's price for this lookup.
    pub fn preco(self, p: &Precos) -> Decimal {
        match self {
            TipoLote::Car => p.car_basico,
            TipoLote::Completo => p.car_completo,
            TipoLote::Proprietario => p.proprietario,
            TipoLote::Recibo => p.recibo,
        }
    }

    /// The history's name of this lookup's endpoint.
    pub fn endpoint(self) -> EndpointConsulta {
        match self {
            TipoLote::Car => EndpointConsulta::CarBasico,
            TipoLote::Completo => EndpointConsulta::CarCompleto,
            TipoLote::Proprietario => EndpointConsulta::Proprietario,
            TipoLote::Recibo => EndpointConsulta::Recibo,
        }
    }

    fn is_sandbox(self, chave: &str) -> bool {
        match self.chave() {
            TipoChave::Car => CodigoCar::parse(chave).is_ok_and(|c| c.is_sandbox()),
            TipoChave::Documento => CpfCnpj::parse(chave).is_ok_and(|c| c.is_sandbox()),
        }
    }
}

/// The options of a batch.
#[derive(Debug, Clone)]
pub struct Opcoes {
    /// Lookup kind.
    pub tipo: TipoLote,
    /// Input file.
    pub arquivo: PathBuf,
    /// Output file (resumable), or stdout.
    pub saida: Option<PathBuf>,
    /// Skip the confirmation.
    pub yes: bool,
    /// Spend cap, BRL.
    pub max_custo: Option<Decimal>,
    /// Without `--saida`: CSV on stdout instead of JSON Lines.
    pub csv_no_stdout: bool,
}

/// Counters of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resumo {
    /// HTTP 200 answers.
    pub encontrados: usize,
    /// 404 answers.
    pub nao_encontrados: usize,
    /// Invalid input keys.
    pub invalidos: usize,
    /// Keys whose lookup failed (5xx, network): retried by a rerun.
    pub erros: usize,
    /// Keys not sent because the batch stopped.
    pub nao_enviados: usize,
    /// Keys skipped as already answered in `--saida`.
    pub ja_respondidos: usize,
    /// Total charged by this run, BRL.
    pub cobrado: Decimal,
}

#[derive(Debug)]
enum Parada {
    Api(CliError),
    MaxCusto(String),
    Rede,
}

/// Runs a batch (see the module documentation).
///
/// # Errors
/// Unreadable input (1); refused confirmation (1) or no terminal without `--yes` (2); stopped on
/// 402 (5), 401 (3), 429 (6), `--max-custo` (1), network (7); keys left with errors (7); Ctrl-C (130).
pub async fn executar(ctx: &mut Context, op: Opcoes) -> Result<()> {
    let texto = std::fs::read(&op.arquivo).map_err(|e| CliError::io_at(&op.arquivo, e))?;
    let texto = String::from_utf8_lossy(&texto);
    let ent = entrada::ler(&texto, op.tipo.chave());
    for inv in ent.invalidas.iter().take(20) {
        ctx.shell.warn(format!(
            "linha {}: chave inválida {:?} ({}); não será enviada",
            inv.linha, inv.valor, inv.motivo
        ));
    }
    if ent.invalidas.len() > 20 {
        ctx.shell.warn(format!(
            "... e mais {} chaves inválidas",
            ent.invalidas.len() - 20
        ));
    }
    let mut resumo = Resumo {
        invalidos: ent.invalidas.len(),
        ..Resumo::default()
    };

    let formato_saida = match &op.saida {
        Some(p) => FormatoSaida::por_extensao(p),
        None if op.csv_no_stdout => FormatoSaida::Csv,
        None => FormatoSaida::Jsonl,
    };
    let mut respondidas = match &op.saida {
        Some(p) => saida::ler_respondidas(p, formato_saida).map_err(|e| CliError::io_at(p, e))?,
        None => HashSet::new(),
    };
    let pdf_dir: PathBuf = match &op.saida {
        Some(p) => p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        None => PathBuf::from("."),
    };
    let mut pdfs_existentes = vec![];
    if op.tipo == TipoLote::Recibo {
        for k in &ent.chaves {
            if !respondidas.contains(k) && pdf_dir.join(format!("{k}.pdf")).is_file() {
                pdfs_existentes.push(k.clone());
            }
        }
        respondidas.extend(pdfs_existentes.iter().cloned());
    }
    // Keys sent by a run that was killed before their answer was written: paid or not?
    let base = ctx.builder().await?;
    let diario_path = op.saida.as_deref().map(diario::caminho);
    let mut recuperadas = vec![];
    if let Some(dp) = &diario_path {
        let incertas: Vec<_> = diario::ler(dp)
            .map_err(|e| CliError::io_at(dp, e))?
            .into_iter()
            .filter(|(k, _)| !respondidas.contains(k) && ent.chaves.contains(k))
            .collect();
        if !incertas.is_empty() {
            let c = base.clone().build()?;
            for (k, desde) in incertas {
                let params = HistoricoParams {
                    busca: Some(k.clone()),
                    endpoint: Some(op.tipo.endpoint()),
                    status: Some(StatusConsulta::Sucesso),
                    size: Some(100),
                    page: None,
                };
                let h = c.historico(&params).await?;
                let limite = desde - chrono::Duration::seconds(60);
                if h.itens.iter().any(|i| {
                    i.cobrado && i.chave_consulta.as_deref() == Some(k.as_str()) && i.data >= limite
                }) {
                    recuperadas.push(k);
                }
            }
            respondidas.extend(recuperadas.iter().cloned());
        }
    }
    let pendentes: Vec<String> = ent
        .chaves
        .iter()
        .filter(|k| !respondidas.contains(*k))
        .cloned()
        .collect();
    resumo.ja_respondidos =
        ent.chaves.len() - pendentes.len() - pdfs_existentes.len() - recuperadas.len();
    if ent.duplicadas > 0 {
        ctx.shell.note(format!(
            "{} chave(s) duplicada(s) ignorada(s).",
            ent.duplicadas
        ));
    }
    if resumo.ja_respondidos > 0 {
        ctx.shell.note(format!(
            "{} chave(s) já respondida(s) em --saida: retomando sem consultá-las de novo.",
            resumo.ja_respondidos
        ));
    }

    if !recuperadas.is_empty() {
        ctx.shell.warn(format!(
            "{} chave(s) foram cobradas numa execução interrompida sem que a resposta fosse gravada; \
             não serão consultadas de novo (status encontrado, sem dados; consulte-as à parte se precisar)",
            recuperadas.len()
        ));
    }

    // Cost and confirmation: nothing is sent (nor any file created) before this.
    let (client, precos) = if pendentes.is_empty() {
        (None, None)
    } else {
        let s = base.clone().build()?.saldo().await?;
        let preco = op.tipo.preco(&s.precos);
        let cobraveis = pendentes.iter().filter(|k| !op.tipo.is_sandbox(k)).count();
        let maximo = preco * Decimal::from(cobraveis);
        let mut plano = format!(
            "Lote: {} consulta(s) {:?} a {} cada; custo máximo {}; saldo {}",
            pendentes.len(),
            op.tipo,
            brl::format(preco),
            brl::format(maximo),
            brl::format(s.saldo_reais)
        )
        .replace("Car", "car")
        .replace("Completo", "completo")
        .replace("Proprietario", "proprietario")
        .replace("Recibo", "recibo");
        if let Some(m) = op.max_custo {
            plano.push_str(&format!("; limite --max-custo {}", brl::format(m)));
        }
        ctx.shell.note(format!("{plano}."));
        if maximo > s.saldo_reais && !preco.is_zero() {
            let cabe = (s.saldo_reais / preco).floor();
            ctx.shell.warn(format!(
                "o saldo cobre cerca de {cabe} consulta(s); o lote para quando o saldo acabar (recarga: carapi recarga criar 500)"
            ));
        }
        confirmar(ctx, op.yes)?;
        let mut b = base.precos(s.precos);
        if let Some(m) = op.max_custo {
            b = b.max_spend(m);
        }
        (Some(b.build()?), Some(s.precos))
    };

    // Output (the progress bar first: the writer may borrow stdout from the shell).
    let pb = ctx.shell.progress(0, "");
    let (escritor_w, novo): (Box<dyn std::io::Write + '_>, bool) = match &op.saida {
        Some(p) => {
            let (f, novo, _) = saida::abrir(p, formato_saida).map_err(|e| CliError::io_at(p, e))?;
            (Box::new(f), novo)
        }
        None => (Box::new(ctx.shell.out()), true),
    };
    let mut escritor = Escritor::new(escritor_w, formato_saida, novo)?;
    for k in &pdfs_existentes {
        let arquivo = pdf_dir.join(format!("{k}.pdf")).display().to_string();
        escritor.escrever(&Resultado {
            chave: k.clone(),
            status: StatusLote::Encontrado,
            http_status: None,
            codigo_erro: None,
            mensagem: Some("PDF já existia; não consultado de novo".into()),
            cobrado: false,
            arquivo: Some(arquivo),
            resposta: None,
        })?;
        resumo.encontrados += 1;
    }

    for k in &recuperadas {
        escritor.escrever(&Resultado {
            chave: k.clone(),
            status: StatusLote::Encontrado,
            http_status: Some(200),
            codigo_erro: None,
            mensagem: Some("cobrada numa execução interrompida; resposta não gravada".into()),
            cobrado: true,
            arquivo: None,
            resposta: None,
        })?;
        resumo.encontrados += 1;
    }

    let diario = match &diario_path {
        Some(dp) if client.is_some() => Some(Arc::new(
            diario::Diario::abrir(dp.clone()).map_err(|e| CliError::io_at(dp, e))?,
        )),
        _ => None,
    };
    let (parada, interrompido) = match (client, precos) {
        (Some(client), Some(precos)) => {
            rodar(
                &client,
                diario.clone(),
                op.tipo,
                op.tipo.preco(&precos),
                pendentes,
                &pdf_dir,
                &mut escritor,
                &mut resumo,
                pb,
            )
            .await?
        }
        _ => (None, false),
    };
    drop(escritor);
    if let Some(d) = diario.and_then(Arc::into_inner) {
        d.concluir();
    }

    let mut linha = format!(
        "Resumo: {} encontrado(s), {} não encontrado(s), {} inválido(s), {} erro(s)",
        resumo.encontrados, resumo.nao_encontrados, resumo.invalidos, resumo.erros
    );
    if resumo.nao_enviados > 0 {
        linha.push_str(&format!(", {} não enviado(s)", resumo.nao_enviados));
    }
    linha.push_str(&format!("; total cobrado {}.", brl::format(resumo.cobrado)));
    ctx.shell.note(linha);

    let retomar = match &op.saida {
        Some(p) => format!(
            "rode o mesmo comando (mesmo --saida {}) para continuar de onde parou",
            p.display()
        ),
        None => "use --saida FILE para poder retomar um lote".to_owned(),
    };
    if interrompido {
        return Err(CliError::interrupted(retomar));
    }
    match parada {
        Some(Parada::Api(e)) => {
            let hint = match e.kind {
                Kind::Balance => format!("faça uma recarga (carapi recarga criar 500) e {retomar}"),
                _ => format!("{}; depois {retomar}", e.hint.clone().unwrap_or_default()),
            };
            Err(CliError {
                message: format!("lote interrompido: {}", e.message),
                hint: Some(hint),
                ..e
            })
        }
        Some(Parada::MaxCusto(m)) => Err(CliError::other(
            "CUSTO_MAXIMO",
            format!("lote parado pelo --max-custo: {m}"),
        )
        .hint(format!("aumente --max-custo e {retomar}"))),
        Some(Parada::Rede) => Err(CliError::new(
            Kind::Network,
            "REDE",
            format!("lote interrompido após {MAX_ERROS_SEGUIDOS} erros de rede/servidor seguidos"),
        )
        .hint(format!("verifique a conexão e {retomar}"))),
        None if resumo.erros > 0 => Err(CliError::new(
            Kind::Network,
            "ERROS_NO_LOTE",
            format!("{} chave(s) ficaram com erro", resumo.erros),
        )
        .hint(retomar.replace("continuar de onde parou", "tentar de novo só essas"))),
        None => Ok(()),
    }
}

fn confirmar(ctx: &mut Context, yes: bool) -> Result<()> {
    if yes {
        return Ok(());
    }
    if !ctx.shell.can_prompt() {
        return Err(CliError::new(
            Kind::Usage,
            "CONFIRMACAO_NECESSARIA",
            "sem terminal para confirmar o gasto; nada foi enviado",
        )
        .hint("confira o custo acima e repita com --yes"));
    }
    let ok = dialoguer::Confirm::new()
        .with_prompt("Continuar?")
        .default(false)
        .interact()
        .map_err(|e| CliError::other("ES", format!("confirmação: {e}")))?;
    if ok {
        Ok(())
    } else {
        Err(CliError::other(
            "CANCELADO",
            "lote cancelado; nada foi enviado",
        ))
    }
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
    Ok(match tipo {
        TipoLote::Car => {
            let r = client.car(chave).await?;
            Resposta {
                sandbox: r.sandbox,
                resposta: json(serde_json::to_value(&r)),
                arquivo: None,
            }
        }
        TipoLote::Completo => {
            let r = client.car_completo(chave).await?;
            Resposta {
                sandbox: r.sandbox,
                resposta: json(serde_json::to_value(&r)),
                arquivo: None,
            }
        }
        TipoLote::Proprietario => {
            let r = client.proprietario(chave).await?;
            Resposta {
                sandbox: r.sandbox,
                resposta: json(serde_json::to_value(&r)),
                arquivo: None,
            }
        }
        TipoLote::Recibo => {
            let info = client
                .recibo_para_arquivo(chave, pdf_dir.join(format!("{chave}.pdf")))
                .await?;
            Resposta {
                sandbox: tipo.is_sandbox(chave),
                resposta: None,
                arquivo: Some(info.path.display().to_string()),
            }
        }
    })
}

#[allow(clippy::too_many_arguments)]
async fn rodar(
    client: &Client,
    diario: Option<Arc<diario::Diario>>,
    tipo: TipoLote,
    preco: Decimal,
    pendentes: Vec<String>,
    pdf_dir: &Path,
    escritor: &mut Escritor<'_>,
    resumo: &mut Resumo,
    pb: indicatif::ProgressBar,
) -> Result<(Option<Parada>, bool)> {
    pb.set_length(pendentes.len() as u64);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{bar:40}] {pos}/{len} {per_sec} ETA {eta} {msg}",
        )
        .expect("valid template")
        .progress_chars("█▉▊▋▌▍▎▏ "),
    );
    let parar = Arc::new(AtomicBool::new(false));
    let mut stream = futures::stream::iter(pendentes)
        .map(|chave| {
            let client = client.clone();
            let parar = parar.clone();
            let pdf_dir = pdf_dir.to_path_buf();
            let diario = diario.clone();
            async move {
                if parar.load(Ordering::SeqCst) {
                    return (chave, None);
                }
                if let Some(d) = &diario
                    && d.enviando(&chave).is_err()
                {
                    // Not journalled, not sent: a crash could otherwise charge it twice.
                    parar.store(true, Ordering::SeqCst);
                    return (chave, None);
                }
                let r = consultar(&client, tipo, &chave, &pdf_dir).await;
                (chave, Some(r))
            }
        })
        .buffer_unordered(CONCORRENCIA);
    let mut parada = None;
    let mut interrompido = false;
    let mut seguidos = 0usize;
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let item = tokio::select! {
            item = stream.next() => item,
            _ = &mut ctrl_c, if !interrompido => {
                interrompido = true;
                parar.store(true, Ordering::SeqCst);
                pb.set_message("interrompendo: aguardando as consultas em andamento (Ctrl-C de novo sai já)");
                tokio::spawn(async {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        std::process::exit(130);
                    }
                });
                continue;
            }
        };
        let Some((chave, r)) = item else { break };
        let Some(r) = r else {
            resumo.nao_enviados += 1;
            pb.inc(1);
            continue;
        };
        let registro = match r {
            Ok(resp) => {
                seguidos = 0;
                resumo.encontrados += 1;
                let cobrado = !resp.sandbox;
                if cobrado {
                    resumo.cobrado += preco;
                }
                Some(Resultado {
                    chave,
                    status: StatusLote::Encontrado,
                    http_status: Some(200),
                    codigo_erro: None,
                    mensagem: None,
                    cobrado,
                    arquivo: resp.arquivo,
                    resposta: resp.resposta,
                })
            }
            Err(e) => match e.status() {
                Some(404) => {
                    seguidos = 0;
                    resumo.nao_encontrados += 1;
                    Some(erro(chave, StatusLote::NaoEncontrado, &e))
                }
                Some(401 | 402 | 429) => {
                    parar.store(true, Ordering::SeqCst);
                    resumo.nao_enviados += 1;
                    if parada.is_none() {
                        parada = Some(Parada::Api(e.into()));
                    }
                    None
                }
                _ if matches!(e, SdkError::SpendLimit { .. }) => {
                    parar.store(true, Ordering::SeqCst);
                    resumo.nao_enviados += 1;
                    if parada.is_none() {
                        parada = Some(Parada::MaxCusto(e.to_string()));
                    }
                    None
                }
                _ => {
                    resumo.erros += 1;
                    seguidos += 1;
                    if seguidos >= MAX_ERROS_SEGUIDOS && parada.is_none() {
                        parar.store(true, Ordering::SeqCst);
                        parada = Some(Parada::Rede);
                    }
                    Some(erro(chave, StatusLote::Erro, &e))
                }
            },
        };
        if let Some(r) = registro {
            escritor.escrever(&r)?;
        }
        pb.inc(1);
    }
    pb.finish_and_clear();
    Ok((parada, interrompido))
}

fn erro(chave: String, status: StatusLote, e: &SdkError) -> Resultado {
    let (codigo, mensagem) = match e.api() {
        Some(a) => (Some(a.code.as_str().to_owned()), a.message.clone()),
        None => (None, e.to_string()),
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
