//! What an analyst meets in the first half-hour: one meaning of `-o`, Brazilian amounts read
//! right, a closed pipe is not an error, hints that keep the flags that got the user there.

use std::process::Stdio;

use crate::harness::*;

fn limite_mensal(s: &Servidor) -> Option<rust_decimal::Decimal> {
    let c = s.client();
    s.rt.block_on(async { c.limites().await.unwrap().limite_mensal_reais })
}

#[test]
fn o_is_the_format_for_recibo_too_and_the_file_is_saida() {
    let s = Servidor::novo();
    let o = s
        .cmd()
        .args(["recibo", CODIGOS[0], "-o", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        !s.trabalho().join("json").exists(),
        "-o json saved a file named json"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["codigoCar"], CODIGOS[0]);
    assert!(s.trabalho().join(format!("{}.pdf", CODIGOS[0])).is_file());

    let o = s
        .cmd()
        .args([
            "recibo",
            CODIGOS[1],
            "--saida",
            "r.pdf",
            "--formato",
            "csv-cru",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read(s.trabalho().join("r.pdf"))
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
        .args(["recibo", CODIGOS[2], "-o", "recibo.pdf"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(s.saldo(), saldo, "nothing charged");
    assert!(!s.trabalho().join("recibo.pdf").exists());
}

#[test]
fn amounts_are_read_the_brazilian_way_and_ambiguous_ones_refused() {
    let s = Servidor::novo();
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

    for (entrada, reais) in [
        ("1.500,00", "1500"),
        ("R$ 2.000,00", "2000"),
        ("1500", "1500"),
        ("2,5", "2.5"),
        ("2.50", "2.5"),
    ] {
        let o = s
            .cmd()
            .args(["limites", "set", "--mensal", entrada])
            .output()
            .unwrap();
        assert!(o.status.success(), "{entrada}: {}", stderr(&o));
        assert_eq!(limite_mensal(&s), Some(dec(reais)), "{entrada}");
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
    let arq = escrever(&s.trabalho(), "c.txt", CODIGOS[0]);
    let o = s
        .cmd()
        .args(["lote", "car", "--sim", "--max-custo", "1.000"])
        .arg(&arq)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(s.cobradas().is_empty());
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_exits_0_silently_in_every_format() {
    let s = Servidor::novo();
    let arq = escrever(&s.trabalho(), "docs.txt", "00000000000000\n00000000000\n");
    let arq = arq.to_str().unwrap();
    let casos: [&[&str]; 5] = [
        &["-o", "json", "proprietario", "00000000000000"],
        &["-o", "csv", "proprietario", "00000000000000"],
        &["proprietario", "00000000000000"],
        &["-o", "json", "saldo"],
        &["lote", "proprietario", "--sim", arq],
    ];
    for args in casos {
        let mut child = s
            .processo()
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
    let s = Servidor::novo();
    let o = s
        .cmd_sem_credenciais()
        .args(["--local", "recarga", "criar", "500", "--sem-esperar"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let dica = err
        .lines()
        .find_map(|l| l.split_once("Para acompanhar: ").map(|(_, c)| c.to_owned()))
        .unwrap_or_else(|| panic!("no hint in {err}"));
    assert!(dica.starts_with("carapi --local recarga status "), "{dica}");
    // The hinted command works as printed (without --esperar, so it does not block).
    let args: Vec<&str> = dica.split_whitespace().skip(1).collect();
    let args: Vec<&str> = args.into_iter().filter(|a| *a != "--esperar").collect();
    let o = s.cmd_sem_credenciais().args(&args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    assert!(stdout(&o).contains("Pendente"), "{}", stdout(&o));

    let o = s
        .cmd_sem_credenciais()
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
