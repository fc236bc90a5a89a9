//! Every `/v1` operation through the SDK against the real server, with the money it moves.

use carapi_sdk::{
    HistoricoParams, LimitesUpdate, NovaRecarga, RecargaStatus, RecargasParams, domain::CpfCnpj,
};
use carapi_tests::Environment;
use rust_decimal::Decimal;
use rust_decimal_macros::dec;

use crate::{CODIGO_REAL, preco_basico};

#[tokio::test]
async fn lookups_charge_the_current_prices_and_are_recorded() {
    let env = Environment::new().await;
    let (c, conta) = env.client_with_saldo(dec!(100)).await;

    let basico = c.car(CODIGO_REAL).await.unwrap();
    assert_eq!(basico.dados.codigo_car, CODIGO_REAL);
    assert_eq!(basico.dados.uf.as_deref(), Some("Distrito Federal"));
    assert_eq!(basico.dados.area_total(), Some(dec!(2.0131)));
    // The public CSV record has no position: `null`, never a made-up one.
    assert!(
        basico.dados.latitude_degrees().is_none()
            && basico.dados.data_cadastro_datetime().is_some()
    );
    assert!(!basico.sandbox);

    let completo = c.car_completo(CODIGO_REAL.to_lowercase()).await.unwrap();
    let owners = completo.dados.proprietarios();
    assert!(!owners.is_empty(), "complete lookup lists owners");
    assert!(
        CpfCnpj::parse(&owners[0].1).is_ok(),
        "owner documents have valid check digits"
    );

    let owner = c.proprietario(&owners[0].1).await.unwrap();
    assert!(owner.itens.iter().any(|i| i.registro_car == CODIGO_REAL));
    assert!(!owner.truncado && owner.total as usize == owner.itens.len() && owner.limite == 200);

    let recibo = c.recibo(CODIGO_REAL).await.unwrap();
    assert_eq!(recibo.filename, format!("{CODIGO_REAL}.pdf"));
    assert!(recibo.bytes.starts_with(b"%PDF-"));

    let expected = dec!(1.00) + dec!(2.30) + dec!(2.60) + dec!(11.00);
    let saldo = c.saldo().await.unwrap();
    assert_eq!(saldo.saldo_reais, dec!(100) - expected);
    assert_eq!(saldo.uso_hoje.requisicoes, 4);
    assert_eq!(saldo.uso_hoje.gasto, expected);
    assert_eq!(saldo.uso_mes.gasto, expected);
    assert_eq!(
        c.gasto().confirmado,
        expected,
        "the client's own spend agrees with the server"
    );

    let h = c.historico(&HistoricoParams::default()).await.unwrap();
    assert_eq!(h.total, 4);
    assert_eq!(
        h.itens[0].endpoint, "/v1/car/{codigo}/recibo",
        "newest first"
    );
    assert_eq!(h.itens[0].saldo_depois, Some(saldo.saldo_reais));
    assert!(h.itens.iter().all(|i| i.cobrado && i.status_http == 200));

    let uso = c.uso().await.unwrap();
    assert_eq!(uso.periodo_dias, 30);
    assert_eq!(
        uso.itens.iter().map(|i| i.valor_total).sum::<Decimal>(),
        expected
    );

    let ledger = env.server.check_ledger(conta.conta_id).await.unwrap();
    assert!(ledger.is_consistent(), "ledger: {ledger:?}");
}

#[tokio::test]
async fn receipt_streams_to_a_file() {
    let env = Environment::new().await;
    let (c, _) = env.client_with_saldo(dec!(50)).await;
    let path = env.dir.path().join("recibo.pdf");
    c.recibo_to_file(CODIGO_REAL, &path).await.unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"%PDF-") && bytes.len() > 1000);
}

