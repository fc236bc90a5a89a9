//! clap in Portuguese: headings (`Uso`, `Comandos`, `Argumentos`, `Opções`), the help flag,
//! `--version` once (on `carapi` only), an `Exemplos:` section in every command's help, and
//! clap's own errors rewritten from their [`ErrorKind`] and context into the CLI's
//! `erro: ... (USO)` / `dica: ...` form, exit 2.
//!
//! [`comando`] is the one definition: parsing, `carapi man` (clap_mangen) and `carapi
//! completions` all start from it.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command, CommandFactory};

use crate::cli::Cli;

/// The heading of positional arguments.
pub const ARGUMENTOS: &str = "Argumentos";
/// The heading of a command's own options.
pub const OPCOES: &str = "Opções";

/// The whole command tree, in Portuguese, with examples.
pub fn comando() -> Command {
    let cmd = Cli::command()
        .disable_version_flag(true)
        .disable_help_subcommand(true)
        .arg(
            Arg::new("versao")
                .long("versao")
                .alias("version")
                .action(ArgAction::Version)
                .help("Mostra a versão")
                .help_heading(OPCOES),
        );
    preparar(cmd, "")
}

/// clap's help template with its one English heading (`Usage:`) written in Portuguese.
const MODELO: &str = "{before-help}{about-with-newline}\nUso: {usage}\n\n{all-args}{after-help}";

fn preparar(cmd: Command, caminho: &str) -> Command {
    let mut cmd = cmd
        .subcommand_help_heading("Comandos")
        .subcommand_value_name("COMANDO")
        .disable_help_flag(true)
        .disable_help_subcommand(true)
        .help_template(MODELO)
        .mut_args(|a| {
            let a = em_portugues(a);
            if a.get_help_heading().is_some() {
                a
            } else if a.is_positional() {
                a.help_heading(ARGUMENTOS)
            } else {
                a.help_heading(OPCOES)
            }
        })
        .arg(
            Arg::new("ajuda")
                .short('h')
                .long("ajuda")
                .alias("help")
                .action(ArgAction::Help)
                .help("Mostra esta ajuda")
                .help_heading(OPCOES),
        );
    if let Some(ex) = exemplos(caminho) {
        let depois = match cmd.get_after_help() {
            Some(a) => format!("Exemplos:\n{ex}\n\n{a}"),
            None => format!("Exemplos:\n{ex}"),
        };
        cmd = cmd.after_help(depois);
    }
    let nomes: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for nome in nomes {
        let sub = if caminho.is_empty() {
            nome.clone()
        } else {
            format!("{caminho} {nome}")
        };
        cmd = cmd.mut_subcommand(&nome, |s| preparar(s, &sub));
    }
    cmd
}

/// An argument whose possible values, default and environment variable clap would list in
/// English (`[possible values: ...]`, `Possible values:`, `[default: ...]`, `[env: ...]`, and
/// clap_mangen's "May also be specified with ...") lists them itself, in Portuguese, inside its
/// own help text, so clap wraps them to the terminal with the rest.
fn em_portugues(a: Arg) -> Arg {
    if a.is_hide_set() {
        return a;
    }
    let toma_valor = a.get_action().takes_values();
    let curto = a.get_help().map(ToString::to_string).unwrap_or_default();
    let longo = a.get_long_help().map(ToString::to_string);
    let mut sufixo = String::new();
    let mut valores_curto = String::new();
    let mut lista = String::new();
    let valores: Vec<_> = a
        .get_possible_values()
        .into_iter()
        .filter(|v| !v.is_hide_set())
        .collect();
    if toma_valor && !valores.is_empty() && !a.is_hide_possible_values_set() {
        let nomes: Vec<&str> = valores.iter().map(|v| v.get_name()).collect();
        valores_curto = format!(" [valores: {}]", nomes.join(", "));
        let com_ajuda: Vec<String> = valores
            .iter()
            .filter_map(|v| Some(format!("- {}: {}", v.get_name(), v.get_help()?)))
            .collect();
        if !com_ajuda.is_empty() {
            lista = format!("\n\nValores possíveis:\n{}", com_ajuda.join("\n"));
        }
    }
    let padrao: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    if toma_valor && !padrao.is_empty() && !a.is_hide_default_value_set() {
        sufixo.push_str(&format!(" [padrão: {}]", padrao.join(", ")));
    }
    if let Some(env) = a.get_env()
        && !a.is_hide_env_set()
    {
        sufixo.push_str(&format!(" [ambiente: {}]", env.to_string_lossy()));
    }
    if sufixo.is_empty() && valores_curto.is_empty() {
        return a;
    }
    let curto_novo = format!("{curto}{valores_curto}{sufixo}");
    let longo_novo = if lista.is_empty() {
        longo.map(|l| format!("{l}{valores_curto}{sufixo}"))
    } else {
        Some(format!("{}{sufixo}{lista}", longo.unwrap_or(curto)))
    };
    let a = if toma_valor {
        a.hide_possible_values(true).hide_default_value(true)
    } else {
        a
    };
    let a = a.hide_env(true).help(curto_novo);
    match longo_novo {
        Some(l) => a.long_help(l),
        None => a,
    }
}

/// The examples shown under `Exemplos:` in the help of the command at `caminho` (`""` is
/// `carapi` itself, `"recarga criar"` a subcommand).
pub fn exemplos(caminho: &str) -> Option<&'static str> {
    Some(match caminho {
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
        _ => return None,
    })
}

