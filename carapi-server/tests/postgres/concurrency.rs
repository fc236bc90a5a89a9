//! The money-critical races at the store level, on SQLite and PostgreSQL.

use std::sync::Arc;

use carapi_service::Centavos;
use carapi_service::store::prelude::*;
use carapi_service::store::{CobrancaResult, Confirmation};

use super::backend::{cobranca, instant, new_conta, new_recarga};
use super::backends;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_charges_on_fifty_of_balance_on_both_stores() {
    for l in backends("two_hundred_concurrent_charges_on_fifty_of_balance_on_both_stores").await {
        let s = l.store.clone();
        s.write_imoveis(&carapi_service::dados::bundled())
            .await
            .unwrap();
        let a = new_conta(s.as_ref(), 5_000, false).await;
        let day = "2024-05-31".parse().unwrap();
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let s = s.clone();
                tokio::spawn(async move {
                    s.charge_consulta(cobranca(a, day, instant(i)))
                        .await
                        .unwrap()
                })
            })
            .collect();
        let (mut ok, mut refusal, mut caches) = (0, 0, 0);
        for t in tasks {
            match t.await.unwrap() {
                CobrancaResult::Cobrada { cache, .. } => {
                    ok += 1;
                    caches += i32::from(cache);
                }
                CobrancaResult::SaldoInsuficiente { preco, .. } if preco == Centavos::new(100) => {
                    refusal += 1
                }
                r => panic!("{}: {r:?}", l.name),
            }
        }
        assert_eq!((ok, refusal, caches), (50, 150, 49), "{}", l.name);
        let u = s.uso_period(a, day).await.unwrap();
        assert_eq!(
            (
                u.hoje_requisicoes,
                u.hoje_cobradas,
                u.hoje_erros,
                u.hoje_gasto
            ),
            (200, 50, 150, Centavos::new(5_000))
        );
        let ledger = s.ledger(a).await.unwrap().unwrap();
        assert!(ledger.is_consistent(), "{}: {ledger:?}", l.name);
        assert_eq!(
            (ledger.saldo, ledger.debits),
            (Centavos::ZERO, Centavos::new(5_000)),
            "{}",
            l.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_confirmations_credit_once_on_both_stores() {
    for l in backends("twenty_concurrent_confirmations_credit_once_on_both_stores").await {
        let s = l.store.clone();
        let a = new_conta(s.as_ref(), 100, true).await;
        for round in 0..3 {
            let r = new_recarga(a, 100_000 + round, instant(round));
            s.insert_recarga(r.clone(), instant(-600)).await.unwrap();
            let tasks: Vec<_> = (0..20)
                .map(|i| {
                    let (s, p) = (s.clone(), r.payment_id.clone());
                    tokio::spawn(
                        async move { s.confirm_recarga(&p, instant(1_000 + i)).await.unwrap() },
                    )
                })
                .collect();
            let mut credited = 0;
            for t in tasks {
                match t.await.unwrap() {
                    Confirmation::Credited(_) => credited += 1,
                    Confirmation::AlreadyFinal(_) => {}
                    Confirmation::NotFound => panic!("{}", l.name),
                }
            }
            assert_eq!(credited, 1, "{}: round {round}", l.name);
        }
        let ledger = s.ledger(a).await.unwrap().unwrap();
        assert!(ledger.is_consistent(), "{}: {ledger:?}", l.name);
        // 1000.00 + 1000.01 + 1000.02 plus 5 % (rounded down by the test's bonus) each
        assert_eq!(
            ledger.creditado_recargas,
            Centavos::new(100_000 + 5_000 + 100_001 + 5_000 + 100_002 + 5_000)
        );
        assert_eq!(
            ledger.saldo,
            Centavos::new(100)
                .checked_add(ledger.creditado_recargas)
                .unwrap(),
            "{}",
            l.name
        );
        assert!(!s.conta(a).await.unwrap().unwrap().legado);
    }
}

/// Two stores (two pools, as two server processes would have) over one PostgreSQL database:
/// charges from both still never overdraw.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[cfg_attr(
    not(carapi_pg),
    ignore = "needs PostgreSQL: DATABASE_URL unset when this test was built"
)]
async fn two_processes_sharing_one_postgres_database_never_overdraw() {
    let Some(database) =
        super::TestDatabase::create("two_processes_sharing_one_postgres_database_never_overdraw")
            .await
    else {
        return;
    };
    let (p1, p2) = (database.store().await, database.store().await);
    p1.write_imoveis(&carapi_service::dados::bundled())
        .await
        .unwrap();
    let a = new_conta(p1.as_ref(), 1_000, false).await;
    let day = "2024-05-31".parse().unwrap();
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let s: Arc<dyn Store> = if i % 2 == 0 { p1.clone() } else { p2.clone() };
            tokio::spawn(async move {
                s.charge_consulta(cobranca(a, day, instant(i)))
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut ok = 0;
    for t in tasks {
        ok += i32::from(matches!(t.await.unwrap(), CobrancaResult::Cobrada { .. }));
    }
    assert_eq!(ok, 10);
    let ledger = p2.ledger(a).await.unwrap().unwrap();
    assert!(
        ledger.is_consistent() && ledger.saldo == Centavos::ZERO,
        "{ledger:?}"
    );
}
