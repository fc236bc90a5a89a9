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

use crate::dinheiro::{RelogioMs, get, servidor_sobre};
use crate::helpers::CODIGO;

/// Every call goes to `dentro`; the reply of the next `perder` charges is replaced by
/// [`StoreError::ReplyLost`] after `dentro` answered.
#[derive(Debug)]
struct PerdeResposta {
    dentro: Arc<dyn Store>,
    perder: AtomicUsize,
    /// While true, every lookup of a charge's outcome fails (the database stays away).
    sem_resultado: std::sync::atomic::AtomicBool,
    /// Lookups of an outcome asked for.
    buscas: AtomicUsize,
    /// Charges reversed.
    estornos: AtomicUsize,
}

#[async_trait]
impl ConsultasStore for PerdeResposta {
    async fn record_consulta(&self, r: ConsultaRecord) -> Result<(), StoreError> {
        self.dentro.record_consulta(r).await
    }
    async fn charge_consulta(&self, c: Cobranca) -> Result<CobrancaResult, StoreError> {
        let r = self.dentro.charge_consulta(c).await;
        let perdeu = self
            .perder
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if perdeu {
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
        self.dentro.remove_uncharged(conta, antes, limite).await
    }
    async fn cobranca_outcome(
        &self,
        conta: ContaId,
        pedido: Uuid,
        em: DateTime<Utc>,
    ) -> Result<Option<RecordedConsulta>, StoreError> {
        self.buscas.fetch_add(1, Ordering::SeqCst);
        if self.sem_resultado.load(Ordering::SeqCst) {
            return Err(StoreError::Database("conexão recusada".into()));
        }
        self.dentro.cobranca_outcome(conta, pedido, em).await
    }
    async fn reverse_cobranca(
        &self,
        conta: ContaId,
        pedido: Uuid,
        em: DateTime<Utc>,
    ) -> Result<Estorno, StoreError> {
        if self.sem_resultado.load(Ordering::SeqCst) {
            return Err(StoreError::Database("conexão recusada".into()));
        }
        let r = self.dentro.reverse_cobranca(conta, pedido, em).await?;
        if matches!(r, Estorno::Estornada { .. }) {
            self.estornos.fetch_add(1, Ordering::SeqCst);
        }
        Ok(r)
    }
    async fn uso_period(&self, conta: ContaId, dia: NaiveDate) -> Result<UsoPeriod, StoreError> {
        self.dentro.uso_period(conta, dia).await
    }
    async fn historico(
        &self,
        conta: ContaId,
        filtro: &HistoricoFilter,
    ) -> Result<(Vec<RecordedConsulta>, u64), StoreError> {
        self.dentro.historico(conta, filtro).await
    }
    async fn uso_by_endpoint(
        &self,
        conta: ContaId,
        desde: DateTime<Utc>,
    ) -> Result<Vec<UsoEndpoint>, StoreError> {
        self.dentro.uso_by_endpoint(conta, desde).await
    }
}

#[async_trait]
impl SettingsStore for PerdeResposta {
    async fn settings_or_insert(&self, chave: &str, valor: &str) -> Result<String, StoreError> {
        self.dentro.settings_or_insert(chave, valor).await
    }
    async fn setting(&self, chave: &str) -> Result<Option<String>, StoreError> {
        self.dentro.setting(chave).await
    }
}

#[async_trait]
impl ContasStore for PerdeResposta {
    async fn create_conta(&self, nova: NovaContaRecord) -> Result<ContaId, StoreError> {
        self.dentro.create_conta(nova).await
    }
    async fn conta_by_key(&self, chave_hash: &str) -> Result<Option<Conta>, StoreError> {
        self.dentro.conta_by_key(chave_hash).await
    }
    async fn conta(&self, id: ContaId) -> Result<Option<Conta>, StoreError> {
        self.dentro.conta(id).await
    }
    async fn contas(&self) -> Result<Vec<ContaId>, StoreError> {
        self.dentro.contas().await
    }
    async fn atualizar_limites(
        &self,
        id: ContaId,
        diario: Patch<u32>,
        mensal: Patch<Centavos>,
    ) -> Result<Option<Conta>, StoreError> {
        self.dentro.atualizar_limites(id, diario, mensal).await
    }
    async fn ledger(&self, conta: ContaId) -> Result<Option<Ledger>, StoreError> {
        self.dentro.ledger(conta).await
    }
}

#[async_trait]
impl ImoveisStore for PerdeResposta {
    async fn count_imoveis(&self) -> Result<u64, StoreError> {
        self.dentro.count_imoveis().await
    }
    async fn write_imoveis(&self, imoveis: &[Imovel]) -> Result<u64, StoreError> {
        self.dentro.write_imoveis(imoveis).await
    }
    async fn imovel(&self, codigo: &CodigoCar) -> Result<Option<Imovel>, StoreError> {
        self.dentro.imovel(codigo).await
    }
    async fn imoveis_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<Imovel>, bool), StoreError> {
        self.dentro.imoveis_of_documento(documento, limite).await
    }
    async fn itens_of_documento(
        &self,
        documento: &CpfCnpj,
        limite: u32,
    ) -> Result<(Vec<OwnerImovel>, bool), StoreError> {
        self.dentro.itens_of_documento(documento, limite).await
    }
}

