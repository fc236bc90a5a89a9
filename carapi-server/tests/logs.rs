//! The log of a `carapi-server servir` process at `CARAPI_LOG=trace`, read whole: one access
//! line per request (target `carapi::acesso`) with its fields, the request id kept when the
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
use carapi_sdk::domain::TipoDocumento;
use carapi_service::store::{SqliteStore, Store};
use carapi_service::{ContaCriada, NovaConta, create_conta};
use rust_decimal::Decimal;
use serde_json::Value;

use crate::helpers::{CODIGO, CODIGO_INEXISTENTE};
use crate::postgres::BancoTeste;
use crate::processo::comando;

const TOKEN: &str = "token-de-teste-muito-secreto-0123456789abcdef";
const SEGREDO: &str = "segredo-do-webhook-muito-secreto-0123456789";
const SENHA: &str = "senhasecreta";
const CHAVE_ERRADA: &str = "car_chaveerradaquenaoexiste0123456789abcdef";

/// One request the test made and what its access line must say.
struct Feito {
    id: String,
    rota: &'static str,
    metodo: &'static str,
    status: u16,
    conta: Option<i64>,
    cobrado: Option<i64>,
    bytes: usize,
}

/// A `servir` child whose whole stderr is kept.
struct Servidor {
    filho: Child,
    base: String,
    saida: Arc<Mutex<Vec<String>>>,
    leitor: Option<std::thread::JoinHandle<()>>,
}

impl Servidor {
    fn start(url: &str, args: &[&str], env: &[(&str, &str)]) -> Servidor {
        let mut c = comando(&["servir", "--endereco", "127.0.0.1:0", "--banco", url]);
        c.args(["--sem-dados-embutidos", "--limite-taxa", "0"])
            .args(args);
        c.env("CARAPI_LOG", "trace").env_remove("CARAPI_LOG_FORMAT");
        for (k, v) in env {
            c.env(k, v);
        }
        let mut filho = c
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn carapi-server");
        let saida = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let linhas = BufReader::new(filho.stderr.take().unwrap()).lines();
        let s = saida.clone();
        let leitor = std::thread::spawn(move || {
            for l in linhas.map_while(Result::ok) {
                if let Some(i) = l.find("ouvindo em http://") {
                    let _ = tx.send(l[i + "ouvindo em ".len()..].trim().to_owned());
                }
                s.lock().unwrap().push(l);
            }
        });
        let base = rx
            .recv_timeout(Duration::from_secs(120))
            .unwrap_or_else(|_| panic!("never listened: {:?}", saida.lock().unwrap()));
        Servidor {
            filho,
            base,
            saida,
            leitor: Some(leitor),
        }
    }

