//! What a person sees on a real terminal (80x24 and 60x20): the charge of each lookup, tables and
//! help that fit the width without splitting a number, date, code or money value.

#![cfg(unix)]

use crate::harness::*;
use crate::screen::Screen;

/// The two terminals of the analyst: tmux at 80x24 and a split pane at 60x20.
const SCREENS: [(u16, u16); 2] = [(24, 80), (20, 60)];

#[test]
fn every_charged_lookup_says_its_price_local_included() {
    let s = TestServer::new();
    let legacy = s.dir.path().join("data").join("precos");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join("0123456789abcdef.json"), "{}").unwrap();
    for (args, preco) in [
        (&["--local", "car", CODES[0]][..], "cobrado R$ 1,00"),
        (
            &["--local", "car", CODES[0], "--completo"][..],
            "cobrado R$ 2,30",
        ),
        (&["car", CODES[1]][..], "cobrado R$ 1,00"),
        (&["proprietario", "385.211.390-39"][..], "cobrado R$ 2,60"),
    ] {
        let t = Screen::open(&s, args, &[]);
        let (code, text) = t.finish();
        assert!(code == 0 || code == 4, "{args:?}: {text}");
        if code == 0 {
            assert!(text.contains(preco), "{args:?}: {text}");
            assert!(!text.contains("os preços da conta"), "{text}");
        }
    }
    assert!(!legacy.exists(), "the old price cache is cleaned up");
}

/// 30+ mixed lookups in the history: charged and sandbox, found and not found, every endpoint.
fn mixed_historico(s: &TestServer) {
    let c = s.client();
    s.rt.block_on(async {
        for i in 0..6 {
            let _ = c.car(CODES[i % 5]).await;
            let _ = c.car_completo(CODES[(i + 1) % 5]).await;
            let _ = c.proprietario("38521139039").await;
            let _ = c.car("ZZ-0000000-SANDBOXCARBASICO0000000000000000").await;
            let _ = c.car("DF-5300108-00000000000000000000000000000000").await;
            let _ = c.proprietario("00000000000").await;
        }
    });
}

/// The problems of one screen of output: lines wider than `columns`, and whole values split:
/// a CAR code cut short, a date without its time, `R$` without its amount.
fn problems(text: &str, columns: u16) -> Vec<String> {
    let mut p = vec![];
    for l in text.lines() {
        if l.chars().count() > usize::from(columns) {
            p.push(format!("mais larga que {columns}: {l}"));
        }
        let cells: Vec<&str> = l.split('│').map(str::trim).collect();
        for c in &cells {
            if c.ends_with("R$") {
                p.push(format!("R$ sem o valor: {l}"));
            }
            for (i, _) in c
                .match_indices("-5300108-")
                .chain(c.match_indices("-5107925-"))
            {
                let rest: String = c[i + 9..]
                    .chars()
                    .take_while(|ch| ch.is_ascii_alphanumeric() || *ch == '.')
                    .collect();
                if rest.contains('.') || rest.starts_with("0000") {
                    continue; // a protocol code (`DF-5300108-0000.0000...`), not a CAR code
                }
                if rest.len() < 32 || !rest.chars().all(|ch| ch.is_ascii_hexdigit()) {
                    p.push(format!("código CAR partido: {l}"));
                }
            }
            if is_time(c) {
                p.push(format!("hora separada da data: {l}"));
            }
        }
    }
    p
}

/// True when a cell is only a time (`17:16:10`): the rest of a date split over two lines.
fn is_time(c: &str) -> bool {
    let b = c.as_bytes();
    b.len() == 8 && b[2] == b':' && b[5] == b':'
}

fn view(s: &TestServer, args: &[&str], screen: (u16, u16), pager: &str) -> String {
    let env = [("CARAPI_PAGER", pager)];
    let t = Screen::open_sized(s, args, &env, screen);
    assert_eq!(t.columns(), screen.1);
    let (code, text) = t.finish();
    assert!(
        code == 0,
        "{args:?} at {screen:?} (pager {pager:?}) exit {code}: {text}"
    );
    text
}

