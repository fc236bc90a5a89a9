//! clap in Portuguese: headings (`Uso`, `Comandos`, `Argumentos`, `Opções`), the help flag,
//! `--version` once (on `carapi` only), an `Exemplos:` section in every command's help, and
//! clap's own errors rewritten from their [`ErrorKind`] and context into the CLI's
//! `erro: ... (USO)` / `dica: ...` form, exit 2.
//!
//! [`command`] is the one definition: parsing, `carapi man` (clap_mangen) and `carapi
//! completions` all start from it.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command, CommandFactory};

use crate::cli::Cli;

/// The heading of positional arguments.
const ARGS_HEADING: &str = "Argumentos";
/// The heading of a command's own options.
const OPTIONS_HEADING: &str = "Opções";

/// The whole command tree, in Portuguese, with examples.
pub fn command() -> Command {
    let cmd = Cli::command()
        .disable_version_flag(true)
        .disable_help_subcommand(true)
        .arg(
            Arg::new("versao")
                .long("versao")
                .alias("version")
                .action(ArgAction::Version)
                .help("Mostra a versão")
                .help_heading(OPTIONS_HEADING),
        );
    prepare(cmd, "")
}

/// clap's help template with its one English heading (`Usage:`) written in Portuguese.
const TEMPLATE: &str = "{before-help}{about-with-newline}\nUso: {usage}\n\n{all-args}{after-help}";

