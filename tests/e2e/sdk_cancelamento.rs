//! A charged lookup whose future is dropped (a `tokio::time::timeout`, a `select!`, an aborted
//! handler) at many points between sending and answering: whatever the server debited is
//! counted by `gasto()` (confirmed plus uncertain) at every point, `settle_uncertain()` then
//! makes the two equal, and a spend cap is never passed by cancelling and resuming. Against the
//! in-process test double and against a `carapi-server serve` process.

use std::time::{Duration, Instant};

use carapi_sdk::{Client, ClientBuilder, Error, Gasto, dec};
use carapi_service::ContaCriada;
use carapi_test_double::TestServer;
use rust_decimal::Decimal;

use crate::CODIGO_REAL;
use crate::processo::{ContaProcesso, Processo};

/// Points of the sweep, per server.
const PONTOS: u32 = 40;

/// Cancelled or not, one after the other with one client under a cap.
const TENTATIVAS: u32 = 60;

/// The settle grace of these clients: the servers here end a request in milliseconds.
const SETTLE_GRACE: Duration = Duration::from_millis(300);

/// What the sweep needs of a server.
trait Alvo {
    type Conta;
    async fn conta(&self, saldo: Decimal) -> Self::Conta;
    fn builder(&self, conta: &Self::Conta) -> ClientBuilder;
    async fn debitado(&self, conta: &Self::Conta) -> Decimal;
}

impl Alvo for TestServer {
    type Conta = ContaCriada;
    async fn conta(&self, saldo: Decimal) -> ContaCriada {
        TestServer::conta(self).saldo(saldo).create().await.unwrap()
    }
    fn builder(&self, conta: &ContaCriada) -> ClientBuilder {
        self.client_builder(conta)
    }
    async fn debitado(&self, conta: &ContaCriada) -> Decimal {
        self.conta_state(conta).await.unwrap().debitado
    }
}

impl Alvo for Processo {
    type Conta = ContaProcesso;
    async fn conta(&self, saldo: Decimal) -> ContaProcesso {
        Processo::conta(self, saldo).await
    }
    fn builder(&self, conta: &ContaProcesso) -> ClientBuilder {
        Client::builder()
            .base_url(&self.base_url)
            .api_key(&conta.api_key)
    }
    async fn debitado(&self, conta: &ContaProcesso) -> Decimal {
        Processo::debitado(self, conta).await
    }
}

/// How long one whole lookup takes against `alvo`: five of them on an account of their own,
/// sorted. The sweep spans the fastest, so that a load spike while measuring (other builds on a
/// shared machine) cannot stretch it past the lookups it should cut; the resume phase the
/// median, so that enough of its tries are sent to reach the cap.
async fn duracoes<A: Alvo>(alvo: &A) -> Vec<Duration> {
    let conta = alvo.conta(dec!(100)).await;
    let c = alvo.builder(&conta).build().unwrap();
    c.saldo().await.unwrap();
    let mut vezes = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        c.car(CODIGO_REAL).await.unwrap();
        vezes.push(t.elapsed());
    }
    vezes.sort();
    vezes
}

#[track_caller]
fn conta_tudo(debitado: Decimal, g: Gasto, ponto: &str) {
    assert!(
        debitado <= g.confirmado + g.incerto,
        "{ponto}: the server debited {debitado}, gasto() counts {g:?}"
    );
}

