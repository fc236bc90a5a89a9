//! Every `servir` flag but `--modo-teste` has an environment variable, and the server README's
//! "Production" section lists exactly those variables with their flags (the list after its
//! `serve-env` marker), as `servir --help` shows them.

use std::collections::BTreeSet;

use crate::processo::comando;

/// The marker before the README's list.
const MARCA: &str = "<!-- serve-env:";

/// Each option of `servir --help` with the text of its entry (wrapped lines joined).
fn opcoes_da_ajuda() -> Vec<(String, String)> {
    let out = comando(&["servir", "--help"]).output().unwrap();
    assert!(out.status.success());
    let ajuda = String::from_utf8(out.stdout).unwrap();
    let mut opcoes: Vec<(String, String)> = Vec::new();
    for linha in ajuda.lines() {
        // An option's first line: `      --name` or `  -h, --help` (its text is indented more).
        let inicio = linha
            .strip_prefix("      --")
            .or_else(|| linha.get(6..).filter(|_| linha.starts_with("  -")))
            .map(|r| r.trim_start_matches("--"));
        match inicio {
            Some(resto) => {
                let nome = resto.split([' ', ',']).next().unwrap();
                opcoes.push((format!("--{nome}"), linha.to_owned()));
            }
            None => {
                if let Some((_, texto)) = opcoes.last_mut() {
                    texto.push(' ');
                    texto.push_str(linha.trim());
                }
            }
        }
    }
    opcoes
}

/// The variable in an entry's `[env: NAME=...]`.
fn variavel(texto: &str) -> Option<String> {
    let resto = &texto[texto.find("[env: ")? + "[env: ".len()..];
    Some(resto.split(['=', ']']).next().unwrap().trim().to_owned())
}

/// The README's list: `- `VARIABLE`: `--flag`` lines after the marker.
fn lista_do_readme() -> BTreeSet<(String, String)> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let depois = &readme[readme.find(MARCA).expect("the README marks the list")..];
    depois
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("- `"))
        .map(|l| {
            let partes: Vec<&str> = l.split('`').collect();
            (partes[1].to_owned(), partes[3].to_owned())
        })
        .collect()
}

#[test]
fn every_servir_flag_but_modo_teste_has_a_variable_and_the_readme_lists_them() {
    let opcoes = opcoes_da_ajuda();
    assert!(opcoes.len() > 20, "{opcoes:?}");
    let mut da_ajuda = BTreeSet::new();
    for (flag, texto) in &opcoes {
        match (flag.as_str(), variavel(texto)) {
            ("--help", _) => {}
            ("--modo-teste", v) => assert_eq!(v, None, "--modo-teste stays a flag only"),
            (_, Some(v)) => {
                da_ajuda.insert((v, flag.clone()));
            }
            (_, None) => panic!("{flag} has no environment variable: {texto}"),
        }
    }
    assert!(opcoes.iter().any(|(f, _)| f == "--modo-teste"));
    assert_eq!(lista_do_readme(), da_ajuda);
}