fn prepare(cmd: Command, path: &str) -> Command {
    let mut cmd = cmd
        .subcommand_help_heading("Comandos")
        .subcommand_value_name("COMANDO")
        .disable_help_flag(true)
        .disable_help_subcommand(true)
        .help_template(TEMPLATE)
        .mut_args(|a| {
            let a = in_portuguese(a);
            if a.get_help_heading().is_some() {
                a
            } else if a.is_positional() {
                a.help_heading(ARGS_HEADING)
            } else {
                a.help_heading(OPTIONS_HEADING)
            }
        })
        .arg(
            Arg::new("ajuda")
                .short('h')
                .long("ajuda")
                .alias("help")
                .action(ArgAction::Help)
                .help("Mostra esta ajuda")
                .help_heading(OPTIONS_HEADING),
        );
    if let Some(ex) = examples(path) {
        let after = match cmd.get_after_help() {
            Some(a) => format!("Exemplos:\n{ex}\n\n{a}"),
            None => format!("Exemplos:\n{ex}"),
        };
        cmd = cmd.after_help(after);
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for name in names {
        let sub = if path.is_empty() {
            name.clone()
        } else {
            format!("{path} {name}")
        };
        cmd = cmd.mut_subcommand(&name, |s| prepare(s, &sub));
    }
    cmd
}

/// An argument whose possible values, default and environment variable clap would list in
/// English (`[possible values: ...]`, `Possible values:`, `[default: ...]`, `[env: ...]`, and
/// clap_mangen's "May also be specified with ...") lists them itself, in Portuguese, inside its
/// own help text, so clap wraps them to the terminal with the rest.
fn in_portuguese(a: Arg) -> Arg {
    if a.is_hide_set() {
        return a;
    }
    let takes_value = a.get_action().takes_values();
    let short = a.get_help().map(ToString::to_string).unwrap_or_default();
    let long = a.get_long_help().map(ToString::to_string);
    let mut suffix = String::new();
    let mut short_values = String::new();
    let mut list = String::new();
    let values: Vec<_> = a
        .get_possible_values()
        .into_iter()
        .filter(|v| !v.is_hide_set())
        .collect();
    if takes_value && !values.is_empty() && !a.is_hide_possible_values_set() {
        let names: Vec<&str> = values.iter().map(|v| v.get_name()).collect();
        short_values = format!(" [valores: {}]", names.join(", "));
        let with_help: Vec<String> = values
            .iter()
            .filter_map(|v| Some(format!("- {}: {}", v.get_name(), v.get_help()?)))
            .collect();
        if !with_help.is_empty() {
            list = format!("\n\nValores possíveis:\n{}", with_help.join("\n"));
        }
    }
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if takes_value && !defaults.is_empty() && !a.is_hide_default_value_set() {
        suffix.push_str(&format!(" [padrão: {}]", defaults.join(", ")));
    }
    if let Some(env) = a.get_env()
        && !a.is_hide_env_set()
    {
        suffix.push_str(&format!(" [ambiente: {}]", env.to_string_lossy()));
    }
    if suffix.is_empty() && short_values.is_empty() {
        return a;
    }
    let new_short = format!("{short}{short_values}{suffix}");
    let new_long = if list.is_empty() {
        long.map(|l| format!("{l}{short_values}{suffix}"))
    } else {
        Some(format!("{}{suffix}{list}", long.unwrap_or(short)))
    };
    let a = if takes_value {
        a.hide_possible_values(true).hide_default_value(true)
    } else {
        a
    };
    let a = a.hide_env(true).help(new_short);
    match new_long {
        Some(l) => a.long_help(l),
        None => a,
    }
}

/// The examples shown under `Exemplos:` in the help of the command at `path` (`""` is
/// `carapi` itself, `"recarga criar"` a subcommand).
pub(crate) fn examples(path: &str) -> Option<&'static str> {
    Some(match path {
        "" => {
            "  carapi login\n  carapi car DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47\n  carapi --local recarga criar 500\n  carapi lote car codigos.csv --saida resultado.xlsx"
        }
        "car" => {
            "  carapi car DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47\n  carapi car df-5300108-b69b317dd02c43daa77a0784aeef7d47 --completo -o json\n  carapi car ZZ-0000000-SANDBOXCARBASICO0000000000000000   # sandbox, sem cobrança"
        }
        "recibo" => {
            "  carapi recibo DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47\n  carapi recibo DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47 --saida recibos/ --abrir\n  carapi recibo DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47 --saida - > recibo.pdf"
        }
        "proprietario" => {
            "  carapi proprietario 385.211.390-39\n  carapi proprietario 00.000.000/0000-00 -o csv   # sandbox, sem cobrança"
        }
        "saldo" => "  carapi saldo\n  carapi saldo -o json | jq .saldoReais",
        "historico" => {
            "  carapi historico\n  carapi historico --desde 01/11/2026 --ate 15/11/2026 --todas\n  carapi historico --endpoint completo --status erro -o csv"
        }
        "limites" => "  carapi limites\n  carapi limites definir --mensal 1.500,00",
        "limites definir" => {
            "  carapi limites definir --diario 1000\n  carapi limites definir --mensal 1.500,00\n  carapi limites definir --mensal sem"
        }
        "uso" => "  carapi uso\n  carapi uso -o json",
        "recarga" => {
            "  carapi recarga faixas --valor 1.000,00\n  carapi recarga criar 500\n  carapi recarga status <ID> --esperar"
        }
        "recarga faixas" => "  carapi recarga faixas\n  carapi recarga faixas --valor 2.500,00",
        "recarga criar" => {
            "  carapi recarga criar 500\n  carapi recarga criar 1.000,00 --qr-png pix.png\n  carapi --local recarga criar 500"
        }
        "recarga status" => {
            "  carapi recarga status <ID>\n  carapi recarga status <ID> --esperar --tempo-limite 1h"
        }
        "recargas" => "  carapi recargas\n  carapi recargas --status Pendente",
        "lote" => {
            "  carapi lote car codigos.txt --saida resultado.jsonl\n  carapi lote car sicar.csv --saida resultado.xlsx --max-custo 50\n  carapi lote proprietario docs.csv --coluna cpf_cnpj --saida mapa.geojson\n  cut -d';' -f2 lista.csv | carapi lote car - --sim > resultado.jsonl"
        }
        "login" => "  carapi login\n  echo \"$CHAVE\" | carapi login --chave-stdin",
        "logout" => "  carapi logout",
        "config" => {
            "  carapi config mostrar\n  carapi config definir base-url https://api.exemplo.com.br"
        }
        "config mostrar" => "  carapi config mostrar",
        "config definir" => "  carapi config definir base-url https://api.exemplo.com.br",
        "completar" => {
            "  carapi completar bash > ~/.local/share/bash-completion/completions/carapi\n  carapi completar zsh > ~/.zfunc/_carapi"
        }
        "man" => "  carapi man | man -l -\n  carapi man --dir ~/.local/share/man/man1",
        "local" => "  carapi local servir --endereco 127.0.0.1:8080\n  carapi local pagar <ID>",
        "local servir" => "  carapi local servir\n  carapi local servir --endereco 0.0.0.0:8080",
        "local pagar" => "  carapi local pagar <ID>",
        "acervo" => "  carapi acervo listar\n  carapi acervo verificar --cabeca 42:9f2c...",
        "acervo listar" => {
            "  carapi acervo listar\n  carapi acervo listar -o csv > acervo.csv\n  carapi acervo listar --conta 3f9a0c4d5e6b7a81"
        }
        "acervo vincular" => "  carapi acervo vincular --antiga 3f9a0c4d5e6b7a81",
        "acervo mostrar" => {
            "  carapi acervo mostrar 7\n  carapi acervo mostrar 7 --saida recibo.pdf"
        }
        "acervo titular" => "  carapi acervo titular 123.456.789-09",
        "acervo expurgar" => {
            "  carapi acervo expurgar --documento 123.456.789-09\n  \
             carapi acervo expurgar --antes-de 2025-01-01 --sim"
        }
        "acervo verificar" => {
            "  carapi acervo verificar\n  carapi acervo verificar --cabeca 42:9f2c..."
        }
        "acervo exportar" => {
            "  carapi acervo exportar --saida auditoria.csv\n  carapi acervo exportar -o json"
        }
        "vigiar" => {
            "  carapi vigiar fornecedores.csv --teto 50\n  \
             carapi vigiar sicar.csv --idade-maxima 90d --teto 200 -o csv > mudancas.csv\n  \
             carapi vigiar lista.txt --teto 20 -q; [ $? -eq 10 ] && echo \"algo mudou\""
        }
        _ => return None,
    })
}

