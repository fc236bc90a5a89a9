//! The server behind Debian's nginx, with the site configuration of the README's "Production"
//! section (read from the README at test time: only the `listen` and upstream addresses are
//! changed to loopback ports) and `servir --proxies-confiaveis 127.0.0.1`: 200 concurrent
//! clients get no 502, and a client-sent `X-Forwarded-For` or `Forwarded` never chooses the
//! address the per-address limit of failed keys sees. Skipped (with a message) where
//! /usr/sbin/nginx is absent.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use carapi_service::store::SqliteStore;
use carapi_service::{NovaConta, create_conta};

use crate::processo::serve;

const NGINX: &str = "/usr/sbin/nginx";
/// The marker before the site's code block in the README.
const MARCA: &str = "<!-- nginx-site:";

/// An nginx master (not a daemon), stopped when dropped.
struct Nginx {
    filho: Child,
    porta: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.filho.kill();
        let _ = self.filho.wait();
    }
}

/// The nginx site block of the server README's "Production" section.
fn site_do_readme() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let depois = &readme[readme.find(MARCA).expect("the README marks the nginx site")..];
    let corpo = &depois[depois.find("```nginx\n").unwrap() + "```nginx\n".len()..];
    corpo[..corpo.find("```").unwrap()].to_owned()
}

fn porta_livre() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// True when this process runs as root (nginx's workers then need `user root;` to use the
/// temporary directories, which only root may enter).
fn root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        .unwrap_or(false)
}

/// Starts nginx with the README's site in front of `backend` (`127.0.0.1:PORT`); `None` when
/// nginx is not installed.
fn nginx(backend: &str) -> Option<Nginx> {
    if !std::path::Path::new(NGINX).exists() {
        return None;
    }
    let site = site_do_readme();
    let porta = porta_livre();
    let (listen, upstream) = ("listen 443 ssl;", "server 127.0.0.1:8080;");
    assert_eq!(site.matches(listen).count(), 1, "{site}");
    assert_eq!(site.matches(upstream).count(), 1, "{site}");
    let site = site
        .replace(listen, &format!("listen 127.0.0.1:{porta};"))
        .replace(upstream, &format!("server {backend};"));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let usuario = if root() { "user root;" } else { "" };
    let conf = format!(
        "{usuario}\nworker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 1024; }}\nhttp {{\n access_log off;\n\
         client_body_temp_path {d}/body;\n proxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi;\n uwsgi_temp_path {d}/uwsgi;\n scgi_temp_path {d}/scgi;\n\
         {site}}}\n"
    );
    std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
    let mut filho = Command::new(NGINX)
        .args(["-p", &d.to_string(), "-e", &format!("{d}/error.log"), "-c"])
        .arg(dir.path().join("nginx.conf"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let inicio = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", porta)).is_err() {
        if let Some(status) = filho.try_wait().unwrap() {
            let log = std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default();
            panic!("nginx ended ({status}): {log}");
        }
        assert!(
            inicio.elapsed() < Duration::from_secs(30),
            "nginx does not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Nginx {
        filho,
        porta,
        _dir: dir,
    })
}

/// 200 clients at once through nginx, 10 requests each, keep-alive: every answer is the
/// server's 200 (no 502 from a refused upstream connection).
async fn duzentos_clientes(base: &str, key: &str) {
    let largada = std::sync::Arc::new(tokio::sync::Barrier::new(200));
    let tarefas: Vec<_> = (0..200)
        .map(|_| {
            let (base, key, largada) = (base.to_owned(), key.to_owned(), largada.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                largada.wait().await;
                let mut statuses = Vec::new();
                for _ in 0..10 {
                    let r = http
                        .get(format!("{base}/v1/saldo"))
                        .bearer_auth(&key)
                        .send()
                        .await;
                    statuses.push(r.map_or(0, |r| r.status().as_u16()));
                }
                statuses
            })
        })
        .collect();
    let mut contagem = std::collections::BTreeMap::<u16, usize>::new();
    for t in tarefas {
        for s in t.await.unwrap() {
            *contagem.entry(s).or_default() += 1;
        }
    }
    assert_eq!(contagem.get(&200), Some(&2000), "statuses: {contagem:?}");
}

/// Wrong keys, each with a made-up client address in `cabecalho`: all are one client (nginx's
/// peer address), so the per-address limit of failed keys answers 429.
async fn enderecos_inventados(base: &str, cabecalho: &str) {
    let http = reqwest::Client::new();
    let mut contagem = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..30 {
        let valor = match cabecalho {
            "Forwarded" => format!("for=1.2.3.{i}"),
            _ => format!("1.2.3.{i}"),
        };
        let s = http
            .get(format!("{base}/v1/saldo"))
            .bearer_auth(format!("car_errada{i}"))
            .header(cabecalho, valor)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        *contagem.entry(s).or_default() += 1;
    }
    assert!(
        contagem.get(&429).is_some_and(|n| *n > 0) && !contagem.contains_key(&502),
        "{cabecalho}: {contagem:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_the_readmes_nginx_200_clients_get_no_502_and_cannot_choose_their_address() {
    if !std::path::Path::new(NGINX).exists() {
        eprintln!("SKIP nginx test: {NGINX} is absent (Debian package nginx)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("n.db").display());
    let key = {
        let store = SqliteStore::connect(&url).await.unwrap();
        create_conta(&store, NovaConta::default())
            .await
            .unwrap()
            .api_key
    };
    // The per-key rate limit off (200 clients share one key); one failed key per second per
    // address before 429.
    let s = serve(
        &url,
        &[
            "--proxies-confiaveis",
            "127.0.0.1",
            "--limite-taxa",
            "0",
            "--limite-nao-autenticado",
            "1",
        ],
        &[],
    );
    let backend = s.base.trim_start_matches("http://").to_owned();
    let n = nginx(&backend).expect("nginx present");
    let base = format!("http://127.0.0.1:{}", n.porta);
    assert_eq!(
        reqwest::get(format!("{base}/livez"))
            .await
            .unwrap()
            .status(),
        200
    );
    duzentos_clientes(&base, &key).await;
    enderecos_inventados(&base, "X-Forwarded-For").await;
    // nginx's address is blocked now: a `Forwarded` that were believed would name fresh,
    // unblocked addresses (401), not this blocked one.
    enderecos_inventados(&base, "Forwarded").await;
    // /metrics is not published through nginx.
    assert_eq!(
        reqwest::get(format!("{base}/metrics"))
            .await
            .unwrap()
            .status(),
        404
    );
}