#[async_trait]
impl RecargasStore for PerdeResposta {
    async fn reusable_recarga(
        &self,
        conta: ContaId,
        valor: Centavos,
        desde: DateTime<Utc>,
    ) -> Result<Option<Recarga>, StoreError> {
        self.dentro.reusable_recarga(conta, valor, desde).await
    }
    async fn insert_recarga(
        &self,
        nova: Recarga,
        desde: DateTime<Utc>,
    ) -> Result<(Recarga, bool), StoreError> {
        self.dentro.insert_recarga(nova, desde).await
    }
    async fn complete_recarga(&self, id: Uuid, qr_code: &str) -> Result<(), StoreError> {
        self.dentro.complete_recarga(id, qr_code).await
    }
    async fn discard_recarga(&self, id: Uuid) -> Result<(), StoreError> {
        self.dentro.discard_recarga(id).await
    }
    async fn recarga(&self, conta: ContaId, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        self.dentro.recarga(conta, id).await
    }
    async fn recarga_by_id(&self, id: Uuid) -> Result<Option<Recarga>, StoreError> {
        self.dentro.recarga_by_id(id).await
    }
    async fn recarga_by_payment_id(&self, payment_id: &str) -> Result<Option<Recarga>, StoreError> {
        self.dentro.recarga_by_payment_id(payment_id).await
    }
    async fn recargas(
        &self,
        conta: ContaId,
        status: Option<RecargaStatus>,
        page: u32,
        size: u32,
    ) -> Result<(Vec<Recarga>, u64), StoreError> {
        self.dentro.recargas(conta, status, page, size).await
    }
    async fn pending_recargas(&self, limite: u32) -> Result<Vec<Recarga>, StoreError> {
        self.dentro.pending_recargas(limite).await
    }
    async fn confirm_recarga(
        &self,
        payment_id: &str,
        em: DateTime<Utc>,
    ) -> Result<Confirmation, StoreError> {
        self.dentro.confirm_recarga(payment_id, em).await
    }
}

#[async_trait]
impl PspStore for PerdeResposta {
    async fn psp_register(
        &self,
        payment_id: &str,
        valor: Centavos,
        documento: &CpfCnpj,
        email: Option<&str>,
        em: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        self.dentro
            .psp_register(payment_id, valor, documento, email, em)
            .await
    }
    async fn psp_pay(&self, payment_id: &str, em: DateTime<Utc>) -> Result<bool, StoreError> {
        self.dentro.psp_pay(payment_id, em).await
    }
    async fn psp_state(&self, payment_id: &str) -> Result<Option<PspCharge>, StoreError> {
        self.dentro.psp_state(payment_id).await
    }
}

#[async_trait]
impl CoordinationStore for PerdeResposta {
    fn limiter(&self, per_second: NonZeroU32) -> Arc<dyn KeyRateLimit> {
        self.dentro.limiter(per_second)
    }
    async fn ping(&self) -> Result<(), StoreError> {
        self.dentro.ping().await
    }
    async fn reserve_task(
        &self,
        nome: &str,
        dono: &str,
        now: DateTime<Utc>,
        ate: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.dentro.reserve_task(nome, dono, now, ate).await
    }
}

