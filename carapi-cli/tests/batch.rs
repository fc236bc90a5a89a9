//! `lote`: confirmation, output formats, resume without paying twice, stop on 402, receipts.

use std::collections::HashMap;

use carapi_service::NovaConta;

use crate::harness::*;

fn input(s: &TestServer, chaves: &[&str]) -> std::path::PathBuf {
    let mut text = String::from("codigo_car\n");
    for c in chaves {
        text.push_str(c);
        text.push('\n');
    }
    write_file(&s.work_dir(), "entrada.csv", &text)
}

fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn tally(v: &[String]) -> HashMap<&str, usize> {
    let mut m = HashMap::new();
    for k in v {
        *m.entry(k.as_str()).or_default() += 1;
    }
    m
}

#[test]
fn refuses_without_terminal_or_yes_and_sends_nothing() {
    let s = TestServer::new();
    let file_path = input(&s, &CODES[..2]);
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.jsonl"])
        .output()
        .unwrap();
    assert_error(&o, 2, "CONFIRMACAO_NECESSARIA");
    let err = stderr(&o);
    assert!(
        err.contains("2 consulta(s)")
            && err.contains("custo máximo R$ 2,00")
            && err.contains("saldo R$ 100,00"),
        "{err}"
    );
    assert!(!s.work_dir().join("r.jsonl").exists());
    assert_eq!(s.saldo(), dec("100"));
}

#[test]
fn jsonl_batch_with_duplicates_invalid_and_sandbox() {
    let s = TestServer::new();
    let dup = CODES[0].to_lowercase();
    let file_path = input(
        &s,
        &[
            CODES[0],
            &dup,
            "XX-999",
            CODES[1],
            "DF-5300108-00000000000000000000000000000000",
            "ZZ-0000000-SANDBOXCARBASICO0000000000000000",
        ],
    );
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("linha 4: chave inválida \"XX-999\""), "{err}");
    assert!(
        err.contains("custo máximo R$ 3,00"),
        "sandbox keys are free: {err}"
    );
    assert!(
        err.contains("Resumo: 3 encontrado(s), 1 não encontrado(s), 1 inválido(s), 0 erro(s); total cobrado R$ 2,00."),
        "{err}"
    );
    let l = lines(&s.work_dir().join("r.jsonl"));
    assert_eq!(l.len(), 4);
    let found: Vec<_> = l.iter().filter(|r| r["status"] == "encontrado").collect();
    assert_eq!(found.len(), 3);
    assert!(
        found
            .iter()
            .all(|r| r["resposta"]["dados"]["codigoCar"] == r["chave"])
    );
    assert!(
        l.iter()
            .any(|r| r["status"] == "nao_encontrado" && r["codigoErro"] == "CAR_NAO_ENCONTRADO")
    );
    assert_eq!(s.saldo(), dec("98.00"));

    // Rerun: everything answered, nothing charged.
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.jsonl"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "no confirmation needed when nothing is sent: {}",
        stderr(&o)
    );
    assert_eq!(s.saldo(), dec("98.00"));
    assert_eq!(lines(&s.work_dir().join("r.jsonl")).len(), 4);
}

