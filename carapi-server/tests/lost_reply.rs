//! The SQLite writer's reply to a charge lost after its `COMMIT`: a store composed at the root
//! of the test server around the real [`SqliteStore`] answers the charge's caller with
//! [`StoreError::ReplyLost`] (as the writer does when its reply never comes) once the
//! real store has committed. The server must learn what happened and answer it: the 200 with
//! its body, and the debit once.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use carapi_sdk::{CodigoCar, CpfCnpj, RecargaStatus};
use carapi_service::dados::Imovel;
use carapi_service::money::Centavos;
use carapi_service::rate_limit::KeyRateLimit;
use carapi_service::store::*;
use chrono::{DateTime, NaiveDate, Utc};
use uuid::Uuid;

use crate::helpers::CODIGO;
use crate::money::{ClockMs, get, server_over};

/// Every call goes to `dentro`; the reply of the next `perder` charges is replaced by
/// [`StoreError::ReplyLost`] after `dentro` answered.
#[derive(Debug)]
struct LosesReply {
    inside: Arc<dyn Store>,
    lose: AtomicUsize,
    /// While true, every lookup of a charge's outcome fails (the database stays away).
    without_result: std::sync::atomic::AtomicBool,
    /// Lookups of an outcome asked for.
    searches: AtomicUsize,
    /// Charges reversed.
    estornos: AtomicUsize,
}

#[async_trait]
impl ConsultasStore for LosesReply {
    async fn record_consulta(&self, r: ConsultaRecord) -> Result<(), StoreError> {
        self.inside.record_consulta(r).await
    }
    async fn charge_consulta(&self, c: Cobranca) -> Result<CobrancaResult, StoreError> {
        let r = self.inside.charge_consulta(c).await;
        let lost = self
            .lose
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if lost {
            return Err(StoreError::ReplyLost("resposta do escritor perdida".into()));
        }
        r
    }
    async fn remove_uncharged(
        &self,
        conta: ContaId,
        antes: DateTime<Utc>,
        limite: u32,
    ) -> Result<u64, StoreError> {
        self.inside.remove_uncharged(conta, antes, limite).await
    }
    async fn cobranca_outcome(
        &self,
        conta: ContaId,
        requested: Uuid,
        at: DateTime<Utc>,
    ) -> Result<Option<RecordedConsulta>, StoreError> {
        self.searches.fetch_add(1, Ordering::SeqCst);
        if self.without_result.load(Ordering::SeqCst) {
            return Err(StoreError::Database("conexão recusada".into()));
        }
        self.inside.cobranca_outcome(conta, requested, at).await
    }
    async fn estornar_cobranca(
        &self,
        conta: ContaId,
        requested: Uuid,
        at: DateTime<Utc>,
    ) -> Result<Estorno, StoreError> {
        if self.without_result.load(Ordering::SeqCst) {
            return Err(StoreError::Database("conexão recusada".into()));
        }
        let r = self.inside.estornar_cobranca(conta, requested, at).await?;
        if matches!(r, Estorno::Estornada { .. }) {
            self.estornos.fetch_add(1, Ordering::SeqCst);
        }
        Ok(r)
    }
    async fn uso_period(&self, conta: ContaId, day: NaiveDate) -> Result<UsoPeriod, StoreError> {
        self.inside.uso_period(conta, day).await
    }
    async fn historico(
        &self,
        conta: ContaId,
        filter: &HistoricoFilter,
    ) -> Result<(Vec<RecordedConsulta>, u64), StoreError> {
        self.inside.historico(conta, filter).await
    }
    async fn uso_by_endpoint(
        &self,
        conta: ContaId,
        since: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        self.inside.uso_by_endpoint(conta, since).await
    }
}

#[async_trait]
impl SettingsStore for LosesReply {
    async fn settings_or_insert(&self, chave: &str, valor: &str) -> Result<String, StoreError> {
        self.inside.settings_or_insert(chave, valor).await
    }
    async fn setting(&self, chave: &str) -> Result<Option<String>, StoreError> {
        self.inside.setting(chave).await
    }
}

