//! Reuse of a pending top-up is decided before the provider is called (contract: reuse means
//! "no new payment"), over a real socket on both stores.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;
use carapi_service::pix::{ChargeCreated, CobrancaRequest, PaymentState, PixError, PixProvider};

use crate::server::{Server, databases};

/// The simulated provider, counting the charges it is asked to create; the first `faults`
/// creations fail.
#[derive(Debug)]
struct PspCounted {
    internal: Arc<dyn PixProvider>,
    created: Arc<AtomicU32>,
    faults: AtomicU32,
}

#[async_trait]
impl PixProvider for PspCounted {
    async fn create_charge(&self, p: CobrancaRequest) -> Result<ChargeCreated, PixError> {
        self.created.fetch_add(1, Ordering::SeqCst);
        // a provider that takes a moment, so that concurrent requests overlap its call
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        if self
            .faults
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(PixError("falha simulada".into()));
        }
        self.internal.create_charge(p).await
    }

    async fn query(&self, payment_id: &str) -> Result<PaymentState, PixError> {
        self.internal.query(payment_id).await
    }
}

async fn counted_server(
    database: &crate::server::DatabaseArgs,
    faults: u32,
) -> (Server, Arc<AtomicU32>) {
    let created = Arc::new(AtomicU32::new(0));
    let c = created.clone();
    let s = Server::com(
        database,
        |_| {},
        move |internal| {
            Arc::new(PspCounted {
                internal,
                created: c,
                faults: AtomicU32::new(faults),
            })
        },
    )
    .await;
    (s, created)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_concurrent_identical_top_ups_make_one_provider_charge() {
    for database in databases("fifty_concurrent_identical_top_ups_make_one_provider_charge").await {
        let (s, created) = counted_server(&database, 0).await;
        let s = Arc::new(s);
        let c = s.conta(0).await;
        let tasks: Vec<_> = (0..50)
            .map(|_| {
                let (s, key) = (s.clone(), c.api_key.clone());
                tokio::spawn(
                    async move { s.post(&key, "/v1/recarga", r#"{"valor": 1234.56}"#).await },
                )
            })
            .collect();
        let (mut ids, mut payments, mut reused) = (HashSet::new(), HashSet::new(), 0);
        for t in tasks {
            let (st, v) = t.await.unwrap();
            assert_eq!(st, 200, "{}: {v}", s.name);
            ids.insert(v["recargaId"].as_str().unwrap().to_owned());
            payments.insert(v["paymentId"].as_str().unwrap().to_owned());
            assert!(v["qrCode"].as_str().is_some_and(|q| q.len() > 20), "{v}");
            reused += u32::from(v["reaproveitada"] == true);
        }
        assert_eq!(
            created.load(Ordering::SeqCst),
            1,
            "{}: provider charges",
            s.name
        );
        assert_eq!(
            (ids.len(), payments.len(), reused),
            (1, 1, 49),
            "{}",
            s.name
        );
        let (_, list) = s.get(&c.api_key, "/v1/recargas").await;
        assert_eq!(list["total"], 1, "{}: {list}", s.name);
        // another amount is another charge
        s.recarga(&c.api_key, "1234.57").await;
        assert_eq!(created.load(Ordering::SeqCst), 2, "{}", s.name);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_failure_leaves_nothing_to_reuse() {
    for database in databases("a_provider_failure_leaves_nothing_to_reuse").await {
        let (s, created) = counted_server(&database, 1).await;
        let c = s.conta(0).await;
        let (st, v) = s.post(&c.api_key, "/v1/recarga", r#"{"valor": 700}"#).await;
        assert_eq!(
            (st, v["error"].as_str()),
            (502, Some("ERRO_PIX")),
            "{}: {v}",
            s.name
        );
        let (_, list) = s.get(&c.api_key, "/v1/recargas").await;
        assert_eq!(list["total"], 0, "{}: {list}", s.name);
        let (st, v) = s.post(&c.api_key, "/v1/recarga", r#"{"valor": 700}"#).await;
        assert_eq!(
            (st, v["reaproveitada"].as_bool()),
            (200, Some(false)),
            "{}: {v}",
            s.name
        );
        let (_, v2) = s.post(&c.api_key, "/v1/recarga", r#"{"valor": 700}"#).await;
        assert_eq!(v2["reaproveitada"], true);
        assert_eq!(v2["paymentId"], v["paymentId"]);
        assert_eq!(created.load(Ordering::SeqCst), 2, "{}", s.name);
        let (_, list) = s.get(&c.api_key, "/v1/recargas").await;
        assert_eq!(list["total"], 1, "{}: {list}", s.name);
    }
}
