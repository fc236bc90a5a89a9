//! No free money through the webhook, over a real socket on both stores: no secret is built in
//! (each database gets its own random one) and a signed webhook is only a hint, the provider's
//! own record decides (amount included).

use std::sync::Arc;

use async_trait::async_trait;
use carapi_service::pix::{ChargeCreated, CobrancaRequest, PaymentState, PixError, PixProvider};

use crate::server::{Server, databases};

/// The secret older builds fell back to when `CARAPI_WEBHOOK_SECRET` was unset.
const OLD_SECRET: &str = "carapi-dev-webhook-secret";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_webhook_with_a_well_known_secret_credits_nothing() {
    for database in databases("forged_webhook_with_a_well_known_secret_credits_nothing").await {
        let s = Server::new(&database).await;
        let c = s.conta(0).await;
        let (_, payment) = s.recarga(&c.api_key, "1000000").await;
        let (st, v) = s.webhook(OLD_SECRET, &payment).await;
        assert_eq!(
            (st, v["error"].as_str()),
            (401, Some("TOKEN_INVALIDO")),
            "{}: {v}",
            s.name
        );
        for secret in ["", "segredo", "carapi"] {
            let (st, _) = s.webhook(secret, &payment).await;
            assert_eq!(st, 401, "{}", s.name);
        }
        assert_eq!(s.saldo(&c.api_key).await, 0.0, "{}", s.name);
        s.ledger_ok(&c).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_database_has_its_own_random_secret_kept_across_restarts() {
    for database in databases("each_database_has_its_own_random_secret_kept_across_restarts").await
    {
        let s = Server::new(&database).await;
        let secret = s.secret().await;
        assert_eq!(secret.len(), 64, "{}: 32 random bytes in hex", s.name);
        assert!(secret.bytes().all(|b| b.is_ascii_hexdigit()));
        s.server.shutdown().await;
        let again = Server::new(&database).await;
        assert_eq!(again.secret().await, secret, "{}: stored", database.name);
        let other_database = &databases("each_database_has_its_own_random_secret_2").await[0];
        let other = Server::new(other_database).await;
        assert_ne!(other.secret().await, secret);
        // the configured secret overrides the stored one
        let fixed = Server::com(
            &database,
            |c| c.webhook_secret = Some("segredo-do-operador-com-32-bytes-ou-mais".into()),
            |p| p,
        )
        .await;
        assert_eq!(
            fixed.secret().await,
            "segredo-do-operador-com-32-bytes-ou-mais"
        );
        let c = fixed.conta(0).await;
        let (_, payment) = fixed.recarga(&c.api_key, "500").await;
        pay_at_psp(&fixed, &payment).await;
        let (st, _) = fixed.webhook(&secret, &payment).await;
        assert_eq!(
            st, 401,
            "{}: the stored secret no longer signs",
            database.name
        );
        let (st, v) = fixed
            .webhook("segredo-do-operador-com-32-bytes-ou-mais", &payment)
            .await;
        assert_eq!((st, v["creditada"].as_bool()), (200, Some(true)), "{v}");
    }
}

async fn pay_at_psp(s: &Server, payment: &str) {
    let psp = s.server.state().psp.clone().unwrap();
    assert!(psp.pay(payment, chrono::Utc::now()).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signed_webhook_for_an_unpaid_or_unknown_charge_credits_nothing() {
    for database in
        databases("signed_webhook_for_an_unpaid_or_unknown_charge_credits_nothing").await
    {
        let s = Server::new(&database).await;
        let secret = s.secret().await;
        let c = s.conta(0).await;
        let (id, payment) = s.recarga(&c.api_key, "1000000").await;
        let (st, v) = s.webhook(&secret, &payment).await;
        assert_eq!(
            (st, v["creditada"].as_bool()),
            (200, Some(false)),
            "{}: {v}",
            s.name
        );
        assert_eq!(s.saldo(&c.api_key).await, 0.0, "{}", s.name);
        let (_, r) = s.get(&c.api_key, &format!("/v1/recarga/{id}")).await;
        assert_eq!(r["status"], "Pendente", "{}", s.name);
        let (st, v) = s.webhook(&secret, "PIXNAOEXISTE0000000000000").await;
        assert_eq!(
            (st, v["error"].as_str()),
            (404, Some("RECARGA_NAO_ENCONTRADA")),
            "{v}"
        );
        // once the provider has it paid, the same webhook credits, once
        pay_at_psp(&s, &payment).await;
        let (st, v) = s.webhook(&secret, &payment).await;
        assert_eq!(
            (st, v["creditada"].as_bool()),
            (200, Some(true)),
            "{}: {v}",
            s.name
        );
        let (_, v) = s.webhook(&secret, &payment).await;
        assert_eq!(v["creditada"], false);
        assert_eq!(s.saldo(&c.api_key).await, 1_100_000.0, "{}", s.name);
        s.ledger_ok(&c).await;
    }
}

/// The simulated provider, except that it reports every paid charge one centavo short.
#[derive(Debug)]
struct PspOneCentavoShort(Arc<dyn PixProvider>);

#[async_trait]
impl PixProvider for PspOneCentavoShort {
    async fn create_charge(&self, p: CobrancaRequest) -> Result<ChargeCreated, PixError> {
        self.0.create_charge(p).await
    }

    async fn query(&self, payment_id: &str) -> Result<PaymentState, PixError> {
        Ok(match self.0.query(payment_id).await? {
            PaymentState::Pago { at, valor } => PaymentState::Pago {
                at,
                valor: valor.checked_sub(carapi_service::Centavos::new(1)).unwrap(),
            },
            another => another,
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_paid_with_another_amount_is_never_credited() {
    for database in databases("a_charge_paid_with_another_amount_is_never_credited").await {
        let s = Server::com(&database, |_| {}, |p| Arc::new(PspOneCentavoShort(p))).await;
        let secret = s.secret().await;
        let c = s.conta(0).await;
        let (id, payment) = s.recarga(&c.api_key, "2500").await;
        pay_at_psp(&s, &payment).await;
        let (st, v) = s.webhook(&secret, &payment).await;
        assert_eq!(
            (st, v["creditada"].as_bool()),
            (200, Some(false)),
            "{}: {v}",
            s.name
        );
        assert_eq!(s.server.reconcile_now().await.unwrap(), 0, "{}", s.name);
        assert_eq!(s.saldo(&c.api_key).await, 0.0, "{}", s.name);
        let (_, r) = s.get(&c.api_key, &format!("/v1/recarga/{id}")).await;
        assert_eq!(r["status"], "Pendente", "{}", s.name);
        s.ledger_ok(&c).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconciliation_credits_only_what_the_provider_has_paid() {
    for database in databases("reconciliation_credits_only_what_the_provider_has_paid").await {
        let s = Server::new(&database).await;
        let c = s.conta(0).await;
        let (_, pago) = s.recarga(&c.api_key, "500").await;
        s.recarga(&c.api_key, "600").await;
        pay_at_psp(&s, &pago).await;
        assert_eq!(s.server.reconcile_now().await.unwrap(), 1, "{}", s.name);
        assert_eq!(s.server.reconcile_now().await.unwrap(), 0, "{}", s.name);
        assert_eq!(s.saldo(&c.api_key).await, 500.0, "{}", s.name);
        s.ledger_ok(&c).await;
    }
}