#[async_trait]
impl ContasStore for LosesReply {
    async fn create_conta(&self, fresh: NovaContaRecord) -> Result<ContaId, StoreError> {
        self.inside.create_conta(fresh).await
    }
    async fn conta_by_key(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError> {
        self.inside.conta_by_key(chave_hash).await
    }
    async fn conta(&self, id: ContaId) -> Result<Option<Conta>, StoreError> {
        self.inside.conta(id).await
    }
    async fn contas(&self) -> Result<Vec<ContaId>, StoreError> {
        self.inside.contas().await
    }
    async fn atualizar_limites(
        &self,
        id: ContaId,
        diario: Patch<u32>,
        mensal: Patch<Centavos>,
    ) -> Result<Option<Conta>, StoreError> {
        self.inside.atualizar_limites(id, diario, mensal).await
    }
    async fn ledger(&self, conta: ContaId) -> Result<Option<Ledger>, StoreError> {
        self.inside.ledger(conta).await
    }
}

#[async_trait]
impl ImoveisStore for LosesReply {
    async fn count_imoveis(&self) -> Result<u64, StoreError> {
        self.inside.count_imoveis().await
    }
    async fn write_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError> {
        self.inside.write_imoveis(imoveis).await
    }
    async fn imovel(&self, codigo: &CodigoCar) -> Result<Option<Imovel>, StoreError> {
        self.inside.imovel(codigo).await
    }
    async fn imoveis_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError> {
        self.inside.imoveis_of_documento(documento, limite).await
    }
    async fn itens_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<OwnerImovel>, bool), StoreError> {
        self.inside.itens_of_documento(documento, limite).await
    }
}

#[async_trait]
impl RecargasStore for LosesReply {
    async fn reusable_recarga(
        &self,
        conta: ContaId,
        valor: Centavos,
        since: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError> {
        self.inside.reusable_recarga(conta, valor, since).await
    }
    async fn insert_recarga(
        &self,
        fresh: Recarga,
        since: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError> {
        self.inside.insert_recarga(fresh, since).await
    }
    async fn complete_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError> {
        self.inside.complete_recarga(id, qr_code).await
    }
    async fn discard_recarga(&self, id: Uuid) -> Result<(), StoreError> {
        self.inside.discard_recarga(id).await
    }
    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        self.inside.recarga(conta, id).await
    }
    async fn recarga_by_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        self.inside.recarga_by_id(id).await
    }
    async fn recarga_by_payment_id(&self, payment_id: &str) -> Result<Option<Recarga>, StoreError> {
        self.inside.recarga_by_payment_id(payment_id).await
    }
    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError> {
        self.inside.recargas(conta, status, page, size).await
    }
    async fn pending_recargas(&self, limite: u32) -> Result<Vec<Recarga>, StoreError> {
        self.inside.pending_recargas(limite).await
    }
    async fn confirm_recarga(
        &self,
        payment_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Confirmation, StoreError> {
        self.inside.confirm_recarga(payment_id, at).await
    }
}

#[async_trait]
impl PspStore for LosesReply {
    async fn psp_register(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.inside
            .psp_register(payment_id, valor, documento, email, at)
            .await
    }
    async fn psp_pay(&self, payment_id: &str, at: DateTime<Utc>) -> Result<bool, StoreError> {
        self.inside.psp_pay(payment_id, at).await
    }
    async fn psp_state(&self, payment_id: &str) -> Result<Option<PspCharge>, StoreError> {
        self.inside.psp_state(payment_id).await
    }
}

#[async_trait]
impl CoordinationStore for LosesReply {
    fn limiter(&self, per_second: NonZeroU32) -> Arc<dyn KeyRateLimit> {
        self.inside.limiter(per_second)
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.inside.ping().await
    }
    async fn reserve_task(
        &self,
        name: &str,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.inside.reserve_task(name, owner, now, until).await
    }
}

#[tokio::test]
async fn a_charge_whose_sqlite_writer_reply_is_lost_answers_what_was_committed() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
    let inside: Arc<dyn Store> = Arc::new(SqliteStore::connect(&url).await.unwrap());
    let backend = Arc::new(LosesReply {
        inside,
        lose: AtomicUsize::new(0),
        without_result: false.into(),
        searches: AtomicUsize::new(0),
        estornos: AtomicUsize::new(0),
    });
    let clock = ClockMs::on("2026-05-04T15:00:00Z");
    let srv = server_over(backend.clone(), &url, &clock).await;
    let c = srv
        .create_conta(carapi_service::NovaConta {
            saldo: 10.into(),
            ..carapi_service::NovaConta::default()
        })
        .await
        .unwrap();
    backend.lose.store(1, Ordering::SeqCst);
    let r = get(&srv, &c.api_key, &format!("/v1/car/{CODIGO}")).await;
    assert_eq!(backend.lose.load(Ordering::SeqCst), 0, "the fault happened");
    assert_eq!(r.status, 200, "{:?}", r.body);
    assert_eq!(r.body["dados"]["codigoCar"], CODIGO, "{:?}", r.body);
    let saldo = get(&srv, &c.api_key, "/v1/saldo").await.body;
    assert_eq!(saldo["saldoReais"].as_f64(), Some(9.0), "{saldo}");
    let ledger = srv.check_ledger(c.conta_id).await.unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    srv.shutdown().await;
}

