//! Shared harness of the end-to-end tests and benchmarks: a reference server spawned in-process
//! on `127.0.0.1:0` over a temporary SQLite store, funded accounts, SDK clients pointed at it,
//! and the real `carapi` binary and examples built by cargo.

pub mod crash;
pub mod pg;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use carapi_sdk::Client;
use carapi_service::{Config, ContaCriada, NovaConta, RunningServer};
use rust_decimal::Decimal;

/// A running reference server over its own temporary SQLite database.
#[derive(Debug)]
pub struct Environment {
    /// The server, listening on an ephemeral loopback port.
    pub server: RunningServer,
    /// The SQLite URL of its store (inside `dir`).
    pub database_url: String,
    /// Temporary folder holding the database; removed on drop.
    pub dir: tempfile::TempDir,
}

impl Environment {
    /// Spawns a server with [`Config::local`] defaults.
    ///
    /// # Panics
    /// When the temporary folder or the server cannot be created: the test cannot go on.
    pub async fn new() -> Self {
        Self::com(|_| {}).await
    }

    /// Spawns a server after `ajustar` changed the configuration (receipt modes, PIX failure,
    /// rate limit, …).
    ///
    /// # Panics
    /// As `Environment::new`.
    pub async fn com(adjust: impl FnOnce(&mut Config)) -> Self {
        Self::on(tempfile::tempdir().expect("temporary folder"), adjust).await
    }

    /// As [`Environment::com`], over the SQLite file `carapi.db` of `dir` (created when missing;
    /// a base bulk-loaded beforehand is served as it is).
    ///
    /// # Panics
    /// As `Environment::new`.
    pub async fn on(dir: tempfile::TempDir, adjust: impl FnOnce(&mut Config)) -> Self {
        let database_url = format!("sqlite://{}", dir.path().join("carapi.db").display());
        let mut config = Config::local(database_url.clone());
        adjust(&mut config);
        let server = carapi_service::spawn(config)
            .await
            .expect("reference server starts");
        Self {
            server,
            database_url,
            dir,
        }
    }

    /// Creates an account with `saldo` BRL on the current price table.
    ///
    /// # Panics
    /// When the store refuses the account.
    pub async fn conta(&self, saldo: Decimal) -> ContaCriada {
        self.conta_com(NovaConta {
            saldo,
            ..NovaConta::default()
        })
        .await
    }

    /// Creates an account as described.
    ///
    /// # Panics
    /// When the store refuses the account.
    pub async fn conta_com(&self, fresh: NovaConta) -> ContaCriada {
        self.server
            .create_conta(fresh)
            .await
            .expect("account created")
    }

    /// An SDK client for `api_key` with the SDK's defaults (retries, 10 req/s limiter).
    ///
    /// # Panics
    /// When the client cannot be built.
    pub fn client_addr(&self, api_key: &str) -> Client {
        self.builder(api_key).build().expect("client builds")
    }

    /// A client builder already pointed at this server with `api_key`.
    pub fn builder(&self, api_key: &str) -> carapi_sdk::ClientBuilder {
        Client::builder()
            .base_url(self.server.base_url())
            .api_key(api_key)
    }

    /// An account funded with `saldo` BRL and a default client for it.
    pub async fn client_with_saldo(&self, saldo: Decimal) -> (Client, ContaCriada) {
        let conta = self.conta(saldo).await;
        (self.client_addr(&conta.api_key), conta)
    }
}

/// The `carapi` binary, built once per process with the profile this test binary was built with.
///
/// `cargo test --workspace` has already built it next to this test binary; that one is used
/// when it is newer than every source file it is made of. Otherwise (e.g. `cargo test -p
/// carapi-tests`, or `cargo bench`) cargo builds it.
///
/// # Panics
/// When cargo cannot build it.
pub fn carapi_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        built(Path::new("carapi")).unwrap_or_else(|| {
            build(
                escargot::CargoBuild::new()
                    .package("carapi-cli")
                    .bin("carapi"),
            )
        })
    })
}

/// An example of `carapi-examples`, built once per name (the one `cargo test --workspace`
/// built when it is fresh, as [`carapi_bin`]).
///
/// # Panics
/// When cargo cannot build it.
pub fn example_bin(name: &str) -> PathBuf {
    built(&Path::new("examples").join(name)).unwrap_or_else(|| {
        build(
            escargot::CargoBuild::new()
                .package("carapi-examples")
                .example(name),
        )
    })
}

/// The `carapi-server` binary, built once per process with this test binary's profile (the
/// one `cargo test --workspace` built when it is fresh, as [`carapi_bin`]).
///
/// # Panics
/// When cargo cannot build it.
pub fn server_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        built(Path::new("carapi-server")).unwrap_or_else(|| {
            build(
                escargot::CargoBuild::new()
                    .package("carapi-server")
                    .bin("carapi-server"),
            )
        })
    })
}

/// `relativo` under this test binary's profile folder (`target/<profile>/`), when it exists
/// and is newer than every source of the workspace's crates.
fn built(relative: &Path) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/deps/<test binary>
    let profile = exe.parent()?.parent()?;
    let path = profile.join(relative);
    let done = std::fs::metadata(&path).ok()?.modified().ok()?;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let folders = ["carapi-cli", "carapi-sdk", "carapi-server", "examples"];
    let fresh = folders
        .iter()
        .all(|p| newer_than_sources(&root.join(p), done));
    fresh.then_some(path)
}

/// True when no file under `pasta` (sources, manifests, data) was modified after `instant`.
fn newer_than_sources(folder: &Path, instant: std::time::SystemTime) -> bool {
    let Ok(inputs) = std::fs::read_dir(folder) else {
        return true;
    };
    inputs.flatten().all(|e| {
        let path = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => e.file_name() == "tests" || newer_than_sources(&path, instant),
            Ok(_) => e
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|m| m <= instant),
            Err(_) => false,
        }
    })
}

fn build(cmd: escargot::CargoBuild) -> PathBuf {
    let cmd = if cfg!(debug_assertions) {
        cmd
    } else {
        cmd.release()
    };
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    cmd.manifest_path(manifest)
        .run()
        .unwrap_or_else(|e| panic!("cargo build failed: {e}"))
        .path()
        .to_path_buf()
}
