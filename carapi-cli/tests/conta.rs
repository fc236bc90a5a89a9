//! `saldo`, `historico`, `limites`, `uso`, `recargas`: formats and filters.

use crate::harness::*;

#[test]
fn saldo_in_three_formats() {
    let s = TestServer::new();
    let o = s.cmd().args(["saldo"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("R$ 100,00"), "{out}");
    assert!(out.contains("Preço: CAR completo") && out.contains("R$ 2,30"));
    assert!(out.contains("sem limite"));
    let o = s.cmd().args(["saldo", "-o", "json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["saldoReais"], 100.0);
    assert_eq!(v["precos"]["recibo"], 11.0);
    assert!(v["usoHoje"]["requisicoes"].is_u64());
    let o = s.cmd().args(["-o", "csv-cru", "saldo"]).output().unwrap();
    let out = stdout(&o);
    let mut rd = csv::Reader::from_reader(out.as_bytes());
    assert_eq!(&rd.headers().unwrap()[0], "saldoReais");
    assert_eq!(&rd.records().next().unwrap().unwrap()[0], "100.00");
}

#[test]
fn historico_pages_filters_all_and_formats() {
    let s = TestServer::new();
    for c in &CODES[..3] {
        assert!(s.cmd().args(["car", c]).output().unwrap().status.success());
    }
    let _ = s
        .cmd()
        .args(["car", "DF-5300108-00000000000000000000000000000000"])
        .output()
        .unwrap();

    let o = s.cmd().args(["historico", "-o", "json"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["total"], 4);
    assert_eq!(v["itens"][0]["statusHttp"], 404, "newest first");

    let o = s
        .cmd()
        .args(["historico", "--status", "erro", "-o", "csv-cru"])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .starts_with("data,endpoint,chaveConsulta,statusHttp")
    );

    let o = s
        .cmd()
        .args(["historico", "--por-pagina", "1", "--todas", "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 4);

    let o = s
        .cmd()
        .args(["historico", "--busca", &CODES[1][..20], "--endpoint", "car"])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(out.contains(CODES[1]) && !out.contains(CODES[0]), "{out}");
    assert!(out.contains("R$ 1,00") && out.contains("Chave consultada"));

    let o = s
        .cmd()
        .args([
            "historico",
            "--pagina",
            "2",
            "--por-pagina",
            "3",
            "-o",
            "json",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["page"], 2);
    assert_eq!(v["itens"].as_array().unwrap().len(), 1);
}

#[test]
fn limites_show_set_and_clear() {
    let s = TestServer::new();
    let o = s.cmd().args(["limites"]).output().unwrap();
    assert!(o.status.success());
    assert!(stdout(&o).contains("sem limite"));
    let o = s
        .cmd()
        .args([
            "limites", "set", "--diario", "50", "--mensal", "250,50", "-o", "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["limiteDiarioRequisicoes"], 50);
    assert_eq!(v["limiteMensalReais"], 250.5);
    let o = s
        .cmd()
        .args(["limites", "set", "--mensal", "none"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = s.cmd().args(["limites", "-o", "csv-cru"]).output().unwrap();
    assert_eq!(
        stdout(&o),
        "limiteDiarioRequisicoes,limiteMensalReais\n50,\n"
    );
    let o = s.cmd().args(["limites", "set"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "set needs --diario or --mensal");
    let o = s
        .cmd()
        .args(["limites", "set", "--diario", "100001"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn uso_aggregates() {
    let s = TestServer::new();
    assert!(
        s.cmd()
            .args(["car", CODES[0]])
            .output()
            .unwrap()
            .status
            .success()
    );
    assert!(
        s.cmd()
            .args(["car", CODES[1]])
            .output()
            .unwrap()
            .status
            .success()
    );
    let o = s.cmd().args(["uso", "-o", "json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["periodoDias"], 30);
    let item = v["itens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["endpoint"] == "/v1/car/{codigo}")
        .unwrap()
        .clone();
    assert_eq!(item["quantidade"], 2);
    let o = s.cmd().args(["uso"]).output().unwrap();
    assert!(stdout(&o).contains("R$ 2,00"), "{}", stdout(&o));
    let o = s.cmd().args(["uso", "-o", "csv-cru"]).output().unwrap();
    assert!(stdout(&o).starts_with("endpoint,quantidade,valorTotal\n"));
}

#[test]
fn verbose_shows_http_summaries_on_stderr() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["-v", "saldo", "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(stderr(&o).contains("/v1/saldo"), "{}", stderr(&o));
    assert!(!stderr(&o).contains(&s.conta.api_key));
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("stdout stays pure JSON");
}

/// The account's prices are kept once it is on the current table: `-v` shows one request per
/// charged lookup after the first (no `GET /v1/saldo` beside it); a legacy account's prices are
/// never kept (a top-up elsewhere would make them wrong); a 402 forgets them.
#[test]
fn verbose_shows_one_request_per_lookup_after_the_first() {
    let requests = |o: &std::process::Output| -> Vec<String> {
        stderr(o)
            .lines()
            .filter(|l| l.starts_with("GET ") || l.starts_with("POST "))
            .map(str::to_owned)
            .collect()
    };
    let s = TestServer::new();
    let o = s.cmd().args(["-v", "car", CODES[0]]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        requests(&o).iter().any(|l| l.starts_with("GET /v1/saldo")),
        "the first reads the prices: {:?}",
        requests(&o)
    );
    for code in &CODES[1..3] {
        let o = s.cmd().args(["-v", "car", code]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let r = requests(&o);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].starts_with("GET /v1/car/{codigoCar} → 200"), "{r:?}");
    }
    // A 402 forgets them.
    let o = s
        .cmd()
        .args(["car", carapi_sdk::sandbox::CAR_SEM_SALDO])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    let o = s.cmd().args(["-v", "car", CODES[3]]).output().unwrap();
    assert!(
        requests(&o).iter().any(|l| l.starts_with("GET /v1/saldo")),
        "{:?}",
        requests(&o)
    );

    let legacy = TestServer::with(carapi_service::NovaConta {
        legado: true,
        ..carapi_service::NovaConta::default()
    });
    for code in &CODES[..2] {
        let o = legacy.cmd().args(["-v", "car", code]).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            requests(&o).iter().any(|l| l.starts_with("GET /v1/saldo")),
            "a legacy account's prices are read every time: {:?}",
            requests(&o)
        );
    }
}
