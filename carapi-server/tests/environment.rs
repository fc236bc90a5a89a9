//! Every `servir` flag but `--modo-teste` has an environment variable, and the server README's
//! "Production" section lists exactly those variables with their flags (the list after its
//! `serve-env` marker), as `servir --help` shows them.

use std::collections::BTreeSet;

use crate::server_process::command;

/// The marker before the README's list.
const MARK: &str = "<!-- serve-env:";

/// Each option of `servir --help` with the text of its entry (wrapped lines joined).
fn help_options() -> Vec<(String, String)> {
    let out = command(&["servir", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    let mut options: Vec<(String, String)> = Vec::new();
    for line in help.lines() {
        // An option's first line: `      --name` or `  -h, --help` (its text is indented more).
        let start = line
            .strip_prefix("      --")
            .or_else(|| line.get(6..).filter(|_| line.starts_with("  -")))
            .map(|r| r.trim_start_matches("--"));
        match start {
            Some(rest) => {
                let name = rest.split([' ', ',']).next().unwrap();
                options.push((format!("--{name}"), line.to_owned()));
            }
            None => {
                if let Some((_, text)) = options.last_mut() {
                    text.push(' ');
                    text.push_str(line.trim());
                }
            }
        }
    }
    options
}

/// The variable in an entry's `[env: NAME=...]`.
fn variable(text: &str) -> Option<String> {
    let rest = &text[text.find("[env: ")? + "[env: ".len()..];
    Some(rest.split(['=', ']']).next().unwrap().trim().to_owned())
}

/// The README's list: `- `VARIABLE`: `--flag`` lines after the marker.
fn readme_list() -> BTreeSet<(String, String)> {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let depois = &readme[readme.find(MARK).expect("the README marks the list")..];
    depois
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("- `"))
        .map(|l| {
            let parts: Vec<&str> = l.split('`').collect();
            (parts[1].to_owned(), parts[3].to_owned())
        })
        .collect()
}

#[test]
fn every_servir_flag_but_modo_teste_has_a_variable_and_the_readme_lists_them() {
    let options = help_options();
    assert!(options.len() > 20, "{options:?}");
    let mut from_help = BTreeSet::new();
    for (flag, text) in &options {
        match (flag.as_str(), variable(text)) {
            ("--help", _) => {}
            ("--modo-teste", v) => assert_eq!(v, None, "--modo-teste stays a flag only"),
            (_, Some(v)) => {
                from_help.insert((v, flag.clone()));
            }
            (_, None) => panic!("{flag} has no environment variable: {text}"),
        }
    }
    assert!(options.iter().any(|(f, _)| f == "--modo-teste"));
    assert_eq!(readme_list(), from_help);
}
