//! Store-level behaviour, asserted identically on SQLite and PostgreSQL.

use carapi_sdk::{CpfCnpj, EndpointConsulta, RecargaStatus, StatusConsulta};
use carapi_service::Centavos;
use carapi_service::store::{
    Cobranca, CobrancaResult, Confirmation, ConsultaRecord, ContaId, HistoricoFilter,
    NovaContaRecord, Recarga, Store,
};
use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use uuid::Uuid;

use super::backends;
use crate::helpers::{CODIGO, copies_with_owner};

pub fn instant(s: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_717_000_000 + s, 0).unwrap()
}

pub async fn new_conta(store: &dyn Store, saldo: i64, legado: bool) -> ContaId {
    store
        .create_conta(NovaContaRecord {
            chave_hash: format!("{:064x}", Uuid::new_v4().as_u128()),
            saldo: Centavos::new(saldo),
            legado,
            documento: CpfCnpj::parse("52998224725").ok(),
            email: Some("cliente@example.com".into()),
            at: instant(0),
        })
        .await
        .unwrap()
}

pub fn cobranca(conta: ContaId, day: NaiveDate, at: DateTime<Utc>) -> Cobranca {
    Cobranca {
        request_id: uuid::Uuid::new_v4(),
        conta,
        endpoint: EndpointConsulta::CarBasico,
        chave: CODIGO.into(),
        consolidate: Some(CODIGO.parse().unwrap()),
        at,
        day,
    }
}

fn day(s: &str) -> NaiveDate {
    s.parse().unwrap()
}

#[tokio::test]
async fn accounts_limits_patch_and_initial_ledger_on_both_stores() {
    for l in backends("accounts_limits_patch_and_initial_ledger_on_both_stores").await {
        let s = l.store.as_ref();
        let a = new_conta(s, 12_345, false).await;
        let b = new_conta(s, 0, true).await;
        assert_eq!(s.contas().await.unwrap(), vec![a, b], "{}", l.name);
        let ca = s.conta(a).await.unwrap().unwrap();
        assert_eq!(
            (ca.saldo, ca.legado, ca.limite_diario, ca.limite_mensal),
            (Centavos::new(12_345), false, None, None)
        );
        assert_eq!(
            s.conta_by_key(&ca.chave_hash).await.unwrap(),
            Some(ca.clone()),
            "{}",
            l.name
        );
        assert!(s.conta_by_key("nada").await.unwrap().is_none());
        assert!(s.conta(ContaId(999_999)).await.unwrap().is_none());
        // merge-patch: set, keep, remove
        let c = s
            .atualizar_limites(a, Some(Some(7)), Some(Some(Centavos::new(5_000))))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.limite_diario, c.limite_mensal),
            (Some(7), Some(Centavos::new(5_000)))
        );
        let c = s
            .atualizar_limites(a, None, Some(None))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (c.limite_diario, c.limite_mensal),
            (Some(7), None),
            "{}",
            l.name
        );
        assert!(
            s.atualizar_limites(ContaId(999_999), Some(None), None)
                .await
                .unwrap()
                .is_none()
        );
        let ra = s.ledger(a).await.unwrap().unwrap();
        assert!(
            ra.is_consistent()
                && ra.saldo_inicial == Centavos::new(12_345)
                && ra.credits == Centavos::new(12_345),
            "{ra:?}"
        );
        let rb = s.ledger(b).await.unwrap().unwrap();
        assert!(rb.is_consistent() && rb.credits == Centavos::ZERO, "{rb:?}");
        assert!(s.ledger(ContaId(999_999)).await.unwrap().is_none());
    }
}

