//! `carapi vigiar ARQUIVO --teto V`: watches a list of CAR codes through the archive of paid
//! answers. Each code whose archived answer is older than the maximum age (`--idade-maxima`,
//! as the other archived commands) is bought again, in input order, until the next purchase
//! would pass the ceiling (`--teto`); each new answer is compared field by field with the
//! archived one ([`crate::changes`]). Codes never archived are bought (within the ceiling) and
//! reported as new. Exit [`crate::error::EXIT_CHANGED`] when something changed, for cron.

use std::path::PathBuf;

use carapi_sdk::archive::{Archive, ArchivePolicy, Freshness};
use carapi_sdk::domain::brl;
use carapi_sdk::{CarDadosBasicos, CarDadosCompletos, CarResponse, Client, Error as SdkError};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use serde::Serialize;
use serde_json::Value;

use crate::changes::{self, Change};
use crate::context::Context;
use crate::error::{CliError, Kind, Result};
use crate::lote::BatchKind;
use crate::options::{ArchiveArgs, FormatArgs};
use crate::valor::parse_reais;

mod report;

/// Text appended to `carapi vigiar --help`.
const HELP: &str = "\
Entrada: como a do `carapi lote` (um código por linha, ou CSV com a coluna cod_imovel das
exportações do SICAR, ou a indicada em --coluna). Exige o acervo configurado
(carapi config definir acervo padrao), a finalidade e a base legal.
Só compra de novo os códigos cuja resposta no acervo passou de --idade-maxima (padrão 30d), em
ordem, até o --teto; os que nunca foram arquivados são comprados e aparecem como novos.
situacao: mudou | igual | novo | recente (no acervo, não comprado) | nao_comprado (teto) |
nao_encontrado | erro.
Código de saída 10: algum imóvel mudou (ou sumiu do registro) desde a resposta arquivada;
0: nada mudou; os códigos de erro são os de sempre (carapi --help).";

/// Which lookup is watched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum WatchKind {
    /// dados completos, com proprietários (GET /v1/car/{codigo}/completo)
    Completo,
    /// dados básicos, sem proprietários (GET /v1/car/{codigo})
    Car,
}

impl WatchKind {
    fn batch(self) -> BatchKind {
        match self {
            WatchKind::Completo => BatchKind::Completo,
            WatchKind::Car => BatchKind::Car,
        }
    }

    /// The archive's name of the operation.
    fn operation(self) -> &'static str {
        match self {
            WatchKind::Completo => "car_completo",
            WatchKind::Car => "car",
        }
    }

    /// An answer's body in the SDK's model, back to JSON: both sides of a comparison read
    /// alike.
    fn normalise(self, body: &[u8]) -> Option<Value> {
        match self {
            WatchKind::Completo => serde_json::from_slice::<CarResponse<CarDadosCompletos>>(body)
                .ok()
                .and_then(|r| serde_json::to_value(r).ok()),
            WatchKind::Car => serde_json::from_slice::<CarResponse<CarDadosBasicos>>(body)
                .ok()
                .and_then(|r| serde_json::to_value(r).ok()),
        }
    }
}

/// Arguments of `carapi vigiar`.
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub(crate) struct Args {
    /// Arquivo com os códigos CAR (`-` para o stdin): um por linha, ou CSV (exportação do SICAR)
    #[arg(id = "arquivo", value_name = "ARQUIVO")]
    file: PathBuf,
    /// Coluna do CSV com os códigos: nome do cabeçalho ou número (a partir de 1)
    #[arg(long = "coluna", value_name = "NOME|N")]
    column: Option<String>,
    /// Gasto máximo desta execução em reais: as compras param antes de ultrapassá-lo
    #[arg(long = "teto", value_name = "V", value_parser = parse_reais)]
    ceiling: Decimal,
    /// Consulta comparada: completo (com proprietários) ou car (dados básicos)
    #[arg(
        long = "tipo",
        value_enum,
        default_value = "completo",
        value_name = "TIPO"
    )]
    kind: WatchKind,
    /// `-o/--formato` given after the subcommand.
    #[command(flatten)]
    format: FormatArgs,
    /// The archive flags.
    #[command(flatten)]
    archive: ArchiveArgs,
}

