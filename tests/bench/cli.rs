//! Figure 2: wall time of `carapi car <code>` against `curl` doing the same request to the same
//! running server, process start included (median of alternating runs). Two target rows: the
//! sandbox code, and a real charged code (the SDK then also reads the account's prices for its
//! spend figures, alongside the lookup, so the lookup does not wait for them).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use carapi_sdk::sandbox;
use carapi_tests::{Environment, carapi_bin};
use rust_decimal::Decimal;

use crate::Figura;

const ROUNDS: usize = 30;
const CODIGO_REAL: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

pub async fn run() -> Vec<Figura> {
    let amb = Environment::com(|c| c.rate_limit = None).await;
    let chave = amb.conta(Decimal::from(1_000)).await.api_key;
    let config = tempfile::tempdir().expect("temp dir");
    let mut figuras = Vec::new();
    for (codigo, nome, alvo) in [
        (
            sandbox::CAR_BASICO,
            "CLI: `carapi car <sandbox>` wall time vs curl",
            "<= 1.5",
        ),
        (
            CODIGO_REAL,
            "CLI: `carapi car <real, charged>` wall time vs curl",
            "<= 1.5",
        ),
    ] {
        let (cli, curl) = medir(&amb.server.base_url(), &chave, config.path(), codigo).await;
        let ratio = cli.as_secs_f64() / curl.as_secs_f64();
        figuras.push(Figura {
            nome,
            medido: format!("{:.1} ms", cli.as_secs_f64() * 1000.0),
            referencia: format!("{:.1} ms", curl.as_secs_f64() * 1000.0),
            ratio,
            alvo,
            ok: ratio <= 1.5,
        });
    }
    figuras
}

/// Median wall times of `carapi car <codigo>` and of curl fetching the same URL.
async fn medir(
    base: &str,
    chave: &str,
    dir: &std::path::Path,
    codigo: &str,
) -> (Duration, Duration) {
    let bin = carapi_bin().to_path_buf();
    let carapi = {
        let (base, chave, dir, codigo) = (
            base.to_owned(),
            chave.to_owned(),
            dir.to_path_buf(),
            codigo.to_owned(),
        );
        move || {
            let mut c = Command::new(&bin);
            c.args(["car", &codigo])
                .env("CARAPI_BASE_URL", &base)
                .env("CARAPI_API_KEY", &chave)
                .env("CARAPI_CONFIG_DIR", &dir)
                .env("CARAPI_DATA_DIR", &dir);
            c
        }
    };
    let curl = {
        let url = format!("{base}/v1/car/{codigo}");
        let auth = format!("Authorization: Bearer {chave}");
        move || {
            let mut c = Command::new("curl");
            c.args(["-sf", "-H", &auth, &url]);
            c
        }
    };
    tokio::task::spawn_blocking(move || {
        let (mut t_cli, mut t_curl) = (Vec::new(), Vec::new());
        for i in 0..=ROUNDS {
            let a = cronometrar(carapi());
            let b = cronometrar(curl());
            if i > 0 {
                // The first round only warms the page cache.
                t_cli.push(a);
                t_curl.push(b);
            }
        }
        (mediana(t_cli), mediana(t_curl))
    })
    .await
    .expect("timing task")
}

fn cronometrar(mut cmd: Command) -> Duration {
    let t = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("process runs");
    let d = t.elapsed();
    assert!(status.success(), "{cmd:?} failed");
    d
}

fn mediana(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
