//! The money-critical races at the store level, on SQLite and PostgreSQL.

use std::sync::Arc;

use carapi_service::Centavos;
use carapi_service::store::prelude::*;
use carapi_service::store::{CobrancaResult, Confirmation};

use super::loja::{cobranca, instant, new_recarga, nova_conta};
use super::lojas;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_charges_on_fifty_of_balance_on_both_stores() {
    for l in lojas("two_hundred_concurrent_charges_on_fifty_of_balance_on_both_stores").await {
        let s = l.store.clone();
        s.write_imoveis(&carapi_service::dados::bundled())
            .await
            .unwrap();
        let a = nova_conta(s.as_ref(), 5_000, false).await;
        let dia = "2024-05-31".parse().unwrap();
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let s = s.clone();
                tokio::spawn(async move {
                    s.charge_consulta(cobranca(a, dia, instant(i)))
                        .await
                        .unwrap()
                })
            })
            .collect();
        let (mut ok, mut recusa, mut caches) = (0, 0, 0);
        for t in tasks {
            match t.await.unwrap() {
                CobrancaResult::Cobrada { cache, .. } => {
                    ok += 1;
                    caches += i32::from(cache);
                }
                CobrancaResult::SaldoInsuficiente { preco, .. } if preco == Centavos::new(100) => {
                    recusa += 1
                }
                r => panic!("{}: {r:?}", l.nome),
            }
        }
        assert_eq!((ok, recusa, caches), (50, 150, 49), "{}", l.nome);
        let u = s.uso_period(a, dia).await.unwrap();
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
        assert!(ledger.is_consistent(), "{}: {ledger:?}", l.nome);
        assert_eq!(
            (ledger.saldo, ledger.debitos),
            (Centavos::ZERO, Centavos::new(5_000)),
            "{}",
            l.nome
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_confirmations_credit_once_on_both_stores() {
    for l in lojas("twenty_concurrent_confirmations_credit_once_on_both_stores").await {
        let s = l.store.clone();
        let a = nova_conta(s.as_ref(), 100, true).await;
        for rodada in 0..3 {
            let r = new_recarga(a, 100_000 + rodada, instant(rodada));
            s.insert_recarga(r.clone(), instant(-600)).await.unwrap();
            let tasks: Vec<_> = (0..20)
                .map(|i| {
                    let (s, p) = (s.clone(), r.payment_id.clone());
                    tokio::spawn(
                        async move { s.confirm_recarga(&p, instant(1_000 + i)).await.unwrap() },
                    )
                })
                .collect();
            let mut creditadas = 0;
            for t in tasks {
                match t.await.unwrap() {
                    Confirmation::Creditada(_) => creditadas += 1,
                    Confirmation::JaFinal(_) => {}
                    Confirmation::NaoEncontrada => panic!("{}", l.nome),
                }
            }
            assert_eq!(creditadas, 1, "{}: round {rodada}", l.nome);
        }
        let ledger = s.ledger(a).await.unwrap().unwrap();
        assert!(ledger.is_consistent(), "{}: {ledger:?}", l.nome);
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
            l.nome
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
        super::BancoTeste::create("two_processes_sharing_one_postgres_database_never_overdraw")
            .await
    else {
        return;
    };
    let (p1, p2) = (database.store().await, database.store().await);
    p1.write_imoveis(&carapi_service::dados::bundled())
        .await
        .unwrap();
    let a = nova_conta(p1.as_ref(), 1_000, false).await;
    let dia = "2024-05-31".parse().unwrap();
    let tasks: Vec<_> = (0..40)
        .map(|i| {
            let s: Arc<dyn Store> = if i % 2 == 0 { p1.clone() } else { p2.clone() };
            tokio::spawn(async move {
                s.charge_consulta(cobranca(a, dia, instant(i)))
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