#[tokio::test]
async fn a_charge_whose_sqlite_writer_reply_is_lost_answers_what_was_committed() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("carapi.db").display());
    let dentro: Arc<dyn Store> = Arc::new(SqliteStore::connect(&url).await.unwrap());
    let loja = Arc::new(PerdeResposta {
        dentro,
        perder: AtomicUsize::new(0),
        sem_resultado: false.into(),
        buscas: AtomicUsize::new(0),
        estornos: AtomicUsize::new(0),
    });
    let clock = RelogioMs::on("2026-05-04T15:00:00Z");
    let srv = servidor_sobre(loja.clone(), &url, &clock).await;
    let c = srv
        .create_conta(carapi_service::NovaConta {
            saldo: 10.into(),
            ..carapi_service::NovaConta::default()
        })
        .await
        .unwrap();
    loja.perder.store(1, Ordering::SeqCst);
    let r = get(&srv, &c.api_key, &format!("/v1/car/{CODIGO}")).await;
    assert_eq!(loja.perder.load(Ordering::SeqCst), 0, "the fault happened");
    assert_eq!(r.status, 200, "{:?}", r.corpo);
    assert_eq!(r.corpo["dados"]["codigoCar"], CODIGO, "{:?}", r.corpo);
    let saldo = get(&srv, &c.api_key, "/v1/saldo").await.corpo;
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
    let arquivo = dir.path().join("carapi.db");
    let url = format!("sqlite://{}", arquivo.display());
    let dentro: Arc<dyn Store> = Arc::new(SqliteStore::connect(&url).await.unwrap());
    let loja = Arc::new(PerdeResposta {
        dentro,
        perder: AtomicUsize::new(0),
        sem_resultado: false.into(),
        buscas: AtomicUsize::new(0),
        estornos: AtomicUsize::new(0),
    });
    let clock = RelogioMs::on("2026-05-04T15:00:00Z");
    let srv = servidor_sobre(loja.clone(), &url, &clock).await;
    let c = srv
        .create_conta(carapi_service::NovaConta {
            saldo: 10.into(),
            ..carapi_service::NovaConta::default()
        })
        .await
        .unwrap();
    loja.perder.store(1, Ordering::SeqCst);
    loja.sem_resultado.store(true, Ordering::SeqCst);
    let r = get(&srv, &c.api_key, &format!("/v1/car/{CODIGO}")).await;
    assert_eq!(r.status, 500, "{:?}", r.corpo);
    assert_eq!(r.corpo["error"], "ERRO_INTERNO", "{:?}", r.corpo);
    let msg = r.corpo["message"].as_str().unwrap().to_lowercase();
    assert!(
        !msg.contains("cobrad"),
        "claims nothing about the charge: {msg}"
    );
    assert!(
        loja.buscas.load(Ordering::SeqCst) > 1,
        "the outcome was asked again within the bound"
    );
    let diario = journal::Journal::at(dir.path().join("carapi.db.diario"));
    let entradas = diario.entries().unwrap();
    assert_eq!(entradas.len(), 1, "{entradas:?}");
    assert_eq!(entradas[0].conta, c.conta_id);
    loja.sem_resultado.store(false, Ordering::SeqCst);
    let ledger = srv.check_ledger(c.conta_id).await.unwrap();
    assert!(ledger.is_consistent(), "{ledger:?}");
    srv.shutdown().await;
    let out = crate::processo::comando(&["razao", "conferir", "--banco", &url])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let pedido = entradas[0].request_id.to_string();
    assert!(
        err.contains(&format!("em aberto: pedido {pedido}"))
            && err.contains("cobrado sem resposta 200"),
        "{err}"
    );
}

/// A test server over `store` whose job loop turns every 50 ms (the journal is settled on each
/// turn), with `clock`.
async fn servidor_com_voltas(
    store: Arc<dyn Store>,
    url: &str,
    diario: &std::path::Path,
    clock: &RelogioMs,
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
    for banco in crate::server::bancos("estorno_diario").await {
        eprintln!("[{}]", banco.nome);
        reversed_once(&banco.url).await;
    }
}

