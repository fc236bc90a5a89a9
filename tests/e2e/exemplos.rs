//! Every example of `examples/` runs against a spawned server and exits 0.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use carapi_tests::{Ambiente, example_bin};
use rust_decimal_macros::dec;

fn comando(amb: &Ambiente, nome: &str, api_key: &str) -> Command {
    let mut cmd = Command::new(example_bin(nome));
    cmd.env("CARAPI_BASE_URL", amb.server.base_url())
        .env("CARAPI_API_KEY", api_key);
    cmd
}

#[tokio::test]
async fn quickstart_lote_and_historico_exit_0() {
    let amb = Ambiente::novo().await;
    let conta = amb.conta(dec!(100)).await;
    for nome in ["quickstart", "lote", "historico"] {
        let mut cmd = comando(&amb, nome, &conta.api_key);
        let out = tokio::task::spawn_blocking(move || cmd.output())
            .await
            .unwrap()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{nome}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        match nome {
            "quickstart" => assert!(stdout.contains("DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47")),
            "lote" => assert!(
                stdout.contains("limite"),
                "the spend guard refused some lookups: {stdout}"
            ),
            _ => assert!(stdout.contains("consultas")),
        }
    }
    // The batch example never spent past its 3.00 BRL cap (the quickstart spent the rest).
    let h = amb
        .cliente(&conta.api_key)
        .historico(&Default::default())
        .await
        .unwrap();
    let lote: rust_decimal::Decimal = h
        .itens
        .iter()
        .filter(|i| i.endpoint == "/v1/car/{codigo}")
        .map(|i| i.valor_cobrado)
        .sum();
    assert!(
        lote <= dec!(4.00),
        "quickstart 1.00 + lote at most 3.00, got {lote}"
    );
}

#[tokio::test]
async fn recarga_example_waits_for_the_payment() {
    let amb = Ambiente::novo().await;
    let conta = amb.conta(dec!(0)).await;
    let mut child = comando(&amb, "recarga", &conta.api_key)
        .env("CARAPI_RECARGA_TIMEOUT_SECS", "60")
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

    amb.server.pagar_recarga(id.parse().unwrap()).await.unwrap();
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
