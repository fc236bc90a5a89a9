//! The log of a `carapi-server servir` process at `CARAPI_LOG=trace`, read whole: one access
//! line per request (target `carapi::access`) with its fields, the request id kept when the
//! client sent a sane one and echoed in `X-Request-Id`; and nowhere in the output a CPF/CNPJ
//! (bare or punctuated), a CAR code, an owner's name, an API key, the test-mode token, the
//! webhook secret or the database password. Once as JSON lines in test mode (token and secret
//! from the environment), once as text with stderr a pipe (no ANSI escape), over PostgreSQL
//! with a password in the URL where `DATABASE_URL` names a server. `servir --help` shows none
//! of the secrets of the environment.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use carapi_sdk::CpfCnpj;
use carapi_sdk::domain::DocumentoKind;
use carapi_service::store::{SqliteStore, Store};
use carapi_service::{ContaCriada, NovaConta, create_conta};
use rust_decimal::Decimal;
use serde_json::Value;

use crate::helpers::{CODIGO, MISSING_CODIGO};
use crate::postgres::TestDatabase;
use crate::server_process::command;

const TOKEN: &str = "token-de-teste-muito-secreto-0123456789abcdef";
const SECRET: &str = "segredo-do-webhook-muito-secreto-0123456789";
const PASSWORD: &str = "senhasecreta";
const WRONG_CHAVE: &str = "car_chaveerradaquenaoexiste0123456789abcdef";

/// One request the test made and what its access line must say.
struct Done {
    id: String,
    route: &'static str,
    method: &'static str,
    status: u16,
    conta: Option<i64>,
    cobrado: Option<i64>,
    bytes: usize,
}