async fn reversed_once(url: &str) {
    let url = url.to_owned();
    let dir = tempfile::tempdir().unwrap();
    let caminho = dir.path().join("carapi.diario");
    let dentro: Arc<dyn Store> = carapi_service::startup::open_store(&url).await.unwrap();
    carapi_service::startup::load_bundled_data(dentro.as_ref())
        .await
        .unwrap();
    let loja = Arc::new(PerdeResposta {
        dentro,
        perder: AtomicUsize::new(0),
        sem_resultado: false.into(),
        buscas: AtomicUsize::new(0),
        estornos: AtomicUsize::new(0),
    });
    let clock = RelogioMs::on("2026-05-04T15:00:00Z");
    let srv = servidor_com_voltas(loja.clone(), &url, &caminho, &clock).await;
    let c = srv
        .create_conta(carapi_service::NovaConta {
            saldo: 10.into(),
            ..carapi_service::NovaConta::default()
        })
        .await
        .unwrap();
    let antes = loja.dentro.ledger(c.conta_id).await.unwrap().unwrap();
    loja.perder.store(1, Ordering::SeqCst);
    loja.sem_resultado.store(true, Ordering::SeqCst);
    let r = get(&srv, &c.api_key, &format!("/v1/car/{CODIGO}")).await;
    assert_eq!(r.status, 500, "{:?}", r.corpo);
    let diario = journal::Journal::at(&caminho);
    assert_eq!(diario.entries().unwrap().len(), 1);
    let linha_aberta = std::fs::read_to_string(diario.path()).unwrap();
    let debitado = loja.dentro.ledger(c.conta_id).await.unwrap().unwrap();
    assert!(
        debitado.saldo < antes.saldo,
        "the charge committed: {debitado:?}"
    );
    // The database stays away: turns of the job loop, then a restart, change nothing.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    srv.shutdown().await;
    let srv = servidor_com_voltas(loja.clone(), &url, &caminho, &clock).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(diario.entries().unwrap().len(), 1, "closed while away");
    assert_eq!(loja.estornos.load(Ordering::SeqCst), 0);
    // The database is back: the new server's job loop reverses it, once.
    loja.sem_resultado.store(false, Ordering::SeqCst);
    journal_settled(&diario).await;
    assert_eq!(loja.estornos.load(Ordering::SeqCst), 1);
    let depois = loja.dentro.ledger(c.conta_id).await.unwrap().unwrap();
    assert_eq!(depois.saldo, antes.saldo, "{depois:?}");
    assert_eq!(
        depois.estornos,
        antes.saldo.checked_sub(debitado.saldo).unwrap()
    );
    assert_eq!(depois.cobrado_historico, Centavos::ZERO);
    assert!(depois.is_consistent(), "{depois:?}");
    let h = get(&srv, &c.api_key, "/v1/historico").await;
    let itens = h.corpo["itens"].as_array().unwrap();
    assert_eq!(itens.len(), 1, "the row is kept: {:?}", h.corpo);
    assert_eq!(itens[0]["cobrado"], false, "{:?}", itens[0]);
    assert_eq!(itens[0]["valorCobrado"], 0.0, "{:?}", itens[0]);
    let dia = NaiveDate::from_ymd_opt(2026, 5, 4).unwrap();
    let uso = loja.dentro.uso_period(c.conta_id, dia).await.unwrap();
    assert_eq!((uso.hoje_cobradas, uso.hoje_gasto), (0, Centavos::ZERO));
    assert_eq!(uso.mes_gasto, Centavos::ZERO);
    // A crash between the reversal's commit and the journal's close: the entry is open again.
    std::fs::write(diario.path(), &linha_aberta).unwrap();
    let feito = srv.state().settle_journal().await;
    assert_eq!((feito.estornadas, feito.closed), (0, 1), "{feito:?}");
    assert!(diario.entries().unwrap().is_empty());
    assert_eq!(loja.estornos.load(Ordering::SeqCst), 1);
    let de_novo = loja.dentro.ledger(c.conta_id).await.unwrap().unwrap();
    assert_eq!(de_novo, depois);
    srv.shutdown().await;
    let caminho = caminho.display().to_string();
    let out =
        crate::processo::comando(&["razao", "conferir", "--banco", &url, "--diario", &caminho])
            .output()
            .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("em aberto"), "{err}");
}
