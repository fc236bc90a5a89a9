//! Running a batch: lookups [`super::CONCURRENCY`] at a time through one SDK client (its rate
//! limiter keeps the contract's 10 requests/s; `--max-custo` is the SDK's `max_spend` guard),
//! answers written in input order as they arrive, a progress bar with ETA on stderr.
//!
//! Stops (in-flight lookups finish and are written) on 402, 401, 429, the `--max-custo` cap,
//! [`super::MAX_ERRORS_IN_A_ROW`] network/server errors in a row, or Ctrl-C (a second Ctrl-C quits
//! at once).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use carapi_sdk::Origin;
use carapi_sdk::{Client, Error as SdkError};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use rust_decimal::Decimal;

use super::output::{BatchStatus, Record, RecordWriter};
use super::{BatchKind, CONCURRENCY, MAX_ERRORS_IN_A_ROW, Summary, journal};
use crate::error::{CliError, Result};

/// Why a batch stopped before its end.
#[derive(Debug)]
pub(crate) enum Stop {
    /// 401, 402 or 429: the API's error.
    Api(CliError),
    /// The `--max-custo` cap.
    MaxCost(String),
    /// Too many network/server errors in a row.
    Network,
}

/// What a run needs besides where it writes.
#[derive(Debug)]
pub(crate) struct RunSetup {
    /// The client (prices known, spend cap set).
    pub(crate) client: Client,
    /// The journal of keys in flight (with `--saida`).
    pub(crate) journal: Option<Arc<journal::Journal>>,
    /// Lookup kind.
    pub(crate) kind: BatchKind,
    /// Price of one charged lookup, BRL.
    pub(crate) preco: Decimal,
    /// Keys to look up, in input order.
    pub(crate) pending: Vec<String>,
    /// Where receipt PDFs go.
    pub(crate) pdf_dir: PathBuf,
}

/// How a run ended.
#[derive(Debug, Default)]
pub(crate) struct RunEnd {
    /// Why it stopped early, if it did.
    pub(crate) stop: Option<Stop>,
    /// True after Ctrl-C.
    pub(crate) interrupted: bool,
}

struct Answer {
    response: Option<serde_json::Value>,
    file: Option<String>,
    sandbox: bool,
    /// With the archive: where the answer came from, and when it was bought.
    origin: Option<(Origin, DateTime<Utc>)>,
}

async fn consulta(
    client: &Client,
    kind: BatchKind,
    chave: &str,
    pdf_dir: &Path,
) -> Result<Answer, SdkError> {
    // With the archive on, the answer says where it came from and when it was bought.
    let archived = client.archive().is_some();
    let json = |v: serde_json::Result<serde_json::Value>| v.ok();
    let answer = |a: carapi_sdk::Answer<(bool, Option<serde_json::Value>)>| Answer {
        sandbox: a.value.0,
        response: a.value.1,
        file: None,
        origin: archived.then_some((a.origin, a.bought_at)),
    };
    Ok(match kind {
        BatchKind::Car => answer(
            client
                .car(chave)
                .await?
                .map(|r| (r.sandbox, json(serde_json::to_value(&r)))),
        ),
        BatchKind::Completo => answer(
            client
                .car_completo(chave)
                .await?
                .map(|r| (r.sandbox, json(serde_json::to_value(&r)))),
        ),
        BatchKind::Proprietario => answer(
            client
                .proprietario(chave)
                .await?
                .map(|r| (r.sandbox, json(serde_json::to_value(&r)))),
        ),
        BatchKind::Recibo if archived => {
            let a = client.recibo(chave).await?;
            let path = pdf_dir.join(format!("{chave}.pdf"));
            tokio::fs::write(&path, &a.value.bytes)
                .await
                .map_err(SdkError::Io)?;
            Answer {
                sandbox: kind.is_sandbox(chave),
                response: None,
                file: Some(path.display().to_string()),
                origin: Some((a.origin, a.bought_at)),
            }
        }
        BatchKind::Recibo => {
            let info = client
                .recibo_to_file(chave, pdf_dir.join(format!("{chave}.pdf")))
                .await?;
            Answer {
                sandbox: kind.is_sandbox(chave),
                response: None,
                file: Some(info.path.display().to_string()),
                origin: None,
            }
        }
    })
}

