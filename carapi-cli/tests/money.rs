//! Money in the analyst's second half-hour: nothing is paid for a file that cannot be written,
//! what an output says was charged is what was charged, a batch never resumes into another
//! kind's output, and the help says what 0 means for a limit.

use crate::harness::*;

#[test]
fn recibo_into_a_missing_directory_is_refused_before_paying() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["recibo", CODES[0], "--saida", "/nao/existe/x.pdf"])
        .output()
        .unwrap();
    assert_error(&o, 1, "ES");
    let err = stderr(&o);
    assert!(err.contains("/nao/existe/x.pdf"), "{err}");
    assert!(!err.contains(".part"), "the temporary file's name: {err}");
    assert!(err.contains("nada foi cobrado"), "{err}");
    assert_eq!(s.saldo(), dec("100"), "nothing charged");
    assert!(s.charged().is_empty());
}

#[cfg(unix)]
#[test]
fn recibo_into_a_read_only_directory_is_refused_before_paying() {
    use std::os::unix::fs::PermissionsExt;
    let s = TestServer::new();
    let dir = s.work_dir().join("so-leitura");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::File::create(dir.join("sonda")).is_ok() {
        eprintln!("pulado: o usuário escreve em diretórios somente leitura (root)");
        return;
    }
    let o = s
        .cmd()
        .args(["recibo", CODES[0], "--saida"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_error(&o, 1, "ES");
    assert!(stderr(&o).contains("permissão negada"), "{}", stderr(&o));
    assert_eq!(s.saldo(), dec("100"));
}

#[test]
fn recibo_to_a_file_still_saves_through_the_sdk() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["recibo", CODES[0], "--saida", "r.pdf", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let pdf = std::fs::read(s.work_dir().join("r.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["bytes"], pdf.len());
    let names: Vec<_> = std::fs::read_dir(s.work_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no temporary file left: {names:?}");
    assert_eq!(s.saldo(), dec("89.00"));
}

#[test]
fn geojson_says_a_charged_lookup_was_charged() {
    let s = TestServer::new();
    for args in [
        &["car", CODES[0], "-o", "geojson"][..],
        &["car", CODES[1], "--completo", "-o", "geojson"][..],
    ] {
        let o = s.cmd().args(args).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let p = &v["features"][0]["properties"];
        assert_eq!(p["cobrado"], true, "{args:?}: {p}");
    }
    let o = s
        .cmd()
        .args([
            "car",
            "ZZ-0000000-SANDBOXCARBASICO0000000000000000",
            "-o",
            "geojson",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["features"][0]["properties"]["cobrado"], false, "sandbox");
    assert_eq!(s.saldo(), dec("100") - dec("1.00") - dec("2.30"));
}

fn input(s: &TestServer, name: &str, chaves: &[&str]) -> std::path::PathBuf {
    write_file(&s.work_dir(), name, &format!("{}\n", chaves.join("\n")))
}

#[test]
fn lote_refuses_to_resume_into_another_kinds_output() {
    let s = TestServer::new();
    let file_path = input(&s, "c.txt", &CODES[..2]);
    for output in ["r.jsonl", "r.csv"] {
        let o = s
            .cmd()
            .args(["lote", "car"])
            .arg(&file_path)
            .args(["--saida", output, "--sim"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let before = s.saldo();
        let o = s
            .cmd()
            .args(["lote", "completo"])
            .arg(&file_path)
            .args(["--saida", output, "--sim"])
            .output()
            .unwrap();
        assert_error(&o, 2, "USO");
        let err = stderr(&o);
        assert!(
            err.contains("lote car") && err.contains("nada foi cobrado"),
            "{err}"
        );
        assert_eq!(s.saldo(), before, "{output}: nothing charged");
    }
}

#[test]
fn lote_summary_counts_the_current_input_only() {
    let s = TestServer::new();
    let all_paths = input(&s, "todos.txt", &CODES);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&all_paths)
        .args(["--saida", "r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let two = input(&s, "dois.txt", &CODES[..2]);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&two)
        .args(["--saida", "r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("2 chave(s) já respondida(s)"), "{err}");
    assert!(err.contains("2 encontrado(s)"), "{err}");
    assert!(!err.contains("5 encontrado(s)"), "{err}");
    assert_eq!(s.charged().len(), 5);
}

#[test]
fn limites_set_help_says_zero_removes_the_limit() {
    let s = TestServer::new();
    let o = s.cmd().args(["limites", "set", "--help"]).output().unwrap();
    assert!(o.status.success());
    let out = stdout(&o);
    assert_eq!(out.matches("0 ou `sem` = sem limite").count(), 2, "{out}");
}
