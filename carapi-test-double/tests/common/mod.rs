//! What the archive's test binaries (`archive.rs`, `archive_postgres.rs`,
//! `archive_service.rs`) share.

#![allow(dead_code)]

use std::collections::HashMap;
use std::time::Duration;

use carapi_sdk::archive::Archive;
use carapi_sdk::{Client, CodigoCar, CpfCnpj, HistoricoParams};
use carapi_test_double::{Fault, TestServer, dados};
use futures::StreamExt;

/// A bundled record with a receipt and at least one owner: its code and its first owner.
pub fn record_with_owner() -> (String, CpfCnpj) {
    let i = dados::bundled()
        .into_iter()
        .find(|i| i.has_recibo && !i.proprietarios.is_empty())
        .expect("a bundled record with a receipt and owners");
    let doc = CpfCnpj::parse(&i.proprietarios[0].documento).expect("valid");
    (i.codigo_car.to_string(), doc)
}

/// `n` records of the double (copies of a bundled one under new codes), their codes.
pub async fn many_records(srv: &TestServer, n: u64) -> Vec<String> {
    let template = dados::bundled().into_iter().next().expect("a record");
    let records: Vec<_> = (0..n)
        .map(|i| {
            let mut r = template.clone();
            r.codigo_car =
                CodigoCar::parse(format!("DF-5300108-{:032X}", 0xACE_0000 + i)).expect("code");
            r
        })
        .collect();
    srv.server()
        .state()
        .replace_imoveis(&records)
        .await
        .expect("records");
    records.iter().map(|r| r.codigo_car.to_string()).collect()
}

/// The charged 200s of the account, by key, as its history tells them.
pub async fn charged_per_key(c: &Client) -> HashMap<String, usize> {
    let items = c
        .historico_stream(HistoricoParams::default())
        .try_collect()
        .await
        .expect("history");
    let mut per_key = HashMap::new();
    for i in items {
        if i.cobrado {
            *per_key
                .entry(i.chave_consulta.unwrap_or_default())
                .or_insert(0) += 1;
        }
    }
    per_key
}

/// Looks every code up with a deadline spread from 1 ms to twice `answer` (the double's delay):
/// some calls are dropped before they are sent, some while their request is in flight, some
/// after their answer arrived, some not at all. 100 at a time. Returns how many answered.
pub async fn sweep(c: &Client, codes: &[String], answer: Duration) -> usize {
    let span = u64::try_from(answer.as_millis() * 2).unwrap_or(40).max(2);
    futures::stream::iter(codes.iter().enumerate())
        .map(|(i, code)| {
            let c = c.clone();
            let deadline = Duration::from_millis(1 + (i as u64 * 37) % span);
            async move { tokio::time::timeout(deadline, c.car(code)).await }
        })
        .buffer_unordered(100)
        .filter(|r| std::future::ready(matches!(r, Ok(Ok(_)))))
        .count()
        .await
}

/// Looks every code up, 100 at a time, without a deadline: the answers.
pub async fn look_up_all(
    c: &Client,
    codes: &[String],
) -> Vec<carapi_sdk::Result<carapi_sdk::Answer<carapi_sdk::CarResponse<carapi_sdk::CarDadosBasicos>>>>
{
    futures::stream::iter(codes)
        .map(|k| c.car(k))
        .buffer_unordered(100)
        .collect()
        .await
}

/// The scenario of dropped lookups on `archive` (the tests of both backends): every code of
/// `codes` looked up with deadlines spread around an answer 20 ms late ([`sweep`]), then
/// `close`: every key the server charged is in the archive; then every code again: none is
/// charged twice, all are archived, the chain verifies.
pub async fn dropped_lookups_pay_once(
    srv: &TestServer,
    c: &Client,
    archive: &Archive,
    codes: &[String],
) {
    let answer = Duration::from_millis(20);
    srv.inject(Fault::delay(answer).always());
    let answered = sweep(c, codes, answer).await;
    assert_eq!(c.close().await, 0, "every purchase ended");
    let charged = charged_per_key(c).await;
    let archived: std::collections::HashSet<String> = archive
        .entries()
        .expect("entries")
        .into_iter()
        .filter_map(|e| e.chave)
        .collect();
    eprintln!(
        "{answered} of {} answered in time; {} charged",
        codes.len(),
        charged.len()
    );
    assert!(answered < codes.len(), "some calls were dropped");
    let lost: Vec<_> = charged.keys().filter(|k| !archived.contains(*k)).collect();
    assert!(lost.is_empty(), "paid and not archived: {lost:?}");
    let again = look_up_all(c, codes).await;
    let failed: Vec<String> = again
        .iter()
        .filter_map(|r| r.as_ref().err().map(|e| carapi_sdk::error_chain(e)))
        .collect();
    assert!(
        failed.is_empty(),
        "{} failed: {:?}",
        failed.len(),
        failed.first()
    );
    let from_archive = again
        .iter()
        .filter(|a| {
            a.as_ref()
                .is_ok_and(|a| a.origin == carapi_sdk::Origin::Archive)
        })
        .count();
    assert_eq!(
        from_archive,
        charged.len(),
        "every paid key read from the archive"
    );
    let twice: Vec<_> = charged_per_key(c)
        .await
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .collect();
    assert!(twice.is_empty(), "keys charged twice: {twice:?}");
    assert_eq!(archive.entries().expect("entries").len(), codes.len());
    assert!(archive.verify(None).expect("verify").is_ok());
}
