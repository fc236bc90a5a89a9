//! What an analyst meets in the first half-hour: one meaning of `-o`, Brazilian amounts read
//! right, a closed pipe is not an error, hints that keep the flags that got the user there.

use std::process::Stdio;

use crate::harness::*;

fn limite_mensal(s: &TestServer) -> Option<rust_decimal::Decimal> {
    let c = s.client();
    s.rt.block_on(async { c.limites().await.unwrap().limite_mensal_reais })
}

#[test]
fn o_is_the_format_for_recibo_too_and_the_file_is_saida() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["recibo", CODES[0], "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !s.work_dir().join("json").exists(),
        "-o json saved a file named json"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["codigoCar"], CODES[0]);
    assert!(s.work_dir().join(format!("{}.pdf", CODES[0])).is_file());

    let o = s
        .cmd()
        .args([
            "recibo",
            CODES[1],
            "--saida",
            "r.pdf",
            "--formato",
            "csv-cru",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read(s.work_dir().join("r.pdf"))
            .unwrap()
            .starts_with(b"%PDF")
    );
    assert!(
        stdout(&o).starts_with("codigoCar,arquivo,bytes\n"),
        "{}",
        stdout(&o)
    );

    // A value of -o that is not a format is a usage error before any request.
    let saldo = s.saldo();
    let o = s
        .cmd()
        .args(["recibo", CODES[2], "-o", "recibo.pdf"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(s.saldo(), saldo, "nothing charged");
    assert!(!s.work_dir().join("recibo.pdf").exists());
}

#[test]
fn amounts_are_read_the_brazilian_way_and_ambiguous_ones_refused() {
    let s = TestServer::new();
    let o = s
        .cmd()
        .args(["limites", "set", "--mensal", "1.500"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("1.500,00"), "{}", stderr(&o));
    assert_eq!(
        limite_mensal(&s),
        None,
        "an ambiguous amount changed the cap"
    );

    for (input, reais) in [
        ("1.500,00", "1500"),
        ("R$ 2.000,00", "2000"),
        ("1500", "1500"),
        ("2,5", "2.5"),
        ("2.50", "2.5"),
    ] {
        let o = s
            .cmd()
            .args(["limites", "set", "--mensal", input])
            .output()
            .unwrap();
        assert!(o.status.success(), "{input}: {}", stderr(&o));
        assert_eq!(limite_mensal(&s), Some(dec(reais)), "{input}");
    }

    // The same parser for every amount: nothing created, nothing sent.
    let o = s
        .cmd()
        .args(["recarga", "criar", "1.500"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(s.recargas(), 0);
    let o = s
        .cmd()
        .args(["recarga", "faixas", "--valor", "1.000"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let file_path = write_file(&s.work_dir(), "c.txt", CODES[0]);
    let o = s
        .cmd()
        .args(["lote", "car", "--sim", "--max-custo", "1.000"])
        .arg(&file_path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(s.charged().is_empty());
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_exits_0_silently_in_every_format() {
    let s = TestServer::new();
    let file_path = write_file(&s.work_dir(), "docs.txt", "00000000000000\n00000000000\n");
    let file_path = file_path.to_str().unwrap();
    let cases: [&[&str]; 5] = [
        &["-o", "json", "proprietario", "00000000000000"],
        &["-o", "csv", "proprietario", "00000000000000"],
        &["proprietario", "00000000000000"],
        &["-o", "json", "saldo"],
        &["lote", "proprietario", "--sim", file_path],
    ];
    for args in cases {
        let mut child = s
            .process()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader is gone before the answer arrives: every write gets EPIPE.
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("erro:"), "{args:?}: {err}");
    }
}

#[test]
fn hints_repeat_the_global_flags_in_effect() {
    let s = TestServer::new();
    let o = s
        .cmd_without_credentials()
        .args(["--local", "recarga", "criar", "500", "--sem-esperar"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let hint = err
        .lines()
        .find_map(|l| l.split_once("Para acompanhar: ").map(|(_, c)| c.to_owned()))
        .unwrap_or_else(|| panic!("no hint in {err}"));
    assert!(hint.starts_with("carapi --local recarga status "), "{hint}");
    // The hinted command works as printed (without --esperar, so it does not block).
    let args: Vec<&str> = hint.split_whitespace().skip(1).collect();
    let args: Vec<&str> = args.into_iter().filter(|a| *a != "--esperar").collect();
    let o = s.cmd_without_credentials().args(&args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    assert!(stdout(&o).contains("Pendente"), "{}", stdout(&o));

    let o = s
        .cmd_without_credentials()
        .env("CARAPI_API_KEY", &s.conta.api_key)
        .args([
            "--url-base",
            &s.base_url,
            "recarga",
            "criar",
            "500",
            "--sem-esperar",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("carapi --url-base {} recarga status ", s.base_url)),
        "{}",
        stderr(&o)
    );
}