/// The outcome of one code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Situacao {
    /// Bought again; something changed.
    Mudou,
    /// Bought again; nothing changed.
    Igual,
    /// Not in the archive: bought now.
    Novo,
    /// Archived and younger than the maximum age: not bought.
    Recente,
    /// Due, not bought: the ceiling (or a stop: balance, limit).
    NaoComprado,
    /// 404 now.
    NaoEncontrado,
    /// The lookup failed (network, server).
    Erro,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Outcome {
    /// The code.
    pub(crate) codigo_car: String,
    /// What happened.
    pub(crate) situacao: Situacao,
    /// When the answer shown was bought (now, or the archived one's instant).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) comprado_em: Option<DateTime<Utc>>,
    /// When the archived answer compared against was bought.
    #[serde(rename = "anteriorCompradoEm", skip_serializing_if = "Option::is_none")]
    pub(crate) previously_bought_at: Option<DateTime<Utc>>,
    /// The fields that changed.
    pub(crate) mudancas: Vec<Change>,
    /// Why it was not bought, or the error.
    #[serde(rename = "mensagem", skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

impl Outcome {
    fn new(codigo: &str, situacao: Situacao) -> Self {
        Outcome {
            codigo_car: codigo.to_owned(),
            situacao,
            comprado_em: None,
            previously_bought_at: None,
            mudancas: vec![],
            message: None,
        }
    }

    /// True when the record changed (or left the registry) since its archived answer.
    pub(crate) fn changed(&self) -> bool {
        self.situacao == Situacao::Mudou
            || (self.situacao == Situacao::NaoEncontrado && self.previously_bought_at.is_some())
    }
}

/// A code to buy and its archived answer, if any.
struct Due {
    codigo: String,
    previous: Option<(DateTime<Utc>, Option<Value>)>,
}

/// Runs `carapi vigiar`.
///
/// # Errors
/// No archive configured, purpose or legal basis missing (2); unreadable input (1); stopped on
/// 401 (3), 402 (5), 429 (6); codes left with network or server errors (7).
pub(crate) async fn run(ctx: &mut Context, args: Args) -> Result<()> {
    let format = ctx.format(args.format);
    if args.ceiling.is_sign_negative() {
        return Err(CliError::usage("--teto não pode ser negativo").hint("--teto 50"));
    }
    let (base, archived) = ctx.lookup_builder(&args.archive).await?;
    let Some((archive, policy)) = archived else {
        return Err(CliError::new(
            Kind::Usage,
            "SEM_ACERVO",
            "carapi vigiar compara com o acervo, e nenhum acervo está configurado",
        )
        .hint("carapi config definir acervo padrao (ou um caminho de arquivo)"));
    };
    let input =
        crate::lote::plan::read_input(ctx, &args.file, args.kind.batch(), args.column.as_deref())?;
    let (mut outcomes, due) = classify(&archive, &policy, args.kind, &input.keys)?;
    let s = base.clone().build()?.saldo().await?;
    let preco = args.kind.batch().preco(&s.precos);
    // Every purchase is decided here (a lookup of a stale entry must buy, whatever the
    // client's own clock says): the client never reuses, and its cap is the ceiling.
    let never = ArchivePolicy::new(policy.purpose.clone(), policy.legal_basis, Freshness::Never);
    let client = base
        .archive(archive, never)
        .precos(s.precos)
        .max_spend(args.ceiling)
        .build()?;
    let (buy, over) = within_ceiling(due, args.kind, preco, args.ceiling);
    let bought = buy.len();
    let run = buy_all(ctx, &client, args.kind, buy).await;
    outcomes.extend(run.outcomes);
    for d in &over {
        let mut o = Outcome::new(&d.codigo, Situacao::NaoComprado);
        o.previously_bought_at = d.previous.as_ref().map(|p| p.0);
        o.message = Some(format!("teto de {} atingido", brl::format(args.ceiling)));
        outcomes.push(o);
    }
    let order: std::collections::HashMap<&str, usize> = input
        .keys
        .iter()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    outcomes.sort_by_key(|o| order.get(o.codigo_car.as_str()).copied());
    report::print(ctx, &outcomes, format)?;
    report::summary(ctx, &outcomes, client.gasto().confirmado, bought);
    if !over.is_empty() {
        ctx.shell.warn(format!(
            "teto de {} atingido: {} código(s) vencido(s) não comprado(s) (a próxima execução os compra)",
            brl::format(args.ceiling),
            over.len()
        ));
    }
    if let Some(stop) = run.stop {
        return Err(stop);
    }
    let errors = outcomes
        .iter()
        .filter(|o| o.situacao == Situacao::Erro)
        .count();
    if errors > 0 {
        return Err(CliError::new(
            Kind::Network,
            "VIGIAR_INCOMPLETO",
            format!("{errors} código(s) com erro de rede ou do servidor"),
        )
        .hint("rode de novo: só o que continua vencido é comprado"));
    }
    ctx.changes_found = outcomes.iter().any(Outcome::changed);
    Ok(())
}

/// The instant ages are measured against: the system clock, or `CARAPI_VIGIAR_AGORA` (RFC
/// 3339; for tests only, as `CARAPI_POLL_MS` is), so that a test can age its archive without
/// waiting.
fn now() -> DateTime<Utc> {
    std::env::var("CARAPI_VIGIAR_AGORA")
        .ok()
        .and_then(|s| DateTime::parse_from_rfc3339(s.trim()).ok())
        .map_or_else(Utc::now, |t| t.with_timezone(&Utc))
}

/// Splits the codes into those the archive answers (fresh: reported, not bought) and those due.
///
/// # Errors
/// An archive that cannot be read (1).
fn classify(
    archive: &Archive,
    policy: &ArchivePolicy,
    kind: WatchKind,
    keys: &[String],
) -> Result<(Vec<Outcome>, Vec<Due>)> {
    let fail =
        |e: carapi_sdk::archive::ArchiveError| CliError::other("ACERVO", crate::archive::chain(&e));
    let now = now();
    let (mut fresh, mut due) = (vec![], vec![]);
    for k in keys {
        let Some(entry) = archive.latest_entry(kind.operation(), k).map_err(fail)? else {
            due.push(Due {
                codigo: k.clone(),
                previous: None,
            });
            continue;
        };
        let young = match policy.freshness {
            Freshness::Never => false,
            Freshness::MaxAge(max) => {
                now.signed_duration_since(entry.bought_at)
                    < chrono::Duration::from_std(max).unwrap_or(chrono::Duration::MAX)
            }
        };
        if young {
            let mut o = Outcome::new(k, Situacao::Recente);
            o.comprado_em = Some(entry.bought_at);
            fresh.push(o);
        } else {
            let body = archive.body(entry.seq).map_err(fail)?;
            due.push(Due {
                codigo: k.clone(),
                previous: Some((entry.bought_at, body.and_then(|b| kind.normalise(&b)))),
            });
        }
    }
    Ok((fresh, due))
}

/// The codes bought (input order, while the next purchase fits the ceiling at `preco` each;
/// sandbox codes are free) and those left over.
fn within_ceiling(
    due: Vec<Due>,
    kind: WatchKind,
    preco: Decimal,
    ceiling: Decimal,
) -> (Vec<Due>, Vec<Due>) {
    let fits = if preco.is_zero() {
        usize::MAX
    } else {
        (ceiling / preco).floor().to_usize().unwrap_or(usize::MAX)
    };
    let (mut buy, mut over) = (vec![], vec![]);
    let mut charged = 0usize;
    for d in due {
        if kind.batch().is_sandbox(&d.codigo) {
            buy.push(d);
        } else if charged < fits {
            charged += 1;
            buy.push(d);
        } else {
            over.push(d);
        }
    }
    (buy, over)
}

/// What the purchases gave, and the error that stopped them (401, 402, 429, the cap).
struct Run {
    outcomes: Vec<Outcome>,
    stop: Option<CliError>,
}

/// Buys `due` [`crate::lote::CONCURRENCY`] at a time and compares each answer.
async fn buy_all(ctx: &mut Context, client: &Client, kind: WatchKind, due: Vec<Due>) -> Run {
    let pb = ctx.shell.progress(
        due.len() as u64,
        "{spinner} [{bar:25}] {pos}/{len} ETA {eta}",
    );
    let halt = std::sync::atomic::AtomicBool::new(false);
    let mut stream = futures::stream::iter(due)
        .map(|d| {
            let halt = &halt;
            async move {
                if halt.load(std::sync::atomic::Ordering::SeqCst) {
                    return (d, None);
                }
                let r = lookup(client, kind, &d.codigo).await;
                if r.as_ref().err().is_some_and(stops) {
                    halt.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                (d, Some(r))
            }
        })
        .buffered(crate::lote::CONCURRENCY);
    let mut run = Run {
        outcomes: vec![],
        stop: None,
    };
    let mut unarchived = 0;
    while let Some((d, r)) = stream.next().await {
        pb.inc(1);
        let o = match r {
            None => not_sent(&d, "não enviada: a execução parou"),
            Some(Ok(a)) => {
                unarchived += usize::from(a.warning.is_some());
                compared(&d, a.value, a.bought_at)
            }
            Some(Err(e)) if e.status() == Some(404) => {
                let mut o = Outcome::new(&d.codigo, Situacao::NaoEncontrado);
                o.previously_bought_at = d.previous.as_ref().map(|p| p.0);
                o.message = Some(crate::error::message(&e));
                o
            }
            Some(Err(e)) if stops(&e) => {
                let o = not_sent(&d, &crate::error::message(&e));
                run.stop.get_or_insert_with(|| CliError::from(e));
                o
            }
            Some(Err(e)) => {
                let mut o = Outcome::new(&d.codigo, Situacao::Erro);
                o.previously_bought_at = d.previous.as_ref().map(|p| p.0);
                o.message = Some(crate::error::message(&e));
                o
            }
        };
        run.outcomes.push(o);
    }
    pb.finish_and_clear();
    if unarchived > 0 {
        ctx.shell.warn(format!(
            "{unarchived} resposta(s) cobrada(s), mas NÃO arquivada(s) (veja carapi acervo verificar e o espaço em disco)"
        ));
    }
    run
}

/// Errors after which nothing more is bought: the key, the balance, the limits, the cap.
fn stops(e: &SdkError) -> bool {
    matches!(e.status(), Some(401 | 402 | 429)) || matches!(e, SdkError::SpendLimit { .. })
}

fn not_sent(d: &Due, why: &str) -> Outcome {
    let mut o = Outcome::new(&d.codigo, Situacao::NaoComprado);
    o.previously_bought_at = d.previous.as_ref().map(|p| p.0);
    o.message = Some(why.to_owned());
    o
}

/// The outcome of a bought answer `value`, compared with the archived one.
fn compared(d: &Due, value: Value, bought_at: DateTime<Utc>) -> Outcome {
    let (situacao, mudancas, anterior) = match &d.previous {
        None => (Situacao::Novo, vec![], None),
        Some((at, Some(old))) => {
            let c = changes::diff(old, &value);
            let s = if c.is_empty() {
                Situacao::Igual
            } else {
                Situacao::Mudou
            };
            (s, c, Some(*at))
        }
        // The archived body was purged or unreadable: nothing to compare with.
        Some((at, None)) => (Situacao::Novo, vec![], Some(*at)),
    };
    let mut o = Outcome::new(&d.codigo, situacao);
    o.comprado_em = Some(bought_at);
    o.previously_bought_at = anterior;
    o.mudancas = mudancas;
    o
}

/// A purchase through the archive (appended there), as JSON in the SDK's model.
async fn lookup(
    client: &Client,
    kind: WatchKind,
    codigo: &str,
) -> std::result::Result<carapi_sdk::archive::Archived<Value>, SdkError> {
    let to_json = |v: std::result::Result<Value, serde_json::Error>| v.unwrap_or(Value::Null);
    Ok(match kind {
        WatchKind::Completo => client
            .car_completo_archived(codigo)
            .await?
            .map(|r| to_json(serde_json::to_value(r))),
        WatchKind::Car => client
            .car_archived(codigo)
            .await?
            .map(|r| to_json(serde_json::to_value(r))),
    })
}
