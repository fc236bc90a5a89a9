//! `car`, `proprietario`, `recibo`: every output format and the error exit codes.

use crate::harness::*;

#[test]
fn car_table_has_portuguese_labels_and_no_colour() {
    let s = TestServer::new();
    let o = s.cmd().args(["car", CODES[0]]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for label in [
        "Código CAR",
        "Área total (ha)",
        "Município",
        "Data da consulta",
        CODES[0],
    ] {
        assert!(out.contains(label), "{label} missing in {out}");
    }
    assert!(!out.contains('\x1b'));
    assert_eq!(s.saldo(), dec("99.00"));
}

#[test]
fn car_json_is_the_api_shape_and_completo_has_owners() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["-o", "json", "car", &CODES[1].to_lowercase()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["success"], true);
    assert_eq!(v["dados"]["codigoCar"], CODES[1]);
    assert!(v["dataConsulta"].is_string());
    assert!(v["dados"].get("proprietariosNomes").is_none());

    let o = s
        .cmd()
        .args(["car", CODES[1], "--completo", "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["dados"]["proprietariosNomes"].is_string(), "{v}");
    assert_eq!(s.saldo(), dec("100") - dec("1.00") - dec("2.30"));
}

#[test]
fn car_csv_is_a_header_and_one_row() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["car", CODES[2], "-o", "csv-cru"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = stdout(&o);
    let mut rd = csv::Reader::from_reader(out.as_bytes());
    let headers = rd.headers().unwrap().clone();
    assert_eq!(&headers[0], "codigoCar");
    assert!(headers.iter().any(|h| h == "areaTotalHa"));
    let rows: Vec<_> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(&rows[0][0], CODES[2]);
}

#[test]
fn not_found_is_exit_4_and_free() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["car", "DF-5300108-00000000000000000000000000000000"])
        .output()
        .unwrap();
    assert_error(&o, 4, "CAR_NAO_ENCONTRADO");
    assert!(stderr(&o).contains("dica:"));
    let o = s
        .cmd()
        .args(["car", "ZZ-0000000-SANDBOXNAOEXISTE0000000000000000"])
        .output()
        .unwrap();
    assert_error(&o, 4, "CAR_NAO_ENCONTRADO");
    let o = s
        .cmd()
        .args(["proprietario", "11111111111"])
        .output()
        .unwrap();
    assert_error(&o, 4, "CPF_CNPJ_NAO_ENCONTRADO");
    assert_eq!(s.saldo(), dec("100"));
}

#[test]
fn invalid_input_is_exit_2_and_nothing_is_sent() {
    let s = TestServer::new();
    let o = s.cmd().args(["car", "XX-123"]).output().unwrap();
    assert_error(&o, 2, "ENTRADA_INVALIDA");
    let o = s
        .cmd()
        .args(["proprietario", "123.456.789-00"])
        .output()
        .unwrap();
    assert_error(&o, 2, "ENTRADA_INVALIDA");
    // clap usage errors are exit 2 too.
    let o = s.cmd().args(["car"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let o = s
        .cmd()
        .args(["historico", "--status", "talvez"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(s.charged().is_empty());
}

#[test]
fn sandbox_without_balance_is_exit_5() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["car", "ZZ-0000000-SANDBOXSEMSALDO00000000000000000"])
        .output()
        .unwrap();
    assert_error(&o, 5, "SALDO_INSUFICIENTE");
    assert!(stderr(&o).contains("carapi recarga criar"));
}

#[test]
fn bad_or_missing_key_is_exit_3() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .env("CARAPI_API_KEY", "car_chave_errada")
        .args(["saldo"])
        .output()
        .unwrap();
    assert_error(&o, 3, "TOKEN_INVALIDO");
    assert!(!stderr(&o).contains("car_chave_errada"));
    let o = s
        .cmd_without_credentials()
        .env("CARAPI_BASE_URL", &s.base_url)
        .args(["saldo"])
        .output()
        .unwrap();
    assert_error(&o, 3, "CHAVE_AUSENTE");
    assert!(stderr(&o).contains("carapi login"));
}

#[test]
fn unreachable_server_is_exit_7_and_no_url_is_exit_2() {
    let s = TestServer::new();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = s
        .cmd()
        .env("CARAPI_BASE_URL", format!("http://127.0.0.1:{port}"))
        .args(["saldo"])
        .output()
        .unwrap();
    assert_error(&o, 7, "REDE");
    let o = s
        .cmd_without_credentials()
        .env("CARAPI_API_KEY", "x")
        .args(["saldo"])
        .output()
        .unwrap();
    assert_error(&o, 2, "SEM_URL");
}

#[test]
fn daily_limit_is_exit_6() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["limites", "set", "--diario", "1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        s.cmd()
            .args(["car", CODES[0]])
            .output()
            .unwrap()
            .status
            .success()
    );
    let o = s.cmd().args(["car", CODES[1]]).output().unwrap();
    assert_error(&o, 6, "LIMITE_EXCEDIDO");
    assert_eq!(s.saldo(), dec("99.00"));
}

