//! A PostgreSQL cluster of one's own stopped with `pg_ctl stop -m immediate` under charged
//! clients (the test `carapi-server/tests/pg_crash.rs` and the `crash` figure of the
//! benchmarks): `initdb` in a temporary folder, a free port, run as the `postgres` user with
//! `runuser` when running as root (the tools refuse root). Each run stops the database
//! [`CrashScale::stopped`] times under [`CrashScale::clients`] clients charging one lookup in
//! a loop; the last stop of each run also restarts the server before the database returns.
//! Once the journal of lost outcomes is settled, a run's [`Round`] gives the 200s answered and
//! what was debited: the contract says a 5xx never debits, so they must agree to the cent.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use carapi_service::store::journal::Journal;
use carapi_service::{AppState, Centavos, Config, ContaCriada, Ledger, NovaConta, RunningServer};

/// The charged lookup's CAR code (a bundled record).
const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

/// The PostgreSQL server programs' folder (`/usr/lib/postgresql/<version>/bin`, the newest
/// with `initdb` and `pg_ctl`), if any.
pub fn pg_bin() -> Option<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| Some(e.ok()?.path().join("bin")))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    v.sort();
    v.pop()
}

/// A cluster of one's own (stopped when dropped).
#[derive(Debug)]
pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    root: bool,
}