#[test]
fn tables_fit_80_and_60_columns_with_and_without_a_pager() {
    let s = TestServer::new();
    mixed_historico(&s);
    let o = s
        .cmd()
        .args(["recarga", "criar", "500", "--sem-esperar", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let commands: [&[&str]; 11] = [
        &["car", CODES[0]],
        &["car", CODES[3], "--completo"],
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
    let mut errors = vec![];
    for screen in SCREENS {
        for pager in ["", "tail -n +1"] {
            for args in commands {
                let text = view(&s, args, screen, pager);
                for p in problems(&text, screen.1) {
                    errors.push(format!("{args:?} {screen:?} pager {pager:?}: {p}"));
                }
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn historico_keeps_the_key_and_says_what_was_left_out() {
    let s = TestServer::new();
    mixed_historico(&s);
    for screen in SCREENS {
        let text = view(&s, &["historico"], screen, "");
        assert!(text.contains("38521139039"), "{screen:?}: {text}");
        assert!(text.contains(CODES[0]), "{screen:?}: {text}");
        let together = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(together.contains("colunas omitidas"), "{text}");
        assert!(
            together.contains("-o json"),
            "how to see everything: {text}"
        );
    }
}

/// Every command path of the CLI (`car`, `recarga criar`, ...).
fn paths() -> Vec<Vec<String>> {
    fn visit(cmd: &clap::Command, before: &[String], out: &mut Vec<Vec<String>>) {
        for s in cmd.get_subcommands() {
            let mut c = before.to_vec();
            c.push(s.get_name().to_owned());
            out.push(c.clone());
            visit(s, &c, out);
        }
    }
    let mut out = vec![vec![]];
    visit(&carapi_cli::help::command(), &[], &mut out);
    out
}

#[test]
fn every_help_fits_80_and_60_columns_without_breaking_words() {
    let s = TestServer::new();
    let mut errors = vec![];
    for screen in SCREENS {
        for path in paths() {
            for flag in ["--help", "-h"] {
                let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
                args.push(flag);
                let text = view(&s, &args, screen, "");
                for l in text.lines() {
                    if l.chars().count() > usize::from(screen.1) {
                        errors.push(format!("{args:?} {screen:?}: {l}"));
                    }
                }
                if text.contains("carap\n") || text.contains("API carap ") {
                    errors.push(format!("{args:?} {screen:?}: palavra partida"));
                }
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_local_pix_screen_says_how_to_pay() {
    let s = TestServer::new();
    let mut t = Screen::open(&s, &["--local", "recarga", "criar", "500"], &[]);
    t.wait_for("Aguardando o pagamento");
    let screen = t.text();
    assert!(screen.contains("carapi local pagar "), "{screen}");
    assert!(!screen.contains("carapi --local local"), "{screen}");
    t.type_keys("\x03");
    let (code, _) = t.finish();
    assert_eq!(code, 130);
}

#[test]
fn a_second_ctrl_c_in_a_batch_leaves_no_progress_bar() {
    let s = TestServer::new();
    let chaves: String = (0..60).map(|i| format!("DF-5300108-{i:032X}\n")).collect();
    let file_path = write_file(&s.work_dir(), "nao-existem.txt", &chaves);
    let mut t = Screen::open(
        &s,
        &[
            "lote",
            "car",
            file_path.to_str().unwrap(),
            "--saida",
            "r.jsonl",
            "--sim",
        ],
        &[],
    );
    t.wait_for("/60");
    t.type_keys("\x03");
    t.wait_for("interrompendo");
    t.type_keys("\x03");
    let screen = t.final_text();
    assert!(
        !screen.contains("/60"),
        "the bar stayed on the screen:\n{screen}"
    );
}

#[test]
fn the_login_prompt_prints_no_english() {
    let s = TestServer::new();
    let mut t = Screen::open(&s, &["login"], &[("CARAPI_API_KEY", "")]);
    t.wait_for("Chave da API");
    t.type_keys(&format!("{}\r", s.conta.api_key));
    let (code, text) = t.finish();
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("[hidden]"), "{text}");
}
