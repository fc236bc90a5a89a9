//! `carapi vigiar` against the test double: a list archived, the double's clock moved past the
//! maximum age and one record's owners changed; only the stale entries are bought (the balance
//! debited exactly that many), the change is printed field by field, the exit status says
//! "changed" (10); the ceiling stops the purchases; nothing changed exits 0.

use std::time::Duration;

use assert_cmd::Command;
use carapi_sdk::Client;
use carapi_test_double::{ContaCriada, ImovelChange, OwnerChange, TestServer as Double};
use rust_decimal::Decimal;
use tempfile::TempDir;

use crate::harness::{CODES, dec, stderr, stdout};

/// The price of a complete lookup (current table).
const COMPLETO: &str = "2.30";

/// The double, one account, and a home for the CLI with the archive configured.
struct Watch {
    rt: tokio::runtime::Runtime,
    srv: Double,
    conta: ContaCriada,
    dir: TempDir,
}

impl Watch {
    fn new() -> Self {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (srv, conta) = rt.block_on(async {
            let srv = Double::start().await.unwrap();
            let conta = srv.conta().saldo(dec("100")).create().await.unwrap();
            (srv, conta)
        });
        let w = Watch {
            rt,
            srv,
            conta,
            dir: tempfile::tempdir().unwrap(),
        };
        for (k, v) in [
            ("acervo", "padrao"),
            ("finalidade", "monitoramento de fornecedores"),
            ("base-legal", "interesse-legitimo"),
        ] {
            let o = w.cmd().args(["config", "definir", k, v]).output().unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
        }
        w
    }

    fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("carapi").unwrap();
        for v in ["CARAPI_LOCAL", "NO_COLOR", "RUST_LOG", "CARAPI_TESTE"] {
            c.env_remove(v);
        }
        c.env("CARAPI_CONFIG_DIR", self.dir.path().join("config"))
            .env("CARAPI_DATA_DIR", self.dir.path().join("data"))
            .env("CARAPI_KEYRING", "off")
            .env("CARAPI_BASE_URL", self.srv.base_url())
            .env("CARAPI_API_KEY", &self.conta.api_key)
            .current_dir(self.dir.path())
            .timeout(Duration::from_secs(120));
        c
    }

    fn saldo(&self) -> Decimal {
        self.rt
            .block_on(self.srv.conta_state(&self.conta))
            .unwrap()
            .saldo
    }

    fn list(&self, codes: &[&str]) -> std::path::PathBuf {
        let p = self.dir.path().join("lista.csv");
        let mut text = "municipio;cod_imovel\n".to_owned();
        for c in codes {
            text.push_str(&format!("Brasília;{c}\n"));
        }
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Buys `code`'s complete answer through the archive.
    fn archive(&self, code: &str) {
        let o = self
            .cmd()
            .args(["car", code, "--completo", "-o", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }

    /// When each code's newest archived complete answer was bought.
    fn bought_at(&self, code: &str) -> chrono::DateTime<chrono::Utc> {
        let o = self
            .cmd()
            .args(["acervo", "listar", "-o", "json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let at = v
            .as_array()
            .unwrap()
            .iter()
            // The entry's names in the archive's JSON, before and after its camelCase renames.
            .filter(|e| e["chave"] == code && e["operacao"] == "car_completo")
            .filter_map(|e| e["compradoEm"].as_str())
            .max()
            .unwrap_or_else(|| panic!("{code} archived"))
            .to_owned();
        chrono::DateTime::parse_from_rfc3339(&at).unwrap().to_utc()
    }

    fn client(&self) -> Client {
        self.srv.client(&self.conta).unwrap()
    }
}

#[test]
fn a_changed_owner_is_printed_only_stale_entries_are_bought_and_the_exit_says_changed() {
    let w = Watch::new();
    // Three codes archived: two first, the third a moment later (so it can be the fresh one).
    w.archive(CODES[0]);
    w.archive(CODES[1]);
    std::thread::sleep(Duration::from_millis(1200));
    w.archive(CODES[2]);
    let fresh_at = w.bought_at(CODES[2]);
    assert!(fresh_at - w.bought_at(CODES[1]) > chrono::Duration::milliseconds(1000));
    let before = w.saldo();
    assert_eq!(before, dec("100") - dec(COMPLETO) * dec("3"));

    // 30 days later for the double (its answers' dataConsulta) and for the CLI's ages: the two
    // first entries are past 30 days, the third half a second short of it.
    let month = Duration::from_secs(30 * 24 * 3600);
    w.rt.block_on(w.srv.advance(month)).unwrap();
    let now =
        fresh_at + chrono::Duration::from_std(month).unwrap() - chrono::Duration::milliseconds(500);
    let old_owners =
        w.rt.block_on(w.client().car_completo(CODES[0]))
            .unwrap()
            .into_value()
            .dados
            .proprietarios_cpfs
            .unwrap();
    w.rt.block_on(w.srv.change_imovel(
        CODES[0],
        ImovelChange {
            proprietarios: Some(vec![OwnerChange::new(
                "111.444.777-35",
                "Fulana Nova Exemplo",
            )]),
            ..ImovelChange::default()
        },
    ))
    .unwrap();
    let before = w.saldo(); // the plain lookup above was charged too

    // A fourth code never archived: bought and reported as new.
    let list = w.list(&[CODES[0], CODES[1], CODES[2], CODES[3]]);
    let o = w
        .cmd()
        .env("CARAPI_TESTE", format!("agora={}", now.to_rfc3339()))
        .args(["vigiar"])
        .arg(&list)
        .args(["--teto", "100", "--idade-maxima", "30d"])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(10), "{out}\n{}", stderr(&o));
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    assert!(out.contains(&format!("{}  MUDOU", CODES[0])), "{out}");
    // Times a person reads are Brasília's (no "UTC", no RFC 3339 in the table).
    assert!(
        !out.contains("UTC") && !out.contains("T0") && !out.contains("T1"),
        "{out}"
    );
    assert!(
        out.contains("+ 111.444.777-35 Fulana Nova Exemplo"),
        "{out}"
    );
    let first_old = old_owners.split(", ").next().unwrap();
    assert!(out.contains(&format!("- {first_old}")), "{out}");
    // A status too long for the code's line goes on the next one, indented.
    let flat = out.replace("\n  ", "  ");
    assert!(
        flat.contains(&format!("{}  sem mudança", CODES[1])),
        "{out}"
    );
    assert!(
        flat.contains(&format!("{}  recente no acervo", CODES[2])),
        "{out}"
    );
    assert!(flat.contains(&format!("{}  novo", CODES[3])), "{out}");
    assert!(
        stderr(&o).contains("4 código(s): 3 comprado(s)"),
        "{}",
        stderr(&o)
    );
    // Bought: the two stale entries and the new code; not the fresh one.
    assert_eq!(w.saldo(), before - dec(COMPLETO) * dec("3"));

    // Nothing changed since: everything bought again (--comprar), all equal, exit 0.
    let before = w.saldo();
    let o = w
        .cmd()
        .args(["vigiar", "-o", "json", "--comprar"])
        .arg(&list)
        .args(["--teto", "100"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let situacoes: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["situacao"].as_str().unwrap())
        .collect();
    assert_eq!(situacoes, ["igual"; 4]);
    assert_eq!(w.saldo(), before - dec(COMPLETO) * dec("4"));
}

#[test]
fn the_ceiling_stops_the_purchases_and_says_so() {
    let w = Watch::new();
    for c in &CODES[..3] {
        w.archive(c);
    }
    let before = w.saldo();
    let month = Duration::from_secs(31 * 24 * 3600);
    w.rt.block_on(w.srv.advance(month)).unwrap();
    w.rt.block_on(w.srv.change_imovel(
        CODES[2],
        ImovelChange {
            area_total_ha: Some(dec("123.4567")),
            ..ImovelChange::default()
        },
    ))
    .unwrap();
    let now = chrono::Utc::now() + chrono::Duration::from_std(month).unwrap();
    let list = w.list(&CODES[..3]);
    // R$ 5,00 buys two complete lookups (R$ 2,30 each): the third, the changed one, waits.
    let o = w
        .cmd()
        .env("CARAPI_TESTE", format!("agora={}", now.to_rfc3339()))
        .args(["vigiar", "-o", "csv"])
        .arg(&list)
        .args(["--teto", "5"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(11),
        "nothing changed in what was checked, but not everything was: {err}"
    );
    assert!(
        err.contains("teto de R$ 5,00 atingido: 1 código(s)"),
        "{err}"
    );
    assert_eq!(w.saldo(), before - dec(COMPLETO) * dec("2"));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert!(
        rows[0].contains("Código CAR;Situação;Campo;Antes;Depois"),
        "-o csv is for people: {out}"
    );
    assert!(rows[1].starts_with(&format!("{};igual", CODES[0])), "{out}");
    assert!(rows[2].starts_with(&format!("{};igual", CODES[1])), "{out}");
    assert!(
        rows[3].starts_with(&format!("{};nao_comprado", CODES[2])),
        "{out}"
    );

    // A run over the one left buys it and sees the new area (exit 10).
    let list = w.list(&CODES[2..3]);
    let o = w
        .cmd()
        .env("CARAPI_TESTE", format!("agora={}", now.to_rfc3339()))
        .args(["vigiar", "-o", "json"])
        .arg(&list)
        .args(["--teto", "5", "--idade-maxima", "30d"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(10), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let changed = &v[0];
    assert_eq!(changed["codigoCar"], CODES[2]);
    assert_eq!(changed["situacao"], "mudou");
    assert_eq!(changed["mudancas"][0]["campo"], "areaTotalHa");
    assert_eq!(changed["mudancas"][0]["depois"], "123,4567");
}

#[test]
fn without_an_archive_vigiar_is_refused_before_any_request() {
    let w = Watch::new();
    let o = w
        .cmd()
        .args(["config", "definir", "acervo", "desligado"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let list = w.list(&CODES[..1]);
    let o = w
        .cmd()
        .args(["vigiar"])
        .arg(&list)
        .args(["--teto", "5"])
        .output()
        .unwrap();
    crate::harness::assert_error(&o, 2, "SEM_ACERVO");
    assert_eq!(w.saldo(), dec("100"));
}

/// `--teto 1` below one lookup's price checks nothing: not "nada mudou" (0) but 11, saying how
/// many were left.
#[test]
fn a_ceiling_that_checks_nothing_is_not_a_clean_run() {
    let w = Watch::new();
    let list = w.list(&CODES[..2]);
    let o = w
        .cmd()
        .args(["vigiar"])
        .arg(&list)
        .args(["--teto", "1"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(11), "{err}");
    assert!(
        err.contains("2 código(s) vencido(s) não comprado(s)"),
        "{err}"
    );
    assert_eq!(w.saldo(), dec("100"), "nothing bought");
}

/// A code archived before and answered 404 now left the registry: said so, counted as a change
/// (exit 10), and not counted as bought.
#[test]
fn a_404_is_reported_as_leaving_the_registry_not_as_bought() {
    use carapi_sdk::ErrorCode;
    use carapi_test_double::Fault;
    let w = Watch::new();
    w.archive(CODES[0]);
    w.srv
        .inject(Fault::error(ErrorCode::CarNaoEncontrado).on("/v1/car/{codigoCar}/completo"));
    let list = w.list(&CODES[..1]);
    let o = w
        .cmd()
        .args(["vigiar", "--comprar"])
        .arg(&list)
        .args(["--teto", "10"])
        .output()
        .unwrap();
    let (out, err) = (stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(10), "{out}{err}");
    assert!(out.contains("SAIU DO CADASTRO (404)"), "{out}");
    assert!(
        err.contains("1 código(s): 0 comprado(s)") && err.contains("1 saiu(íram) do cadastro"),
        "{err}"
    );
}