#[test]
fn max_custo_stops_and_a_rerun_resumes_without_a_second_charge() {
    let s = TestServer::new();
    let file_path = input(&s, &CODES);
    let o = s
        .cmd()
        .args(["lote", "completo"])
        .arg(&file_path)
        .args(["--saida", "r.csv", "--sim", "--max-custo", "5"])
        .output()
        .unwrap();
    assert_error(&o, 1, "CUSTO_MAXIMO");
    assert!(stderr(&o).contains("mesmo --saida"), "{}", stderr(&o));
    let text = std::fs::read_to_string(s.work_dir().join("r.csv")).unwrap();
    assert!(
        text.starts_with(
            "\u{feff}Linha;Chave;Situação;Repetida;HTTP;Código do erro;Mensagem;Cobrado;Preço (R$);Arquivo;"
        ),
        "{text}"
    );
    let first = s.charged();
    assert_eq!(first.len(), 2, "5.00 allows two lookups at 2.30");
    assert_eq!(s.saldo(), dec("100") - dec("4.60"));

    let o = s
        .cmd()
        .args(["lote", "completo"])
        .arg(&file_path)
        .args(["--saida", "r.csv", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("2 chave(s) já respondida(s)"),
        "{}",
        stderr(&o)
    );
    // The summary of a resumed batch counts the whole batch, not only this run.
    assert!(stderr(&o).contains("5 encontrado(s)"), "{}", stderr(&o));
    let all_charged = s.charged();
    assert_eq!(all_charged.len(), 5);
    assert!(
        tally(&all_charged).values().all(|&n| n == 1),
        "each key charged once: {all_charged:?}"
    );
    assert_eq!(s.saldo(), dec("100") - dec("11.50"));
    let bytes = std::fs::read(s.work_dir().join("r.csv")).unwrap();
    let mut rd = csv::ReaderBuilder::new()
        .delimiter(b';')
        .from_reader(&bytes[3..]);
    let rows: Vec<_> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 5, "one row per input line");
    assert!(
        rows.iter()
            .all(|r| &r[2] == "encontrado" && &r[7] == "sim" && &r[8] == "2,3"),
        "{rows:?}"
    );
}