/// One lookup per account, cancelled after `k/PONTOS` of 1.5 times a whole lookup; half the
/// clients had an answer before (prices and the server's time known), half are fresh.
async fn varrer<A: Alvo>(alvo: &A) {
    let inteira = duracoes(alvo).await[0];
    let mut clientes = Vec::new();
    let mut cancelados = 0;
    for k in 0..PONTOS {
        let conta = alvo.conta(dec!(100)).await;
        let c = alvo
            .builder(&conta)
            .settle_grace(SETTLE_GRACE)
            .build()
            .unwrap();
        if k % 2 == 0 {
            c.saldo().await.unwrap();
        }
        let prazo = inteira.mul_f64(1.5 * f64::from(k) / f64::from(PONTOS));
        match tokio::time::timeout(prazo, c.car(CODIGO_REAL)).await {
            Err(_) => cancelados += 1,
            Ok(r) => {
                r.unwrap();
            }
        }
        // A fresh client's lookup cancelled before its price read answered is counted without
        // a price (`nao_precificadas`); the free read prices it.
        c.precos().await.unwrap();
        conta_tudo(
            alvo.debitado(&conta).await,
            c.gasto(),
            &format!("point {k}, {prazo:?}"),
        );
        clientes.push((k, conta, c));
    }
    assert!(
        cancelados >= PONTOS / 3,
        "the sweep cancelled only {cancelados} lookups"
    );
    // Every request has ended at the server; the grace of each loss is over.
    tokio::time::sleep(SETTLE_GRACE * 3).await;
    let mut cobradas_incertas = 0;
    for (k, conta, c) in clientes {
        let debitado = alvo.debitado(&conta).await;
        conta_tudo(debitado, c.gasto(), &format!("point {k}, later"));
        let r = c.settle_uncertain().await.unwrap();
        cobradas_incertas += r.cobradas;
        let g = c.gasto();
        assert_eq!(r.pendentes, 0, "point {k}: {r:?}");
        assert_eq!(
            (g.confirmado, g.incerto),
            (debitado, dec!(0)),
            "point {k}: after settle_uncertain(), gasto() is what the server debited ({r:?})"
        );
    }
    eprintln!("{cancelados} of {PONTOS} cancelled; {cobradas_incertas} of them charged");
}

/// Cancelling and resuming with one client under `max_spend(10)`: the server never debits more
/// than R$ 10,00.
async fn retomar_sob_limite<A: Alvo>(alvo: &A) {
    let inteira = duracoes(alvo).await[2];
    let conta = alvo.conta(dec!(100)).await;
    let c = alvo
        .builder(&conta)
        .max_spend(dec!(10))
        .settle_grace(SETTLE_GRACE)
        .build()
        .unwrap();
    let mut recusadas = 0;
    for k in 0..TENTATIVAS {
        // Two tries in ten have no deadline: they reach the cap even when a loaded machine
        // makes every lookup slower than the measured one.
        let prazo = if k % 10 >= 8 {
            Duration::from_secs(3600)
        } else {
            inteira.mul_f64(2.0 * f64::from(k % 10) / 10.0)
        };
        if let Ok(Err(Error::SpendLimit { .. })) =
            tokio::time::timeout(prazo, c.car(CODIGO_REAL)).await
        {
            recusadas += 1;
        }
        let debitado = alvo.debitado(&conta).await;
        assert!(
            debitado <= dec!(10),
            "try {k}: the server debited {debitado}"
        );
        conta_tudo(debitado, c.gasto(), &format!("try {k}"));
        // Not a cancel inside the client's rate limiter: each try gets sent.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(SETTLE_GRACE * 3).await;
    c.settle_uncertain().await.unwrap();
    // Resumed after settling: the cap still holds, and now it is reached exactly.
    let fim = loop {
        if let Err(e) = c.car(CODIGO_REAL).await {
            break e;
        }
    };
    assert!(matches!(fim, Error::SpendLimit { .. }), "{fim:?}");
    eprintln!("{recusadas} of {TENTATIVAS} tries refused by the cap before settling");
    assert!(recusadas > 0, "the cancel phase never reached the cap");
    let debitado = alvo.debitado(&conta).await;
    assert!(debitado <= dec!(10), "the server debited {debitado}");
    let g = c.gasto();
    assert_eq!((g.confirmado, g.incerto), (debitado, dec!(0)));
    assert_eq!(
        debitado,
        dec!(10),
        "with nothing uncertain the cap is used to the centavo"
    );
}

#[tokio::test]
async fn a_cancelled_lookup_is_counted_against_the_double() {
    let srv = TestServer::start().await.unwrap();
    varrer(&srv).await;
}

#[tokio::test]
async fn a_cancelled_lookup_is_counted_against_a_server_process() {
    let p = tokio::task::spawn_blocking(Processo::start).await.unwrap();
    varrer(&p).await;
}

#[tokio::test]
async fn cancel_then_resume_never_passes_the_cap_on_the_double() {
    let srv = TestServer::start().await.unwrap();
    retomar_sob_limite(&srv).await;
}

#[tokio::test]
async fn cancel_then_resume_never_passes_the_cap_on_a_server_process() {
    let p = tokio::task::spawn_blocking(Processo::start).await.unwrap();
    retomar_sob_limite(&p).await;
}
