//! The binary under a real pseudo-terminal (portable-pty), its screen read by a terminal
//! emulator (vt100): tables fit 80 columns at 80x24, the PIX screen shows a QR code that decodes
//! (rqrr) with the amount and the spinner on the same screen, prompts answer `[s/N]`, and Ctrl-C
//! while waiting is a plain stop.
//!
//! The PIX screen is checked at 80x[`LINHAS_PIX`]: the reference server's BR Code has 199
//! characters, which needs a version-8 QR code (49 modules) even at level L with optimal
//! segmentation, so 25 text lines at the very least (half blocks, no quiet zone): it cannot fit
//! 24 lines with anything else. With the CLI's 2-module quiet zone it takes 27 lines, plus the
//! amount, the id and the spinner.

#![cfg(unix)]

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::harness::*;

const LINHAS: u16 = 24;
const COLUNAS: u16 = 80;
/// Rows of the PIX screen (see the module documentation).
const LINHAS_PIX: u16 = 31;

/// A `carapi` process on a pseudo-terminal.
struct Tela {
    bruto: Arc<Mutex<Vec<u8>>>,
    tela: Arc<Mutex<vt100::Parser>>,
    filho: Box<dyn portable_pty::Child + Send + Sync>,
    teclado: Box<dyn Write + Send>,
}

impl Tela {
    fn abrir(s: &Servidor, args: &[&str], env: &[(&str, &str)]) -> Tela {
        Self::abrir_com(s, args, env, LINHAS)
    }

    fn abrir_com(s: &Servidor, args: &[&str], env: &[(&str, &str)], linhas: u16) -> Tela {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: linhas,
                cols: COLUNAS,
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
        let tela = Arc::new(Mutex::new(vt100::Parser::new(linhas, COLUNAS, 0)));
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
            bruto,
            tela,
            filho,
            teclado,
        }
    }

    /// The screen's 24 lines of text.
    fn texto(&self) -> String {
        self.tela.lock().unwrap().screen().contents()
    }

    /// Waits (a hang guard, not a speed check) until the screen shows `s`.
    fn esperar(&self, s: &str) {
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

    fn teclar(&mut self, s: &str) {
        self.teclado.write_all(s.as_bytes()).unwrap();
        self.teclado.flush().unwrap();
    }

    /// Waits for the exit; the exit code and everything written, escapes removed.
    fn fim(mut self) -> (u32, String) {
        let status = self.filho.wait().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let bruto = self.bruto.lock().unwrap().clone();
        (
            status.exit_code(),
            sem_escapes(&String::from_utf8_lossy(&bruto)),
        )
    }
}

