//! `recarga faixas|criar|status` and `recargas`: the QR decodes to the payload, waiting,
//! Ctrl-C, time-out, the legacy-price confirmation.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use carapi_service::NovaConta;

use crate::harness::*;

/// Half-block text back to modules (`true` = dark), written here independently of the CLI's
/// code: the uncoloured QR uses blocks for light modules (light-on-dark terminals).
fn bitmap(text: &str) -> Vec<Vec<bool>> {
    let mut rows = vec![];
    for l in text
        .lines()
        .filter(|l| l.contains('█') && l.chars().all(|c| "█▀▄ ".contains(c)))
    {
        let (mut top, mut bottom) = (vec![], vec![]);
        for c in l.chars() {
            top.push(!matches!(c, '█' | '▀'));
            bottom.push(!matches!(c, '█' | '▄'));
        }
        rows.push(top);
        rows.push(bottom);
    }
    rows
}

fn decode(bits: &[Vec<bool>]) -> String {
    const S: usize = 4;
    let (h, w) = (bits.len(), bits[0].len());
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w * S, h * S, |x, y| {
        if bits[y / S][x / S] { 0 } else { 255 }
    });
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code expected");
    grids[0].decode().unwrap().1
}

fn payload(out: &str) -> String {
    let mut lines = out.lines();
    lines
        .by_ref()
        .find(|l| *l == "PIX copia e cola:")
        .expect("payload label");
    lines.next().unwrap().to_owned()
}

fn recarga_id(out: &str) -> uuid::Uuid {
    out.lines()
        .find_map(|l| l.strip_prefix("ID da recarga: "))
        .expect("id line")
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn terminal_qr_of_a_real_recarga_decodes_to_the_payload() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["recarga", "criar", "500", "--sem-esperar"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains('\x1b'));
    let id = recarga_id(&out);
    let st = s
        .cmd()
        .args(["recarga", "status", &id.to_string(), "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    let expected = v["qrCode"].as_str().unwrap().to_owned();
    assert_eq!(payload(&out), expected);
    assert_eq!(decode(&bitmap(&out)), expected);
    assert!(stderr(&o).contains(&format!("carapi recarga status {id} --esperar")));
}

#[test]
fn criar_waits_until_confirmado_and_prints_the_new_balance() {
    let s = TestServer::new();
    let mut child = s
        .process()
        .args(["recarga", "criar", "500"])
        // A local server: read the status every 100 ms instead of sleeping through 5 s.
        .env("CARAPI_TESTE", "intervalo-ms=100")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut rd = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    let id = loop {
        let mut l = String::new();
        assert!(rd.read_line(&mut l).unwrap() > 0, "ended early: {seen}");
        seen.push_str(&l);
        if let Some(id) = l.strip_prefix("ID da recarga: ") {
            break id.trim().parse::<uuid::Uuid>().unwrap();
        }
    };
    s.pay(id);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut rd, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{rest}");
    let saldo = s.saldo();
    assert!(saldo >= dec("600"), "{saldo}");
    assert!(rest.contains("Recarga confirmada"), "{rest}");
    assert!(
        rest.contains(&format!(
            "Novo saldo: {}",
            carapi_sdk::domain::brl::format(saldo)
        )),
        "{rest}"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_waiting_with_exit_130_and_says_how_to_resume() {
    let s = TestServer::new();
    let mut child = s
        .process()
        .args(["recarga", "criar", "500"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut rd = BufReader::new(child.stdout.take().unwrap());
    let id = loop {
        let mut l = String::new();
        assert!(rd.read_line(&mut l).unwrap() > 0);
        if let Some(id) = l.strip_prefix("ID da recarga: ") {
            break id.trim().to_owned();
        }
    };
    // The Ctrl-C listener is registered before anything is printed: no sleep needed.
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("carapi recarga status {id} --esperar")),
        "{err}"
    );
    // A normal stop, not an error: no `erro:` label, a plain line.
    assert!(!err.contains("erro:"), "{err}");
    assert!(err.contains("Interrompido (Ctrl-C)."), "{err}");
}

#[test]
fn time_out_is_an_error_with_the_resume_command() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["recarga", "criar", "500", "--tempo-limite", "1s"])
        .output()
        .unwrap();
    assert_error(&o, 1, "TEMPO_ESGOTADO");
    assert!(stderr(&o).contains("--esperar"));
}

#[test]
fn status_pending_then_wait_after_payment() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["-o", "json", "recarga", "criar", "1000", "--sem-esperar"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "Pendente");
    let id: uuid::Uuid = v["recargaId"].as_str().unwrap().parse().unwrap();
    let o = s
        .cmd()
        .args(["recarga", "status", &id.to_string()])
        .output()
        .unwrap();
    assert!(stdout(&o).contains("Pendente"));
    s.pay(id);
    let o = s
        .cmd()
        .args(["recarga", "status", &id.to_string(), "--esperar"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Recarga confirmada"), "{}", stdout(&o));
    let o = s
        .cmd()
        .args(["recarga", "status", &uuid::Uuid::new_v4().to_string()])
        .output()
        .unwrap();
    assert_error(&o, 4, "RECARGA_NAO_ENCONTRADA");

    let o = s.cmd().args(["recargas", "-o", "json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["total"], 1);
    assert_eq!(v["itens"][0]["status"], "Confirmado");
    let o = s
        .cmd()
        .args(["recargas", "--status", "pendente", "-o", "csv-cru"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o).lines().count(), 1, "header only: {}", stdout(&o));
    let o = s.cmd().args(["recargas"]).output().unwrap();
    assert!(stdout(&o).contains("R$ 1.000,00"), "{}", stdout(&o));
}

#[test]
fn faixas_with_preview() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["recarga", "faixas", "--valor", "1.000,00"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("Valor mínimo de recarga: R$ 500,00"), "{out}");
    assert!(out.contains("Prévia: pagando R$ 1.000,00"), "{out}");
    let o = s
        .cmd()
        .args(["recarga", "faixas", "--valor", "1000", "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["preview"]["valorPago"], 1000.0);
    let o = s
        .cmd()
        .args(["recarga", "faixas", "-o", "csv-cru"])
        .output()
        .unwrap();
    assert!(stdout(&o).starts_with("valorMinimo,valorMaximo,percentualBonus\n"));
    let o = s
        .cmd()
        .args(["recarga", "criar", "100", "--sem-esperar"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn legacy_account_without_terminal_or_flag_creates_nothing() {
    let s = TestServer::with(NovaConta {
        legado: true,
        ..NovaConta::default()
    });
    let o = s.cmd().args(["recarga", "criar", "500"]).output().unwrap();
    assert_error(&o, 2, "CONFIRMACAO_PRECOS_OBRIGATORIA");
    let err = stderr(&o);
    assert!(err.contains("--confirmar-novos-precos"), "{err}");
    assert!(
        err.contains("R$ 0,50") && err.contains("R$ 1,00"),
        "current and new prices side by side: {err}"
    );
    assert_eq!(s.recargas(), 0, "nothing created");

    let o = s
        .cmd()
        .args([
            "recarga",
            "criar",
            "500",
            "--confirmar-novos-precos",
            "--sem-esperar",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(s.recargas(), 1);
}
