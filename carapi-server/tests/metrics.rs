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
use crate::server_process::serve;

/// The value of the sample line starting with `serie` (name and labels), 0 when absent.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
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
    let remaining = saldo["saldoReais"].as_f64().unwrap();
    let gasto = ((100.0 - remaining) * 100.0).round();
    let text = reqwest::get(format!("{}/metrics", s.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let car = r#"carapi_requests_total{route="/v1/car/{codigoCar}",status="200"}"#;
    assert_eq!(sample(&text, car), 3.0, "{text}");
    let saldo_401 = r#"carapi_requests_total{route="/v1/saldo",status="401"}"#;
    assert_eq!(sample(&text, saldo_401), 2.0, "{text}");
    let saldo_200 = r#"carapi_requests_total{route="/v1/saldo",status="200"}"#;
    assert_eq!(sample(&text, saldo_200), 1.0, "{text}");
    let hist = r#"carapi_request_duration_seconds_count{route="/v1/car/{codigoCar}",status="200"}"#;
    assert_eq!(sample(&text, hist), 3.0, "{text}");
    let cobradas: f64 = text
        .lines()
        .filter(|l| l.starts_with("carapi_charges_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(cobradas, 3.0, "{text}");
    let centavos: f64 = text
        .lines()
        .filter(|l| l.starts_with("carapi_debited_centavos_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!(
        (centavos - gasto).abs() < 0.5,
        "{centavos} != {gasto}: {text}"
    );
    assert!(gasto > 0.0);
    assert!(!text.contains(CODIGO) && !text.contains(&conta.api_key));
    // The pools' gauges and the open connections (this scrape's at least).
    assert!(sample(&text, r#"carapi_db_pool_max_connections{pool="escrita"}"#) >= 1.0);
    assert!(text.contains(r#"carapi_db_pool_connections{pool="leitura",state="in_use"}"#));
    assert_eq!(
        sample(&text, "carapi_db_pool_timeouts_total"),
        0.0,
        "{text}"
    );
    assert!(text.contains("\ncarapi_db_pool_timeouts_total "), "{text}");
    assert!(sample(&text, "carapi_connections_open") >= 1.0, "{text}");
    promtool(&text);
}

/// Opens a connection, sends `GET /livez` and reads: true when the server answered, false when
/// it closed the connection without an answer (refused).
fn served(addr: &str, open: &mut Vec<std::net::TcpStream>) -> bool {
    use std::io::Read;
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let _ = c.write_all(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut buf = [0u8; 12];
    let chunk = c.read(&mut buf).unwrap_or(0);
    let ok = chunk > 0 && buf.starts_with(b"HTTP/1.1 200");
    if ok {
        open.push(c);
    }
    ok
}

#[tokio::test]
async fn metrics_on_their_own_address_count_refused_connections_and_limit_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("m.db").display());
    let s = serve(
        &url,
        &[
            "--endereco-metricas",
            "127.0.0.1:0",
            "--limite-nao-autenticado",
            "1",
            "--conexoes-por-endereco",
            "2",
        ],
        &[],
    );
    let metrics = s
        .warnings
        .iter()
        .find_map(|l| l.strip_prefix("métricas em "))
        .unwrap_or_else(|| panic!("{:?}", s.warnings))
        .trim()
        .to_owned();
    // The main address no longer serves them.
    let principal = reqwest::get(format!("{}/metrics", s.base)).await.unwrap();
    assert_eq!(principal.status(), 404);
    // Wrong keys from one address: 401, then 429 from the per-address limit.
    let (mut n401, mut n429) = (0, 0);
    {
        let http = reqwest::Client::new();
        for _ in 0..8 {
            match http
                .get(format!("{}/v1/saldo", s.base))
                .bearer_auth("car_errada")
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
            {
                401 => n401 += 1,
                429 => n429 += 1,
                other => panic!("{other}"),
            }
        }
    }
    assert!(n429 > 0, "{n401} x 401");
    // Connections past the per-address bound (2) are closed without an answer.
    let addr = s.base.trim_start_matches("http://").to_owned();
    let (mut open, mut refused) = (Vec::new(), 0);
    for _ in 0..6 {
        if !served(&addr, &mut open) {
            refused += 1;
        }
    }
    assert!(refused >= 4, "{refused} refused");
    let text = reqwest::get(&metrics).await.unwrap().text().await.unwrap();
    let series = r#"carapi_connections_refused_total{motivo="conexoes_por_endereco"}"#;
    assert_eq!(sample(&text, series), f64::from(refused), "{text}");
    let series = r#"carapi_limit_refusals_total{limite="taxa"}"#;
    assert_eq!(sample(&text, series), f64::from(n429), "{text}");
    let series = r#"carapi_requests_total{route="/v1/saldo",status="401"}"#;
    assert_eq!(sample(&text, series), f64::from(n401), "{text}");
    let series = r#"carapi_requests_total{route="/livez",status="200"}"#;
    assert_eq!(sample(&text, series), open.len() as f64, "{text}");
    assert!(sample(&text, "carapi_connections_open") >= open.len() as f64);
    promtool(&text);
}

fn promtool(text: &str) {
    let Ok(mut child) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        println!("SKIP promtool check metrics: promtool not installed (Debian package prometheus)");
        return;
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
