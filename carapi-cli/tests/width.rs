//! What a person sees on a real terminal (80x24 and 60x20): the charge of each lookup, tables and
//! help that fit the width without splitting a number, date, code or money value.

#![cfg(unix)]

use crate::harness::*;
use crate::tela::Tela;

/// The two terminals of the analyst: tmux at 80x24 and a split pane at 60x20.
const TELAS: [(u16, u16); 2] = [(24, 80), (20, 60)];

#[test]
fn every_charged_lookup_says_its_price_local_included() {
    let s = Servidor::novo();
    let legado = s.dir.path().join("data").join("precos");
    std::fs::create_dir_all(&legado).unwrap();
    std::fs::write(legado.join("0123456789abcdef.json"), "{}").unwrap();
    for (args, preco) in [
        (&["--local", "car", CODIGOS[0]][..], "cobrado R$ 1,00"),
        (
            &["--local", "car", CODIGOS[0], "--completo"][..],
            "cobrado R$ 2,30",
        ),
        (&["car", CODIGOS[1]][..], "cobrado R$ 1,00"),
        (&["proprietario", "385.211.390-39"][..], "cobrado R$ 2,60"),
    ] {
        let t = Tela::abrir(&s, args, &[]);
        let (codigo, texto) = t.fim();
        assert!(codigo == 0 || codigo == 4, "{args:?}: {texto}");
        if codigo == 0 {
            assert!(texto.contains(preco), "{args:?}: {texto}");
            assert!(!texto.contains("os preços da conta"), "{texto}");
        }
    }
    assert!(!legado.exists(), "the old price cache is cleaned up");
}

/// 30+ mixed lookups in the history: charged and sandbox, found and not found, every endpoint.
fn historico_misto(s: &Servidor) {
    let c = s.client();
    s.rt.block_on(async {
        for i in 0..6 {
            let _ = c.car(CODIGOS[i % 5]).await;
            let _ = c.car_completo(CODIGOS[(i + 1) % 5]).await;
            let _ = c.proprietario("38521139039").await;
            let _ = c.car("ZZ-0000000-SANDBOXCARBASICO0000000000000000").await;
            let _ = c.car("DF-5300108-00000000000000000000000000000000").await;
            let _ = c.proprietario("00000000000").await;
        }
    });
}

/// The problems of one screen of output: lines wider than `colunas`, and whole values split:
/// a CAR code cut short, a date without its time, `R$` without its amount.
fn problemas(texto: &str, colunas: u16) -> Vec<String> {
    let mut p = vec![];
    for l in texto.lines() {
        if l.chars().count() > usize::from(colunas) {
            p.push(format!("mais larga que {colunas}: {l}"));
        }
        let celulas: Vec<&str> = l.split('│').map(str::trim).collect();
        for c in &celulas {
            if c.ends_with("R$") {
                p.push(format!("R$ sem o valor: {l}"));
            }
            for (i, _) in c
                .match_indices("-5300108-")
                .chain(c.match_indices("-5107925-"))
            {
                let resto: String = c[i + 9..]
                    .chars()
                    .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '.')
                    .collect();
                if resto.contains('.') || resto.starts_with("0000") {
                    continue; // a protocol code (`DF-5300108-0000.0000...`), not a CAR code
                }
                if resto.len() < 32 || !resto.chars().all(|ch| ch.is_ascii_hexdigit()) {
                    p.push(format!("código CAR partido: {l}"));
                }
            }
            if eh_hora(c) {
                p.push(format!("hora separada da data: {l}"));
            }
        }
    }
    p
}

/// True when a cell is only a time (`17:16:10`): the rest of a date split over two lines.
fn eh_hora(c: &str) -> bool {
    let b = c.as_bytes();
    b.len() == 8 && b[2] == b':' && b[5] == b':'
}

fn olhar(s: &Servidor, args: &[&str], tela: (u16, u16), pager: &str) -> String {
    let env = [("CARAPI_PAGER", pager)];
    let t = Tela::abrir_em(s, args, &env, tela);
    assert_eq!(t.colunas(), tela.1);
    let (codigo, texto) = t.fim();
    assert!(
        codigo == 0,
        "{args:?} at {tela:?} (pager {pager:?}) exit {codigo}: {texto}"
    );
    texto
}

