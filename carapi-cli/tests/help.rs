//! `carapi --help` and every subcommand's help, snapshot-tested.

fn paths(cmd: &clap::Command, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    for sub in cmd.get_subcommands() {
        let mut p = prefix.clone();
        p.push(sub.get_name().to_owned());
        paths(sub, p, out);
    }
}

#[test]
fn help_of_every_command() {
    let mut all_paths = vec![];
    paths(&carapi_cli::help::command(), vec![], &mut all_paths);
    assert!(all_paths.len() > 20, "{all_paths:?}");
    for path in all_paths {
        let mut cmd = assert_cmd::Command::cargo_bin("carapi").unwrap();
        for v in ["CARAPI_API_KEY", "CARAPI_BASE_URL", "CARAPI_LOCAL"] {
            cmd.env_remove(v);
        }
        let o = cmd.args(&path).arg("--help").output().unwrap();
        assert!(o.status.success(), "{path:?}");
        let name = if path.is_empty() {
            "carapi".to_owned()
        } else {
            format!("carapi_{}", path.join("_"))
        };
        insta::assert_snapshot!(name, String::from_utf8(o.stdout).unwrap());
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
