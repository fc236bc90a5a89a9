//! The real `carapi` binary against the spawned server, checked from the other side: the money
//! and history the server recorded, read through the SDK.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use carapi_sdk::{CarDadosBasicos, CarResponse, HistoricoParams, StatusConsulta};
use carapi_tests::{Environment, carapi_bin};
use rust_decimal_macros::dec;

use crate::CODIGO_REAL;

fn carapi(env: &Environment, api_key: &str) -> Command {
    let mut cmd = Command::new(carapi_bin());
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CARAPI_BASE_URL", env.server.base_url())
        .env("CARAPI_API_KEY", api_key)
        .env("CARAPI_CONFIG_DIR", env.dir.path().join("config"))
        .env("CARAPI_DATA_DIR", env.dir.path().join("data"))
        .current_dir(env.dir.path());
    cmd
}

async fn run(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test]
async fn car_proprietario_and_recibo_charge_exactly_what_they_show() {
    let env = Environment::new().await;
    let (sdk, conta) = env.client_with_saldo(dec!(50)).await;

    let o = run({
        let mut c = carapi(&env, &conta.api_key);
        c.args(["car", CODIGO_REAL]);
        c
    })
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let table = text(&o.stdout);
    assert!(
        table.contains(CODIGO_REAL)
            && table.contains("Área total (ha)")
            && table.contains("2,0131"),
        "{table}"
    );
    assert!(
        !table.contains('\u{1b}'),
        "piped output has no colour codes"
    );

    let o = run({
        let mut c = carapi(&env, &conta.api_key);
        c.args(["-o", "json", "car", CODIGO_REAL]);
        c
    })
    .await;
    let json: CarResponse<CarDadosBasicos> =
        serde_json::from_slice(&o.stdout).expect("the API's JSON shape");
    assert_eq!(json.dados.codigo_car, CODIGO_REAL);

    let owner = carapi_service::dados::example_documento().formatted();
    let o = run({
        let mut c = carapi(&env, &conta.api_key);
        c.args(["-o", "csv", "proprietario", &owner]);
        c
    })
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).lines().count() >= 3,
        "header plus one row per CAR"
    );

    let pdf = env.dir.path().join("recibo.pdf");
    let o = run({
        let mut c = carapi(&env, &conta.api_key);
        c.args(["recibo", CODIGO_REAL, "--saida"]).arg(&pdf);
        c
    })
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_pdf_com_codigo(&pdf, CODIGO_REAL);

    // Without --force the file is kept and nothing is charged.
    let o = run({
        let mut c = carapi(&env, &conta.api_key);
        c.args(["recibo", CODIGO_REAL, "--saida"]).arg(&pdf);
        c
    })
    .await;
    assert!(!o.status.success());

    let cobrado = dec!(1.00) * dec!(2) + dec!(2.60) + dec!(11.00);
    assert_eq!(sdk.saldo().await.unwrap().saldo_reais, dec!(50) - cobrado);
    assert!(
        env.server
            .check_ledger(conta.conta_id)
            .await
            .unwrap()
            .is_consistent()
    );
}

fn assert_pdf_com_codigo(path: &Path, codigo: &str) {
    let doc = lopdf::Document::load(path).expect("a valid PDF");
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    let text = doc.extract_text(&pages).expect("text extracts");
    assert!(text.contains(codigo), "the receipt names its code");
}

#[tokio::test]
async fn lote_interrupted_then_resumed_never_pays_twice() {
    let env = Environment::new().await;
    let (sdk, conta) = env.client_with_saldo(dec!(100)).await;
    let codigos: Vec<String> = carapi_service::dados::bundled()
        .iter()
        .take(6)
        .map(|i| i.codigo_car.to_string())
        .collect();
    let entry = env.dir.path().join("codigos.txt");
    let mut lines = codigos.clone();
    lines.push(codigos[0].to_lowercase()); // a duplicate after normalisation
    lines.push("nao-e-codigo".into()); // reported, never sent
    std::fs::write(&entry, lines.join("\n")).unwrap();

    let batch = |max: Option<&str>| {
        let mut c = carapi(&env, &conta.api_key);
        c.args(["lote", "car"])
            .arg(&entry)
            .args(["--saida", "r.jsonl", "--yes"]);
        if let Some(m) = max {
            c.args(["--max-custo", m]);
        }
        c
    };
    let first = run(batch(Some("2"))).await;
    assert!(
        !first.status.success(),
        "stopped by --max-custo: {}",
        text(&first.stderr)
    );
    assert_eq!(
        sdk.saldo().await.unwrap().saldo_reais,
        dec!(98),
        "two lookups paid"
    );

    let second = run(batch(None)).await;
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert_eq!(
        sdk.saldo().await.unwrap().saldo_reais,
        dec!(94),
        "six distinct codes, each paid once"
    );
    let sucesso = sdk
        .historico(&HistoricoParams {
            status: Some(StatusConsulta::Sucesso),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(sucesso.total, 6);
    let responses = std::fs::read_to_string(env.dir.path().join("r.jsonl")).unwrap();
    assert_eq!(
        responses
            .lines()
            .filter(|l| !l.contains("nao-e-codigo"))
            .count(),
        6,
        "{responses}"
    );
}

#[tokio::test]
async fn local_topup_is_confirmed_after_local_pagar() {
    let env = Environment::new().await; // only for its folders: local mode runs its own server
    let local = |args: &[&str]| {
        let mut c = carapi(&env, "");
        c.env_remove("CARAPI_BASE_URL")
            .env_remove("CARAPI_API_KEY")
            .arg("--local")
            .args(args);
        c
    };
    let mut create = local(&["recarga", "criar", "500"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut output = BufReader::new(create.stdout.take().unwrap());
    let (id, output) = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(
                output.read_line(&mut line).unwrap() > 0,
                "no recarga id printed"
            );
            if let Some(id) = line.strip_prefix("ID da recarga: ") {
                return (id.trim().to_owned(), output);
            }
        }
    })
    .await
    .unwrap();

    let pay = run({
        let mut c = carapi(&env, "");
        c.env_remove("CARAPI_BASE_URL")
            .env_remove("CARAPI_API_KEY")
            .args(["local", "pagar", &id]);
        c
    })
    .await;
    assert!(pay.status.success(), "{}", text(&pay.stderr));

    let end = tokio::task::spawn_blocking(move || {
        let rest: Vec<String> = output.lines().map_while(Result::ok).collect();
        (create.wait().unwrap(), rest)
    })
    .await
    .unwrap();
    assert!(end.0.success());
    assert!(
        end.1
            .iter()
            .any(|l| l.contains("Confirmado") || l.contains("confirmada")),
        "{:?}",
        end.1
    );

    let list = run(local(&["-o", "json", "recargas", "--status", "Confirmado"])).await;
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).expect("json");
    assert!(v.to_string().contains(&id), "{v}");
}
