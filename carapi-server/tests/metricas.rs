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
    // The pools' gauges and the open connections (this scrape's at least).
    assert!(amostra(&texto, r#"carapi_db_pool_max_connections{pool="escrita"}"#) >= 1.0);
    assert!(texto.contains(r#"carapi_db_pool_connections{pool="leitura",state="in_use"}"#));
    assert_eq!(
        amostra(&texto, "carapi_db_pool_timeouts_total"),
        0.0,
        "{texto}"
    );
    assert!(
        texto.contains("\ncarapi_db_pool_timeouts_total "),
        "{texto}"
    );
    assert!(amostra(&texto, "carapi_connections_open") >= 1.0, "{texto}");
    promtool(&texto);
}

/// Opens a connection, sends `GET /livez` and reads: true when the server answered, false when
/// it closed the connection without an answer (refused).
fn atendida(addr: &str, abertas: &mut Vec<std::net::TcpStream>) -> bool {
    use std::io::Read;
    let mut c = std::net::TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let _ = c.write_all(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut buf = [0u8; 12];
    let lido = c.read(&mut buf).unwrap_or(0);
    let ok = lido > 0 && buf.starts_with(b"HTTP/1.1 200");
    if ok {
        abertas.push(c);
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
    let metricas = s
        .avisos
        .iter()
        .find_map(|l| l.strip_prefix("métricas em "))
        .unwrap_or_else(|| panic!("{:?}", s.avisos))
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
                outro => panic!("{outro}"),
            }
        }
    }
    assert!(n429 > 0, "{n401} x 401");
    // Connections past the per-address bound (2) are closed without an answer.
    let addr = s.base.trim_start_matches("http://").to_owned();
    let (mut abertas, mut recusadas) = (Vec::new(), 0);
    for _ in 0..6 {
        if !atendida(&addr, &mut abertas) {
            recusadas += 1;
        }
    }
    assert!(recusadas >= 4, "{recusadas} refused");
    let texto = reqwest::get(&metricas).await.unwrap().text().await.unwrap();
    let serie = r#"carapi_connections_refused_total{motivo="conexoes_por_endereco"}"#;
    assert_eq!(amostra(&texto, serie), f64::from(recusadas), "{texto}");
    let serie = r#"carapi_limit_refusals_total{limite="taxa"}"#;
    assert_eq!(amostra(&texto, serie), f64::from(n429), "{texto}");
    let serie = r#"carapi_requests_total{route="/v1/saldo",status="401"}"#;
    assert_eq!(amostra(&texto, serie), f64::from(n401), "{texto}");
    let serie = r#"carapi_requests_total{route="/livez",status="200"}"#;
    assert_eq!(amostra(&texto, serie), abertas.len() as f64, "{texto}");
    assert!(amostra(&texto, "carapi_connections_open") >= abertas.len() as f64);
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