#[tokio::test]
async fn car_records_round_trip_exactly_and_owner_lookup_truncates() {
    for l in backends("car_records_round_trip_exactly_and_owner_lookup_truncates").await {
        let s = l.store.as_ref();
        let all = carapi_service::dados::bundled();
        assert_eq!(s.write_imoveis(&all).await.unwrap(), all.len() as u64);
        assert_eq!(s.write_imoveis(&all).await.unwrap(), all.len() as u64);
        assert_eq!(
            s.count_imoveis().await.unwrap(),
            all.len() as u64,
            "{}",
            l.name
        );
        for i in &all {
            let chunk = s.imovel(&i.codigo_car).await.unwrap().unwrap();
            // the contract's strings are the same (decimal scale kept)
            assert_eq!(chunk.dados_completos(), i.dados_completos(), "{}", l.name);
            assert_eq!(chunk.dados_basicos(), i.dados_basicos(), "{}", l.name);
            assert_eq!(chunk.proprietarios, i.proprietarios, "{}", l.name);
            if l.name == "postgres" {
                // exactly, sub-second dates included (SQLite keeps whole seconds)
                assert_eq!(&chunk, i, "{}", i.codigo_car);
            }
        }
        let owner = CpfCnpj::from_base("PGTESTE0001A").unwrap();
        assert_eq!(
            s.imoveis_of_documento(&owner, 10).await.unwrap(),
            (vec![], false)
        );
        let copies = copies_with_owner(5, &owner);
        s.write_imoveis(&copies).await.unwrap();
        let (v, more) = s.imoveis_of_documento(&owner, 3).await.unwrap();
        assert!(more, "{}", l.name);
        let codigos: Vec<_> = v.iter().map(|i| i.codigo_car.as_str().to_owned()).collect();
        let expected: Vec<_> = copies[..3]
            .iter()
            .map(|i| i.codigo_car.as_str().to_owned())
            .collect();
        assert_eq!(codigos, expected, "{}", l.name);
        assert_eq!(v[0].proprietarios, copies[0].proprietarios);
        let (v, more) = s.imoveis_of_documento(&owner, 5).await.unwrap();
        assert_eq!((v.len(), more), (5, false));
        // replacing a record replaces its owners
        let mut another = copies[0].clone();
        another.proprietarios.clear();
        s.write_imoveis(&[another]).await.unwrap();
        assert_eq!(
            s.imoveis_of_documento(&owner, 10).await.unwrap().0.len(),
            4,
            "{}",
            l.name
        );
    }
}

