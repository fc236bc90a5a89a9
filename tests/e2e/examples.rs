//! Every example of `examples/` runs against a spawned server and exits 0.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use carapi_sdk::HistoricoParams;
use carapi_tests::{Environment, example_bin};
use rust_decimal_macros::dec;

use crate::proxy::{Action, Proxy};
use crate::{CODIGO_REAL, preco_basico};

fn command(env: &Environment, name: &str, api_key: &str) -> Command {
    let mut cmd = Command::new(example_bin(name));
    cmd.env("CARAPI_BASE_URL", env.server.base_url())
        .env("CARAPI_API_KEY", api_key);
    cmd
}

#[tokio::test]
async fn quickstart_lote_and_historico_exit_0() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(100)).await;
    for name in ["quickstart", "lote", "historico"] {
        let mut cmd = command(&env, name, &conta.api_key);
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .unwrap()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        match name {
            "quickstart" => assert!(stdout.contains("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47")),
            "lote" => assert!(
                stdout.contains("limite"),
                "the spend guard refused some lookups: {stdout}"
            ),
            _ => assert!(stdout.contains("consultas")),
        }
    }
    // The batch example never spent past its 3.00 BRL cap (the quickstart spent the rest).
    let h = env
        .client_addr(&conta.api_key)
        .historico(&Default::default())
        .await
        .unwrap();
    let batch: rust_decimal::Decimal = h
        .itens
        .iter()
        .filter(|i| i.endpoint == "/v1/car/{codigo}")
        .map(|i| i.valor_cobrado)
        .sum();
    assert!(
        batch <= dec!(4.00),
        "quickstart 1.00 + lote at most 3.00, got {batch}"
    );
}

#[tokio::test]
async fn recarga_example_waits_for_the_payment() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(0)).await;
    let mut child = command(&env, "recarga", &conta.api_key)
        .env("CARAPI_RECARGA_TIMEOUT_SECS", "60")
        .env("CARAPI_POLL_MS", "200")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (id, rest) = tokio::task::spawn_blocking(move || {
        let mut lines = BufReader::new(stdout).lines();
        let id = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("recargaId: ").map(str::to_owned))
            .expect("the example prints the recargaId");
        (id, lines)
    })
    .await
    .unwrap();

    env.server.pay_recarga(id.parse().unwrap()).await.unwrap();
    let status = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || child.wait()),
    )
    .await
    .expect("the example finishes after the payment")
    .unwrap()
    .unwrap();
    assert!(status.success());
    let rest: Vec<String> = rest.map_while(Result::ok).collect();
    assert!(
        rest.iter().any(|l| l.starts_with("status: Confirmado")),
        "{rest:?}"
    );
}

/// Runs example `nome` with `envs` and returns its stdout; panics unless it exits 0.
async fn run(mut cmd: Command, name: &str) -> String {
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{name}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[tokio::test]
async fn car_completo_example_stays_under_its_cap() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(100)).await;
    let mut cmd = command(&env, "car_completo", &conta.api_key);
    cmd.env("CARAPI_MAX_SPEND", "5.00");
    let stdout = run(cmd, "car_completo").await;
    // 4 real codes at 2.30: two fit in 5.00 (the 404 in flight never refuses one), two are refused.
    let lines = |prefix: &str| stdout.lines().filter(|l| l.starts_with(prefix)).count();
    assert_eq!(lines("ok "), 2, "{stdout}");
    assert_eq!(lines("limite "), 2, "{stdout}");
    assert_eq!(lines("erro "), 1, "the 404: {stdout}");
    assert!(stdout.contains("gasto: R$ 4,60 confirmado"), "{stdout}");
}

#[tokio::test]
async fn saldo_insuficiente_example_prints_the_shortfall() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(2.50)).await;
    let stdout = run(
        command(&env, "saldo_insuficiente", &conta.api_key),
        "saldo_insuficiente",
    )
    .await;
    assert!(stdout.contains("402 SALDO_INSUFICIENTE"), "{stdout}");
    assert!(
        stdout.contains("recibo custa R$ 11,00; saldo R$ 2,50; faltam R$ 8,50"),
        "{stdout}"
    );
}

