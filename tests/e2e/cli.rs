//! The real `carapi` binary against the spawned server, checked from the other side: the money
//! and history the server recorded, read through the SDK.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use carapi_sdk::{CarDadosBasicos, CarResponse, HistoricoParams, StatusConsulta};
use carapi_tests::{Environment, carapi_bin};
use rust_decimal_macros::dec;

use crate::CODIGO_REAL;

fn carapi(amb: &Environment, api_key: &str) -> Command {
    let mut cmd = Command::new(carapi_bin());
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("CARAPI_BASE_URL", amb.server.base_url())
        .env("CARAPI_API_KEY", api_key)
        .env("CARAPI_CONFIG_DIR", amb.dir.path().join("config"))
        .env("CARAPI_DATA_DIR", amb.dir.path().join("data"))
        .current_dir(amb.dir.path());
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
    let amb = Environment::new().await;
    let (sdk, conta) = amb.cliente_com_saldo(dec!(50)).await;

    let o = run({
        let mut c = carapi(&amb, &conta.api_key);
        c.args(["car", CODIGO_REAL]);
        c
    })
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    let tabela = text(&o.stdout);
    assert!(
        tabela.contains(CODIGO_REAL)
            && tabela.contains("Área total (ha)")
            && tabela.contains("2,0131"),
        "{tabela}"
    );
    assert!(
        !tabela.contains('\u{1b}'),
        "piped output has no colour codes"
    );

    let o = run({
        let mut c = carapi(&amb, &conta.api_key);
        c.args(["-o", "json", "car", CODIGO_REAL]);
        c
    })
    .await;
    let json: CarResponse<CarDadosBasicos> =
        serde_json::from_slice(&o.stdout).expect("the API's JSON shape");
    assert_eq!(json.dados.codigo_car, CODIGO_REAL);

    let dono = carapi_service::dados::example_documento().formatado();
    let o = run({
        let mut c = carapi(&amb, &conta.api_key);
        c.args(["-o", "csv", "proprietario", &dono]);
        c
    })
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).lines().count() >= 3,
        "header plus one row per CAR"
    );

    let pdf = amb.dir.path().join("recibo.pdf");
    let o = run({
        let mut c = carapi(&amb, &conta.api_key);
        c.args(["recibo", CODIGO_REAL, "--saida"]).arg(&pdf);
        c
    })
    .await;
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_pdf_com_codigo(&pdf, CODIGO_REAL);

    // Without --force the file is kept and nothing is charged.
    let o = run({
        let mut c = carapi(&amb, &conta.api_key);
        c.args(["recibo", CODIGO_REAL, "--saida"]).arg(&pdf);
        c
    })
    .await;
    assert!(!o.status.success());

    let cobrado = dec!(1.00) * dec!(2) + dec!(2.60) + dec!(11.00);
    assert_eq!(sdk.saldo().await.unwrap().saldo_reais, dec!(50) - cobrado);
    assert!(
        amb.server
            .check_ledger(conta.conta_id)
            .await
            .unwrap()
            .is_consistent()
    );
}

fn assert_pdf_com_codigo(path: &Path, codigo: &str) {
    let doc = lopdf::Document::load(path).expect("a valid PDF");
    let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
    let texto = doc.extract_text(&pages).expect("text extracts");
    assert!(texto.contains(codigo), "the receipt names its code");
}

#[tokio::test]
async fn lote_interrupted_then_resumed_never_pays_twice() {
    let amb = Environment::new().await;
    let (sdk, conta) = amb.cliente_com_saldo(dec!(100)).await;
    let codigos: Vec<String> = carapi_service::dados::bundled()
        .iter()
        .take(6)
        .map(|i| i.codigo_car.to_string())
        .collect();
    let entrada = amb.dir.path().join("codigos.txt");
    let mut linhas = codigos.clone();
    linhas.push(codigos[0].to_lowercase()); // a duplicate after normalisation
    linhas.push("nao-e-codigo".into()); // reported, never sent
    std::fs::write(&entrada, linhas.join("\n")).unwrap();

    let lote = |max: Option<&str>| {
        let mut c = carapi(&amb, &conta.api_key);
        c.args(["lote", "car"])
            .arg(&entrada)
            .args(["--saida", "r.jsonl", "--yes"]);
        if let Some(m) = max {
            c.args(["--max-custo", m]);
        }
        c
    };
    let primeira = run(lote(Some("2"))).await;
    assert!(
        !primeira.status.success(),
        "stopped by --max-custo: {}",
        text(&primeira.stderr)
    );
    assert_eq!(
        sdk.saldo().await.unwrap().saldo_reais,
        dec!(98),
        "two lookups paid"
    );

    let segunda = run(lote(None)).await;
    assert!(segunda.status.success(), "{}", text(&segunda.stderr));
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
    let respostas = std::fs::read_to_string(amb.dir.path().join("r.jsonl")).unwrap();
    assert_eq!(
        respostas
            .lines()
            .filter(|l| !l.contains("nao-e-codigo"))
            .count(),
        6,
        "{respostas}"
    );
}

#[tokio::test]
async fn local_topup_is_confirmed_after_local_pagar() {
    let amb = Environment::new().await; // only for its folders: local mode runs its own server
    let local = |args: &[&str]| {
        let mut c = carapi(&amb, "");
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
    let mut saida = BufReader::new(create.stdout.take().unwrap());
    let (id, saida) = tokio::task::spawn_blocking(move || {
        let mut linha = String::new();
        loop {
            linha.clear();
            assert!(
                saida.read_line(&mut linha).unwrap() > 0,
                "no recarga id printed"
            );
            if let Some(id) = linha.strip_prefix("ID da recarga: ") {
                return (id.trim().to_owned(), saida);
            }
        }
    })
    .await
    .unwrap();

    let pay = run({
        let mut c = carapi(&amb, "");
        c.env_remove("CARAPI_BASE_URL")
            .env_remove("CARAPI_API_KEY")
            .args(["local", "pagar", &id]);
        c
    })
    .await;
    assert!(pay.status.success(), "{}", text(&pay.stderr));

    let fim = tokio::task::spawn_blocking(move || {
        let resto: Vec<String> = saida.lines().map_while(Result::ok).collect();
        (create.wait().unwrap(), resto)
    })
    .await
    .unwrap();
    assert!(fim.0.success());
    assert!(
        fim.1
            .iter()
            .any(|l| l.contains("Confirmado") || l.contains("confirmada")),
        "{:?}",
        fim.1
    );

    let lista = run(local(&["-o", "json", "recargas", "--status", "Confirmado"])).await;
    let v: serde_json::Value = serde_json::from_slice(&lista.stdout).expect("json");
    assert!(v.to_string().contains(&id), "{v}");
}