#[tokio::test]
async fn charges_limits_cache_history_and_usage_on_both_stores() {
    for l in backends("charges_limits_cache_history_and_usage_on_both_stores").await {
        let s = l.store.as_ref();
        s.write_imoveis(&carapi_service::dados::bundled())
            .await
            .unwrap();
        let n = &l.name;
        let a = new_conta(s, 350, false).await;
        let d1 = day("2024-05-31");
        let r = s
            .charge_consulta(cobranca(a, d1, instant(1)))
            .await
            .unwrap();
        let expected = CobrancaResult::Cobrada {
            valor: Centavos::new(100),
            saldo_antes: Centavos::new(350),
            saldo_depois: Centavos::new(250),
            cache: false,
        };
        assert_eq!(r, expected, "{n}");
        let r = s
            .charge_consulta(cobranca(a, d1, instant(2)))
            .await
            .unwrap();
        assert!(
            matches!(r, CobrancaResult::Cobrada { cache: true, .. }),
            "{n}: {r:?}"
        );
        // daily limit of 2 charged lookups
        s.atualizar_limites(a, Some(Some(2)), None).await.unwrap();
        let r = s
            .charge_consulta(cobranca(a, d1, instant(3)))
            .await
            .unwrap();
        assert!(
            matches!(r, CobrancaResult::LimiteDiario { limite: 2, retry_after } if retry_after > 0),
            "{n}: {r:?}"
        );
        // next day (also next month): daily counter restarts, monthly ceiling of 1.50 applies
        let d2 = day("2024-06-01");
        s.atualizar_limites(a, None, Some(Some(Centavos::new(150))))
            .await
            .unwrap();
        let r = s
            .charge_consulta(cobranca(a, d2, instant(90_000)))
            .await
            .unwrap();
        assert!(
            matches!(
                r,
                CobrancaResult::Cobrada { saldo_depois, .. } if saldo_depois == Centavos::new(50)
            ),
            "{n}: {r:?}"
        );
        let r = s
            .charge_consulta(cobranca(a, d2, instant(90_001)))
            .await
            .unwrap();
        assert!(
            matches!(
                r,
                CobrancaResult::LimiteMensal {
                    limite,
                    gasto,
                    retry_after,
                } if limite == Centavos::new(150) && gasto == Centavos::new(100) && retry_after > 0
            ),
            "{n}: {r:?}"
        );
        s.atualizar_limites(a, Some(None), Some(None))
            .await
            .unwrap();
        let r = s
            .charge_consulta(cobranca(a, d2, instant(90_002)))
            .await
            .unwrap();
        assert_eq!(
            r,
            CobrancaResult::SaldoInsuficiente {
                saldo: Centavos::new(50),
                preco: Centavos::new(100)
            },
            "{n}"
        );
        // an uncharged record (404)
        let reg = ConsultaRecord {
            conta: a,
            endpoint: EndpointConsulta::Proprietario,
            chave: Some("52998224725".into()),
            status: 404,
            at: instant(90_003),
            day: d2,
        };
        s.record_consulta(reg).await.unwrap();

        let u1 = s.uso_period(a, d1).await.unwrap();
        assert_eq!(
            (
                u1.hoje_requisicoes,
                u1.hoje_cobradas,
                u1.hoje_erros,
                u1.hoje_gasto
            ),
            (3, 2, 1, Centavos::new(200)),
            "{n}"
        );
        assert_eq!(
            (u1.mes_requisicoes, u1.mes_gasto),
            (3, Centavos::new(200)),
            "{n}"
        );
        let u2 = s.uso_period(a, d2).await.unwrap();
        assert_eq!(
            (
                u2.hoje_requisicoes,
                u2.hoje_cobradas,
                u2.hoje_erros,
                u2.hoje_gasto
            ),
            (4, 1, 3, Centavos::new(100)),
            "{n}"
        );
        assert_eq!(
            (u2.mes_requisicoes, u2.mes_gasto),
            (4, Centavos::new(100)),
            "{n}"
        );
        assert_eq!(
            s.uso_period(a, day("2024-07-01")).await.unwrap(),
            Default::default()
        );

        // history: newest first, filters, pages
        let f = |busca: Option<&str>, endpoint, status, page, size| HistoricoFilter {
            busca: busca.map(Into::into),
            endpoint,
            status,
            page,
            size,
        };
        let (itens, total) = s.historico(a, &f(None, None, None, 1, 100)).await.unwrap();
        assert_eq!(total, 7, "{n}");
        assert_eq!(
            itens.iter().map(|i| i.status).collect::<Vec<_>>(),
            vec![404, 402, 429, 200, 429, 200, 200],
            "{n}"
        );
        assert_eq!(
            (
                itens[3].saldo_antes,
                itens[3].saldo_depois,
                itens[3].cobrado
            ),
            (Some(Centavos::new(150)), Some(Centavos::new(50)), true)
        );
        assert_eq!(
            (itens[1].valor, itens[1].cobrado, itens[1].saldo_antes),
            (Centavos::ZERO, false, Some(Centavos::new(50)))
        );
        assert_eq!(itens[0].at, instant(90_003), "{n}");
        assert_eq!(itens[0].endpoint, "/v1/proprietario/{cpf_cnpj}");
        let (p2, _) = s.historico(a, &f(None, None, None, 2, 3)).await.unwrap();
        assert_eq!(
            p2.iter().map(|i| i.status).collect::<Vec<_>>(),
            vec![200, 429, 200],
            "{n}"
        );
        assert_eq!(
            s.historico(a, &f(None, None, Some(StatusConsulta::Sucesso), 1, 10))
                .await
                .unwrap()
                .1,
            3
        );
        assert_eq!(
            s.historico(a, &f(None, None, Some(StatusConsulta::Erro), 1, 10))
                .await
                .unwrap()
                .1,
            4
        );
        assert_eq!(
            s.historico(
                a,
                &f(None, Some(EndpointConsulta::Proprietario), None, 1, 10)
            )
            .await
            .unwrap()
            .1,
            1
        );
        // busca: case-insensitive substring of the key or of the endpoint
        assert_eq!(
            s.historico(a, &f(Some("b69b317d"), None, None, 1, 10))
                .await
                .unwrap()
                .1,
            6,
            "{n}"
        );
        assert_eq!(
            s.historico(a, &f(Some("PROPRIET"), None, None, 1, 10))
                .await
                .unwrap()
                .1,
            1,
            "{n}"
        );
        assert_eq!(
            s.historico(a, &f(Some("%"), None, None, 1, 10))
                .await
                .unwrap()
                .1,
            0,
            "{n}"
        );
        assert_eq!(
            s.historico(
                a,
                &f(Some("b69b"), None, Some(StatusConsulta::Sucesso), 1, 10)
            )
            .await
            .unwrap()
            .1,
            3
        );

        let uso = s.uso_by_endpoint(a, instant(0)).await.unwrap();
        let uso: Vec<_> = uso
            .iter()
            .map(|u| (u.endpoint.as_str(), u.quantidade, u.valor_total))
            .collect();
        assert_eq!(
            uso,
            vec![
                ("/v1/car/{codigo}", 6, Centavos::new(300)),
                ("/v1/proprietario/{cpf_cnpj}", 1, Centavos::ZERO)
            ],
            "{n}"
        );
        assert_eq!(
            s.uso_by_endpoint(a, instant(90_000)).await.unwrap().len(),
            2
        );
        assert_eq!(
            s.uso_by_endpoint(a, instant(90_004)).await.unwrap().len(),
            0
        );
        let ledger = s.ledger(a).await.unwrap().unwrap();
        assert!(ledger.is_consistent(), "{n}: {ledger:?}");
        assert_eq!(
            (ledger.saldo, ledger.debits),
            (Centavos::new(50), Centavos::new(300))
        );

        // the legacy table is read inside the transaction (basic lookup: 0.50 legacy)
        let b = new_conta(s, 1_000, true).await;
        let r = s
            .charge_consulta(cobranca(b, d1, instant(5)))
            .await
            .unwrap();
        assert!(
            matches!(
                r,
                CobrancaResult::Cobrada {
                    valor,
                    cache: true,
                    ..
                } if valor == Centavos::new(50)
            ),
            "{n}: {r:?}"
        );
    }
}

