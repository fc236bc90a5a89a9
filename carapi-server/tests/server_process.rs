//! A `carapi-server` child process for the tests of the command line: `serve` with any
//! options (returns once it listens), and one-shot commands with their output.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_carapi-server");

/// A `carapi-server serve` child, killed when dropped.
pub struct Service {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The stderr lines printed before it listened.
    pub warnings: Vec<String>,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command of the binary with the variables that would change its options removed.
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args);
    for v in [
        "CARAPI_WEBHOOK_SECRET",
        "CARAPI_WEBHOOK_SECRET_FILE",
        "CARAPI_TOKEN_TESTE",
        "CARAPI_DATABASE_URL",
        "CARAPI_RATE_LIMIT",
        "CARAPI_LIMITE_NAO_AUTENTICADO",
        "CARAPI_PROXIES_CONFIAVEIS",
    ] {
        c.env_remove(v);
    }
    c
}

/// `serve --bind 127.0.0.1:0 --database URL --sem-dados-bundled` plus `args`; panics when it
/// ends before listening.
pub fn serve(url: &str, args: &[&str], env: &[(&str, &str)]) -> Service {
    let mut c = command(&["serve", "--bind", "127.0.0.1:0", "--database", url]);
    c.arg("--sem-dados-embutidos").args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn carapi-server");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut warnings = Vec::new();
    let base = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("carapi-server ended before listening: {warnings:?}"))
            .unwrap();
        if let Some(i) = line.find("ouvindo em http://") {
            break line[i + "ouvindo em ".len()..].trim().to_owned();
        }
        warnings.push(line);
    };
    std::thread::spawn(move || lines.for_each(drop));
    Service {
        child,
        base,
        warnings,
    }
}

/// Runs `serve` with `args` expecting it to refuse to start: its output once it ended, or a
/// panic when it is still running after a minute (it started).
pub fn serve_refused(url: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = command(&["serve", "--bind", "127.0.0.1:0", "--database", url]);
    c.arg("--sem-dados-embutidos").args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("serve {args:?} started instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}
