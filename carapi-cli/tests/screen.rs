//! A `carapi` process on a real pseudo-terminal (portable-pty) of a given size, its screen read
//! by a terminal emulator (vt100).

#![cfg(unix)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::harness::*;

/// Lines of the default terminal.
pub const LINES: u16 = 24;
/// Columns of the default terminal.
pub const COLUMNS: u16 = 80;

/// A `carapi` process on a pseudo-terminal.
pub struct Screen {
    columns: u16,
    raw: Arc<Mutex<Vec<u8>>>,
    pub parser: Arc<Mutex<vt100::Parser>>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    keyboard: Box<dyn Write + Send>,
}

impl Screen {
    /// `carapi args` at 80x24.
    pub fn open(s: &TestServer, args: &[&str], env: &[(&str, &str)]) -> Screen {
        Self::open_sized(s, args, env, (LINES, COLUMNS))
    }

    /// `carapi args` on a `(lines, columns)` terminal.
    pub fn open_sized(
        s: &TestServer,
        args: &[&str],
        env: &[(&str, &str)],
        (lines, columns): (u16, u16),
    ) -> Screen {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: lines,
                cols: columns,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(assert_cmd::cargo::cargo_bin("carapi"));
        cmd.args(args);
        cmd.cwd(s.work_dir());
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
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let keyboard = pty.master.take_writer().unwrap();
        let raw = Arc::new(Mutex::new(vec![]));
        let parser = Arc::new(Mutex::new(vt100::Parser::new(lines, columns, 0)));
        let (b, t) = (raw.clone(), parser.clone());
        std::thread::spawn(move || {
            let _master = pty.master;
            let mut buf = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                b.lock().unwrap().extend_from_slice(&buf[..n]);
                t.lock().unwrap().process(&buf[..n]);
            }
        });
        Screen {
            columns,
            raw,
            parser,
            child,
            keyboard,
        }
    }

    /// The screen's 24 lines of text.
    pub fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Waits (a hang guard, not a speed check) until the screen shows `s`.
    pub fn wait_for(&self, s: &str) {
        let finish = Instant::now() + Duration::from_secs(60);
        while !self.text().contains(s) {
            assert!(
                Instant::now() < finish,
                "{s:?} never shown; screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn type_keys(&mut self, s: &str) {
        self.keyboard.write_all(s.as_bytes()).unwrap();
        self.keyboard.flush().unwrap();
    }

    /// Waits for the exit; the exit code and everything written, escapes removed.
    pub fn finish(mut self) -> (u32, String) {
        let status = self.child.wait().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let raw = self.raw.lock().unwrap().clone();
        (
            status.exit_code(),
            without_escapes(&String::from_utf8_lossy(&raw)),
        )
    }

    /// Waits for the exit; the screen as it is left (what a person sees after the program).
    pub fn final_text(mut self) -> String {
        let _ = self.child.wait().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        self.text()
    }

    /// The process's id.
    pub fn pid(&self) -> u32 {
        self.child.process_id().unwrap()
    }

    /// Kills the process (SIGKILL: nothing of it runs after) and waits for it.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        let _ = self.child.wait();
    }

    /// The terminal's width.
    pub fn columns(&self) -> u16 {
        self.columns
    }
}

/// Text without ANSI escape sequences (CSI and OSC) and carriage returns.
pub fn without_escapes(s: &str) -> String {
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
