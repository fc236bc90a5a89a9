//! A PostgreSQL cluster of the test's own (initdb in a temporary folder, a free port, run as the
//! `postgres` user with `runuser` when the test runs as root, since the tools refuse root)
//! stopped with `pg_ctl stop -m immediate` a few times under concurrent charged clients: once
//! the journal of lost outcomes is settled, the debits equal the 200s answered, to the cent,
//! after every run; the last stop of each run also restarts the server before the database
//! returns. Skipped with a message where the server binaries are absent.
//!
//! The long version (the 25 stops under 6 clients, several runs) is the same test with
//! `CARAPI_CRASH_STOPS=25 CARAPI_CRASH_CLIENTS=6 CARAPI_CRASH_RUNS=5`; each run prints its
//! figures (200s answered, debited, reversed).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use carapi_service::store::journal::Journal;
use carapi_service::{AppState, Config, ContaCriada, Ledger, NovaConta, RunningServer};

use crate::helpers::CODIGO;

/// The PostgreSQL server binaries' folder (`/usr/lib/postgresql/<version>/bin`), if any.
fn pg_bin() -> Option<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| Some(e.ok()?.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    v.sort();
    v.pop()
}

/// A cluster of the test's own.
struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    root: bool,
}

impl Cluster {
    /// `tool args` as the `postgres` user when running as root.
    fn run(&self, tool: &str, args: &[&str]) {
        let exe = self.bin.join(tool);
        let mut c = if self.root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        let out = c.args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{tool} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn init(bin: PathBuf, dir: &Path) -> Cluster {
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
        if root {
            let ok = Command::new("chown")
                .args(["postgres:", &dir.display().to_string()])
                .status()
                .unwrap();
            assert!(ok.success());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let c = Cluster {
            bin,
            data: dir.join("data"),
            port,
            root,
        };
        let data = c.data.display().to_string();
        c.run(
            "initdb",
            &["-D", &data, "-A", "trust", "-U", "postgres", "-E", "UTF8"],
        );
        c.start();
        c
    }

    fn start(&self) {
        let data = self.data.display().to_string();
        let socket = self.data.parent().unwrap().display().to_string();
        let opts = format!(
            "-p {} -k {socket} -c listen_addresses=127.0.0.1 -c fsync=on",
            self.port
        );
        let log = format!("{socket}/pg.log");
        self.run(
            "pg_ctl",
            &["-D", &data, "-o", &opts, "-l", &log, "-w", "start"],
        );
    }

    fn crash(&self) {
        let data = self.data.display().to_string();
        self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        let exe = self.bin.join("pg_ctl");
        let mut c = if self.root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        };
        let _ = c.args(["-D", &data, "-m", "immediate", "stop"]).output();
    }
}

/// A server over `url` on the system clock, whose job loop (journal settled) turns every
/// 100 ms.
async fn servidor(url: &str, diario: &Path) -> RunningServer {
    let store = carapi_service::startup::open_store(url).await.unwrap();
    carapi_service::startup::load_bundled_data(store.as_ref())
        .await
        .unwrap();
    let mut config = Config::local(url);
    config.rate_limit = None;
    config.reconcile_interval = Duration::from_millis(100);
    config.journal = Some(diario.to_owned());
    let state = AppState::new(store, config);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    carapi_service::startup::spawn_with(state, listener)
        .await
        .unwrap()
}

/// Charges `CODIGO` until `parar`, counting the 200s.
async fn cliente(base: String, key: String, parar: Arc<AtomicBool>, ok: Arc<AtomicU64>) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    while !parar.load(Ordering::SeqCst) {
        let r = http
            .get(format!("{base}/v1/car/{CODIGO}"))
            .bearer_auth(&key)
            .send()
            .await;
        match r {
            Ok(r) if r.status() == 200 => {
                ok.fetch_add(1, Ordering::SeqCst);
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            // The server is stopping (restarted while the database is away).
            Err(_) if parar.load(Ordering::SeqCst) => break,
            Err(e) => panic!("no answer: {e}"),
        }
    }
}

/// `var` as a number, else `default`.
fn knob(var: &str, default: u32) -> u32 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The account's ledger once the journal is settled (at most 60 s).
async fn settled(srv: &RunningServer, diario: &Journal, c: &ContaCriada) -> Ledger {
    for _ in 0..600 {
        if diario.entries().unwrap().is_empty()
            && let Ok(l) = srv.check_ledger(c.conta_id).await
        {
            return l;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("journal not settled: {:?}", diario.entries());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[cfg_attr(
    not(carapi_pg_bin),
    ignore = "needs PostgreSQL's server programs (/usr/lib/postgresql/*/bin) when this test was built"
)]
async fn immediate_stops_under_charged_clients_debit_exactly_the_200s() {
    let bin = pg_bin().expect("PostgreSQL server programs under /usr/lib/postgresql/*/bin");
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::init(bin, dir.path());
    let caminho = dir.path().join("carapi.diario");
    let diario = Journal::at(&caminho);
    let mut srv = servidor(&cluster.url(), &caminho).await;
    let c = srv
        .create_conta(NovaConta {
            saldo: 100_000.into(),
            ..NovaConta::default()
        })
        .await
        .unwrap();
    let inicial = srv.check_ledger(c.conta_id).await.unwrap().saldo;
    let ok = Arc::new(AtomicU64::new(0));
    let primeira = crate::dinheiro::get(&srv, &c.api_key, &format!("/v1/car/{CODIGO}")).await;
    assert_eq!(primeira.status, 200, "{:?}", primeira.corpo);
    ok.fetch_add(1, Ordering::SeqCst);
    let preco = inicial
        .checked_sub(srv.check_ledger(c.conta_id).await.unwrap().saldo)
        .unwrap();
    let (paradas, clientes_n) = (
        knob("CARAPI_CRASH_STOPS", 3),
        knob("CARAPI_CRASH_CLIENTS", 4),
    );
    for rodada in 1..=knob("CARAPI_CRASH_RUNS", 3) {
        let parar = Arc::new(AtomicBool::new(false));
        let mut clientes: Vec<_> = (0..clientes_n)
            .map(|_| {
                tokio::spawn(cliente(
                    srv.base_url(),
                    c.api_key.clone(),
                    parar.clone(),
                    ok.clone(),
                ))
            })
            .collect();
        for i in 1..=paradas {
            tokio::time::sleep(Duration::from_millis(700)).await;
            cluster.crash();
            if i < paradas {
                tokio::time::sleep(Duration::from_millis(300)).await;
                cluster.start();
                continue;
            }
            // The last stop: the server is restarted before the database returns (its
            // in-flight charges finish first: a lost outcome is journaled), and the new one
            // settles what the old one journaled.
            parar.store(true, Ordering::SeqCst);
            srv.shutdown().await;
            for t in clientes.drain(..) {
                t.await.unwrap();
            }
            cluster.start();
            srv = servidor(&cluster.url(), &caminho).await;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        parar.store(true, Ordering::SeqCst);
        for t in clientes {
            t.await.unwrap();
        }
        let l = settled(&srv, &diario, &c).await;
        let respondidas = ok.load(Ordering::SeqCst);
        let debitado = inicial.checked_sub(l.saldo).unwrap();
        eprintln!(
            "run {rodada} ({paradas} stops, {clientes_n} clients): {respondidas} answered 200, \
             {debitado} debited, {} reversed, {} still journaled",
            l.estornos,
            diario.entries().unwrap().len()
        );
        assert!(l.is_consistent(), "run {rodada}: {l:?}");
        assert_eq!(
            debitado.get(),
            preco.get() * i64::try_from(respondidas).unwrap(),
            "run {rodada}: debits against the 200s answered: {l:?}"
        );
    }
    srv.shutdown().await;
}