pub fn new_recarga(conta: ContaId, valor: i64, at: DateTime<Utc>) -> Recarga {
    let id = Uuid::new_v4();
    Recarga {
        id,
        conta,
        payment_id: format!("PIX{}", id.simple()),
        valor: Centavos::new(valor),
        percentual_bonus: 5,
        bonus: Centavos::new(valor / 20),
        status: RecargaStatus::Pendente,
        qr_code: "000201".into(),
        created_at: at,
        confirmed_at: None,
    }
}

#[tokio::test]
async fn top_ups_reuse_listing_confirmation_and_psp_book_on_both_stores() {
    for l in backends("top_ups_reuse_listing_confirmation_and_psp_book_on_both_stores").await {
        let s = l.store.as_ref();
        let n = &l.name;
        let a = new_conta(s, 0, true).await;
        let b = new_conta(s, 0, false).await;
        let r1 = new_recarga(a, 100_000, instant(0));
        let (r, reused) = s.insert_recarga(r1.clone(), instant(-600)).await.unwrap();
        assert_eq!((r.id, reused), (r1.id, false));
        // same amount within the window: reused; another amount or after the window: new
        let (r, reused) = s
            .insert_recarga(new_recarga(a, 100_000, instant(60)), instant(60 - 600))
            .await
            .unwrap();
        assert_eq!((r.id, reused), (r1.id, true), "{n}");
        assert_eq!(r, r1, "{n}: stored top-up reads back equal");
        assert_eq!(
            s.reusable_recarga(a, Centavos::new(100_000), instant(-1))
                .await
                .unwrap()
                .map(|r| r.id),
            Some(r1.id)
        );
        assert!(
            s.reusable_recarga(a, Centavos::new(100_000), instant(1))
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            s.reusable_recarga(b, Centavos::new(100_000), instant(-1))
                .await
                .unwrap()
                .is_none()
        );
        let r2 = new_recarga(a, 70_000, instant(120));
        assert!(
            !s.insert_recarga(r2.clone(), instant(120 - 600))
                .await
                .unwrap()
                .1
        );
        let r3 = new_recarga(a, 100_000, instant(700));
        assert!(
            !s.insert_recarga(r3.clone(), instant(100)).await.unwrap().1,
            "{n}"
        );

        assert_eq!(s.recarga(a, r2.id).await.unwrap(), Some(r2.clone()));
        assert!(s.recarga(b, r2.id).await.unwrap().is_none(), "{n}");
        assert_eq!(
            s.recarga_by_id(r2.id).await.unwrap().map(|r| r.conta),
            Some(a)
        );
        let (v, total) = s.recargas(a, None, 1, 2).await.unwrap();
        assert_eq!(
            (v.iter().map(|r| r.id).collect::<Vec<_>>(), total),
            (vec![r3.id, r2.id], 3),
            "{n}"
        );
        let (v, _) = s.recargas(a, None, 2, 2).await.unwrap();
        assert_eq!(v.iter().map(|r| r.id).collect::<Vec<_>>(), vec![r1.id]);
        let pend: Vec<_> = s
            .pending_recargas(10)
            .await
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(pend, vec![r1.id, r2.id, r3.id], "{n}: oldest first");

        // exactly once; the account leaves the legacy table
        let at = instant(800);
        let Confirmation::Credited(c) = s.confirm_recarga(&r2.payment_id, at).await.unwrap() else {
            panic!("{n}")
        };
        assert_eq!(
            (c.status, c.confirmed_at),
            (RecargaStatus::Confirmado, Some(at)),
            "{n}"
        );
        let Confirmation::AlreadyFinal(c) = s
            .confirm_recarga(&r2.payment_id, instant(900))
            .await
            .unwrap()
        else {
            panic!("{n}")
        };
        assert_eq!(c.confirmed_at, Some(at), "{n}");
        assert_eq!(
            s.confirm_recarga("PIXNADA", at).await.unwrap(),
            Confirmation::NotFound
        );
        let conta = s.conta(a).await.unwrap().unwrap();
        assert_eq!(
            (conta.saldo, conta.legado),
            (Centavos::new(73_500), false),
            "{n}"
        );
        assert_eq!(
            s.recargas(a, Some(RecargaStatus::Confirmado), 1, 10)
                .await
                .unwrap()
                .1,
            1
        );
        assert_eq!(
            s.recargas(a, Some(RecargaStatus::Pendente), 1, 10)
                .await
                .unwrap()
                .1,
            2
        );
        assert_eq!(s.pending_recargas(1).await.unwrap()[0].id, r1.id);
        let ledger = s.ledger(a).await.unwrap().unwrap();
        assert!(
            ledger.is_consistent() && ledger.creditado_recargas == Centavos::new(73_500),
            "{n}: {ledger:?}"
        );

        // the simulated PSP's book
        let doc = CpfCnpj::parse("52998224725").unwrap();
        s.psp_register(
            "PIXPSP1",
            Centavos::new(50_000),
            &doc,
            Some("a@example.com"),
            instant(0),
        )
        .await
        .unwrap();
        let pending = carapi_service::store::PspCharge {
            valor: Centavos::new(50_000),
            paid_at: None,
        };
        assert_eq!(s.psp_state("PIXPSP1").await.unwrap(), Some(pending), "{n}");
        assert!(s.psp_pay("PIXPSP1", instant(10)).await.unwrap());
        assert!(s.psp_pay("PIXPSP1", instant(20)).await.unwrap());
        assert_eq!(
            s.psp_state("PIXPSP1").await.unwrap(),
            Some(carapi_service::store::PspCharge {
                paid_at: Some(instant(10)),
                ..pending
            }),
            "{n}: first payment kept"
        );
        assert!(!s.psp_pay("PIXNADA", instant(10)).await.unwrap());
        assert_eq!(s.psp_state("PIXNADA").await.unwrap(), None);
        let _ = Duration::zero();
    }
}
