//! A charged lookup whose future is dropped (a `tokio::time::timeout`, a `select!`, an aborted
//! handler) at many points between sending and answering: whatever the server debited is
//! counted by `gasto()` (confirmed plus uncertain) at every point, `settle_incertos()` then
//! makes the two equal, and a spend cap is never passed by cancelling and resuming. Against the
//! in-process test double and against a `carapi-server serve` process.

use std::time::{Duration, Instant};

use carapi_sdk::{Client, ClientBuilder, Error, Gasto, dec};
use carapi_service::ContaCriada;
use carapi_test_double::TestServer;
use rust_decimal::Decimal;

use crate::CODIGO_REAL;
use crate::server_process::{ContaProcess, Process};

/// Points of the sweep, per server.
const POINTS: u32 = 40;

/// Cancelled or not, one after the other with one client under a cap.
const ATTEMPTS: u32 = 60;

/// The settle grace of these clients: the servers here end a request in milliseconds.
const SETTLE_GRACE: Duration = Duration::from_millis(300);

/// What the sweep needs of a server.
trait Target {
    type Conta;
    async fn conta(&self, saldo: Decimal) -> Self::Conta;
    fn builder(&self, conta: &Self::Conta) -> ClientBuilder;
    async fn debited(&self, conta: &Self::Conta) -> Decimal;
}

impl Target for TestServer {
    type Conta = ContaCriada;
    async fn conta(&self, saldo: Decimal) -> ContaCriada {
        TestServer::conta(self).saldo(saldo).create().await.unwrap()
    }
    fn builder(&self, conta: &ContaCriada) -> ClientBuilder {
        self.client_builder(conta)
    }
    async fn debited(&self, conta: &ContaCriada) -> Decimal {
        self.conta_state(conta).await.unwrap().debited
    }
}

impl Target for Process {
    type Conta = ContaProcess;
    async fn conta(&self, saldo: Decimal) -> ContaProcess {
        Process::conta(self, saldo).await
    }
    fn builder(&self, conta: &ContaProcess) -> ClientBuilder {
        Client::builder()
            .base_url(&self.base_url)
            .api_key(&conta.api_key)
    }
    async fn debited(&self, conta: &ContaProcess) -> Decimal {
        Process::debited(self, conta).await
    }
}

/// How long one whole lookup takes against `alvo`: five of them on an account of their own,
/// sorted. The sweep spans the fastest, so that a load spike while measuring (other builds on a
/// shared machine) cannot stretch it past the lookups it should cut; the resume phase the
/// median, so that enough of its tries are sent to reach the cap.
async fn durations<A: Target>(target: &A) -> Vec<Duration> {
    let conta = target.conta(dec!(100)).await;
    let c = target.builder(&conta).build().unwrap();
    c.saldo().await.unwrap();
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        c.car(CODIGO_REAL).await.unwrap();
        times.push(t.elapsed());
    }
    times.sort();
    times
}

#[track_caller]
fn conta_everything(debited: Decimal, g: Gasto, point: &str) {
    assert!(
        debited <= g.confirmado + g.incerto,
        "{point}: the server debited {debited}, gasto() counts {g:?}"
    );
}

