//! Figure 2: wall time of `carapi car <sandbox code>` against `curl` doing the same request to
//! the same running server, process start included (median of alternating runs).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use carapi_sdk::sandbox;
use carapi_tests::{Ambiente, carapi_bin};
use rust_decimal::Decimal;

use crate::Figura;

const RODADAS: usize = 30;

pub async fn run() -> Figura {
    let amb = Ambiente::com(|c| c.rate_limit = None).await;
    let chave = amb.conta(Decimal::from(10)).await.api_key;
    let base = amb.server.base_url();
    let bin = carapi_bin().to_path_buf();
    let config = tempfile::tempdir().expect("temp dir");

    let carapi = {
        let (base, chave, dir) = (base.clone(), chave.clone(), config.path().to_path_buf());
        move || {
            let mut c = Command::new(&bin);
            c.args(["car", sandbox::CAR_BASICO])
                .env("CARAPI_BASE_URL", &base)
                .env("CARAPI_API_KEY", &chave)
                .env("CARAPI_CONFIG_DIR", &dir)
                .env("CARAPI_DATA_DIR", &dir);
            c
        }
    };
    let curl = {
        let url = format!("{base}/v1/car/{}", sandbox::CAR_BASICO);
        move || {
            let mut c = Command::new("curl");
            c.args(["-sf", "-H", &format!("Authorization: Bearer {chave}"), &url]);
            c
        }
    };

    let (mut t_cli, mut t_curl) = (Vec::new(), Vec::new());
    let medidas = tokio::task::spawn_blocking(move || {
        for i in 0..=RODADAS {
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
    .expect("timing task");
    let (cli, curl) = medidas;
    let razao = cli.as_secs_f64() / curl.as_secs_f64();
    Figura {
        nome: "CLI: `carapi car` wall time vs curl",
        medido: format!("{:.1} ms", cli.as_secs_f64() * 1000.0),
        referencia: format!("{:.1} ms", curl.as_secs_f64() * 1000.0),
        razao,
        alvo: "<= 1.5",
        ok: razao <= 1.5,
    }
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