/// Looks up `ex.pending`, writing each answer to `writer` and counting into `summary`.
///
/// # Errors
/// Write errors of the output (a closed stdout is exit 0).
pub(crate) async fn run_consultas(
    ex: RunSetup,
    writer: &mut RecordWriter<'_>,
    summary: &mut Summary,
    pb: indicatif::ProgressBar,
) -> Result<RunEnd> {
    pb.set_length(ex.pending.len() as u64);
    let halt = Arc::new(AtomicBool::new(false));
    let (client, journal, kind, pdf_dir) = (&ex.client, &ex.journal, ex.kind, &ex.pdf_dir);
    let mut stream = futures::stream::iter(ex.pending)
        .map(|chave| {
            let halt = halt.clone();
            async move {
                if halt.load(Ordering::SeqCst) {
                    return (chave, None);
                }
                if let Some(d) = journal
                    && d.record_sending(&chave).is_err()
                {
                    // Not journalled, not sent: a crash could otherwise charge it twice.
                    halt.store(true, Ordering::SeqCst);
                    return (chave, None);
                }
                let r = consulta(client, kind, &chave, pdf_dir).await;
                (chave, Some(r))
            }
        })
        .buffered(CONCURRENCY);
    let mut state = RunState {
        end: RunEnd::default(),
        in_a_row: 0,
        preco: ex.preco,
        halt: halt.clone(),
    };
    let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
    loop {
        let item = tokio::select! {
            item = stream.next() => item,
            _ = &mut ctrl_c, if !state.end.interrupted => {
                state.end.interrupted = true;
                halt.store(true, Ordering::SeqCst);
                clear_ctrl_c_echo();
                pb.println("interrompendo: aguardando as consultas em andamento (Ctrl-C de novo sai já)");
                let bar = pb.clone();
                tokio::spawn(async move {
                    if tokio::signal::ctrl_c().await.is_ok() {
                        // Leaving at once: the bar is cleared first, not left on the screen.
                        bar.finish_and_clear();
                        clear_ctrl_c_echo();
                        std::process::exit(130);
                    }
                });
                continue;
            }
        };
        let Some((chave, r)) = item else { break };
        if let Some(record) = state.count(chave, r, summary) {
            writer.append(&record)?;
            pb.inc(1);
        }
    }
    // The bar's last frame and the summary show the same count: the answers written.
    pb.finish_and_clear();
    Ok(state.end)
}

/// After a Ctrl-C under a bar: the terminal echoed `^C` after the bar, which indicatif leaves
/// at the right edge, so the echo went to a new line and indicatif's own clearing would miss the
/// bar. Clears the echo's line and the bar's line above it (stderr a terminal only).
fn clear_ctrl_c_echo() {
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprint!("\r\x1b[2K\x1b[1A\r\x1b[2K");
    }
}

struct RunState {
    end: RunEnd,
    in_a_row: usize,
    preco: Decimal,
    halt: Arc<AtomicBool>,
}

impl RunState {
    /// Counts one outcome; the record to write, if any.
    fn count(
        &mut self,
        chave: String,
        r: Option<Result<Answer, SdkError>>,
        summary: &mut Summary,
    ) -> Option<Record> {
        let Some(r) = r else {
            summary.not_sent += 1;
            return None;
        };
        let e = match r {
            Ok(resp) => {
                self.in_a_row = 0;
                summary.found += 1;
                // An answer from the archive was not charged now.
                let cobrado = !resp.sandbox && resp.origin.is_none_or(|(o, _)| o == Origin::Api);
                if cobrado {
                    summary.cobrado += self.preco;
                }
                return Some(Record {
                    chave,
                    status: BatchStatus::Found,
                    http_status: Some(200),
                    error_code: None,
                    message: None,
                    cobrado,
                    preco: cobrado.then_some(self.preco),
                    file: resp.file,
                    response: resp.response,
                    origin: resp.origin.map(|(o, _)| o.as_str().to_owned()),
                    bought_at: resp.origin.map(|(_, t)| t),
                });
            }
            Err(e) => e,
        };
        match e.status() {
            Some(404) => {
                self.in_a_row = 0;
                summary.not_found += 1;
                Some(error_record(chave, BatchStatus::NotFound, &e))
            }
            Some(401 | 402 | 429) => {
                self.halt(summary, || Stop::Api(e.into()));
                None
            }
            _ if matches!(e, SdkError::SpendLimit { .. }) => {
                self.halt(summary, || Stop::MaxCost(e.to_string()));
                None
            }
            _ => {
                summary.errors += 1;
                self.in_a_row += 1;
                if self.in_a_row >= MAX_ERRORS_IN_A_ROW && self.end.stop.is_none() {
                    self.halt.store(true, Ordering::SeqCst);
                    self.end.stop = Some(Stop::Network);
                }
                Some(error_record(chave, BatchStatus::Error, &e))
            }
        }
    }

    fn halt(&mut self, summary: &mut Summary, stop: impl FnOnce() -> Stop) {
        self.halt.store(true, Ordering::SeqCst);
        summary.not_sent += 1;
        if self.end.stop.is_none() {
            self.end.stop = Some(stop());
        }
    }
}

fn error_record(chave: String, status: BatchStatus, e: &SdkError) -> Record {
    let (code, message) = match e.api() {
        Some(a) => (Some(a.code.as_str().to_owned()), a.message.clone()),
        None => (None, crate::error::message(e)),
    };
    Record {
        http_status: e.status(),
        error_code: code,
        message: Some(message),
        ..Record::new(chave, status)
    }
}
