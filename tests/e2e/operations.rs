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
    let amb = Environment::new().await;
    let (c, conta) = amb.cliente_com_saldo(dec!(100)).await;

    let basico = c.car(CODIGO_REAL).await.unwrap();
    assert_eq!(basico.dados.codigo_car, CODIGO_REAL);
    assert_eq!(basico.dados.uf.as_deref(), Some("Distrito Federal"));
    assert_eq!(basico.dados.area_total(), Some(dec!(2.0131)));
    // The public CSV record has no position: `null`, never a made-up one.
    assert!(basico.dados.latitude_graus().is_none() && basico.dados.data_cadastro_em().is_some());
    assert!(!basico.sandbox);

    let completo = c.car_completo(CODIGO_REAL.to_lowercase()).await.unwrap();
    let owners = completo.dados.proprietarios();
    assert!(!owners.is_empty(), "complete lookup lists owners");
    assert!(
        CpfCnpj::parse(&owners[0].1).is_ok(),
        "owner documents have valid check digits"
    );

    let dono = c.proprietario(&owners[0].1).await.unwrap();
    assert!(dono.itens.iter().any(|i| i.registro_car == CODIGO_REAL));
    assert!(!dono.truncado && dono.total as usize == dono.itens.len() && dono.limite == 200);

    let recibo = c.recibo(CODIGO_REAL).await.unwrap();
    assert_eq!(recibo.filename, format!("{CODIGO_REAL}.pdf"));
    assert!(recibo.bytes.starts_with(b"%PDF-"));

    let esperado = dec!(1.00) + dec!(2.30) + dec!(2.60) + dec!(11.00);
    let saldo = c.saldo().await.unwrap();
    assert_eq!(saldo.saldo_reais, dec!(100) - esperado);
    assert_eq!(saldo.uso_hoje.requisicoes, 4);
    assert_eq!(saldo.uso_hoje.gasto, esperado);
    assert_eq!(saldo.uso_mes.gasto, esperado);
    assert_eq!(
        c.gasto().confirmado,
        esperado,
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
        esperado
    );

    let ledger = amb.server.check_ledger(conta.conta_id).await.unwrap();
    assert!(ledger.is_consistent(), "ledger: {ledger:?}");
}

#[tokio::test]
async fn receipt_streams_to_a_file() {
    let amb = Environment::new().await;
    let (c, _) = amb.cliente_com_saldo(dec!(50)).await;
    let path = amb.dir.path().join("recibo.pdf");
    c.recibo_to_file(CODIGO_REAL, &path).await.unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"%PDF-") && bytes.len() > 1000);
}

#[tokio::test]
async fn limits_merge_patch() {
    let amb = Environment::new().await;
    let (c, _) = amb.cliente_com_saldo(dec!(10)).await;
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
    let amb = Environment::new().await;
    let (c, conta) = amb.cliente_com_saldo(dec!(0)).await;

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

    let nova = NovaRecarga {
        valor: dec!(1000),
        confirmar_novos_precos: false,
    };
    let criada = c.criar_recarga(&nova).await.unwrap();
    assert_eq!(criada.status, RecargaStatus::Pendente);
    assert!(!criada.reaproveitada);
    assert_eq!(
        carapi_sdk::domain::pix::valor(&criada.qr_code).unwrap(),
        Some(dec!(1000))
    );

    // Within 10 minutes the same amount reuses the pending PIX: no second charge.
    let de_novo = c.criar_recarga(&nova).await.unwrap();
    assert!(de_novo.reaproveitada);
    assert_eq!(de_novo.recarga_id, criada.recarga_id);

    let pending = c.recarga(criada.recarga_id).await.unwrap();
    assert!(!pending.pago && pending.qr_code.as_deref() == Some(criada.qr_code.as_str()));

    amb.server.pay_recarga(criada.recarga_id).await.unwrap();
    let fim = c
        .wait_for_recarga(criada.recarga_id, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(fim.status, RecargaStatus::Confirmado);
    assert!(fim.pago && fim.qr_code.is_none());
    assert_eq!(fim.total_creditado, Some(preview.total_creditado));
    assert_eq!(fim.saldo_atual, preview.total_creditado);

    // Paying again (a repeated webhook) credits nothing more.
    let _ = amb.server.pay_recarga(criada.recarga_id).await;
    assert_eq!(
        c.saldo().await.unwrap().saldo_reais,
        preview.total_creditado
    );

    let lista = c
        .recargas(&RecargasParams {
            status: Some(RecargaStatus::Confirmado),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(lista.total, 1);
    assert_eq!(lista.itens[0].recarga_id, criada.recarga_id);
    assert!(lista.itens[0].data_confirmacao.is_some());
    let todas: Vec<_> = c
        .recargas_stream(RecargasParams::default())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(todas.len(), 1);
    assert!(
        amb.server
            .check_ledger(conta.conta_id)
            .await
            .unwrap()
            .is_consistent()
    );
}

#[tokio::test]
async fn history_stream_walks_every_page() {
    let amb = Environment::new().await;
    let conta = amb.conta(dec!(100)).await;
    // No client-side limiter, to record 25 lookups quickly; the server allows 10/s per key.
    let c = amb.builder(&conta.api_key).build().unwrap();
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
