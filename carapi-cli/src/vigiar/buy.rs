//! The purchases of a watch: [`crate::batch::CONCURRENCY`] at a time through the client's
//! archive, each answer compared with the archived one.

use carapi_sdk::{Client, Error as SdkError};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde_json::Value;

use super::{Due, Outcome, Verdict, WatchKind};
use crate::changes;
use crate::context::Context;
use crate::error::CliError;

/// What the purchases gave, and the error that stopped them (401, 402, 429, the cap).
pub(super) struct Run {
    pub(super) outcomes: Vec<Outcome>,
    pub(super) stop: Option<CliError>,
}

/// Buys `due` [`crate::batch::CONCURRENCY`] at a time and compares each answer.
pub(super) async fn buy_all(
    ctx: &mut Context,
    client: &Client,
    kind: WatchKind,
    due: Vec<Due>,
) -> Run {
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
                let r = consulta(client, kind, &d.codigo).await;
                if r.as_ref().err().is_some_and(stops) {
                    halt.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                (d, Some(r))
            }
        })
        .buffered(crate::batch::CONCURRENCY);
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
            Some(Err(e)) if stops(&e) => {
                let o = not_sent(&d, &crate::error::message(&e));
                run.stop.get_or_insert_with(|| CliError::from(e));
                o
            }
            Some(Err(e)) => {
                let verdict = if e.status() == Some(404) {
                    Verdict::NotFound
                } else {
                    Verdict::Failed
                };
                let mut o = Outcome::new(&d.codigo, verdict);
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
    let mut o = Outcome::new(&d.codigo, Verdict::NotBought);
    o.previously_bought_at = d.previous.as_ref().map(|p| p.0);
    o.message = Some(why.to_owned());
    o
}

/// The outcome of a bought answer `value`, compared with the archived one.
fn compared(d: &Due, value: Value, bought_at: DateTime<Utc>) -> Outcome {
    let (verdict, mudancas, previous_answer) = match &d.previous {
        None => (Verdict::New, vec![], None),
        Some((at, Some(old))) => {
            let c = changes::diff(old, &value);
            let s = if c.is_empty() {
                Verdict::Unchanged
            } else {
                Verdict::Changed
            };
            (s, c, Some(*at))
        }
        // The archived body was purged or unreadable: nothing to compare with.
        Some((at, None)) => (Verdict::New, vec![], Some(*at)),
    };
    let mut o = Outcome::new(&d.codigo, verdict);
    o.bought_at = Some(bought_at);
    o.previously_bought_at = previous_answer;
    o.mudancas = mudancas;
    o
}

/// A purchase through the archive (appended there), as JSON in the SDK's model.
async fn consulta(
    client: &Client,
    kind: WatchKind,
    codigo: &str,
) -> std::result::Result<carapi_sdk::Answer<Value>, SdkError> {
    let to_json = |v: std::result::Result<Value, serde_json::Error>| v.unwrap_or(Value::Null);
    Ok(match kind {
        WatchKind::Completo => client
            .car_completo(codigo)
            .await?
            .map(|r| to_json(serde_json::to_value(r))),
        WatchKind::Car => client
            .car(codigo)
            .await?
            .map(|r| to_json(serde_json::to_value(r))),
    })
}
