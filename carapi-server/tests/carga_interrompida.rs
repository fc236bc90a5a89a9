//! A load killed half-way (`kill -9` of `carapi-server seed`) is recorded on the base: `serve`
//! says so when it starts and the next `seed` says so before it loads; once a load finishes,
//! nothing is said any more.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_carapi-server");
const AVISO: &str = "não terminou";

fn seed(url: &str, n: &str, seed_of: &str) -> Output {
    let out = Command::new(BIN)
        .args([
            "seed",
            "--synthetic",
            n,
            "--seed",
            seed_of,
            "--sem-progresso",
        ])
        .args(["--database", url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The base's record of a load in progress, if it can be read now.
fn carga_em_andamento(file: &std::path::Path) -> Option<String> {
    let c = rusqlite::Connection::open(file).ok()?;
    c.query_row(
        "SELECT valor FROM configuracao WHERE chave = 'carga_em_andamento'",
        [],
        |r| r.get(0),
    )
    .ok()
}

/// `serve` on `url` until it listens: what it wrote on stderr before.
fn inicio_de_serve(url: &str) -> String {
    let mut filho = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--database", url])
        .arg("--sem-dados-embutidos")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut visto = String::new();
    for linha in BufReader::new(filho.stderr.take().unwrap()).lines() {
        let linha = linha.unwrap();
        visto.push_str(&linha);
        visto.push('\n');
        if linha.contains("ouvindo em http://") {
            break;
        }
    }
    let _ = filho.kill();
    let _ = filho.wait();
    visto
}

#[test]
fn a_killed_seed_is_reported_by_serve_and_by_the_next_seed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("base.db");
    let url = format!("sqlite://{}", file.display());
    // A base that holds records: the next load commits batch by batch.
    let primeira = seed(&url, "2000", "1");
    assert!(!stderr(&primeira).contains(AVISO), "{}", stderr(&primeira));

    let mut filho = Command::new(BIN)
        .args([
            "seed",
            "--synthetic",
            "100000",
            "--seed",
            "7",
            "--sem-progresso",
        ])
        .args(["--database", &url])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed as soon as it is writing.
    loop {
        if carga_em_andamento(&file).is_some() {
            filho.kill().unwrap();
            break;
        }
        if let Some(s) = filho.try_wait().unwrap() {
            panic!("the seed ended ({s}) before it was seen writing");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    filho.wait().unwrap();

    let serve = inicio_de_serve(&url);
    assert!(serve.contains(AVISO), "serve said nothing:\n{serve}");
    assert!(
        serve.contains("seed --synthetic 100000 --seed 7"),
        "{serve}"
    );

    let refeita = seed(&url, "100000", "7");
    assert!(stderr(&refeita).contains(AVISO), "{}", stderr(&refeita));
    // Finished: nothing to report any more.
    assert_eq!(carga_em_andamento(&file), None);
    assert!(!inicio_de_serve(&url).contains(AVISO));
    let outra = seed(&url, "10", "2");
    assert!(!stderr(&outra).contains(AVISO), "{}", stderr(&outra));
}
