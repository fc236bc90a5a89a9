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

use crate::server_process::serve;

const NGINX: &str = "/usr/sbin/nginx";
/// The marker before the site's code block in the README.
const MARK: &str = "<!-- nginx-site:";

/// An nginx master (not a daemon), stopped when dropped.
struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The nginx site block of the server README's "Production" section.
fn site_do_readme() -> String {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let depois = &readme[readme.find(MARK).expect("the README marks the nginx site")..];
    let body = &depois[depois.find("```nginx\n").unwrap() + "```nginx\n".len()..];
    body[..body.find("```").unwrap()].to_owned()
}

fn free_port() -> u16 {
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
    let port = free_port();
    let (listen, upstream) = ("listen 443 ssl;", "server 127.0.0.1:8080;");
    assert_eq!(site.matches(listen).count(), 1, "{site}");
    assert_eq!(site.matches(upstream).count(), 1, "{site}");
    let site = site
        .replace(listen, &format!("listen 127.0.0.1:{port};"))
        .replace(upstream, &format!("server {backend};"));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let user = if root() { "user root;" } else { "" };
    let conf = format!(
        "{user}\nworker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 1024; }}\nhttp {{\n access_log off;\n\
         client_body_temp_path {d}/body;\n proxy_temp_path {d}/proxy;\n\
         fastcgi_temp_path {d}/fastcgi;\n uwsgi_temp_path {d}/uwsgi;\n scgi_temp_path {d}/scgi;\n\
         {site}}}\n"
    );
    std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
    let mut child = Command::new(NGINX)
        .args(["-p", &d.to_string(), "-e", &format!("{d}/error.log"), "-c"])
        .arg(dir.path().join("nginx.conf"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            let log = std::fs::read_to_string(dir.path().join("error.log")).unwrap_or_default();
            panic!("nginx ended ({status}): {log}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "nginx does not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    Some(Nginx {
        child,
        port,
        _dir: dir,
    })
}

/// 200 clients at once through nginx, 10 requests each, keep-alive: every answer is the
/// server's 200 (no 502 from a refused upstream connection).
async fn two_hundred_clients(base: &str, key: &str) {
    let begin = std::sync::Arc::new(tokio::sync::Barrier::new(200));
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let (base, key, begin) = (base.to_owned(), key.to_owned(), begin.clone());
            tokio::spawn(async move {
                let http = reqwest::Client::new();
                begin.wait().await;
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
    let mut count = std::collections::BTreeMap::<u16, usize>::new();
    for t in tasks {
        for s in t.await.unwrap() {
            *count.entry(s).or_default() += 1;
        }
    }
    assert_eq!(count.get(&200), Some(&2000), "statuses: {count:?}");
}

/// Wrong keys, each with a made-up client address in `cabecalho`: all are one client (nginx's
/// peer address), so the per-address limit of failed keys answers 429.
async fn invented_addresses(base: &str, header: &str) {
    let http = reqwest::Client::new();
    let mut count = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..30 {
        let valor = match header {
            "Forwarded" => format!("for=1.2.3.{i}"),
            _ => format!("1.2.3.{i}"),
        };
        let s = http
            .get(format!("{base}/v1/saldo"))
            .bearer_auth(format!("car_errada{i}"))
            .header(header, valor)
            .send()
            .await
            .unwrap()
            .status()
            .as_u16();
        *count.entry(s).or_default() += 1;
    }
    assert!(
        count.get(&429).is_some_and(|n| *n > 0) && !count.contains_key(&502),
        "{header}: {count:?}"
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
    let base = format!("http://127.0.0.1:{}", n.port);
    assert_eq!(
        reqwest::get(format!("{base}/livez"))
            .await
            .unwrap()
            .status(),
        200
    );
    two_hundred_clients(&base, &key).await;
    invented_addresses(&base, "X-Forwarded-For").await;
    // nginx's address is blocked now: a `Forwarded` that were believed would name fresh,
    // unblocked addresses (401), not this blocked one.
    invented_addresses(&base, "Forwarded").await;
    // /metrics is not published through nginx.
    assert_eq!(
        reqwest::get(format!("{base}/metrics"))
            .await
            .unwrap()
            .status(),
        404
    );
}
