//! The charge of a lookup whose commit reply was lost: the outcome is learned from the store,
//! retried for a bounded wait, and journaled when it still cannot be learned (the reversal of a
//! journaled charge answered with an error is `crate::money::estorno`'s plan).

use crate::store::journal::{self, Journal};
use crate::store::{Cobranca, CobrancaResult, Store, StoreError};

/// How long a charge whose commit reply was lost waits, at most, for the database to tell
/// whether it committed (the lookup is retried within it) before it is journaled.
const OUTCOME_WAIT: std::time::Duration = std::time::Duration::from_secs(6);

/// Pause between two lookups of a lost commit's outcome.
const OUTCOME_RETRY: std::time::Duration = std::time::Duration::from_millis(250);

/// [`ConsultasStore::charge_consulta`](crate::store::ConsultasStore::charge_consulta), and when its outcome is unknown
/// ([`StoreError::uncertain_outcome`]: the reply of the commit was lost), the outcome learned
/// with [`ConsultasStore::cobranca_outcome`](crate::store::ConsultasStore::cobranca_outcome), retried for at most [`OUTCOME_WAIT`]: the charge
/// as its history row recorded it when it was committed (`cache` is then reported as `false`:
/// the consolidation's earlier state is not recorded), the error when it was not (nothing was
/// debited). A refusal whose reply was lost (recorded as 402 or 429, nothing debited) stays an
/// error. When the outcome still cannot be learned, the request id is appended to `journal`
/// (fsynced) before the error is handed back: the answer (500) then claims nothing about the
/// charge, and the journal keeps what the database must still tell.
///
/// # Errors
/// The store's error when the charge was not committed or its outcome cannot be learned.
pub(crate) async fn charge_with_outcome(
    store: &dyn Store,
    cobranca: Cobranca,
    journal: Option<&Journal>,
) -> Result<CobrancaResult, StoreError> {
    let (conta, request_id, at) = (cobranca.conta, cobranca.request_id, cobranca.at);
    let error = match store.charge_consulta(cobranca).await {
        Err(e) if e.uncertain_outcome() => e,
        other => return other,
    };
    let limite = tokio::time::Instant::now() + OUTCOME_WAIT;
    let busca = loop {
        let attempt =
            tokio::time::timeout_at(limite, store.cobranca_outcome(conta, request_id, at));
        let failure = match attempt.await {
            Ok(Ok(Some(line))) if line.status == 200 => {
                tracing::warn!(%conta, %request_id, "resposta do commit perdida; a cobrança foi gravada");
                return Ok(CobrancaResult::Cobrada {
                    valor: line.valor,
                    saldo_antes: line.saldo_antes.unwrap_or_default(),
                    saldo_depois: line.saldo_depois.unwrap_or_default(),
                    cache: false,
                });
            }
            Ok(Ok(_)) => return Err(error),
            Ok(Err(busca)) => busca,
            Err(_) => StoreError::ReplyLost("outcome lookup timed out".into()),
        };
        if tokio::time::Instant::now() + OUTCOME_RETRY >= limite {
            break failure;
        }
        tokio::time::sleep(OUTCOME_RETRY).await;
    };
    let entry = journal::JournalEntry {
        request_id,
        conta,
        at,
    };
    match journal.map(|j| (j, j.append(&entry))) {
        Some((j, Ok(()))) => {
            tracing::error!(%conta, %request_id, diario = %j.path().display(),
                "resultado da cobrança desconhecido; pedido anotado no diário");
        }
        Some((j, Err(e))) => {
            tracing::error!(%conta, %request_id, diario = %j.path().display(), erro = %e,
                "resultado da cobrança desconhecido e o diário não pôde ser gravado");
        }
        None => {
            tracing::error!(%conta, %request_id, "resultado da cobrança desconhecido; sem diário");
        }
    }
    Err(StoreError::unknown_outcome(&error, &busca))
}
