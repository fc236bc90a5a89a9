//! Testing your integration with `carapi_test_double::TestServer`: copy the `testes`
//! module into your crate's `tests/` and put in `[dev-dependencies]`
//! `carapi-server = { version = "*", features = ["testing"] }`, `carapi-sdk` and `tokio`.
//!
//! The code under test is `consultar_lote`, a batch of basic CAR lookups that stops at the
//! first 402 and keeps what it got. The tests cover the three cases a real integration meets:
//! a 402 in the middle of the batch, a charged answer lost on the wire (the SDK does not re-send
//! it: it may have been charged), and a top-up that only reconciliation confirms after the
//! clock moves. Run them with `cargo test -p carapi-examples --example testando`.

use carapi_sdk::{Client, Error, ErrorCode};

/// What a batch did: the codes looked up, and the error that stopped it, if any.
#[derive(Debug, Default)]
pub struct Lote {
    /// Codes answered (charged).
    pub consultados: Vec<String>,
    /// The error that stopped the batch: a 402, or a lost answer that may have been charged.
    pub stopped: Option<Error>,
}

/// Looks `codigos` up in order and stops at the first error that is not "not found".
pub async fn consultar_lote(client: &Client, codigos: &[&str]) -> Lote {
    let mut lote = Lote::default();
    for codigo in codigos {
        match client.car(codigo).await {
            Ok(_) => lote.consultados.push((*codigo).to_owned()),
            Err(e) if e.code() == Some(ErrorCode::CarNaoEncontrado) => {}
            Err(e) => {
                lote.stopped = Some(e);
                break;
            }
        }
    }
    lote
}

fn main() {
    println!(
        "Este exemplo é uma suíte de testes: cargo test -p carapi-examples --example testando"
    );
}

#[cfg(test)]
mod testes {
    use std::time::Duration;

    use carapi_sdk::{ErrorCode, NovaRecarga, RecargaStatus, dec};
    use carapi_test_double::{Fault, TestServer};

    use super::consultar_lote;

    const CAR: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

    #[tokio::test]
    async fn um_402_no_meio_do_lote_para_sem_debitar() {
        let srv = TestServer::start().await.unwrap();
        let conta = srv.conta().saldo(dec!(2.50)).create().await.unwrap();
        let client = srv.client(&conta).unwrap();

        let lote = consultar_lote(&client, &[CAR, CAR, CAR, CAR]).await;

        assert_eq!(lote.consultados.len(), 2);
        let erro = lote.stopped.expect("parou no 402");
        assert_eq!(erro.code(), Some(ErrorCode::SaldoInsuficiente));
        assert_eq!(srv.conta_state(&conta).await.unwrap().saldo, dec!(0.50));
    }

    #[tokio::test]
    async fn uma_resposta_cobrada_perdida_nao_e_reenviada() {
        let srv = TestServer::start().await.unwrap();
        let conta = srv.conta().saldo(dec!(10)).create().await.unwrap();
        let client = srv.client(&conta).unwrap();
        srv.inject(Fault::LoseReplyAfterCharge.on("/v1/car/{codigoCar}"));

        let lote = consultar_lote(&client, &[CAR, CAR]).await;

        let erro = lote.stopped.expect("a resposta se perdeu");
        assert!(erro.may_have_charged() && !erro.is_retryable());
        let estado = srv.conta_state(&conta).await.unwrap();
        assert_eq!(estado.debited, dec!(1.00), "cobrada uma vez, nunca duas");
        assert!(estado.ledger_consistent);
    }

    #[tokio::test]
    async fn uma_recarga_sem_webhook_e_confirmada_pela_reconciliacao() {
        let srv = TestServer::start().await.unwrap();
        let conta = srv.conta().saldo(dec!(0)).create().await.unwrap();
        let client = srv.client(&conta).unwrap();
        let nova = NovaRecarga::new(dec!(500));
        let recarga = client.criar_recarga(&nova).await.unwrap();

        srv.pay(recarga.recarga_id).without_webhook().await.unwrap();
        let status = client.recarga(recarga.recarga_id).await.unwrap().status;
        assert_eq!(status, RecargaStatus::Pendente);

        srv.advance(Duration::from_secs(2 * 60)).await.unwrap();
        let status = client.recarga(recarga.recarga_id).await.unwrap();
        assert_eq!(status.status, RecargaStatus::Confirmado);
        assert_eq!(status.saldo_atual, dec!(500));
    }
}