#[test]
fn tables_fit_80_and_60_columns_with_and_without_a_pager() {
    let s = Servidor::novo();
    historico_misto(&s);
    let o = s
        .cmd()
        .args(["recarga", "criar", "500", "--sem-esperar", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let comandos: [&[&str]; 11] = [
        &["car", CODIGOS[0]],
        &["car", CODIGOS[3], "--completo"],
        &["proprietario", "00000000000"],
        &["proprietario", "00000000000000"],
        &["proprietario", "385.211.390-39"],
        &["historico", "--por-pagina", "40"],
        &["saldo"],
        &["uso"],
        &["limites"],
        &["recargas"],
        &[
            "car",
            "ZZ-0000000-SANDBOXCARBASICO0000000000000000",
            "--completo",
        ],
    ];
    let mut erros = vec![];
    for tela in TELAS {
        for pager in ["", "tail -n +1"] {
            for args in comandos {
                let texto = olhar(&s, args, tela, pager);
                for p in problemas(&texto, tela.1) {
                    erros.push(format!("{args:?} {tela:?} pager {pager:?}: {p}"));
                }
            }
        }
    }
    assert!(erros.is_empty(), "{}", erros.join("\n"));
}

#[test]
fn historico_keeps_the_key_and_says_what_was_left_out() {
    let s = Servidor::novo();
    historico_misto(&s);
    for tela in TELAS {
        let texto = olhar(&s, &["historico"], tela, "");
        assert!(texto.contains("38521139039"), "{tela:?}: {texto}");
        assert!(texto.contains(CODIGOS[0]), "{tela:?}: {texto}");
        let junto = texto.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(junto.contains("colunas omitidas"), "{texto}");
        assert!(junto.contains("-o json"), "how to see everything: {texto}");
    }
}

/// Every command path of the CLI (`car`, `recarga criar`, ...).
fn caminhos() -> Vec<Vec<String>> {
    fn visitar(cmd: &clap::Command, antes: &[String], out: &mut Vec<Vec<String>>) {
        for s in cmd.get_subcommands() {
            let mut c = antes.to_vec();
            c.push(s.get_name().to_owned());
            out.push(c.clone());
            visitar(s, &c, out);
        }
    }
    let mut out = vec![vec![]];
    visitar(&carapi_cli::help::command(), &[], &mut out);
    out
}

#[test]
fn every_help_fits_80_and_60_columns_without_breaking_words() {
    let s = Servidor::novo();
    let mut erros = vec![];
    for tela in TELAS {
        for caminho in caminhos() {
            for flag in ["--help", "-h"] {
                let mut args: Vec<&str> = caminho.iter().map(String::as_str).collect();
                args.push(flag);
                let texto = olhar(&s, &args, tela, "");
                for l in texto.lines() {
                    if l.chars().count() > usize::from(tela.1) {
                        erros.push(format!("{args:?} {tela:?}: {l}"));
                    }
                }
                if texto.contains("carap\n") || texto.contains("API carap ") {
                    erros.push(format!("{args:?} {tela:?}: palavra partida"));
                }
            }
        }
    }
    assert!(erros.is_empty(), "{}", erros.join("\n"));
}

#[test]
fn the_local_pix_screen_says_how_to_pay() {
    let s = Servidor::novo();
    let mut t = Tela::abrir(&s, &["--local", "recarga", "criar", "500"], &[]);
    t.esperar("Aguardando o pagamento");
    let tela = t.texto();
    assert!(tela.contains("carapi local pagar "), "{tela}");
    assert!(!tela.contains("carapi --local local"), "{tela}");
    t.teclar("\x03");
    let (codigo, _) = t.fim();
    assert_eq!(codigo, 130);
}

#[test]
fn a_second_ctrl_c_in_a_batch_leaves_no_progress_bar() {
    let s = Servidor::novo();
    let chaves: String = (0..60).map(|i| format!("DF-5300108-{i:032X}\n")).collect();
    let arq = escrever(&s.trabalho(), "nao-existem.txt", &chaves);
    let mut t = Tela::abrir(
        &s,
        &[
            "lote",
            "car",
            arq.to_str().unwrap(),
            "--saida",
            "r.jsonl",
            "--sim",
        ],
        &[],
    );
    t.esperar("/60");
    t.teclar("\x03");
    t.esperar("interrompendo");
    t.teclar("\x03");
    let tela = t.texto_final();
    assert!(
        !tela.contains("/60"),
        "the bar stayed on the screen:\n{tela}"
    );
}

#[test]
fn the_login_prompt_prints_no_english() {
    let s = Servidor::novo();
    let mut t = Tela::abrir(&s, &["login"], &[("CARAPI_API_KEY", "")]);
    t.esperar("Chave da API");
    t.teclar(&format!("{}\r", s.conta.api_key));
    let (codigo, texto) = t.fim();
    assert_eq!(codigo, 0, "{texto}");
    assert!(!texto.contains("[hidden]"), "{texto}");
}