#[test]
fn proprietario_formats_and_truncation_notice() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["proprietario", "00000000000"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Código CAR"));
    assert!(!stderr(&o).contains("truncad"));
    let o = s
        .cmd()
        .args(["proprietario", "00000000000000", "-o", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["truncado"], true);
    assert!(stderr(&o).contains("truncada"), "{}", stderr(&o));
    let o = s
        .cmd()
        .args(["proprietario", "00000000000", "-o", "csv-cru"])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(out.starts_with("registroCar,"));
    assert_eq!(out.lines().count(), 3, "{out}");
}

#[test]
fn recibo_saves_never_overwrites_without_force_and_streams_to_stdout() {
    let s = TestServer::new();
    let o = s.cmd().args(["recibo", CODES[0]]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let path = s.work_dir().join(format!("{}.pdf", CODES[0]));
    assert!(std::fs::read(&path).unwrap().starts_with(b"%PDF"));
    assert_eq!(stdout(&o).trim(), format!("{}.pdf", CODES[0]));
    let saldo = s.saldo();
    assert_eq!(saldo, dec("89.00"));

    let o = s.cmd().args(["recibo", CODES[0]]).output().unwrap();
    assert_error(&o, 1, "ARQUIVO_EXISTE");
    assert_eq!(s.saldo(), saldo, "a refusal costs nothing");

    let o = s
        .cmd()
        .args(["recibo", CODES[0], "--sobrescrever"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let o = s
        .cmd()
        .args(["-o", "json", "recibo", CODES[1], "--saida", "outro.pdf"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["arquivo"], "outro.pdf");
    assert!(v["bytes"].as_u64().unwrap() > 100);
    let o = s
        .cmd()
        .args([
            "recibo",
            "ZZ-0000000-SANDBOXCARBASICO0000000000000000",
            "--saida",
            "-",
        ])
        .output()
        .unwrap();
    assert!(o.stdout.starts_with(b"%PDF"));
    assert_eq!(s.saldo(), dec("67.00"));
}

/// The contract takes documents "with or without mask": the masks the tool itself prints are
/// the sandbox values too, free and marked as such.
#[test]
fn masked_sandbox_documents_are_the_sandbox_values() {
    let s = TestServer::new();
    for doc in ["000.000.000-00", "00.000.000/0000-00"] {
        let o = s
            .cmd()
            .args(["proprietario", doc, "-o", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{doc}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["sandbox"], true, "{doc}");
    }
    assert!(s.charged().is_empty(), "sandbox values cost nothing");
}

/// A CAR code as analysts paste it (spaces or en dashes for its dashes, no dashes at all) is
/// looked up; a misplaced dash is refused and echoed as typed, with a hint about CAR codes; a
/// CPF whose check digit fails says so, masked.
#[test]
fn pasted_car_codes_and_the_check_digit_message() {
    let s = TestServer::new();
    let code = CODES[0];
    for pasted in [
        code.replace('-', " "),
        code.replace('-', "\u{2013}"),
        code.replace('-', ""),
    ] {
        let o = s
            .cmd()
            .args(["car", &pasted, "-o", "json"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{pasted}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["dados"]["codigoCar"], code);
    }
    assert_eq!(s.charged().len(), 3);
    let misplaced = "DF-530010-8B69B317DD02C43DAA77A0784AEEF7D47";
    let o = s.cmd().args(["car", misplaced]).output().unwrap();
    assert_error(&o, 2, "ENTRADA_INVALIDA");
    let err = stderr(&o);
    assert!(err.contains(misplaced), "echoed as typed: {err}");
    assert!(!err.contains("CPF"), "a CAR code's hint: {err}");
    let o = s
        .cmd()
        .args(["proprietario", "529.982.247-24"])
        .output()
        .unwrap();
    assert_error(&o, 2, "ENTRADA_INVALIDA");
    let err = stderr(&o);
    assert!(err.contains("dígito verificador não confere"), "{err}");
    assert!(!err.contains("529.982.247-24"), "{err}");
    assert_eq!(s.charged().len(), 3, "nothing sent for the refused ones");
}
