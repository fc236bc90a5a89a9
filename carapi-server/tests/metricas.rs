//! `GET /metrics` of a `carapi-server serve` process (its own process, so that its counters
//! hold only this test's requests): the request counters by route template and status and the
//! debits in centavos match what the test did; no CAR code or key in the text; and
//! `promtool check metrics` accepts it where promtool is installed (Debian's `prometheus`).

use std::io::Write;
use std::process::{Command, Stdio};

use carapi_service::store::SqliteStore;
use carapi_service::{NovaConta, create_conta};
use rust_decimal::Decimal;

use crate::helpers::CODIGO;
use crate::processo::serve;

/// The value of the sample line starting with `serie` (name and labels), 0 when absent.
fn amostra(texto: &str, serie: &str) -> f64 {
    texto
        .lines()
        .find_map(|l| l.strip_prefix(serie)?.strip_prefix(' '))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

#[tokio::test]
async fn metrics_count_the_requests_and_debits_made_and_pass_promtool() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("m.db").display());
    let conta = {
        let store = SqliteStore::connect(&url).await.unwrap();
        carapi_service::startup::load_bundled_data(&store)
            .await
            .unwrap();
        create_conta(
            &store,
            NovaConta {
                saldo: Decimal::from(100),
                ..NovaConta::default()
            },
        )
        .await
        .unwrap()
    };
    let s = serve(&url, &[], &[]);
    let http = reqwest::Client::new();
    let get = |path: String, key: Option<&str>| {
        let mut r = http.get(format!("{}{path}", s.base));
        if let Some(k) = key {
            r = r.bearer_auth(k);
        }
        async move { r.send().await.unwrap().status().as_u16() }
    };
    for _ in 0..3 {
        assert_eq!(
            get(format!("/v1/car/{CODIGO}"), Some(&conta.api_key)).await,
            200
        );
    }
    for _ in 0..2 {
        assert_eq!(get("/v1/saldo".into(), Some("chave-errada")).await, 401);
    }
    let saldo: serde_json::Value = http
        .get(format!("{}/v1/saldo", s.base))
        .bearer_auth(&conta.api_key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let restante = saldo["saldoReais"].as_f64().unwrap();
    let gasto = ((100.0 - restante) * 100.0).round();
    let texto = reqwest::get(format!("{}/metrics", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let car = r#"carapi_requests_total{route="/v1/car/{codigoCar}",status="200"}"#;
    assert_eq!(amostra(&texto, car), 3.0, "{texto}");
    let saldo_401 = r#"carapi_requests_total{route="/v1/saldo",status="401"}"#;
    assert_eq!(amostra(&texto, saldo_401), 2.0, "{texto}");
    let saldo_200 = r#"carapi_requests_total{route="/v1/saldo",status="200"}"#;
    assert_eq!(amostra(&texto, saldo_200), 1.0, "{texto}");
    let hist = r#"carapi_request_duration_seconds_count{route="/v1/car/{codigoCar}",status="200"}"#;
    assert_eq!(amostra(&texto, hist), 3.0, "{texto}");
    let cobradas: f64 = texto
        .lines()
        .filter(|l| l.starts_with("carapi_charges_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(cobradas, 3.0, "{texto}");
    let centavos: f64 = texto
        .lines()
        .filter(|l| l.starts_with("carapi_debited_centavos_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!(
        (centavos - gasto).abs() < 0.5,
        "{centavos} != {gasto}: {texto}"
    );
    assert!(gasto > 0.0);
    assert!(!texto.contains(CODIGO) && !texto.contains(&conta.api_key));
    promtool(&texto);
}

fn promtool(texto: &str) {
    let Ok(mut filho) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        println!("SKIP promtool check metrics: promtool not installed (Debian package prometheus)");
        return;
    };
    filho
        .stdin
        .take()
        .unwrap()
        .write_all(texto.as_bytes())
        .unwrap();
    let out = filho.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