/// The reply of a charge's commit is lost and the database cannot tell its outcome within the
/// bound: the answer is 500 `ERRO_INTERNO` that claims nothing about the charge, the outcome was
/// asked for more than once, the request id is in the fsynced journal beside the SQLite file,
/// and `razao conferir` lists it as still open (charged without a 200).
#[tokio::test]
async fn a_charge_whose_outcome_cannot_be_learned_is_a_500_and_journaled() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("carapi.db");
    let url = format!("sqlite://{}", file.display());
    let inside: Arc<dyn Store> = Arc::new(SqliteStore::connect(&url).await.unwrap());
    let backend = Arc::new(LosesReply {
        inside,
        lose: AtomicUsize::new(0),
        without_result: false.into(),
        searches: AtomicUsize::new(0),
        estornos: AtomicUsize::new(0),
    });
    let clock = ClockMs::on("2026-05-04T15:00:00Z");
    let srv = server_over(backend.clone(), &url, &clock).await;
    let c = srv
        .create_conta(carapi_service::NovaConta {
            saldo: 10.into(),
            ..carapi_service::NovaConta::default()
        })
        .await
        .unwrap();
    backend.lose.store(1, Ordering::SeqCst);
    backend.without_result.store(true, Ordering::SeqCst);
    let r = get(&srv, &c.api_key, &format!("/v1/car/{CODIGO}")).await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    assert_eq!(r.body["error"], "ERRO_INTERNO", "{:?}", r.body);
    let msg = r.body["message"].as_str().unwrap().to_lowercase();
    assert!(
        !msg.contains("cobrad"),
        "claims nothing about the charge: {msg}"
    );
    assert!(
        backend.searches.load(Ordering::SeqCst) > 1,
        "the outcome was asked again within the bound"
    );
    let diario = journal::Journal::at(dir.path().join("carapi.db.diario"));
    let inputs = diario.entries().unwrap();
    assert_eq!(inputs.len(), 1, "{inputs:?}");
    assert_eq!(inputs[0].conta, c.conta_id);
    backend.without_result.store(false, Ordering::SeqCst);
    let ledger = srv.check_ledger(c.conta_id).await.unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    srv.shutdown().await;
    let out = crate::server_process::command(&["razao", "conferir", "--banco", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let requested = inputs[0].request_id.to_string();
    assert!(
        err.contains(&format!("em aberto: pedido {requested}"))
            && err.contains("cobrado sem resposta 200"),
        "{err}"
    );
}

/// A test server over `store` whose job loop turns every 50 ms (the journal is settled on each
/// turn), with `clock`.
async fn server_with_laps(
    store: Arc<dyn Store>,
    url: &str,
    diario: &std::path::Path,
    clock: &ClockMs,
) -> carapi_service::RunningServer {
    let mut config = carapi_service::Config::local(url);
    config.journal = Some(diario.to_owned());
    config.rate_limit = None;
    config.reconcile_interval = std::time::Duration::from_millis(50);
    let state = carapi_service::AppState::new(store, config).with_clock(clock.clock());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    carapi_service::startup::spawn_with(state, listener)
        .await
        .unwrap()
}

/// Waits (at most 10 s) until the journal has no open entry.
async fn journal_settled(diario: &journal::Journal) {
    for _ in 0..200 {
        if diario.entries().unwrap().is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("journal still open: {:?}", diario.entries());
}

/// A charge committed, its reply lost and its outcome unknown within the bound: 500 and
/// journaled. While the database stays away the job loop's turns change nothing, and the server
/// is restarted before it returns; once it is back, the new server's job loop reverses the
/// charge once: the balance as if never debited, the history row kept and not charged, the
/// day's counters without it, the ledger check true, the journal closed. A replay of the entry
/// (a crash between the reversal's commit and the journal's close) reverses nothing more.
/// Over SQLite, and PostgreSQL when `DATABASE_URL` names one.
#[tokio::test]
async fn a_journaled_charge_that_committed_is_reversed_once_also_across_a_restart() {
    for database in crate::server::databases("estorno_diario").await {
        eprintln!("[{}]", database.name);
        estornada_once(&database.url).await;
    }
}

async fn estornada_once(url: &str) {
    let url = url.to_owned();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("carapi.diario");
    let inside: Arc<dyn Store> = carapi_service::startup::open_store(&url).await.unwrap();
    carapi_service::startup::load_bundled_data(inside.as_ref())
        .await
        .unwrap();
    let backend = Arc::new(LosesReply {
        inside,
        lose: AtomicUsize::new(0),
        without_result: false.into(),
        searches: AtomicUsize::new(0),
        estornos: AtomicUsize::new(0),
    });
    let clock = ClockMs::on("2026-05-04T15:00:00Z");
    let srv = server_with_laps(backend.clone(), &url, &path, &clock).await;
    let c = srv
        .create_conta(carapi_service::NovaConta {
            saldo: 10.into(),
            ..carapi_service::NovaConta::default()
        })
        .await
        .unwrap();
    let antes = backend.inside.ledger(c.conta_id).await.unwrap().unwrap();
    backend.lose.store(1, Ordering::SeqCst);
    backend.without_result.store(true, Ordering::SeqCst);
    let r = get(&srv, &c.api_key, &format!("/v1/car/{CODIGO}")).await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    let diario = journal::Journal::at(&path);
    assert_eq!(diario.entries().unwrap().len(), 1);
    let open_line = std::fs::read_to_string(diario.path()).unwrap();
    let debited = backend.inside.ledger(c.conta_id).await.unwrap().unwrap();
    assert!(
        debited.saldo < antes.saldo,
        "the charge committed: {debited:?}"
    );
    // The database stays away: turns of the job loop, then a restart, change nothing.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    srv.shutdown().await;
    let srv = server_with_laps(backend.clone(), &url, &path, &clock).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(diario.entries().unwrap().len(), 1, "closed while away");
    assert_eq!(backend.estornos.load(Ordering::SeqCst), 0);
    // The database is back: the new server's job loop reverses it, once.
    backend.without_result.store(false, Ordering::SeqCst);
    journal_settled(&diario).await;
    assert_eq!(backend.estornos.load(Ordering::SeqCst), 1);
    let depois = backend.inside.ledger(c.conta_id).await.unwrap().unwrap();
    assert_eq!(depois.saldo, antes.saldo, "{depois:?}");
    assert_eq!(
        depois.estornos,
        antes.saldo.checked_sub(debited.saldo).unwrap()
    );
    assert_eq!(depois.cobrado_historico, Centavos::ZERO);
    assert!(depois.is_consistent(), "{depois:?}");
    let h = get(&srv, &c.api_key, "/v1/historico").await;
    let itens = h.body["itens"].as_array().unwrap();
    assert_eq!(itens.len(), 1, "the row is kept: {:?}", h.body);
    assert_eq!(itens[0]["cobrado"], false, "{:?}", itens[0]);
    assert_eq!(itens[0]["valorCobrado"], 0.0, "{:?}", itens[0]);
    let day = NaiveDate::from_ymd_opt(2026, 5, 4).unwrap();
    let uso = backend.inside.uso_period(c.conta_id, day).await.unwrap();
    assert_eq!((uso.hoje_cobradas, uso.hoje_gasto), (0, Centavos::ZERO));
    assert_eq!(uso.mes_gasto, Centavos::ZERO);
    // A crash between the reversal's commit and the journal's close: the entry is open again.
    std::fs::write(diario.path(), &open_line).unwrap();
    let done = srv.state().settle_journal().await;
    assert_eq!((done.estornadas, done.closed), (0, 1), "{done:?}");
    assert!(diario.entries().unwrap().is_empty());
    assert_eq!(backend.estornos.load(Ordering::SeqCst), 1);
    let again = backend.inside.ledger(c.conta_id).await.unwrap().unwrap();
    assert_eq!(again, depois);
    srv.shutdown().await;
    let path = path.display().to_string();
    let out =
        crate::server_process::command(&["razao", "conferir", "--banco", &url, "--diario", &path])
            .output()
            .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("em aberto"), "{err}");
}