#[tokio::test]
async fn limits_merge_patch() {
    let env = Environment::new().await;
    let (c, _) = env.client_with_saldo(dec!(10)).await;
    let l = c.limites().await.unwrap();
    assert_eq!(
        (l.limite_diario_requisicoes, l.limite_mensal_reais),
        (None, None)
    );

    let set = LimitesUpdate {
        limite_diario_requisicoes: Some(Some(50)),
        limite_mensal_reais: Some(Some(dec!(250.5))),
    };
    let l = c.atualizar_limites(&set).await.unwrap();
    assert_eq!(
        (l.limite_diario_requisicoes, l.limite_mensal_reais),
        (Some(50), Some(dec!(250.5)))
    );

    // Omitted keeps, null removes, 0 removes.
    let l = c
        .atualizar_limites(&LimitesUpdate {
            limite_mensal_reais: Some(None),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        (l.limite_diario_requisicoes, l.limite_mensal_reais),
        (Some(50), None)
    );
    let l = c
        .atualizar_limites(&LimitesUpdate {
            limite_diario_requisicoes: Some(Some(0)),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(l.limite_diario_requisicoes, None);

    let saldo = c.saldo().await.unwrap();
    assert_eq!(
        (saldo.limite_diario_requisicoes, saldo.limite_mensal_reais),
        (None, None)
    );
}

#[tokio::test]
async fn topup_from_creation_to_confirmation() {
    let env = Environment::new().await;
    let (c, conta) = env.client_with_saldo(dec!(0)).await;

    let faixas = c.faixas_recarga(Some(dec!(1000))).await.unwrap();
    assert_eq!(faixas.valor_minimo, dec!(500));
    let preview = faixas
        .preview
        .clone()
        .expect("preview for the requested amount");
    assert_eq!(preview.valor_pago, dec!(1000));
    assert_eq!(
        preview.total_creditado,
        preview.valor_pago + preview.valor_bonus
    );

    let fresh = NovaRecarga {
        valor: dec!(1000),
        confirmar_novos_precos: false,
    };
    let created = c.criar_recarga(&fresh).await.unwrap();
    assert_eq!(created.status, RecargaStatus::Pendente);
    assert!(!created.reaproveitada);
    assert_eq!(
        carapi_sdk::domain::pix::valor(&created.qr_code).unwrap(),
        Some(dec!(1000))
    );

    // Within 10 minutes the same amount reuses the pending PIX: no second charge.
    let again = c.criar_recarga(&fresh).await.unwrap();
    assert!(again.reaproveitada);
    assert_eq!(again.recarga_id, created.recarga_id);

    let pending = c.recarga(created.recarga_id).await.unwrap();
    assert!(!pending.pago && pending.qr_code.as_deref() == Some(created.qr_code.as_str()));

    env.server.pay_recarga(created.recarga_id).await.unwrap();
    let end = c
        .wait_for_recarga(created.recarga_id, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(end.status, RecargaStatus::Confirmado);
    assert!(end.pago && end.qr_code.is_none());
    assert_eq!(end.total_creditado, Some(preview.total_creditado));
    assert_eq!(end.saldo_atual, preview.total_creditado);

    // Paying again (a repeated webhook) credits nothing more.
    let _ = env.server.pay_recarga(created.recarga_id).await;
    assert_eq!(
        c.saldo().await.unwrap().saldo_reais,
        preview.total_creditado
    );

    let list = c
        .recargas(&RecargasParams {
            status: Some(RecargaStatus::Confirmado),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(list.total, 1);
    assert_eq!(list.itens[0].recarga_id, created.recarga_id);
    assert!(list.itens[0].data_confirmacao.is_some());
    let all: Vec<_> = c
        .recargas_stream(RecargasParams::default())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
    assert!(
        env.server
            .check_ledger(conta.conta_id)
            .await
            .unwrap()
            .is_consistent()
    );
}

#[tokio::test]
async fn history_stream_walks_every_page() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(100)).await;
    // No client-side limiter, to record 25 lookups quickly; the server allows 10/s per key.
    let c = env.builder(&conta.api_key).build().unwrap();
    for _ in 0..25 {
        c.car(CODIGO_REAL).await.unwrap();
    }
    let params = HistoricoParams {
        size: Some(10),
        ..Default::default()
    };
    let itens: Vec<_> = c.historico_stream(params).try_collect().await.unwrap();
    assert_eq!(itens.len(), 25);
    assert!(
        itens.windows(2).all(|w| w[0].data >= w[1].data),
        "newest first"
    );
    assert_eq!(
        c.saldo().await.unwrap().saldo_reais,
        dec!(100) - preco_basico() * dec!(25)
    );
}