/// `carapi help CMD...`, `carapi ajuda CMD...` and `carapi CMD help SUB...` as
/// `carapi CMD... SUB... --ajuda` (the help subcommand clap would add is off: it was English and
/// listed pages that did not work). The words are read down the command tree, so a value
/// (`--busca ajuda`, a file named `help`) is never taken for it; anything else unchanged.
pub(crate) fn rewrite_help_request<I: IntoIterator<Item = std::ffi::OsString>>(
    args: I,
) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let globals_with_value = ["--url-base", "--base-url", "-o", "--formato", "--output"];
    let root = command();
    let mut current = &root;
    let mut i = 1;
    while i < args.len() {
        let a = args[i].to_string_lossy().into_owned();
        if globals_with_value.contains(&a.as_str()) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else if (a == "help" || a == "ajuda") && current.has_subcommands() {
            args.remove(i);
            args.push("--ajuda".into());
            break;
        } else if let Some(sub) = current.find_subcommand(&a) {
            current = sub;
            i += 1;
        } else {
            break;
        }
    }
    args
}

/// English phrases clap writes into help text, and their Portuguese.
const TRANSLATIONS: [(&str, &str); 9] = [
    ("Usage:", "Uso:"),
    ("[OPTIONS]", "[OPÇÕES]"),
    ("[default: ", "[padrão: "),
    ("[possible values: ", "[valores possíveis: "),
    ("Possible values:", "Valores possíveis:"),
    ("[env: ", "[ambiente: "),
    ("[aliases: ", "[sinônimos: "),
    ("[alias: ", "[sinônimo: "),
    ("<ARGS>", "<ARGUMENTOS>"),
];

/// Help or usage text rendered by clap, with clap's own English words in Portuguese.
pub(crate) fn translate(text: &str) -> String {
    TRANSLATIONS
        .iter()
        .fold(text.to_owned(), |t, (en, pt)| t.replace(en, pt))
}

/// The usage line of a clap error (which command it is about).
fn usage_of(e: &clap::Error) -> String {
    match e.get(ContextKind::Usage) {
        Some(ContextValue::StyledStr(s)) => s.to_string(),
        _ => String::new(),
    }
}

/// The subcommand nearest to `typo` among those of the command `usage` is about (`Uso: carapi
/// acervo [OPÇÕES] <COMANDO>`), by the edits a typist makes (a swap of two neighbours is one:
/// `cra` is `car`, not `acervo`); `None` past two edits.
fn nearest_command(typo: &str, usage: &str) -> Option<String> {
    let usage = translate(usage);
    let path = usage.trim().trim_start_matches("Uso:").trim();
    let mut cmd = command();
    for word in path.split_whitespace().skip(1) {
        if word.starts_with('[') || word.starts_with('<') {
            break;
        }
        cmd = cmd.find_subcommand(word)?.clone();
    }
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set())
        .flat_map(|s| std::iter::once(s.get_name().to_owned()))
        .map(|name| (edits(typo, &name), name))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, name)| name)
}

