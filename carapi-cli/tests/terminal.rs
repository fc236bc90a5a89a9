//! The binary under a real pseudo-terminal (portable-pty), its screen read by a terminal
//! emulator (vt100): tables fit 80 columns at 80x24, the PIX screen shows, on one 80x24 screen, a
//! QR code that decodes (rqrr) to the server's BR Code, the amount and the spinner, prompts answer
//! `[s/N]`, and Ctrl-C while waiting is a plain stop.
//!
//! The QR code is read from the screen cells as a dark-background terminal shows them: painted
//! cells (black on bright white) as drawn, every other cell dark, text included; without colour,
//! half blocks are the terminal's light ink. No margin is added around the code: its own quiet
//! zone is all the decoder gets.

#![cfg(unix)]

use std::time::Duration;

use crate::harness::*;
use crate::screen::{COLUMNS, Screen};

#[test]
fn car_table_fits_80_columns() {
    let s = TestServer::new();
    for args in [
        &["--local", "car", CODES[0]][..],
        &["--local", "car", CODES[3], "--completo"][..],
        &["--local", "historico"][..],
        &["--local", "proprietario", "00000000000000"][..],
    ] {
        let t = Screen::open(&s, args, &[]);
        let (code, text) = t.finish();
        assert_eq!(code, 0, "{args:?}: {text}");
        let wide: Vec<&str> = text
            .lines()
            .filter(|l| l.contains(['│', '┌', '└', '├', '╞']))
            .filter(|l| l.chars().count() > usize::from(COLUMNS))
            .collect();
        assert!(wide.is_empty(), "{args:?} wider than 80: {wide:#?}");
        assert!(text.contains('┌') || text.contains("nenhum"), "{text}");
    }
}

/// The screen as a dark-background terminal shows it, two modules per cell (upper and lower
/// half), `true` = dark: painted cells (black on bright white) are dark where their half block
/// has ink; without colour, half blocks and spaces are light where the block has ink; every other
/// cell (text, the unpainted background) is dark.
fn screen_modules(p: &vt100::Parser, colored: bool) -> Vec<Vec<bool>> {
    let screen = p.screen();
    let mut lines = vec![];
    for r in 0..screen.size().0 {
        let (mut upper, mut lower) = (vec![], vec![]);
        for c in 0..COLUMNS {
            let cell = screen.cell(r, c);
            let ch = cell
                .and_then(|cell| cell.contents().chars().next())
                .unwrap_or(' ');
            let painted = cell.is_some_and(|cell| cell.bgcolor() == vt100::Color::Idx(15));
            let (a, b) = match ch {
                '█' => (true, true),
                '▀' => (true, false),
                '▄' => (false, true),
                _ => (false, false),
            };
            let (dark_upper, dark_lower) = if colored && painted {
                (a, b)
            } else if !colored && "█▀▄ ".contains(ch) {
                (!a, !b)
            } else {
                (true, true)
            };
            upper.push(dark_upper);
            lower.push(dark_lower);
        }
        lines.push(upper);
        lines.push(lower);
    }
    lines
}

/// Decodes the one QR code in `bits` (4 px a module; dark beyond the edges).
fn decode_qr(bits: &[Vec<bool>], screen: &str) -> String {
    const S: usize = 4;
    let (h, w) = (bits.len(), bits[0].len());
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w * S, h * S, |x, y| {
        if bits[y / S][x / S] { 0 } else { 255 }
    });
    let grids = img.detect_grids();
    assert_eq!(
        grids.len(),
        1,
        "one QR code expected on the screen:\n{screen}"
    );
    grids[0].decode().unwrap().1
}

/// The BR Code the server holds for the account's only top-up.
fn server_br_code(s: &TestServer) -> String {
    let c = s.client();
    s.rt.block_on(async {
        let list = c.recargas(&Default::default()).await.unwrap();
        assert_eq!(list.itens.len(), 1);
        let st = c.recarga(list.itens[0].recarga_id).await.unwrap();
        st.qr_code.expect("a pending top-up has its BR Code")
    })
}

/// The PIX screen of `args` at 80x24: the code decodes to the server's BR Code, with `line`
/// (the amount) and the spinner on the same screen; Ctrl-C then stops with exit 130.
fn pix_screen(s: &TestServer, args: &[&str], colored: bool, line: &str) {
    let env: &[(&str, &str)] = if colored { &[] } else { &[("NO_COLOR", "1")] };
    let mut t = Screen::open(s, args, env);
    t.wait_for("Aguardando o pagamento");
    std::thread::sleep(Duration::from_millis(300));
    // One screen: the code, the amount and the spinner together.
    let (text, bits) = {
        let p = t.parser.lock().unwrap();
        (p.screen().contents(), screen_modules(&p, colored))
    };
    assert!(text.contains(line), "{line:?} not on the screen:\n{text}");
    assert!(text.contains("Aguardando o pagamento do PIX"), "{text}");
    let payload = decode_qr(&bits, &text);
    assert_eq!(payload, server_br_code(s), "the QR is the server's BR Code");
    assert_eq!(
        carapi_sdk::domain::pix::valor(&payload).unwrap(),
        Some(dec("500.00")),
        "the QR carries the amount"
    );
    // Ctrl-C: a normal stop, with how to resume.
    t.type_keys("\x03");
    let (code, output) = t.finish();
    assert_eq!(code, 130, "{output}");
    assert!(!output.contains("erro:"), "{output}");
    assert!(output.contains("carapi recarga status "), "{output}");
}

#[test]
fn pix_screen_decodes_with_the_amount_and_the_spinner() {
    let s = TestServer::new();
    pix_screen(
        &s,
        &["recarga", "criar", "500"],
        true,
        "Recarga de R$ 500,00",
    );
}

#[test]
fn pix_screen_without_colour_decodes_on_a_dark_background() {
    let s = TestServer::new();
    pix_screen(
        &s,
        &["recarga", "criar", "500"],
        false,
        "Recarga de R$ 500,00",
    );
}

#[test]
fn status_wait_shows_the_same_pix_screen() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["recarga", "criar", "500", "--sem-esperar", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = v["recargaId"].as_str().unwrap().to_owned();
    let line = format!("Recarga {id} de R$ 500,00: Pendente");
    pix_screen(&s, &["recarga", "status", &id, "--esperar"], true, &line);
}

#[test]
fn prompt_takes_s_for_sim() {
    let s = TestServer::new();
    let file_path = write_file(&s.work_dir(), "c.txt", &format!("{}\n", CODES[0]));
    let mut t = Screen::open(
        &s,
        &[
            "lote",
            "car",
            file_path.to_str().unwrap(),
            "--saida",
            "r.jsonl",
        ],
        &[],
    );
    t.wait_for("[s/N]");
    t.type_keys("s\r");
    let (code, output) = t.finish();
    assert_eq!(code, 0, "{output}");
    assert_eq!(s.charged(), vec![CODES[0].to_owned()]);
}