/// `carapi help CMD...`, `carapi ajuda CMD...` and `carapi CMD help SUB...` as
/// `carapi CMD... SUB... --ajuda` (the help subcommand clap would add is off: it was English and
/// listed pages that did not work). The words are read down the command tree, so a value
/// (`--busca ajuda`, a file named `help`) is never taken for it; anything else unchanged.
pub fn pedido_de_ajuda<I: IntoIterator<Item = std::ffi::OsString>>(
    args: I,
) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = args.into_iter().collect();
    let globais_com_valor = ["--url-base", "--base-url", "-o", "--formato", "--output"];
    let raiz = comando();
    let mut atual = &raiz;
    let mut i = 1;
    while i < args.len() {
        let a = args[i].to_string_lossy().into_owned();
        if globais_com_valor.contains(&a.as_str()) {
            i += 2;
        } else if a.starts_with('-') {
            i += 1;
        } else if (a == "help" || a == "ajuda") && atual.has_subcommands() {
            args.remove(i);
            args.push("--ajuda".into());
            break;
        } else if let Some(sub) = atual.find_subcommand(&a) {
            atual = sub;
            i += 1;
        } else {
            break;
        }
    }
    args
}

/// English phrases clap writes into help text, and their Portuguese.
const TRADUCOES: [(&str, &str); 9] = [
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
pub fn traduzir(texto: &str) -> String {
    TRADUCOES
        .iter()
        .fold(texto.to_owned(), |t, (en, pt)| t.replace(en, pt))
}

/// The usage line of a clap error (which command it is about).
fn uso_de(e: &clap::Error) -> String {
    match e.get(ContextKind::Usage) {
        Some(ContextValue::StyledStr(s)) => s.to_string(),
        _ => String::new(),
    }
}

/// A clap error as the CLI's error: (message, hint). Help and version are not errors.
pub fn mensagem(e: &clap::Error) -> (String, Option<String>) {
    let texto = |k: ContextKind| match e.get(k) {
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
    let arg = texto(ContextKind::InvalidArg).unwrap_or_default();
    let valor = texto(ContextKind::InvalidValue).unwrap_or_default();
    let sugestao = texto(ContextKind::SuggestedSubcommand)
        .or_else(|| texto(ContextKind::SuggestedArg))
        .or_else(|| texto(ContextKind::SuggestedValue))
        // clap lists the candidates from the least to the most similar: the nearest is last.
        .map(|s| {
            let perto = s.rsplit(", ").next().unwrap_or(&s).to_owned();
            format!("você quis dizer `{perto}`?")
        });
    let validos = texto(ContextKind::ValidValue).map(|v| format!("valores possíveis: {v}"));
    let msg = match e.kind() {
        ErrorKind::InvalidValue if valor.is_empty() => format!("falta o valor de {arg}"),
        ErrorKind::InvalidValue => format!("valor inválido '{valor}' para {arg}"),
        ErrorKind::ValueValidation => {
            let motivo = std::error::Error::source(e)
                .map(|s| format!(": {s}"))
                .unwrap_or_default();
            format!("valor inválido '{valor}' para {arg}{motivo}")
        }
        ErrorKind::UnknownArgument => format!("argumento inesperado '{arg}'"),
        ErrorKind::InvalidSubcommand => {
            let c = texto(ContextKind::InvalidSubcommand).unwrap_or_default();
            if crate::valor::parse_reais(&c).is_ok() && uso_de(e).contains("recarga") {
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
            let outro = texto(ContextKind::PriorArg).unwrap_or_default();
            format!("{arg} não pode ser usado junto com {outro}")
        }
        ErrorKind::NoEquals => format!("{arg} exige '=' antes do valor"),
        ErrorKind::TooManyValues => format!("valores demais para {arg}: '{valor}'"),
        ErrorKind::TooFewValues | ErrorKind::WrongNumberOfValues => {
            format!("número errado de valores para {arg}")
        }
        ErrorKind::InvalidUtf8 => "argumento com UTF-8 inválido".to_owned(),
        _ => "argumentos inválidos".to_owned(),
    };
    let dica = sugestao.or(validos).or_else(|| {
        let uso = texto(ContextKind::Usage)?;
        Some(format!(
            "{}; veja --ajuda",
            traduzir(uso.trim()).trim_start_matches("Uso: ")
        ))
    });
    (msg, dica.map(|d| d.replace("Usage: ", "")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn erro(args: &[&str]) -> (String, Option<String>) {
        let e = comando()
            .try_get_matches_from(std::iter::once("carapi").chain(args.iter().copied()))
            .unwrap_err();
        mensagem(&e)
    }

    #[test]
    fn clap_errors_in_portuguese() {
        let (m, d) = erro(&["carr"]);
        assert_eq!(m, "comando desconhecido 'carr'");
        let d = d.unwrap();
        assert!(d.contains("você quis dizer `car`?"), "{d}");
        let (m, d) = erro(&["saldo", "-o", "xml"]);
        assert_eq!(m, "valor inválido 'xml' para --formato <FORMATO>");
        assert!(d.unwrap().starts_with("valores possíveis: tabela"));
        let (m, _) = erro(&["limites", "set", "--mensal", "1.500"]);
        assert!(m.contains("ambíguo"), "{m}");
        let (m, d) = erro(&["car"]);
        assert!(
            m.starts_with("faltam argumentos obrigatórios: <CODIGO>"),
            "{m}"
        );
        assert!(d.unwrap().contains("carapi car"));
    }

    #[test]
    fn every_command_has_examples_and_version_is_only_on_carapi() {
        fn visitar(cmd: &Command, caminho: &str) {
            assert!(
                exemplos(caminho).is_some(),
                "sem exemplos: carapi {caminho}"
            );
            assert_eq!(
                cmd.get_arguments().any(|a| a.get_long() == Some("versao")),
                caminho.is_empty(),
                "{caminho}"
            );
            for s in cmd.get_subcommands() {
                let sub = format!("{caminho} {}", s.get_name());
                visitar(s, sub.trim());
            }
        }
        visitar(&comando(), "");
    }
}