impl Cluster {
    /// `tool args` as the `postgres` user when running as root.
    fn command(&self, tool: &str) -> Command {
        let exe = self.bin.join(tool);
        if self.root {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe);
            c
        } else {
            Command::new(exe)
        }
    }

    /// Runs `tool args`.
    ///
    /// # Panics
    /// When it fails (with its stderr).
    fn run(&self, tool: &str, args: &[&str]) {
        let out = self.command(tool).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{tool} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `initdb` in `dir/data` with the programs of `bin`, on a free port, and started.
    ///
    /// # Panics
    /// When the cluster cannot be created or started.
    pub fn init(bin: PathBuf, dir: &Path) -> Cluster {
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

    /// Starts the cluster and waits until it accepts connections.
    ///
    /// # Panics
    /// When `pg_ctl start` fails.
    pub fn start(&self) {
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

    /// `pg_ctl stop -m immediate`: every backend killed, no checkpoint (a crash).
    ///
    /// # Panics
    /// When `pg_ctl stop` fails.
    pub fn crash(&self) {
        let data = self.data.display().to_string();
        self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
    }

    /// The cluster's URL (database `postgres`, user `postgres`, trust).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        let _ = self
            .command("pg_ctl")
            .args(["-D", &data, "-m", "immediate", "stop"])
            .output();
    }
}

/// How long a crash scenario runs.
#[derive(Debug, Clone, Copy)]
pub struct CrashScale {
    /// Immediate stops per run (the last one restarts the server too).
    pub stopped: u32,
    /// Concurrent charged clients.
    pub clients: u32,
    /// Runs, one after the other, on the same cluster, server and account.
    pub rounds: u32,
}

/// The figures of one run, counted from the start of the scenario.
#[derive(Debug, Clone)]
pub struct Round {
    /// The run (1-based).
    pub round: u32,
    /// 200s answered so far.
    pub answered: u64,
    /// Debited so far (initial balance less the balance).
    pub debited: Centavos,
    /// The lookup's price.
    pub preco: Centavos,
    /// Journal entries still open after the settlement.
    pub open: usize,
    /// The account's ledger once the journal was settled.
    pub ledger: Ledger,
}

impl Round {
    /// True when the debits equal the 200s answered times the price, to the cent, and the
    /// ledger check holds.
    pub fn exact(&self) -> bool {
        let expected = i64::try_from(self.answered)
            .ok()
            .and_then(|n| self.preco.get().checked_mul(n));
        expected == Some(self.debited.get()) && self.ledger.is_consistent()
    }
}

/// A server over `url` on the system clock, whose job loop (journal settled) turns every
/// 100 ms, journaling into `diario`.
///
/// # Panics
/// When the store cannot be opened or the server started.
pub async fn server_on(url: &str, diario: &Path) -> RunningServer {
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
async fn client(base: String, key: String, stop: Arc<AtomicBool>, ok: Arc<AtomicU64>) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    while !stop.load(Ordering::SeqCst) {
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
            Err(_) if stop.load(Ordering::SeqCst) => break,
            Err(e) => panic!("no answer: {e}"),
        }
    }
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

/// One run's stops under `scale.clients` clients of `key` counting their 200s in `ok`; the
/// last stop restarts `srv` (journaling into `caminho`) before the database returns: the server
/// serving afterwards is returned.
async fn stops(
    cluster: &Cluster,
    mut srv: RunningServer,
    path: &Path,
    key: &str,
    scale: CrashScale,
    ok: &Arc<AtomicU64>,
) -> RunningServer {
    let stop = Arc::new(AtomicBool::new(false));
    let mut clients: Vec<_> = (0..scale.clients)
        .map(|_| {
            tokio::spawn(client(
                srv.base_url(),
                key.to_owned(),
                stop.clone(),
                ok.clone(),
            ))
        })
        .collect();
    for i in 1..=scale.stopped {
        tokio::time::sleep(Duration::from_millis(700)).await;
        cluster.crash();
        if i < scale.stopped {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cluster.start();
            continue;
        }
        // The last stop: the server is restarted before the database returns (its in-flight
        // charges finish first: a lost outcome is journaled), and the new one settles what the
        // old one journaled.
        stop.store(true, Ordering::SeqCst);
        srv.shutdown().await;
        for t in clients.drain(..) {
            t.await.unwrap();
        }
        cluster.start();
        srv = server_on(&cluster.url(), path).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.store(true, Ordering::SeqCst);
    for t in clients {
        t.await.unwrap();
    }
    srv
}

/// The scenario over the programs of `bin` (see the module documentation): one [`Round`] per
/// run, each printed on stderr as it ends.
///
/// # Panics
/// When the cluster or the server fails, or a client gets no answer while the server runs.
pub async fn run(bin: PathBuf, scale: CrashScale) -> Vec<Round> {
    let dir = tempfile::tempdir().unwrap();
    let cluster = Cluster::init(bin, dir.path());
    let path = dir.path().join("carapi.diario");
    let diario = Journal::at(&path);
    let mut srv = server_on(&cluster.url(), &path).await;
    let c = srv
        .create_conta(NovaConta {
            saldo: 100_000.into(),
            ..NovaConta::default()
        })
        .await
        .unwrap();
    let initial = srv.check_ledger(c.conta_id).await.unwrap().saldo;
    let ok = Arc::new(AtomicU64::new(0));
    let first = reqwest::Client::new()
        .get(format!("{}/v1/car/{CODIGO}", srv.base_url()))
        .bearer_auth(&c.api_key)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    ok.fetch_add(1, Ordering::SeqCst);
    let preco = initial
        .checked_sub(srv.check_ledger(c.conta_id).await.unwrap().saldo)
        .unwrap();
    let mut rounds = Vec::new();
    for round in 1..=scale.rounds {
        srv = stops(&cluster, srv, &path, &c.api_key, scale, &ok).await;
        let ledger = settled(&srv, &diario, &c).await;
        let r = Round {
            round,
            answered: ok.load(Ordering::SeqCst),
            debited: initial.checked_sub(ledger.saldo).unwrap(),
            preco,
            open: diario.entries().unwrap().len(),
            ledger,
        };
        eprintln!(
            "run {round} ({} stops, {} clients): {} answered 200, {} debited, {} reversed, {} \
             still journaled",
            scale.stopped, scale.clients, r.answered, r.debited, r.ledger.estornos, r.open
        );
        rounds.push(r);
    }
    srv.shutdown().await;
    rounds
}
