//! `carapi-server ledger check [--conta ID]`: proves balance == credits - debits.

use std::process::ExitCode;

use carapi_service::store::journal::{Journal, journal_path};
use carapi_service::store::{ContaId, Store};

/// Subcomandos do razão.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Confere todas as contas (ou uma): saldo == créditos - débitos, débitos == histórico
    /// cobrado, créditos == saldo inicial + recargas confirmadas. Código de saída 1 quando
    /// alguma conta falha.
    #[command(name = "conferir", alias = "check")]
    Check(CheckArgs),
}

/// Opções de `ledger check`.
#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// Só esta conta.
    #[arg(long = "conta")]
    conta: Option<i64>,
    #[command(flatten)]
    database: super::AdminDatabaseArgs,
    /// Um objeto JSON por conta.
    #[arg(long = "json")]
    json: bool,
    /// O diário do servidor com as cobranças cujo resultado se perdeu (como `servir --diario`).
    #[arg(long = "diario", alias = "journal", env = "CARAPI_JOURNAL")]
    diario: Option<std::path::PathBuf>,
}

pub(super) async fn run(c: Command) -> anyhow::Result<ExitCode> {
    let Command::Check(a) = c;
    let store = a.database.open().await?;
    let contas = match a.conta {
        Some(id) => vec![ContaId(id)],
        None => store.contas().await?,
    };
    let mut ok = true;
    for id in contas {
        let Some(r) = store.ledger(id).await? else {
            anyhow::bail!("conta {id} não existe");
        };
        let is_consistent = r.is_consistent();
        ok &= is_consistent;
        if a.json {
            let mut v = serde_json::to_value(&r)?;
            v["consistente"] = is_consistent.into();
            println!("{v}");
        } else {
            println!(
                "conta {}: saldo {} = créditos {} - débitos {} ; cobrado no histórico {} ; recargas {} ; estornos {} ; {}",
                r.conta_id,
                r.saldo,
                r.credits,
                r.debits,
                r.cobrado_historico,
                r.creditado_recargas,
                r.estornos,
                if is_consistent { "OK" } else { "INCONSISTENTE" }
            );
        }
    }
    report_journal(store.as_ref(), &a).await?;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Lists the journaled charges (`servir`'s journal of lost commit outcomes) whose outcome the
/// database now tells: charged (a debit no 200 answered) or not.
async fn report_journal(store: &dyn Store, a: &CheckArgs) -> anyhow::Result<()> {
    let path = journal_path(&a.database.url.database, a.diario.as_deref());
    let inputs = Journal::at(&path).entries()?;
    if inputs.is_empty() {
        return Ok(());
    }
    eprintln!(
        "diário {}: {} pedido(s) com resultado de cobrança desconhecido ao responder",
        path.display(),
        inputs.len()
    );
    for e in inputs {
        let line = store.cobranca_outcome(e.conta, e.request_id, e.at).await?;
        let cobrado = line.is_some_and(|l| l.status == 200);
        eprintln!(
            "  em aberto: pedido {} conta {}: {}",
            e.request_id,
            e.conta,
            if cobrado {
                "cobrado sem resposta 200"
            } else {
                "não cobrado"
            }
        );
    }
    Ok(())
}