/// One lookup per account, cancelled after `k/PONTOS` of 1.5 times a whole lookup; half the
/// clients had an answer before (prices and the server's time known), half are fresh.
async fn sweep<A: Target>(target: &A) {
    let whole = durations(target).await[0];
    let mut clients = Vec::new();
    let mut cancelled = 0;
    for k in 0..POINTS {
        let conta = target.conta(dec!(100)).await;
        let c = target
            .builder(&conta)
            .settle_grace(SETTLE_GRACE)
            .build()
            .unwrap();
        if k % 2 == 0 {
            c.saldo().await.unwrap();
        }
        let deadline = whole.mul_f64(1.5 * f64::from(k) / f64::from(POINTS));
        match tokio::time::timeout(deadline, c.car(CODIGO_REAL)).await {
            Err(_) => cancelled += 1,
            Ok(r) => {
                r.unwrap();
            }
        }
        // A fresh client's lookup cancelled before its price read answered is counted without
        // a price (`nao_precificadas`); the free read prices it.
        c.precos().await.unwrap();
        conta_everything(
            target.debited(&conta).await,
            c.gasto(),
            &format!("point {k}, {deadline:?}"),
        );
        clients.push((k, conta, c));
    }
    assert!(
        cancelled >= POINTS / 3,
        "the sweep cancelled only {cancelled} lookups"
    );
    // Every request has ended at the server; the grace of each loss is over.
    tokio::time::sleep(SETTLE_GRACE * 3).await;
    let mut uncertain_cobradas = 0;
    for (k, conta, c) in clients {
        let debited = target.debited(&conta).await;
        conta_everything(debited, c.gasto(), &format!("point {k}, later"));
        let r = c.settle_incertos().await.unwrap();
        uncertain_cobradas += r.cobradas;
        let g = c.gasto();
        assert_eq!(r.pendentes, 0, "point {k}: {r:?}");
        assert_eq!(
            (g.confirmado, g.incerto),
            (debited, dec!(0)),
            "point {k}: after settle_incertos(), gasto() is what the server debited ({r:?})"
        );
    }
    eprintln!("{cancelled} of {POINTS} cancelled; {uncertain_cobradas} of them charged");
}

/// Cancelling and resuming with one client under `max_spend(10)`: the server never debits more
/// than R$ 10,00.
async fn resume_under_limite<A: Target>(target: &A) {
    let whole = durations(target).await[2];
    let conta = target.conta(dec!(100)).await;
    let c = target
        .builder(&conta)
        .max_spend(dec!(10))
        .settle_grace(SETTLE_GRACE)
        .build()
        .unwrap();
    let mut refused = 0;
    for k in 0..ATTEMPTS {
        // Two tries in ten have no deadline: they reach the cap even when a loaded machine
        // makes every lookup slower than the measured one.
        let deadline = if k % 10 >= 8 {
            Duration::from_secs(3600)
        } else {
            whole.mul_f64(2.0 * f64::from(k % 10) / 10.0)
        };
        if let Ok(Err(Error::SpendLimit { .. })) =
            tokio::time::timeout(deadline, c.car(CODIGO_REAL)).await
        {
            refused += 1;
        }
        let debited = target.debited(&conta).await;
        assert!(debited <= dec!(10), "try {k}: the server debited {debited}");
        conta_everything(debited, c.gasto(), &format!("try {k}"));
        // Not a cancel inside the client's rate limiter: each try gets sent.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(SETTLE_GRACE * 3).await;
    c.settle_incertos().await.unwrap();
    // Resumed after settling: the cap still holds, and now it is reached exactly.
    let end = loop {
        if let Err(e) = c.car(CODIGO_REAL).await {
            break e;
        }
    };
    assert!(matches!(end, Error::SpendLimit { .. }), "{end:?}");
    eprintln!("{refused} of {ATTEMPTS} tries refused by the cap before settling");
    assert!(refused > 0, "the cancel phase never reached the cap");
    let debited = target.debited(&conta).await;
    assert!(debited <= dec!(10), "the server debited {debited}");
    let g = c.gasto();
    assert_eq!((g.confirmado, g.incerto), (debited, dec!(0)));
    assert_eq!(
        debited,
        dec!(10),
        "with nothing uncertain the cap is used to the centavo"
    );
}

#[tokio::test]
async fn a_cancelled_lookup_is_counted_against_the_double() {
    let srv = TestServer::start().await.unwrap();
    sweep(&srv).await;
}

#[tokio::test]
async fn a_cancelled_lookup_is_counted_against_a_server_process() {
    let p = tokio::task::spawn_blocking(Process::start).await.unwrap();
    sweep(&p).await;
}

#[tokio::test]
async fn cancel_then_resume_never_passes_the_cap_on_the_double() {
    let srv = TestServer::start().await.unwrap();
    resume_under_limite(&srv).await;
}

#[tokio::test]
async fn cancel_then_resume_never_passes_the_cap_on_a_server_process() {
    let p = tokio::task::spawn_blocking(Process::start).await.unwrap();
    resume_under_limite(&p).await;
}