/// The optimal-string-alignment distance of `a` and `b`: insertions, deletions,
/// substitutions and swaps of two neighbouring characters, one edit each.
fn edits(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

/// A clap error as the CLI's error: (message, hint). Help and version are not errors.
pub(crate) fn message(e: &clap::Error) -> (String, Option<String>) {
    let text = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => Some(v.join(", ")),
        Some(ContextValue::StyledStr(s)) => Some(s.to_string()),
        Some(ContextValue::StyledStrs(v)) => Some(
            v.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        ),
        Some(ContextValue::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let arg = text(ContextKind::InvalidArg).unwrap_or_default();
    let value = text(ContextKind::InvalidValue).unwrap_or_default();
    let typo = text(ContextKind::InvalidSubcommand);
    let suggestion = typo
        .as_deref()
        .and_then(|t| nearest_command(t, &usage_of(e)))
        .or_else(|| text(ContextKind::SuggestedSubcommand))
        .or_else(|| text(ContextKind::SuggestedArg))
        .or_else(|| text(ContextKind::SuggestedValue))
        // clap lists the candidates from the least to the most similar: the nearest is last.
        .map(|s| {
            let nearest = s.rsplit(", ").next().unwrap_or(&s).to_owned();
            format!("você quis dizer `{nearest}`?")
        });
    let valid = text(ContextKind::ValidValue).map(|v| format!("valores possíveis: {v}"));
    let msg = match e.kind() {
        ErrorKind::InvalidValue if value.is_empty() => format!("falta o valor de {arg}"),
        ErrorKind::InvalidValue => format!("valor inválido '{value}' para {arg}"),
        ErrorKind::ValueValidation => {
            let reason = std::error::Error::source(e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            format!("valor inválido '{value}' para {arg}{reason}")
        }
        ErrorKind::UnknownArgument => format!("argumento inesperado '{arg}'"),
        ErrorKind::InvalidSubcommand => {
            let c = text(ContextKind::InvalidSubcommand).unwrap_or_default();
            if carapi_sdk::domain::brl::parse_reais(&c).is_ok() && usage_of(e).contains("recarga") {
                return (
                    format!("comando desconhecido '{c}' em `carapi recarga`"),
                    Some(format!(
                        "para criar uma recarga de {c}: carapi recarga criar {c}"
                    )),
                );
            }
            format!("comando desconhecido '{c}'")
        }
        ErrorKind::MissingRequiredArgument => format!("faltam argumentos obrigatórios: {arg}"),
        ErrorKind::MissingSubcommand => "falta o comando".to_owned(),
        ErrorKind::ArgumentConflict => {
            let other = text(ContextKind::PriorArg).unwrap_or_default();
            format!("{arg} não pode ser usado junto com {other}")
        }
        ErrorKind::NoEquals => format!("{arg} exige '=' antes do valor"),
        ErrorKind::TooManyValues => format!("valores demais para {arg}: '{value}'"),
        ErrorKind::TooFewValues | ErrorKind::WrongNumberOfValues => {
            format!("número errado de valores para {arg}")
        }
        ErrorKind::InvalidUtf8 => "argumento com UTF-8 inválido".to_owned(),
        _ => "argumentos inválidos".to_owned(),
    };
    let hint = suggestion.or(valid).or_else(|| {
        let uso = text(ContextKind::Usage)?;
        Some(format!(
            "{}; veja --ajuda",
            translate(uso.trim()).trim_start_matches("Uso: ")
        ))
    });
    (msg, hint.map(|d| d.replace("Usage: ", "")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_error(args: &[&str]) -> (String, Option<String>) {
        let e = command()
            .try_get_matches_from(std::iter::once("carapi").chain(args.iter().copied()))
            .unwrap_err();
        message(&e)
    }

    #[test]
    fn clap_errors_in_portuguese() {
        let (m, d) = parse_error(&["carr"]);
        assert_eq!(m, "comando desconhecido 'carr'");
        let d = d.unwrap();
        assert!(d.contains("você quis dizer `car`?"), "{d}");
        let (_, d) = parse_error(&["cra"]);
        assert!(
            d.unwrap().contains("você quis dizer `car`?"),
            "a swap of two letters"
        );
        let (_, d) = parse_error(&["acervo", "lsitar"]);
        assert!(d.unwrap().contains("você quis dizer `listar`?"));
        let (m, d) = parse_error(&["saldo", "-o", "xml"]);
        assert_eq!(m, "valor inválido 'xml' para --formato <FORMATO>");
        assert!(d.unwrap().starts_with("valores possíveis: tabela"));
        let (m, _) = parse_error(&["limites", "set", "--mensal", "1.500"]);
        assert!(m.contains("ambíguo"), "{m}");
        let (m, d) = parse_error(&["car"]);
        assert!(
            m.starts_with("faltam argumentos obrigatórios: <CODIGO>"),
            "{m}"
        );
        assert!(d.unwrap().contains("carapi car"));
    }

    #[test]
    fn every_command_has_examples_and_version_is_only_on_carapi() {
        fn visit(cmd: &Command, path: &str) {
            assert!(examples(path).is_some(), "sem exemplos: carapi {path}");
            assert_eq!(
                cmd.get_arguments().any(|a| a.get_long() == Some("versao")),
                path.is_empty(),
                "{path}"
            );
            for s in cmd.get_subcommands() {
                let sub = format!("{path} {}", s.get_name());
                visit(s, sub.trim());
            }
        }
        visit(&command(), "");
    }
}