/// A `servir` child whose whole stderr is kept.
struct Server {
    child: Child,
    base: String,
    output: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    fn start(url: &str, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut c = command(&["servir", "--endereco", "127.0.0.1:0", "--banco", url]);
        c.args(["--sem-dados-embutidos", "--limite-taxa", "0"])
            .args(args);
        c.env("CARAPI_LOG", "trace").env_remove("CARAPI_LOG_FORMAT");
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn carapi-server");
        let output = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let s = output.clone();
        let reader = std::thread::spawn(move || {
            for l in lines.map_while(Result::ok) {
                if let Some(i) = l.find("ouvindo em http://") {
                    let _ = tx.send(l[i + "ouvindo em ".len()..].trim().to_owned());
                }
                s.lock().unwrap().push(l);
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("never listened: {:?}", output.lock().unwrap()));
        Server {
            child,
            base,
            output,
            reader: Some(reader),
        }
    }

    /// SIGTERM, then the whole output once the process ended.
    fn stop(mut self) -> Vec<String> {
        let ok = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let start = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            assert!(start.elapsed() < Duration::from_secs(60), "no exit");
            std::thread::sleep(Duration::from_millis(50));
        }
        self.reader.take().unwrap().join().unwrap();
        self.output.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A store with the bundled records and one funded account.
async fn prepare(store: &dyn Store) -> ContaCriada {
    carapi_service::startup::load_bundled_data(store)
        .await
        .unwrap();
    create_conta(
        store,
        NovaConta {
            saldo: Decimal::from(1000),
            ..NovaConta::default()
        },
    )
    .await
    .unwrap()
}

/// A CPF and a CNPJ that own bundled records, and the names of CODIGO's owners.
fn holders() -> (CpfCnpj, Option<CpfCnpj>, Vec<String>) {
    let all = carapi_service::dados::bundled();
    let docs: Vec<CpfCnpj> = all
        .iter()
        .flat_map(|i| i.proprietarios.iter().map(|p| p.documento.clone()))
        .collect();
    let cpf = docs
        .iter()
        .find(|d| d.kind() == DocumentoKind::Cpf)
        .expect("a bundled CPF")
        .clone();
    let cnpj = docs
        .iter()
        .find(|d| d.kind() != DocumentoKind::Cpf)
        .cloned();
    let names = all
        .iter()
        .filter(|i| i.codigo_car.to_string() == CODIGO)
        .flat_map(|i| i.proprietarios.iter().map(|p| p.nome.clone()))
        .collect();
    (cpf, cnpj, names)
}

/// Sends one request; returns what its access line must say.
async fn ask(
    http: &reqwest::Client,
    base: &str,
    req: (&'static str, String, &'static str),
    chave: Option<&str>,
    id: Option<&str>,
    expected: (u16, Option<i64>, Option<i64>),
) -> Done {
    let (method, path, route) = req;
    let mut r = http.request(method.parse().unwrap(), format!("{base}{path}"));
    if let Some(k) = chave {
        r = r.bearer_auth(k);
    }
    if let Some(id) = id {
        r = r.header("x-request-id", id);
    }
    if path == "/webhooks/pix" {
        r = r
            .header("x-carapi-signature", format!("t=1,v1={}", "0".repeat(64)))
            .body("{}");
    }
    let resp = r.send().await.unwrap();
    assert_eq!(resp.status().as_u16(), expected.0, "{method} {route}");
    let echo = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    match id {
        Some(id) if !id.contains(' ') => assert_eq!(echo, id, "a sane id is kept"),
        _ => {
            uuid::Uuid::parse_str(&echo).expect("a generated id is a UUID");
        }
    }
    let bytes = resp.bytes().await.unwrap().len();
    Done {
        id: echo,
        route,
        method,
        status: expected.0,
        conta: expected.1,
        cobrado: expected.2,
        bytes: if method == "HEAD" { 0 } else { bytes },
    }
}

/// The requests of both runs: charged lookups of real codes and owners, errors, a wrong key,
/// a refused webhook, an unknown path holding a CPF.
async fn requisicoes(base: &str, chave: &str, conta: i64) -> Vec<Done> {
    let http = reqwest::Client::new();
    let (cpf, cnpj, _) = holders();
    let c = Some(conta);
    let k = Some(chave);
    let car = "/v1/car/{codigoCar}";
    let owner = "/v1/proprietario/{*cpfCnpj}";
    let mut completed = vec![
        ask(
            &http,
            base,
            ("GET", format!("/v1/car/{CODIGO}"), car),
            k,
            Some("pedido-do-cliente-1"),
            (200, c, Some(100)),
        )
        .await,
        ask(
            &http,
            base,
            ("GET", format!("/v1/car/{}", CODIGO.to_lowercase()), car),
            k,
            None,
            (200, c, Some(100)),
        )
        .await,
        ask(
            &http,
            base,
            (
                "GET",
                format!("/v1/car/{CODIGO}/completo"),
                "/v1/car/{codigoCar}/completo",
            ),
            k,
            Some("com espaço"),
            (200, c, Some(230)),
        )
        .await,
        ask(
            &http,
            base,
            (
                "GET",
                format!("/v1/car/{CODIGO}/recibo"),
                "/v1/car/{codigoCar}/recibo",
            ),
            k,
            None,
            (200, c, Some(1100)),
        )
        .await,
        ask(
            &http,
            base,
            (
                "GET",
                format!("/v1/proprietario/{}", cpf.formatted()),
                owner,
            ),
            k,
            None,
            (200, c, Some(260)),
        )
        .await,
        ask(
            &http,
            base,
            ("GET", format!("/v1/proprietario/{cpf}"), owner),
            k,
            None,
            (200, c, Some(260)),
        )
        .await,
        ask(
            &http,
            base,
            ("GET", "/v1/proprietario/12345678900".into(), owner),
            k,
            None,
            (400, c, None),
        )
        .await,
        ask(
            &http,
            base,
            ("GET", format!("/v1/car/{MISSING_CODIGO}"), car),
            k,
            None,
            (404, c, None),
        )
        .await,
        ask(
            &http,
            base,
            (
                "GET",
                format!("/v1/car/{CODIGO}/completo"),
                "/v1/car/{codigoCar}/completo",
            ),
            Some(WRONG_CHAVE),
            None,
            (401, None, None),
        )
        .await,
        ask(
            &http,
            base,
            ("GET", "/v1/saldo".into(), "/v1/saldo"),
            k,
            None,
            (200, c, None),
        )
        .await,
        ask(
            &http,
            base,
            (
                "GET",
                format!("/v1/historico?busca={CODIGO}"),
                "/v1/historico",
            ),
            k,
            None,
            (200, c, None),
        )
        .await,
        ask(
            &http,
            base,
            ("HEAD", format!("/v1/car/{CODIGO}"), car),
            k,
            None,
            (405, None, None),
        )
        .await,
        ask(
            &http,
            base,
            (
                "GET",
                format!("/v2/proprietario/{}", cpf.formatted()),
                "desconhecida",
            ),
            k,
            None,
            (404, None, None),
        )
        .await,
        ask(
            &http,
            base,
            ("POST", "/webhooks/pix".into(), "/webhooks/pix"),
            None,
            None,
            (401, None, None),
        )
        .await,
    ];
    if let Some(cnpj) = cnpj {
        let path = format!("/v1/proprietario/{}", cnpj.formatted().replace('/', "%2F"));
        completed.push(
            ask(
                &http,
                base,
                ("GET", path, owner),
                k,
                None,
                (200, c, Some(260)),
            )
            .await,
        );
    }
    completed
}

/// The access lines of `saida` as field maps (JSON lines, or the `key=value` pairs of text).
fn accesses(output: &[String], json: bool) -> Vec<HashMap<String, String>> {
    output
        .iter()
        .filter_map(|l| {
            if json {
                let v: Value = serde_json::from_str(l).ok()?;
                (v["target"] == "carapi::acesso").then(|| {
                    v.as_object()
                        .unwrap()
                        .iter()
                        .map(|(k, v)| {
                            (
                                k.clone(),
                                v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                            )
                        })
                        .collect()
                })
            } else {
                let rest = l.split_once(" carapi::acesso: acesso ")?.1;
                Some(
                    rest.split(' ')
                        .filter_map(|par| par.split_once('='))
                        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
                        .collect(),
                )
            }
        })
        .collect()
}

/// One access line per request, each with every field it must have.
fn check_accesses(output: &[String], json: bool, completed: &[Done]) {
    let lines = accesses(output, json);
    assert_eq!(
        lines.len(),
        completed.len(),
        "one access line per request:\n{}",
        output.join("\n")
    );
    for f in completed {
        let mine: Vec<_> = lines.iter().filter(|l| l["id"] == f.id).collect();
        assert_eq!(mine.len(), 1, "one line for {} {}", f.method, f.route);
        let l = mine[0];
        let who = format!("{} {}: {l:?}", f.method, f.route);
        assert_eq!(l["rota"], f.route, "{who}");
        assert_eq!(l["metodo"], f.method, "{who}");
        assert_eq!(l["status"], f.status.to_string(), "{who}");
        assert_eq!(l["bytes"], f.bytes.to_string(), "{who}");
        assert_eq!(l["cliente"], "127.0.0.1", "{who}");
        assert!(l["latencia_ms"].parse::<f64>().is_ok(), "{who}");
        assert_eq!(
            l.get("conta").cloned(),
            f.conta.map(|c| c.to_string()),
            "{who}"
        );
        assert_eq!(
            l.get("cobrado_centavos").cloned(),
            f.cobrado.map(|c| c.to_string()),
            "{who}"
        );
        if json {
            assert!(l.contains_key("timestamp"), "{who}");
            assert_eq!(l["level"], "INFO", "{who}");
        }
    }
}

/// Runs of `min..=max` ASCII digits in `s`, or of hex digits when `hex`.
fn sequences(s: &str, hex: bool, sizes: &[usize]) -> Vec<String> {
    if !hex {
        // A digit run counts as a document only when no letter or digit touches it: the last
        // group of a request id (a UUID, `…-b56749366601`) is hex that may hold 11 digits.
        return s
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|t| t.chars().all(|c| c.is_ascii_digit()) && sizes.contains(&t.len()))
            .map(str::to_owned)
            .collect();
    }
    let mut found = Vec::new();
    let mut atual = String::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() {
            atual.push(c);
        } else {
            if sizes.contains(&atual.len()) {
                found.push(atual.clone());
            }
            atual.clear();
        }
    }
    found
}

/// Nothing of what must never be logged, anywhere in `saida`.
fn check_leaks(output: &[String], secrets: &[&str]) {
    let text = output.join("\n");
    let (cpf, cnpj, names) = holders();
    let mut banned: Vec<String> = secrets.iter().map(|s| (*s).to_owned()).collect();
    banned.extend([CODIGO, MISSING_CODIGO].iter().flat_map(|c| {
        let hash = c.rsplit('-').next().unwrap();
        [
            c.to_string(),
            c.to_lowercase(),
            hash.to_owned(),
            hash.to_lowercase(),
        ]
    }));
    for d in std::iter::once(cpf).chain(cnpj) {
        banned.extend([d.to_string(), d.formatted()]);
    }
    banned.extend([
        "123.456.789-09".into(),
        "12345678909".into(),
        "12345678900".into(),
    ]);
    banned.extend(names);
    for p in &banned {
        assert!(!text.contains(p.as_str()), "{p:?} in the log:\n{text}");
    }
    // Whatever the value: no bare CPF/CNPJ (11 or 14 digits), no CAR hash (32 hex), no
    // punctuated CPF.
    let digits = sequences(&text, false, &[11, 14]);
    assert!(digits.is_empty(), "{digits:?} in the log:\n{text}");
    let hashes = sequences(&text, true, &[32]);
    assert!(hashes.is_empty(), "{hashes:?} in the log:\n{text}");
}

#[tokio::test]
async fn json_at_trace_one_access_line_per_request_and_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("l.db").display());
    let conta = prepare(&SqliteStore::connect(&url).await.unwrap()).await;
    let s = Server::start(
        &url,
        &["--modo-teste", "--log-formato", "json"],
        &[
            ("CARAPI_TOKEN_TESTE", TOKEN),
            ("CARAPI_WEBHOOK_SECRET", SECRET),
        ],
    );
    let mut completed = requisicoes(&s.base, &conta.api_key, conta.conta_id.0).await;
    let http = reqwest::Client::new();
    let test = ("GET", "/_teste/relogio".to_owned(), "/_teste/relogio");
    completed.push(
        ask(
            &http,
            &s.base,
            test.clone(),
            Some(TOKEN),
            None,
            (200, None, None),
        )
        .await,
    );
    completed.push(
        ask(
            &http,
            &s.base,
            test,
            Some("token-errado"),
            None,
            (401, None, None),
        )
        .await,
    );
    let output = s.stop();
    // Every log line is JSON; the plain lines are the start-up messages written for people.
    for l in output.iter().filter(|l| l.starts_with('{')) {
        assert!(
            serde_json::from_str::<Value>(l).is_ok(),
            "not a JSON line: {l}"
        );
    }
    check_accesses(&output, true, &completed);
    check_leaks(&output, &[&conta.api_key, WRONG_CHAVE, TOKEN, SECRET]);
}

