//! The release `carapi-server` binary as an operator runs it: built once (before any clock
//! starts), a command run to its end, a server started on a free loopback port and stopped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;

/// The release `carapi-server` binary, built once.
pub fn server_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        escargot::CargoBuild::new()
            .package("carapi-server")
            .bin("carapi-server")
            .release()
            .manifest_path(manifest)
            .run()
            .unwrap_or_else(|e| panic!("cargo build carapi-server failed: {e}"))
            .path()
            .to_path_buf()
    })
}

/// A command of the binary, without the environment's database URL.
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(server_bin());
    c.args(args).env_remove("CARAPI_DATABASE_URL");
    c
}

/// Runs `carapi-server args…` to its end; its stdout.
pub fn run_bin(args: &[&str]) -> String {
    let output = command(args).output().expect("carapi-server runs");
    assert!(
        output.status.success(),
        "carapi-server {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// An account with `saldo` BRL in the base at `url`; its API key.
pub fn conta(url: &str, saldo: &str) -> String {
    let json = run_bin(&[
        "account",
        "create",
        "--saldo",
        saldo,
        "--json",
        "--database",
        url,
        "--criar-banco",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("account JSON");
    v["apiKey"].as_str().expect("apiKey").to_owned()
}

/// `carapi-server serve` over `url` on a free loopback port, per-key limiter off; stopped on
/// drop.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
}

impl Server {
    /// Starts the server and waits until it listens.
    pub fn start(url: &str) -> Self {
        Self::start_with(url, &[])
    }

    /// [`Server::start`] with more `servir` options.
    pub fn start_with(url: &str, more: &[&str]) -> Self {
        let mut child = command(&[
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--database",
            url,
            "--rate-limit",
            "0",
            "--sem-dados-embutidos",
        ])
        .args(more)
        .env("CARAPI_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("carapi-server serve starts");
        let stderr = child.stderr.take().expect("stderr");
        let mut lines = BufReader::new(stderr).lines();
        let base_url = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| {
                l.split("carapi-server ouvindo em ")
                    .nth(1)
                    .map(|u| u.trim().to_owned())
            })
            .expect("the server says where it listens");
        // Keep draining stderr, so that the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Server { child, base_url }
    }
}

impl Server {
    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