/// Text without ANSI escape sequences (CSI and OSC) and carriage returns.
fn sem_escapes(s: &str) -> String {
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

#[test]
fn car_table_fits_80_columns() {
    let s = Servidor::novo();
    for args in [
        &["--local", "car", CODIGOS[0]][..],
        &["--local", "car", CODIGOS[3], "--completo"][..],
        &["--local", "historico"][..],
        &["--local", "proprietario", "00000000000000"][..],
    ] {
        let t = Tela::abrir(&s, args, &[]);
        let (codigo, texto) = t.fim();
        assert_eq!(codigo, 0, "{args:?}: {texto}");
        let largas: Vec<&str> = texto
            .lines()
            .filter(|l| l.contains(['│', '┌', '└', '├', '╞']))
            .filter(|l| l.chars().count() > usize::from(COLUNAS))
            .collect();
        assert!(largas.is_empty(), "{args:?} wider than 80: {largas:#?}");
        assert!(texto.contains('┌') || texto.contains("nenhum"), "{texto}");
    }
}

/// The modules of the QR code on the screen (`true` = dark): painted lines (black on bright
/// white: glyphs are dark modules) or, with `NO_COLOR`, plain lines (glyphs are light modules).
fn modulos_da_tela(p: &vt100::Parser, colorido: bool) -> Vec<Vec<bool>> {
    let tela = p.screen();
    let mut linhas = vec![];
    for r in 0..tela.size().0 {
        let celulas: Vec<(char, bool)> = (0..COLUNAS)
            .filter_map(|c| tela.cell(r, c))
            .map(|cell| {
                let ch = cell.contents().chars().next().unwrap_or(' ');
                (ch, cell.bgcolor() == vt100::Color::Idx(15))
            })
            .collect();
        let eh_qr = if colorido {
            celulas.iter().filter(|(_, bg)| *bg).count() > 20
        } else {
            let texto: String = celulas.iter().map(|(c, _)| *c).collect();
            let t = texto.trim_end();
            t.contains('█') && t.chars().all(|c| "█▀▄ ".contains(c))
        };
        if !eh_qr {
            continue;
        }
        let usadas: Vec<char> = celulas
            .iter()
            .filter(|(_, bg)| !colorido || *bg)
            .map(|(c, _)| *c)
            .collect();
        let (mut cima, mut baixo) = (vec![], vec![]);
        for c in usadas {
            let (a, b) = match c {
                '█' => (true, true),
                '▀' => (true, false),
                '▄' => (false, true),
                _ => (false, false),
            };
            // Ink is dark on the painted code, light on the plain one.
            cima.push(if colorido { a } else { !a });
            baixo.push(if colorido { b } else { !b });
        }
        linhas.push(cima);
        linhas.push(baixo);
    }
    linhas
}

fn decodificar(bits: &[Vec<bool>], tela: &str) -> String {
    const S: usize = 4;
    assert!(!bits.is_empty(), "no QR code on the screen:\n{tela}");
    let (h, w) = (bits.len(), bits[0].len());
    let margem = 4 * S;
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(
        w * S + 2 * margem,
        h * S + 2 * margem,
        |x, y| {
            let (x, y) = (x.wrapping_sub(margem) / S, y.wrapping_sub(margem) / S);
            match bits.get(y).and_then(|l| l.get(x)) {
                Some(true) => 0,
                _ => 255,
            }
        },
    );
    let grids = img.detect_grids();
    assert_eq!(
        grids.len(),
        1,
        "one QR code expected on the screen:\n{tela}"
    );
    grids[0].decode().unwrap().1
}

fn tela_do_pix(colorido: bool) {
    let s = Servidor::novo();
    let env: &[(&str, &str)] = if colorido { &[] } else { &[("NO_COLOR", "1")] };
    let mut t = Tela::abrir_com(&s, &["--local", "recarga", "criar", "500"], env, LINHAS_PIX);
    t.esperar("Aguardando o pagamento");
    std::thread::sleep(Duration::from_millis(300));
    let texto = t.texto();
    assert!(texto.contains("Recarga de R$ 500,00"), "{texto}");
    assert!(texto.contains("ID da recarga: "), "{texto}");
    let payload = {
        let p = t.tela.lock().unwrap();
        decodificar(&modulos_da_tela(&p, colorido), &texto)
    };
    assert!(payload.starts_with("000201"), "{payload}");
    assert_eq!(
        carapi_sdk::domain::pix::valor(&payload).unwrap(),
        Some(dec("500.00")),
        "the QR carries the amount"
    );
    // Ctrl-C: a normal stop, with how to resume.
    t.teclar("\x03");
    let (codigo, saida) = t.fim();
    assert_eq!(codigo, 130, "{saida}");
    assert!(!saida.contains("erro:"), "{saida}");
    assert!(saida.contains("carapi --local recarga status "), "{saida}");
}

#[test]
fn pix_screen_decodes_with_the_amount_and_the_spinner() {
    tela_do_pix(true);
}

#[test]
fn pix_screen_without_colour_decodes_on_a_dark_background() {
    tela_do_pix(false);
}

#[test]
fn prompt_takes_s_for_sim() {
    let s = Servidor::novo();
    let arq = escrever(&s.trabalho(), "c.txt", &format!("{}\n", CODIGOS[0]));
    let mut t = Tela::abrir(
        &s,
        &["lote", "car", arq.to_str().unwrap(), "--saida", "r.jsonl"],
        &[],
    );
    t.esperar("[s/N]");
    t.teclar("s\r");
    let (codigo, saida) = t.fim();
    assert_eq!(codigo, 0, "{saida}");
    assert_eq!(s.cobradas(), vec![CODIGOS[0].to_owned()]);
}
