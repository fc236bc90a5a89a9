//! A `carapi-server` child process for the tests of the command line: `serve` with any
//! options (returns once it listens), and one-shot commands with their output.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_carapi-server");

/// A `carapi-server serve` child, killed when dropped.
pub struct Servico {
    filho: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The stderr lines printed before it listened.
    pub avisos: Vec<String>,
}

impl Drop for Servico {
    fn drop(&mut self) {
        let _ = self.filho.kill();
        let _ = self.filho.wait();
    }
}

/// A command of the binary with the variables that would change its options removed.
pub fn comando(args: &[&str]) -> Command {
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
pub fn serve(url: &str, args: &[&str], env: &[(&str, &str)]) -> Servico {
    let mut c = comando(&["serve", "--bind", "127.0.0.1:0", "--database", url]);
    c.arg("--sem-dados-embutidos").args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut filho = c
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn carapi-server");
    let mut linhas = BufReader::new(filho.stderr.take().unwrap()).lines();
    let mut avisos = Vec::new();
    let base = loop {
        let linha = linhas
            .next()
            .unwrap_or_else(|| panic!("carapi-server ended before listening: {avisos:?}"))
            .unwrap();
        if let Some(i) = linha.find("ouvindo em http://") {
            break linha[i + "ouvindo em ".len()..].trim().to_owned();
        }
        avisos.push(linha);
    };
    std::thread::spawn(move || linhas.for_each(drop));
    Servico {
        filho,
        base,
        avisos,
    }
}

/// Runs `serve` with `args` expecting it to refuse to start: its output once it ended, or a
/// panic when it is still running after a minute (it started).
pub fn servir_recusado(url: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = comando(&["serve", "--bind", "127.0.0.1:0", "--database", url]);
    c.arg("--sem-dados-embutidos").args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let mut filho = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let inicio = Instant::now();
    while filho.try_wait().unwrap().is_none() {
        if inicio.elapsed() > Duration::from_secs(60) {
            let _ = filho.kill();
            let _ = filho.wait();
            panic!("serve {args:?} started instead of refusing");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    filho.wait_with_output().unwrap()
}