#[tokio::test]
async fn resposta_perdida_example_resolves_against_the_history() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(100)).await;
    // The example's first lookup (after the free saldo request that reads the prices; the proxy
    // sees each request on its own connection) has its answer lost.
    let lost = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let p = lost.clone();
    let proxy = Proxy::new_for(&env.server.base_url(), move |line| {
        if line.contains(CODIGO_REAL) && !p.swap(true, std::sync::atomic::Ordering::SeqCst) {
            Action::LoseReply
        } else {
            Action::Pass
        }
    })
    .await;
    let mut cmd = Command::new(example_bin("resposta_perdida"));
    cmd.env("CARAPI_BASE_URL", &proxy.base_url)
        .env("CARAPI_API_KEY", &conta.api_key);
    let stdout = run(cmd, "resposta_perdida").await;
    assert!(stdout.contains("resposta perdida"), "{stdout}");
    assert!(stdout.contains("is_retryable: false"), "{stdout}");
    assert!(stdout.contains("cobradas: 1, não cobradas: 0"), "{stdout}");
    assert!(
        stdout.contains("gasto: R$ 1,00 confirmado, R$ 0,00 incerto"),
        "{stdout}"
    );
    let h = env
        .client_addr(&conta.api_key)
        .historico(&HistoricoParams::default())
        .await
        .unwrap();
    let cobrado: rust_decimal::Decimal = h.itens.iter().map(|i| i.valor_cobrado).sum();
    assert_eq!(cobrado, preco_basico(), "charged once, never re-sent");
}

#[tokio::test]
async fn blocking_example_looks_up_from_a_plain_main() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(10)).await;
    let stdout = run(command(&env, "blocking", &conta.api_key), "blocking").await;
    assert!(stdout.contains(CODIGO_REAL), "{stdout}");
    assert!(
        stdout.contains("gasto deste cliente: R$ 1,00 (incerto R$ 0,00)"),
        "{stdout}"
    );
    let h = env
        .client_addr(&conta.api_key)
        .historico(&HistoricoParams::default())
        .await
        .unwrap();
    assert_eq!(
        h.itens.len(),
        1,
        "the sandbox lookup is free and not recorded"
    );
}

/// The charged lookups of the account, by key.
async fn charged(env: &Environment, api_key: &str) -> std::collections::HashMap<String, usize> {
    let items = env
        .client_addr(api_key)
        .historico_stream(HistoricoParams::default())
        .try_collect()
        .await
        .unwrap();
    let mut per_key = std::collections::HashMap::new();
    for i in items.into_iter().filter(|i| i.cobrado) {
        *per_key
            .entry(i.chave_consulta.unwrap_or_default())
            .or_insert(0) += 1;
    }
    per_key
}

#[tokio::test]
async fn acervo_example_buys_once_across_two_runs() {
    let env = Environment::new().await;
    let conta = env.conta(dec!(10)).await;
    let file = env.dir.path().join("acervo.sqlite3");
    for run_n in 0..2 {
        let mut cmd = command(&env, "acervo", &conta.api_key);
        cmd.env("CARAPI_ACERVO", &file);
        let stdout = run(cmd, "acervo").await;
        let bought = stdout.lines().filter(|l| l.starts_with("api ")).count();
        assert_eq!(bought, if run_n == 0 { 2 } else { 0 }, "{stdout}");
        assert!(
            stdout.contains("compras em andamento ao fechar: 0"),
            "{stdout}"
        );
        assert!(stdout.contains("íntegra"), "{stdout}");
    }
    // Every charge (the dropped lookup's too, when it was sent) is an entry of the archive.
    let mut archived = std::collections::HashMap::new();
    for e in carapi_sdk::archive::Archive::open(&file)
        .unwrap()
        .entries()
        .unwrap()
    {
        *archived.entry(e.chave.unwrap_or_default()).or_insert(0) += 1;
    }
    assert_eq!(charged(&env, &conta.api_key).await, archived);
}

#[tokio::test]
async fn acervo_postgres_example_shares_one_chain() {
    let Ok(base) = std::env::var("DATABASE_URL") else {
        eprintln!("acervo_postgres_example: DATABASE_URL unset: skipped");
        return;
    };
    let name = carapi_tests::pg::unique_name("acervo_exemplo");
    {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&base).await.unwrap();
        sqlx::query(&format!("CREATE DATABASE \"{name}\""))
            .execute(&mut c)
            .await
            .unwrap();
    }
    let url = carapi_tests::pg::with_database(&base, &name);
    let env = Environment::new().await;
    let conta = env.conta(dec!(10)).await;
    let mut cmd = command(&env, "acervo_postgres", &conta.api_key);
    cmd.env("CARAPI_ACERVO", &url);
    let stdout = run(cmd, "acervo_postgres").await;
    let bought = stdout.lines().filter(|l| l.starts_with("api ")).count();
    assert_eq!(bought, 2, "one purchase per code: {stdout}");
    assert!(
        stdout.contains("cadeia da equipe: 2 entradas, íntegra"),
        "{stdout}"
    );
    let per_key = charged(&env, &conta.api_key).await;
    assert!(per_key.values().all(|n| *n == 1), "{per_key:?}");
    carapi_tests::pg::drop_database(&base, &name).await;
}