    /// SIGTERM, then the whole output once the process ended.
    fn stop(mut self) -> Vec<String> {
        let ok = Command::new("kill")
            .args(["-TERM", &self.filho.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok);
        let inicio = Instant::now();
        while self.filho.try_wait().unwrap().is_none() {
            assert!(inicio.elapsed() < Duration::from_secs(60), "no exit");
            std::thread::sleep(Duration::from_millis(50));
        }
        self.leitor.take().unwrap().join().unwrap();
        self.saida.lock().unwrap().clone()
    }
}

impl Drop for Servidor {
    fn drop(&mut self) {
        let _ = self.filho.kill();
        let _ = self.filho.wait();
    }
}

/// A store with the bundled records and one funded account.
async fn preparar(store: &dyn Store) -> ContaCriada {
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
fn titulares() -> (CpfCnpj, Option<CpfCnpj>, Vec<String>) {
    let todos = carapi_service::dados::bundled();
    let docs: Vec<CpfCnpj> = todos
        .iter()
        .flat_map(|i| i.proprietarios.iter().map(|p| p.documento.clone()))
        .collect();
    let cpf = docs
        .iter()
        .find(|d| d.tipo() == TipoDocumento::Cpf)
        .expect("a bundled CPF")
        .clone();
    let cnpj = docs
        .iter()
        .find(|d| d.tipo() != TipoDocumento::Cpf)
        .cloned();
    let nomes = todos
        .iter()
        .filter(|i| i.codigo_car.to_string() == CODIGO)
        .flat_map(|i| i.proprietarios.iter().map(|p| p.nome.clone()))
        .collect();
    (cpf, cnpj, nomes)
}

/// Sends one request; returns what its access line must say.
async fn pedir(
    http: &reqwest::Client,
    base: &str,
    req: (&'static str, String, &'static str),
    chave: Option<&str>,
    id: Option<&str>,
    esperado: (u16, Option<i64>, Option<i64>),
) -> Feito {
    let (metodo, caminho, rota) = req;
    let mut r = http.request(metodo.parse().unwrap(), format!("{base}{caminho}"));
    if let Some(k) = chave {
        r = r.bearer_auth(k);
    }
    if let Some(id) = id {
        r = r.header("x-request-id", id);
    }
    if caminho == "/webhooks/pix" {
        r = r
            .header("x-carapi-signature", format!("t=1,v1={}", "0".repeat(64)))
            .body("{}");
    }
    let resp = r.send().await.unwrap();
    assert_eq!(resp.status().as_u16(), esperado.0, "{metodo} {rota}");
    let eco = resp.headers()["x-request-id"].to_str().unwrap().to_owned();
    match id {
        Some(id) if !id.contains(' ') => assert_eq!(eco, id, "a sane id is kept"),
        _ => {
            uuid::Uuid::parse_str(&eco).expect("a generated id is a UUID");
        }
    }
    let bytes = resp.bytes().await.unwrap().len();
    Feito {
        id: eco,
        rota,
        metodo,
        status: esperado.0,
        conta: esperado.1,
        cobrado: esperado.2,
        bytes: if metodo == "HEAD" { 0 } else { bytes },
    }
}

/// The requests of both runs: charged lookups of real codes and owners, errors, a wrong key,
/// a refused webhook, an unknown path holding a CPF.
async fn requisicoes(base: &str, chave: &str, conta: i64) -> Vec<Feito> {
    let http = reqwest::Client::new();
    let (cpf, cnpj, _) = titulares();
    let c = Some(conta);
    let k = Some(chave);
    let car = "/v1/car/{codigoCar}";
    let dono = "/v1/proprietario/{*cpfCnpj}";
    let mut feitos = vec![
        pedir(
            &http,
            base,
            ("GET", format!("/v1/car/{CODIGO}"), car),
            k,
            Some("pedido-do-cliente-1"),
            (200, c, Some(100)),
        )
        .await,
        pedir(
            &http,
            base,
            ("GET", format!("/v1/car/{}", CODIGO.to_lowercase()), car),
            k,
            None,
            (200, c, Some(100)),
        )
        .await,
        pedir(
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
        pedir(
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
        pedir(
            &http,
            base,
            ("GET", format!("/v1/proprietario/{}", cpf.formatado()), dono),
            k,
            None,
            (200, c, Some(260)),
        )
        .await,
        pedir(
            &http,
            base,
            ("GET", format!("/v1/proprietario/{cpf}"), dono),
            k,
            None,
            (200, c, Some(260)),
        )
        .await,
        pedir(
            &http,
            base,
            ("GET", "/v1/proprietario/12345678900".into(), dono),
            k,
            None,
            (400, c, None),
        )
        .await,
        pedir(
            &http,
            base,
            ("GET", format!("/v1/car/{CODIGO_INEXISTENTE}"), car),
            k,
            None,
            (404, c, None),
        )
        .await,
        pedir(
            &http,
            base,
            (
                "GET",
                format!("/v1/car/{CODIGO}/completo"),
                "/v1/car/{codigoCar}/completo",
            ),
            Some(CHAVE_ERRADA),
            None,
            (401, None, None),
        )
        .await,
        pedir(
            &http,
            base,
            ("GET", "/v1/saldo".into(), "/v1/saldo"),
            k,
            None,
            (200, c, None),
        )
        .await,
        pedir(
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
        pedir(
            &http,
            base,
            ("HEAD", format!("/v1/car/{CODIGO}"), car),
            k,
            None,
            (405, None, None),
        )
        .await,
        pedir(
            &http,
            base,
            (
                "GET",
                format!("/v2/proprietario/{}", cpf.formatado()),
                "desconhecida",
            ),
            k,
            None,
            (404, None, None),
        )
        .await,
        pedir(
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
        let caminho = format!("/v1/proprietario/{}", cnpj.formatado().replace('/', "%2F"));
        feitos.push(
            pedir(
                &http,
                base,
                ("GET", caminho, dono),
                k,
                None,
                (200, c, Some(260)),
            )
            .await,
        );
    }
    feitos
}

/// The access lines of `saida` as field maps (JSON lines, or the `key=value` pairs of text).
fn acessos(saida: &[String], json: bool) -> Vec<HashMap<String, String>> {
    saida
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
                let resto = l.split_once(" carapi::acesso: acesso ")?.1;
                Some(
                    resto
                        .split(' ')
                        .filter_map(|par| par.split_once('='))
                        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
                        .collect(),
                )
            }
        })
        .collect()
}

/// One access line per request, each with every field it must have.
fn conferir_acessos(saida: &[String], json: bool, feitos: &[Feito]) {
    let linhas = acessos(saida, json);
    assert_eq!(
        linhas.len(),
        feitos.len(),
        "one access line per request:\n{}",
        saida.join("\n")
    );
    for f in feitos {
        let minhas: Vec<_> = linhas.iter().filter(|l| l["id"] == f.id).collect();
        assert_eq!(minhas.len(), 1, "one line for {} {}", f.metodo, f.rota);
        let l = minhas[0];
        let quem = format!("{} {}: {l:?}", f.metodo, f.rota);
        assert_eq!(l["rota"], f.rota, "{quem}");
        assert_eq!(l["metodo"], f.metodo, "{quem}");
        assert_eq!(l["status"], f.status.to_string(), "{quem}");
        assert_eq!(l["bytes"], f.bytes.to_string(), "{quem}");
        assert_eq!(l["cliente"], "127.0.0.1", "{quem}");
        assert!(l["latencia_ms"].parse::<f64>().is_ok(), "{quem}");
        assert_eq!(
            l.get("conta").cloned(),
            f.conta.map(|c| c.to_string()),
            "{quem}"
        );
        assert_eq!(
            l.get("cobrado_centavos").cloned(),
            f.cobrado.map(|c| c.to_string()),
            "{quem}"
        );
        if json {
            assert!(l.contains_key("timestamp"), "{quem}");
            assert_eq!(l["level"], "INFO", "{quem}");
        }
    }
}

/// Runs of `min..=max` ASCII digits in `s`, or of hex digits when `hex`.
fn sequencias(s: &str, hex: bool, tamanhos: &[usize]) -> Vec<String> {
    if !hex {
        // A digit run counts as a document only when no letter or digit touches it: the last
        // group of a request id (a UUID, `…-b56749366601`) is hex that may hold 11 digits.
        return s
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|t| t.chars().all(|c| c.is_ascii_digit()) && tamanhos.contains(&t.len()))
            .map(str::to_owned)
            .collect();
    }
    let mut achadas = Vec::new();
    let mut atual = String::new();
    for c in s.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_hexdigit() {
            atual.push(c);
        } else {
            if tamanhos.contains(&atual.len()) {
                achadas.push(atual.clone());
            }
            atual.clear();
        }
    }
    achadas
}

/// Nothing of what must never be logged, anywhere in `saida`.
fn conferir_vazamentos(saida: &[String], segredos: &[&str]) {
    let texto = saida.join("\n");
    let (cpf, cnpj, nomes) = titulares();
    let mut proibidos: Vec<String> = segredos.iter().map(|s| (*s).to_owned()).collect();
    proibidos.extend([CODIGO, CODIGO_INEXISTENTE].iter().flat_map(|c| {
        let hash = c.rsplit('-').next().unwrap();
        [
            c.to_string(),
            c.to_lowercase(),
            hash.to_owned(),
            hash.to_lowercase(),
        ]
    }));
    for d in std::iter::once(cpf).chain(cnpj) {
        proibidos.extend([d.to_string(), d.formatado()]);
    }
    proibidos.extend([
        "123.456.789-09".into(),
        "12345678909".into(),
        "12345678900".into(),
    ]);
    proibidos.extend(nomes);
    for p in &proibidos {
        assert!(!texto.contains(p.as_str()), "{p:?} in the log:\n{texto}");
    }
    // Whatever the value: no bare CPF/CNPJ (11 or 14 digits), no CAR hash (32 hex), no
    // punctuated CPF.
    let digitos = sequencias(&texto, false, &[11, 14]);
    assert!(digitos.is_empty(), "{digitos:?} in the log:\n{texto}");
    let hashes = sequencias(&texto, true, &[32]);
    assert!(hashes.is_empty(), "{hashes:?} in the log:\n{texto}");
}

#[tokio::test]
async fn json_at_trace_one_access_line_per_request_and_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("l.db").display());
    let conta = preparar(&SqliteStore::connect(&url).await.unwrap()).await;
    let s = Servidor::start(
        &url,
        &["--modo-teste", "--log-formato", "json"],
        &[
            ("CARAPI_TOKEN_TESTE", TOKEN),
            ("CARAPI_WEBHOOK_SECRET", SEGREDO),
        ],
    );
    let mut feitos = requisicoes(&s.base, &conta.api_key, conta.conta_id.0).await;
    let http = reqwest::Client::new();
    let teste = ("GET", "/_teste/relogio".to_owned(), "/_teste/relogio");
    feitos.push(
        pedir(
            &http,
            &s.base,
            teste.clone(),
            Some(TOKEN),
            None,
            (200, None, None),
        )
        .await,
    );
    feitos.push(
        pedir(
            &http,
            &s.base,
            teste,
            Some("token-errado"),
            None,
            (401, None, None),
        )
        .await,
    );
    let saida = s.stop();
    // Every log line is JSON; the plain lines are the start-up messages written for people.
    for l in saida.iter().filter(|l| l.starts_with('{')) {
        assert!(
            serde_json::from_str::<Value>(l).is_ok(),
            "not a JSON line: {l}"
        );
    }
    conferir_acessos(&saida, true, &feitos);
    conferir_vazamentos(&saida, &[&conta.api_key, CHAVE_ERRADA, TOKEN, SEGREDO]);
}

