//! Figure 2: wall time of `carapi car <code>` against `curl` doing the same request to the same
//! running server, process start included (median of alternating runs). Two target rows: the
//! sandbox code, and a real charged code (the CLI keeps a current-table account's prices in its
//! data directory, so after the first run a lookup is one request, as curl's). A third row: 20
//! `carapi car` started at the contract's pace (10 per second) against a server whose per-key
//! limit is on: none may meet a 429 (each spends one request).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use carapi_sdk::sandbox;
use carapi_tests::{Environment, carapi_bin};
use rust_decimal::Decimal;

use crate::Figure;

const ROUNDS: usize = 30;
const CODIGO_REAL: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

pub async fn run() -> Vec<Figure> {
    let env = Environment::com(|c| c.rate_limit = None).await;
    let chave = env.conta(Decimal::from(1_000)).await.api_key;
    let config = tempfile::tempdir().expect("temp dir");
    let mut figures = Vec::new();
    for (codigo, name, target) in [
        (
            sandbox::CAR_BASICO,
            "CLI: `carapi car <sandbox>` wall time vs curl",
            1.5,
        ),
        (
            CODIGO_REAL,
            "CLI: `carapi car <real, charged>` wall time vs curl",
            1.0,
        ),
    ] {
        let (cli, curl) = measure(&env.server.base_url(), &chave, config.path(), codigo).await;
        let ratio = cli.as_secs_f64() / curl.as_secs_f64();
        figures.push(Figure {
            name,
            measured: format!("{:.1} ms", cli.as_secs_f64() * 1000.0),
            reference: format!("{:.1} ms", curl.as_secs_f64() * 1000.0),
            ratio,
            target: if target > 1.0 { "<= 1.5" } else { "<= 1.0" },
            ok: ratio <= target,
        });
    }
    figures.push(paced_loop().await);
    figures
}

/// Third row: 20 processes of `carapi -v car <real>`, one started every 100 ms (the contract's
/// 10 per second), against a server with its per-key limit on, after one warm-up run (which
/// keeps the account's prices): how many 429s their HTTP summaries show.
async fn paced_loop() -> Figure {
    let env = Environment::new().await;
    let chave = env.conta(Decimal::from(1_000)).await.api_key;
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = carapi_bin().to_path_buf();
    let base = env.server.base_url();
    let run = move |dir: &std::path::Path| {
        // `-v`: one line per HTTP exchange on stderr, its status included (a 429 the SDK
        // retried would not show in the exit status).
        let mut c = Command::new(&bin);
        c.args(["-v", "car", CODIGO_REAL])
            .env("CARAPI_BASE_URL", &base)
            .env("CARAPI_API_KEY", &chave)
            .env("CARAPI_CONFIG_DIR", dir)
            .env("CARAPI_DATA_DIR", dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    let path = dir.path().to_path_buf();
    let refused = tokio::task::spawn_blocking(move || {
        assert!(run(&path).status().expect("warm-up").success());
        std::thread::sleep(Duration::from_millis(1100));
        let start = Instant::now();
        let children: Vec<_> = (0..20u32)
            .map(|i| {
                let due = Duration::from_millis(100) * i;
                std::thread::sleep(due.saturating_sub(start.elapsed()));
                run(&path).spawn().expect("carapi")
            })
            .collect();
        children
            .into_iter()
            .map(|c| c.wait_with_output().expect("exit"))
            .map(|o| {
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .filter(|l| l.contains("→ 429"))
                    .count()
            })
            .sum::<usize>()
    })
    .await
    .expect("loop");
    Figure {
        name: "CLI: 20 `carapi car <real>` at 10 per second, per-key limit on: 429s",
        measured: format!("{refused} answers 429 in 20 runs"),
        reference: "0".into(),
        ratio: refused as f64,
        target: "0",
        ok: refused == 0,
    }
}

/// Median wall times of `carapi car <codigo>` and of curl fetching the same URL.
async fn measure(
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
            let a = time(carapi());
            let b = time(curl());
            if i > 0 {
                // The first round only warms the page cache.
                t_cli.push(a);
                t_curl.push(b);
            }
        }
        (median(t_cli), median(t_curl))
    })
    .await
    .expect("timing task")
}

fn time(mut cmd: Command) -> Duration {
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

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