#[tokio::test]
async fn text_at_trace_on_a_pipe_has_no_colour_and_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let database = TestDatabase::create("logs").await;
    let (url, conta) = match &database {
        Some(b) => {
            let conta = prepare(b.store().await.as_ref()).await;
            // Trust authentication ignores it; the log must not show it all the same.
            (b.url.replacen("@", &format!(":{PASSWORD}@"), 1), conta)
        }
        None => {
            let url = format!("sqlite://{}", dir.path().join("l.db").display());
            (
                url.clone(),
                prepare(&SqliteStore::connect(&url).await.unwrap()).await,
            )
        }
    };
    assert!(
        url.starts_with("sqlite:") || url.contains(PASSWORD),
        "{url}"
    );
    let s = Server::start(&url, &[], &[("CARAPI_WEBHOOK_SECRET", SECRET)]);
    let completed = requisicoes(&s.base, &conta.api_key, conta.conta_id.0).await;
    let output = s.stop();
    let ansi: Vec<_> = output.iter().filter(|l| l.contains('\u{1b}')).collect();
    assert!(ansi.is_empty(), "ANSI escapes on a pipe: {ansi:?}");
    check_accesses(&output, false, &completed);
    check_leaks(&output, &[&conta.api_key, WRONG_CHAVE, SECRET, PASSWORD]);
}

#[test]
fn servir_help_shows_no_secret_of_the_environment() {
    let secrets = [
        (
            "CARAPI_DATABASE_URL",
            format!("postgres://u:{PASSWORD}@127.0.0.1:1/x"),
        ),
        ("CARAPI_WEBHOOK_SECRET", SECRET.to_owned()),
        ("CARAPI_TOKEN_TESTE", TOKEN.to_owned()),
    ];
    for args in [
        &["servir", "--help"][..],
        &["--help"],
        &["servir", "--modo-teste", "--help"],
    ] {
        let mut c = command(args);
        for (k, v) in &secrets {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(!help.is_empty());
        for (k, v) in &secrets {
            assert!(
                !help.contains(v.as_str()),
                "{k}'s value in {args:?}:\n{help}"
            );
        }
        assert!(!help.contains(PASSWORD), "{help}");
    }
}
