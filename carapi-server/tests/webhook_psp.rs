//! No free money through the webhook, over a real socket on both stores: no secret is built in
//! (each database gets its own random one) and a signed webhook is only a hint, the provider's
//! own record decides (amount included).

use std::sync::Arc;

use async_trait::async_trait;
use carapi_service::pix::{ChargeCreated, CobrancaRequest, PaymentState, PixError, PixProvider};

use crate::server::{Servidor, bancos};

/// The secret older builds fell back to when `CARAPI_WEBHOOK_SECRET` was unset.
const SEGREDO_ANTIGO: &str = "carapi-dev-webhook-secret";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_webhook_with_a_well_known_secret_credits_nothing() {
    for database in bancos("forged_webhook_with_a_well_known_secret_credits_nothing").await {
        let s = Servidor::new(&database).await;
        let c = s.conta(0).await;
        let (_, payment) = s.recarga(&c.api_key, "1000000").await;
        let (st, v) = s.webhook(SEGREDO_ANTIGO, &payment).await;
        assert_eq!(
            (st, v["error"].as_str()),
            (401, Some("TOKEN_INVALIDO")),
            "{}: {v}",
            s.nome
        );
        for secret in ["", "segredo", "carapi"] {
            let (st, _) = s.webhook(secret, &payment).await;
            assert_eq!(st, 401, "{}", s.nome);
        }
        assert_eq!(s.saldo(&c.api_key).await, 0.0, "{}", s.nome);
        s.razao_ok(&c).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_database_has_its_own_random_secret_kept_across_restarts() {
    for database in bancos("each_database_has_its_own_random_secret_kept_across_restarts").await {
        let s = Servidor::new(&database).await;
        let secret = s.secret().await;
        assert_eq!(secret.len(), 64, "{}: 32 random bytes in hex", s.nome);
        assert!(secret.bytes().all(|b| b.is_ascii_hexdigit()));
        s.server.shutdown().await;
        let de_novo = Servidor::new(&database).await;
        assert_eq!(de_novo.secret().await, secret, "{}: stored", database.nome);
        let outro_banco = &bancos("each_database_has_its_own_random_secret_2").await[0];
        let outro = Servidor::new(outro_banco).await;
        assert_ne!(outro.secret().await, secret);
        // the configured secret overrides the stored one
        let fixo = Servidor::com(
            &database,
            |c| c.webhook_secret = Some("segredo-do-operador-com-32-bytes-ou-mais".into()),
            |p| p,
        )
        .await;
        assert_eq!(
            fixo.secret().await,
            "segredo-do-operador-com-32-bytes-ou-mais"
        );
        let c = fixo.conta(0).await;
        let (_, payment) = fixo.recarga(&c.api_key, "500").await;
        pagar_no_psp(&fixo, &payment).await;
        let (st, _) = fixo.webhook(&secret, &payment).await;
        assert_eq!(
            st, 401,
            "{}: the stored secret no longer signs",
            database.nome
        );
        let (st, v) = fixo
            .webhook("segredo-do-operador-com-32-bytes-ou-mais", &payment)
            .await;
        assert_eq!((st, v["creditada"].as_bool()), (200, Some(true)), "{v}");
    }
}

async fn pagar_no_psp(s: &Servidor, payment: &str) {
    let psp = s.server.state().psp.clone().unwrap();
    assert!(psp.pay(payment, chrono::Utc::now()).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_webhook_for_an_unpaid_or_unknown_charge_credits_nothing() {
    for database in bancos("signed_webhook_for_an_unpaid_or_unknown_charge_credits_nothing").await {
        let s = Servidor::new(&database).await;
        let secret = s.secret().await;
        let c = s.conta(0).await;
        let (id, payment) = s.recarga(&c.api_key, "1000000").await;
        let (st, v) = s.webhook(&secret, &payment).await;
        assert_eq!(
            (st, v["creditada"].as_bool()),
            (200, Some(false)),
            "{}: {v}",
            s.nome
        );
        assert_eq!(s.saldo(&c.api_key).await, 0.0, "{}", s.nome);
        let (_, r) = s.get(&c.api_key, &format!("/v1/recarga/{id}")).await;
        assert_eq!(r["status"], "Pendente", "{}", s.nome);
        let (st, v) = s.webhook(&secret, "PIXNAOEXISTE0000000000000").await;
        assert_eq!(
            (st, v["error"].as_str()),
            (404, Some("RECARGA_NAO_ENCONTRADA")),
            "{v}"
        );
        // once the provider has it paid, the same webhook credits, once
        pagar_no_psp(&s, &payment).await;
        let (st, v) = s.webhook(&secret, &payment).await;
        assert_eq!(
            (st, v["creditada"].as_bool()),
            (200, Some(true)),
            "{}: {v}",
            s.nome
        );
        let (_, v) = s.webhook(&secret, &payment).await;
        assert_eq!(v["creditada"], false);
        assert_eq!(s.saldo(&c.api_key).await, 1_100_000.0, "{}", s.nome);
        s.razao_ok(&c).await;
    }
}

/// The simulated provider, except that it reports every paid charge one centavo short.
#[derive(Debug)]
struct PspCentavoAMenos(Arc<dyn PixProvider>);

#[async_trait]
impl PixProvider for PspCentavoAMenos {
    async fn create_charge(&self, p: CobrancaRequest) -> Result<ChargeCreated, PixError> {
        self.0.create_charge(p).await
    }

    async fn query(&self, payment_id: &str) -> Result<PaymentState, PixError> {
        Ok(match self.0.query(payment_id).await? {
            PaymentState::Pago { em, valor } => PaymentState::Pago {
                em,
                valor: valor.checked_sub(carapi_service::Centavos::new(1)).unwrap(),
            },
            outra => outra,
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_paid_with_another_amount_is_never_credited() {
    for database in bancos("a_charge_paid_with_another_amount_is_never_credited").await {
        let s = Servidor::com(&database, |_| {}, |p| Arc::new(PspCentavoAMenos(p))).await;
        let secret = s.secret().await;
        let c = s.conta(0).await;
        let (id, payment) = s.recarga(&c.api_key, "2500").await;
        pagar_no_psp(&s, &payment).await;
        let (st, v) = s.webhook(&secret, &payment).await;
        assert_eq!(
            (st, v["creditada"].as_bool()),
            (200, Some(false)),
            "{}: {v}",
            s.nome
        );
        assert_eq!(s.server.reconcile_now().await.unwrap(), 0, "{}", s.nome);
        assert_eq!(s.saldo(&c.api_key).await, 0.0, "{}", s.nome);
        let (_, r) = s.get(&c.api_key, &format!("/v1/recarga/{id}")).await;
        assert_eq!(r["status"], "Pendente", "{}", s.nome);
        s.razao_ok(&c).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciliation_credits_only_what_the_provider_has_paid() {
    for database in bancos("reconciliation_credits_only_what_the_provider_has_paid").await {
        let s = Servidor::new(&database).await;
        let c = s.conta(0).await;
        let (_, pago) = s.recarga(&c.api_key, "500").await;
        s.recarga(&c.api_key, "600").await;
        pagar_no_psp(&s, &pago).await;
        assert_eq!(s.server.reconcile_now().await.unwrap(), 1, "{}", s.nome);
        assert_eq!(s.server.reconcile_now().await.unwrap(), 0, "{}", s.nome);
        assert_eq!(s.saldo(&c.api_key).await, 500.0, "{}", s.nome);
        s.razao_ok(&c).await;
    }
}