#[tokio::test]
async fn text_at_trace_on_a_pipe_has_no_colour_and_no_secret() {
    let dir = tempfile::tempdir().unwrap();
    let banco = BancoTeste::create("logs").await;
    let (url, conta) = match &banco {
        Some(b) => {
            let conta = preparar(b.store().await.as_ref()).await;
            // Trust authentication ignores it; the log must not show it all the same.
            (b.url.replacen("@", &format!(":{SENHA}@"), 1), conta)
        }
        None => {
            let url = format!("sqlite://{}", dir.path().join("l.db").display());
            (
                url.clone(),
                preparar(&SqliteStore::connect(&url).await.unwrap()).await,
            )
        }
    };
    assert!(url.starts_with("sqlite:") || url.contains(SENHA), "{url}");
    let s = Servidor::start(&url, &[], &[("CARAPI_WEBHOOK_SECRET", SEGREDO)]);
    let feitos = requisicoes(&s.base, &conta.api_key, conta.conta_id.0).await;
    let saida = s.stop();
    let ansi: Vec<_> = saida.iter().filter(|l| l.contains('\u{1b}')).collect();
    assert!(ansi.is_empty(), "ANSI escapes on a pipe: {ansi:?}");
    conferir_acessos(&saida, false, &feitos);
    conferir_vazamentos(&saida, &[&conta.api_key, CHAVE_ERRADA, SEGREDO, SENHA]);
}

#[test]
fn servir_help_shows_no_secret_of_the_environment() {
    let segredos = [
        (
            "CARAPI_DATABASE_URL",
            format!("postgres://u:{SENHA}@127.0.0.1:1/x"),
        ),
        ("CARAPI_WEBHOOK_SECRET", SEGREDO.to_owned()),
        ("CARAPI_TOKEN_TESTE", TOKEN.to_owned()),
    ];
    for args in [
        &["servir", "--help"][..],
        &["--help"],
        &["servir", "--modo-teste", "--help"],
    ] {
        let mut c = comando(args);
        for (k, v) in &segredos {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        let ajuda = String::from_utf8_lossy(&out.stdout);
        assert!(!ajuda.is_empty());
        for (k, v) in &segredos {
            assert!(
                !ajuda.contains(v.as_str()),
                "{k}'s value in {args:?}:\n{ajuda}"
            );
        }
        assert!(!ajuda.contains(SENHA), "{ajuda}");
    }
}
