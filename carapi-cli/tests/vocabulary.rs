//! One vocabulary: Portuguese flags and commands (the English spellings kept as hidden aliases),
//! `carapi help CMD`, suggestions, no English from clap in help or man pages, and `-v` a person
//! reads.

use crate::harness::*;

const ENGLISH: [&str; 12] = [
    "Possible values",
    "May also be specified",
    "[default:",
    "[env:",
    "Print help",
    "Print version",
    "Usage:",
    "Options:",
    "Arguments:",
    "Commands:",
    "[hidden]",
    "-help(1)",
];

#[test]
fn man_pages_and_help_have_no_english_from_clap() {
    let s = TestServer::new();
    let dir = s.work_dir().join("man");
    let o = s.cmd().args(["man", "--dir"]).arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut errors = vec![];
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        for en in ENGLISH {
            if text.contains(en) {
                errors.push(format!("{}: {en}", p.display()));
            }
        }
    }
    for args in [
        &["--ajuda"][..],
        &["recarga", "criar", "-h"],
        &["lote", "--help"],
    ] {
        let o = s.cmd().args(args).output().unwrap();
        let text = stdout(&o);
        for en in ENGLISH {
            if text.contains(en) {
                errors.push(format!("{args:?}: {en}"));
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn help_subcommand_and_suggestions() {
    let s = TestServer::new();
    for args in [
        &["help", "car"][..],
        &["ajuda", "recarga", "criar"],
        &["help", "limites", "definir"],
        &["recarga", "help", "criar"],
    ] {
        let o = s.cmd().args(args).output().unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("Uso: carapi"),
            "{args:?}: {}",
            stdout(&o)
        );
    }
    let o = s.cmd().args(["carr", CODES[0]]).output().unwrap();
    assert_error(&o, 2, "USO");
    assert!(
        stderr(&o).contains("você quis dizer `car`?"),
        "{}",
        stderr(&o)
    );
    let o = s
        .cmd()
        .args(["--local", "recarga", "500"])
        .output()
        .unwrap();
    assert_error(&o, 2, "USO");
    assert!(
        stderr(&o).contains("carapi --local recarga criar 500"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn portuguese_flags_with_the_english_kept_as_hidden_aliases() {
    let s = TestServer::new();
    for (pt, en) in [
        (
            &[
                "historico",
                "--por-pagina",
                "5",
                "--pagina",
                "1",
                "-o",
                "json",
            ][..],
            &["historico", "--size", "5", "--page", "1", "-o", "json"][..],
        ),
        (
            &["--silencioso", "--sem-cor", "saldo"],
            &["--quiet", "--no-color", "saldo"],
        ),
        (
            &["limites", "definir", "--diario", "sem"],
            &["limites", "set", "--diario", "none"],
        ),
        (&["config", "mostrar"], &["config", "show"]),
    ] {
        for args in [pt, en] {
            let o = s.cmd().args(args).output().unwrap();
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        }
    }
    let o = s.cmd().args(["historico", "--ajuda"]).output().unwrap();
    let help = stdout(&o);
    assert!(
        help.contains("--por-pagina") && !help.contains("--size"),
        "{help}"
    );
}

#[test]
fn verbose_is_an_http_summary_a_person_reads() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["-v", "car", CODES[0], "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("GET /v1/car/{codigoCar} → 200 em ") && err.contains("(cobrada"),
        "{err}"
    );
    assert!(!err.contains("DEBUG") && !err.contains(CODES[0]), "{err}");
}

#[test]
fn zsh_completion_labels_positionals_in_portuguese() {
    // zsh shows a positional's id beside its help while completing (`tipo -- Tipo de consulta`);
    // the fields behind them have English names, their ids stay what users read.
    let s = TestServer::new();
    let o = s.cmd().args(["completar", "zsh"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let script = stdout(&o);
    for label in ["':tipo -- ", "':arquivo -- ", "':chave -- ", "':codigo -- "] {
        assert!(script.contains(label), "{label} missing");
    }
    for label in ["':kind -- ", "':file -- ", "':key -- "] {
        assert!(!script.contains(label), "{label} shown");
    }
}

/// Leftovers of the analyst's third half-hour: `carapi cra` suggests `car`; `config definir
/// idade-maxima 90` answers in Portuguese; `acervo expurgar` takes `-s` as `lote` does; the
/// manual names subcommands as they are typed and lists an option's values one per line.
#[test]
fn suggestions_messages_short_flags_and_man_pages() {
    let s = TestServer::new();
    let o = s.cmd().args(["cra"]).output().unwrap();
    assert!(
        stderr(&o).contains("você quis dizer `car`?"),
        "{}",
        stderr(&o)
    );
    let o = s
        .cmd()
        .args(["config", "definir", "idade-maxima", "90"])
        .output()
        .unwrap();
    assert_error(&o, 2, "IDADE_MAXIMA_INVALIDA");
    assert!(!stderr(&o).contains("time unit"), "{}", stderr(&o));
    let o = s
        .cmd()
        .args(["acervo", "expurgar", "--ajuda"])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("-s, --sim"), "{}", stdout(&o));

    let o = s.cmd().args(["man"]).output().unwrap();
    let page = stdout(&o);
    assert!(!page.contains("carapi\\-lote"), "typed names: {page}");
    assert!(page.contains("carapi lote"), "{page}");
    let dir = s.dir.path().join("man");
    let o = s.cmd().args(["man", "--dir"]).arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let batch = std::fs::read_to_string(dir.join("carapi-lote.1")).unwrap();
    assert!(
        batch.contains(".B carapi lote") || batch.contains("\\fBcarapi lote\\fR"),
        "{batch}"
    );
    // `-o` lists its values one per line (a roff list), not glued into the help's paragraph.
    assert!(batch.contains("Valores possíveis:"), "{batch}");
    assert!(batch.contains(".IP"), "{batch}");
    assert!(!batch.contains("Possible values"), "{batch}");
}
