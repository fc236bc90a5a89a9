//! A `carapi` process on a real pseudo-terminal (portable-pty) of a given size, its screen read
//! by a terminal emulator (vt100).

#![cfg(unix)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::harness::*;

/// Lines of the default terminal.
pub const LINHAS: u16 = 24;
/// Columns of the default terminal.
pub const COLUNAS: u16 = 80;

/// A `carapi` process on a pseudo-terminal.
pub struct Tela {
    colunas: u16,
    bruto: Arc<Mutex<Vec<u8>>>,
    pub tela: Arc<Mutex<vt100::Parser>>,
    filho: Box<dyn portable_pty::Child + Send + Sync>,
    teclado: Box<dyn Write + Send>,
}

impl Tela {
    /// `carapi args` at 80x24.
    pub fn abrir(s: &Servidor, args: &[&str], env: &[(&str, &str)]) -> Tela {
        Self::abrir_em(s, args, env, (LINHAS, COLUNAS))
    }

    /// `carapi args` on a `(linhas, colunas)` terminal.
    pub fn abrir_em(
        s: &Servidor,
        args: &[&str],
        env: &[(&str, &str)],
        (linhas, colunas): (u16, u16),
    ) -> Tela {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: linhas,
                cols: colunas,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(assert_cmd::cargo::cargo_bin("carapi"));
        cmd.args(args);
        cmd.cwd(s.trabalho());
        for v in [
            "CARAPI_LOCAL",
            "NO_COLOR",
            "RUST_LOG",
            "PAGER",
            "COLUMNS",
            "LINES",
        ] {
            cmd.env_remove(v);
        }
        cmd.env("TERM", "xterm-256color");
        cmd.env("CARAPI_PAGER", "");
        cmd.env("CARAPI_CONFIG_DIR", s.dir.path().join("config"));
        cmd.env("CARAPI_DATA_DIR", s.dir.path().join("data"));
        cmd.env("CARAPI_KEYRING", "off");
        cmd.env("CARAPI_BASE_URL", &s.base_url);
        cmd.env("CARAPI_API_KEY", &s.conta.api_key);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let filho = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let mut leitor = pty.master.try_clone_reader().unwrap();
        let teclado = pty.master.take_writer().unwrap();
        let bruto = Arc::new(Mutex::new(vec![]));
        let tela = Arc::new(Mutex::new(vt100::Parser::new(linhas, colunas, 0)));
        let (b, t) = (bruto.clone(), tela.clone());
        std::thread::spawn(move || {
            let _master = pty.master;
            let mut buf = [0u8; 4096];
            while let Ok(n) = leitor.read(&mut buf) {
                if n == 0 {
                    break;
                }
                b.lock().unwrap().extend_from_slice(&buf[..n]);
                t.lock().unwrap().process(&buf[..n]);
            }
        });
        Tela {
            colunas,
            bruto,
            tela,
            filho,
            teclado,
        }
    }

    /// The screen's 24 lines of text.
    pub fn texto(&self) -> String {
        self.tela.lock().unwrap().screen().contents()
    }

    /// Waits (a hang guard, not a speed check) until the screen shows `s`.
    pub fn esperar(&self, s: &str) {
        let fim = Instant::now() + Duration::from_secs(60);
        while !self.texto().contains(s) {
            assert!(
                Instant::now() < fim,
                "{s:?} never shown; screen:\n{}",
                self.texto()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn teclar(&mut self, s: &str) {
        self.teclado.write_all(s.as_bytes()).unwrap();
        self.teclado.flush().unwrap();
    }

    /// Waits for the exit; the exit code and everything written, escapes removed.
    pub fn fim(mut self) -> (u32, String) {
        let status = self.filho.wait().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let bruto = self.bruto.lock().unwrap().clone();
        (
            status.exit_code(),
            sem_escapes(&String::from_utf8_lossy(&bruto)),
        )
    }

    /// Waits for the exit; the screen as it is left (what a person sees after the program).
    pub fn texto_final(mut self) -> String {
        let _ = self.filho.wait().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        self.texto()
    }

    /// The terminal's width.
    pub fn colunas(&self) -> u16 {
        self.colunas
    }
}

/// Text without ANSI escape sequences (CSI and OSC) and carriage returns.
pub fn sem_escapes(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '\x1b' => match it.next() {
                Some('[') => {
                    for c in it.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    for c in it.by_ref() {
                        if c == '\x07' {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}
