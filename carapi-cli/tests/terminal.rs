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
use crate::tela::{COLUNAS, Tela};

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

/// The screen as a dark-background terminal shows it, two modules per cell (upper and lower
/// half), `true` = dark: painted cells (black on bright white) are dark where their half block
/// has ink; without colour, half blocks and spaces are light where the block has ink; every other
/// cell (text, the unpainted background) is dark.
fn modulos_da_tela(p: &vt100::Parser, colorido: bool) -> Vec<Vec<bool>> {
    let tela = p.screen();
    let mut linhas = vec![];
    for r in 0..tela.size().0 {
        let (mut cima, mut baixo) = (vec![], vec![]);
        for c in 0..COLUNAS {
            let cell = tela.cell(r, c);
            let ch = cell
                .and_then(|cell| cell.contents().chars().next())
                .unwrap_or(' ');
            let pintada = cell.is_some_and(|cell| cell.bgcolor() == vt100::Color::Idx(15));
            let (a, b) = match ch {
                '█' => (true, true),
                '▀' => (true, false),
                '▄' => (false, true),
                _ => (false, false),
            };
            let (escuro_cima, escuro_baixo) = if colorido && pintada {
                (a, b)
            } else if !colorido && "█▀▄ ".contains(ch) {
                (!a, !b)
            } else {
                (true, true)
            };
            cima.push(escuro_cima);
            baixo.push(escuro_baixo);
        }
        linhas.push(cima);
        linhas.push(baixo);
    }
    linhas
}

/// Decodes the one QR code in `bits` (4 px a module; dark beyond the edges).
fn decodificar(bits: &[Vec<bool>], tela: &str) -> String {
    const S: usize = 4;
    let (h, w) = (bits.len(), bits[0].len());
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w * S, h * S, |x, y| {
        if bits[y / S][x / S] { 0 } else { 255 }
    });
    let grids = img.detect_grids();
    assert_eq!(
        grids.len(),
        1,
        "one QR code expected on the screen:\n{tela}"
    );
    grids[0].decode().unwrap().1
}

/// The BR Code the server holds for the account's only top-up.
fn br_code_do_servidor(s: &Servidor) -> String {
    let c = s.client();
    s.rt.block_on(async {
        let lista = c.recargas(&Default::default()).await.unwrap();
        assert_eq!(lista.itens.len(), 1);
        let st = c.recarga(lista.itens[0].recarga_id).await.unwrap();
        st.qr_code.expect("a pending top-up has its BR Code")
    })
}

/// The PIX screen of `args` at 80x24: the code decodes to the server's BR Code, with `linha`
/// (the amount) and the spinner on the same screen; Ctrl-C then stops with exit 130.
fn tela_do_pix(s: &Servidor, args: &[&str], colorido: bool, linha: &str) {
    let env: &[(&str, &str)] = if colorido { &[] } else { &[("NO_COLOR", "1")] };
    let mut t = Tela::abrir(s, args, env);
    t.esperar("Aguardando o pagamento");
    std::thread::sleep(Duration::from_millis(300));
    // One screen: the code, the amount and the spinner together.
    let (texto, bits) = {
        let p = t.tela.lock().unwrap();
        (p.screen().contents(), modulos_da_tela(&p, colorido))
    };
    assert!(
        texto.contains(linha),
        "{linha:?} not on the screen:\n{texto}"
    );
    assert!(texto.contains("Aguardando o pagamento do PIX"), "{texto}");
    let payload = decodificar(&bits, &texto);
    assert_eq!(
        payload,
        br_code_do_servidor(s),
        "the QR is the server's BR Code"
    );
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
    assert!(saida.contains("carapi recarga status "), "{saida}");
}

#[test]
fn pix_screen_decodes_with_the_amount_and_the_spinner() {
    let s = Servidor::novo();
    tela_do_pix(
        &s,
        &["recarga", "criar", "500"],
        true,
        "Recarga de R$ 500,00",
    );
}

#[test]
fn pix_screen_without_colour_decodes_on_a_dark_background() {
    let s = Servidor::novo();
    tela_do_pix(
        &s,
        &["recarga", "criar", "500"],
        false,
        "Recarga de R$ 500,00",
    );
}

#[test]
fn status_wait_shows_the_same_pix_screen() {
    let s = Servidor::novo();
    let o = s
        .cmd()
        .args(["recarga", "criar", "500", "--sem-esperar", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let id = v["recargaId"].as_str().unwrap().to_owned();
    let linha = format!("Recarga {id} de R$ 500,00: Pendente");
    tela_do_pix(&s, &["recarga", "status", &id, "--esperar"], true, &linha);
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