#[cfg(unix)]
#[test]
fn killed_batch_resumes_and_no_key_is_charged_twice() {
    let s = TestServer::new();
    let all_paths = [
        CODES[0],
        CODES[1],
        CODES[2],
        CODES[3],
        CODES[4],
        "DF-5300108-277959445CC745B68C065E77AB1F2B42",
        "DF-5300108-4AA1FE72BF3045E48DD76F4D4FBD978B",
        "DF-5300108-4BCD7B8455CA4680A0B8FEEA5CA11E78",
        "DF-5300108-4DC991CE146D4B03A9E1BC5E97B5D199",
        "DF-5300108-62EA556F9D484A9880D66ABF4587811A",
        "DF-5300108-83A362A132A44DDDB6B56D5B70220809",
        "DF-5300108-D1D4E6B4201C4408BB9109F4A5665083",
        "MT-5107925-70A5392970524178AE478505B06CB50D",
        "MT-5107925-C01C0943D53E49B4A41E1CA173FCDA04",
        "MT-5107925-CF5748D260D84C5BB9CB97A7E77E3053",
        "MT-5107925-D6C8D851BCE54F42A51A5DC123B0108B",
    ];
    let file_path = input(&s, &all_paths);
    let output = s.work_dir().join("r.jsonl");
    let mut child = s
        .process()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.jsonl", "--sim"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it as soon as the first answer is on disk.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_to_string(&output)
        .map(|t| t.lines().count())
        .unwrap_or(0)
        == 0
    {
        assert!(std::time::Instant::now() < deadline, "no answer written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let written: Vec<String> = std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| v["chave"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        !written.is_empty() && written.len() < all_paths.len(),
        "{written:?}"
    );

    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let charged = s.charged();
    let n = tally(&charged);
    for k in &written {
        assert_eq!(
            n[k.as_str()],
            1,
            "{k} was answered before the kill and charged again"
        );
    }
    // Keys in flight at the kill (charged, answer lost) are found in the history through the
    // journal and not bought again: every key is charged exactly once.
    for k in &all_paths {
        assert_eq!(n.get(k).copied(), Some(1), "{k}: {charged:?}");
    }
    assert!(
        !s.work_dir().join(".r.jsonl.enviando").exists(),
        "journal removed after a clean run"
    );
    assert!(all_paths.iter().all(|k| n.contains_key(k)));
    let l = lines(&output);
    let mut chaves: Vec<_> = l
        .iter()
        .map(|v| v["chave"].as_str().unwrap().to_owned())
        .collect();
    chaves.sort();
    chaves.dedup();
    assert_eq!(chaves.len(), all_paths.len());
}

#[test]
fn stops_on_402_and_says_how_to_top_up() {
    let s = TestServer::with(NovaConta {
        saldo: dec("2.50"),
        ..NovaConta::default()
    });
    let file_path = input(&s, &CODES[..3]);
    let o = s
        .cmd()
        .args(["lote", "completo"])
        .arg(&file_path)
        .args(["--saida", "r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert_error(&o, 5, "SALDO_INSUFICIENTE");
    let err = stderr(&o);
    assert!(err.contains("carapi recarga criar"), "{err}");
    assert!(
        err.contains("o saldo cobre cerca de 1 consulta(s)"),
        "{err}"
    );
    let l = lines(&s.work_dir().join("r.jsonl"));
    assert_eq!(l.iter().filter(|r| r["status"] == "encontrado").count(), 1);
    assert!(
        l.iter().all(|r| r["status"] != "erro"),
        "a 402 is not recorded as an answer: {l:?}"
    );
    assert_eq!(s.saldo(), dec("0.20"));
}

#[test]
fn proprietario_batch_to_stdout_as_csv() {
    let s = TestServer::new();
    let file_path = write_file(
        &s.work_dir(),
        "docs.txt",
        "00000000000\n000.000.000-00\n11111111111\n00000000000000\n",
    );
    let o = s
        .cmd()
        .args(["lote", "proprietario"])
        .arg(&file_path)
        .args(["--sim", "-o", "csv"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.starts_with('\u{feff}'), "no BOM on stdout");
    let mut rd = csv::ReaderBuilder::new()
        .delimiter(b';')
        .from_reader(out.as_bytes());
    assert_eq!(
        &rd.headers().unwrap()[0],
        "Chave",
        "the titles: -o csv is for people"
    );
    let rows: Vec<_> = rd.records().map(|r| r.unwrap()).collect();
    let chaves: std::collections::BTreeSet<&str> = rows.iter().map(|r| &r[0]).collect();
    assert_eq!(chaves.len(), 3, "{out}");
    assert!(
        rows.iter()
            .any(|r| &r[0] == "11111111111" && &r[1] == "nao_encontrado")
    );
    assert!(
        rows.iter().all(|r| &r[5] == "não"),
        "sandbox is free: {out}"
    );
}

#[test]
fn recibo_batch_saves_pdfs_next_to_the_output_and_never_pays_twice() {
    let s = TestServer::new();
    let file_path = input(&s, &CODES[..2]);
    std::fs::create_dir(s.work_dir().join("res")).unwrap();
    let o = s
        .cmd()
        .args(["lote", "recibo"])
        .arg(&file_path)
        .args(["--saida", "res/r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    for c in &CODES[..2] {
        assert!(
            std::fs::read(s.work_dir().join("res").join(format!("{c}.pdf")))
                .unwrap()
                .starts_with(b"%PDF")
        );
    }
    assert_eq!(s.saldo(), dec("78.00"));
    // Lose the output file: the PDFs alone keep a rerun from paying again.
    std::fs::remove_file(s.work_dir().join("res/r.jsonl")).unwrap();
    let o = s
        .cmd()
        .args(["lote", "recibo"])
        .arg(&file_path)
        .args(["--saida", "res/r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.saldo(), dec("78.00"));
    assert_eq!(lines(&s.work_dir().join("res/r.jsonl")).len(), 2);
}

#[test]
fn journal_of_a_crashed_run_keeps_a_paid_key_from_being_bought_again() {
    let s = TestServer::new();
    let file_path = input(&s, &CODES[..3]);
    // A crashed run: CODIGOS[0] was sent and charged, CODIGOS[1] was journalled but never
    // reached the server; neither answer was written.
    let before = chrono::Utc::now() - chrono::Duration::seconds(1);
    let c = s.client();
    s.rt.block_on(async { c.car(CODES[0]).await.unwrap() });
    std::fs::write(s.work_dir().join("r.jsonl"), "").unwrap();
    std::fs::write(
        s.work_dir().join(".r.jsonl.enviando"),
        format!(
            "{}\t{}\n{}\t{}\n",
            CODES[0],
            before.to_rfc3339(),
            CODES[1],
            before.to_rfc3339()
        ),
    )
    .unwrap();
    let o = s
        .cmd()
        .args(["lote", "car"])
        .arg(&file_path)
        .args(["--saida", "r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 chave(s) foram cobradas numa execução interrompida"),
        "{}",
        stderr(&o)
    );
    let charged = s.charged();
    let n = tally(&charged);
    assert_eq!(n.get(CODES[0]).copied(), Some(1), "not bought twice");
    assert_eq!(n.get(CODES[1]).copied(), Some(1), "unpaid key fetched");
    assert_eq!(n.get(CODES[2]).copied(), Some(1));
    let l = lines(&s.work_dir().join("r.jsonl"));
    let rec = l.iter().find(|r| r["chave"] == CODES[0]).unwrap();
    assert_eq!(rec["status"], "encontrado");
    assert_eq!(rec["cobrado"], true);
    assert!(!s.work_dir().join(".r.jsonl.enviando").exists());
}

/// Two runs of one batch on one `--saida` at the same time: the second is refused at once,
/// before any request, naming the first's process id; the first (waiting at its prompt, so
/// both surely overlap) then pays the set once.
#[cfg(unix)]
#[test]
fn two_runs_on_one_saida_one_is_refused_and_one_set_is_paid() {
    use crate::screen::Screen;
    let s = TestServer::new();
    let file_path = input(&s, &CODES);
    let path = file_path.to_str().unwrap();
    let mut first = Screen::open(&s, &["lote", "car", path, "--saida", "par.csv"], &[]);
    first.wait_for("[s/N]");
    let pid = first.pid();
    assert_eq!(
        std::fs::read_to_string(s.work_dir().join(".par.csv.trava")).unwrap(),
        format!("{pid}\n"),
        "the lock file names its holder"
    );
    let o = s
        .cmd()
        .args([
            "lote",
            "car",
            path,
            "--saida",
            "par.csv",
            "--sim",
            "--comprar",
        ])
        .output()
        .unwrap();
    assert_error(&o, 1, "SAIDA_EM_USO");
    let err = stderr(&o);
    assert!(
        err.contains(&format!("outra execução do carapi (PID {pid})")),
        "{err}"
    );
    assert!(!err.contains("Lote:"), "refused before any request: {err}");
    assert!(s.charged().is_empty());
    first.type_keys("s\r");
    let (code, screen) = first.finish();
    assert_eq!(code, 0, "{screen}");
    let charged = s.charged();
    assert_eq!(charged.len(), CODES.len(), "one paid set: {charged:?}");
    assert!(tally(&charged).values().all(|&n| n == 1), "{charged:?}");
    assert_eq!(s.saldo(), dec("95.00"));
}

/// A run killed (SIGKILL) while it holds the lock leaves nothing held: the OS releases it, and
/// the next run goes on.
#[cfg(unix)]
#[test]
fn a_killed_run_never_leaves_the_saida_locked() {
    use crate::screen::Screen;
    let s = TestServer::new();
    let file_path = input(&s, &CODES[..2]);
    let path = file_path.to_str().unwrap();
    let first = Screen::open(&s, &["lote", "car", path, "--saida", "r.jsonl"], &[]);
    first.wait_for("[s/N]");
    first.kill();
    assert!(s.work_dir().join(".r.jsonl.trava").exists());
    let o = s
        .cmd()
        .args(["lote", "car", path, "--saida", "r.jsonl", "--sim"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.charged().len(), 2);
}
