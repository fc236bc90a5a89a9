//! A load killed half-way (`kill -9` of `carapi-server seed`) is recorded on the base: `serve`
//! says so when it starts and the next `seed` says so before it loads; once a load finishes,
//! nothing is said any more.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_carapi-server");
const WARNING: &str = "não terminou";

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
fn load_in_progress(file: &std::path::Path) -> Option<String> {
    let c = rusqlite::Connection::open(file).ok()?;
    c.query_row(
        "SELECT valor FROM configuracao WHERE chave = 'carga_em_andamento'",
        [],
        |r| r.get(0),
    )
    .ok()
}

/// `serve` on `url` until it listens: what it wrote on stderr before.
fn serve_start(url: &str) -> String {
    let mut child = Command::new(BIN)
        .args(["serve", "--bind", "127.0.0.1:0", "--database", url])
        .arg("--sem-dados-embutidos")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.contains("ouvindo em http://") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    seen
}

#[test]
fn a_killed_seed_is_reported_by_serve_and_by_the_next_seed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("base.db");
    let url = format!("sqlite://{}", file.display());
    // A base that holds records: the next load commits batch by batch.
    let first = seed(&url, "2000", "1");
    assert!(!stderr(&first).contains(WARNING), "{}", stderr(&first));

    let mut child = Command::new(BIN)
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
        if load_in_progress(&file).is_some() {
            child.kill().unwrap();
            break;
        }
        if let Some(s) = child.try_wait().unwrap() {
            panic!("the seed ended ({s}) before it was seen writing");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.wait().unwrap();

    let serve = serve_start(&url);
    assert!(serve.contains(WARNING), "serve said nothing:\n{serve}");
    assert!(
        serve.contains("seed --synthetic 100000 --seed 7"),
        "{serve}"
    );

    let redone = seed(&url, "100000", "7");
    assert!(stderr(&redone).contains(WARNING), "{}", stderr(&redone));
    // Finished: nothing to report any more.
    assert_eq!(load_in_progress(&file), None);
    assert!(!serve_start(&url).contains(WARNING));
    let another = seed(&url, "10", "2");
    assert!(!stderr(&another).contains(WARNING), "{}", stderr(&another));
}
