//! `carapi --help` and every subcommand's help, snapshot-tested.

fn caminhos(cmd: &clap::Command, prefixo: Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefixo.clone());
    for sub in cmd.get_subcommands() {
        let mut p = prefixo.clone();
        p.push(sub.get_name().to_owned());
        caminhos(sub, p, out);
    }
}

#[test]
fn help_of_every_command() {
    let mut todos = vec![];
    caminhos(&carapi_cli::help::command(), vec![], &mut todos);
    assert!(todos.len() > 20, "{todos:?}");
    for caminho in todos {
        let mut cmd = assert_cmd::Command::cargo_bin("carapi").unwrap();
        for v in ["CARAPI_API_KEY", "CARAPI_BASE_URL", "CARAPI_LOCAL"] {
            cmd.env_remove(v);
        }
        let o = cmd.args(&caminho).arg("--help").output().unwrap();
        assert!(o.status.success(), "{caminho:?}");
        let nome = if caminho.is_empty() {
            "carapi".to_owned()
        } else {
            format!("carapi_{}", caminho.join("_"))
        };
        insta::assert_snapshot!(nome, String::from_utf8(o.stdout).unwrap());
    }
}

#[test]
fn help_lists_the_exit_codes() {
    let o = assert_cmd::Command::cargo_bin("carapi")
        .unwrap()
        .arg("--help")
        .output()
        .unwrap();
    let out = String::from_utf8(o.stdout).unwrap();
    for l in [
        "0    sucesso",
        "3    autenticação (401)",
        "5    saldo insuficiente (402)",
        "7    rede ou servidor",
        "130  interrompido",
    ] {
        assert!(out.contains(l), "{l}");
    }
}
