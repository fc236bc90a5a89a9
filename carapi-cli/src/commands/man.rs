//! `carapi man [--dir DIR]`: the manual pages, generated (clap_mangen) from the same definition as
//! the help, with the section names in Portuguese.

use std::path::PathBuf;

use crate::context::Context;
use crate::error::{CliError, Result};

/// Arguments of `carapi man`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Grava uma página por comando (carapi.1, carapi-car.1, ...) neste diretório, em vez de
    /// mostrar a página de `carapi` no stdout
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

/// Section headings and labels clap_mangen writes, and their Portuguese.
const SECTIONS: [(&str, &str); 10] = [
    (".SH NAME", ".SH NOME"),
    (".SH SYNOPSIS", ".SH SINOPSE"),
    (".SH DESCRIPTION", ".SH DESCRIÇÃO"),
    (".SH OPTIONS", ".SH OPÇÕES"),
    (".SH SUBCOMMANDS", ".SH COMANDOS"),
    (".SH EXTRA", ".SH MAIS"),
    (".SH VERSION", ".SH VERSÃO"),
    (".SH AUTHORS", ".SH AUTORES"),
    ("[OPTIONS]", "[OPÇÕES]"),
    ("Possible values:", "Valores possíveis:"),
];

/// One page (roff) of `cmd`, in Portuguese: the values of an option as a list (the help's
/// own list would be one paragraph in roff), and commands named as they are typed (`carapi
/// lote`, not the page's name `carapi-lote`).
///
/// # Errors
/// Write errors.
pub(crate) fn page(cmd: clap::Command) -> std::io::Result<String> {
    let typed = cmd.get_name().replace('-', " ");
    let names = page_names(&cmd);
    let mut buf = vec![];
    clap_mangen::Man::new(for_man(cmd.bin_name(typed))).render(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    let text = SECTIONS.iter().fold(text, |t, (en, pt)| t.replace(en, pt));
    // roff writes `-` as `\-`; the title line (`.TH name section`) keeps the page's name.
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with(".TH") {
                return l.to_owned();
            }
            names.iter().fold(l.to_owned(), |l, n| {
                l.replace(
                    &format!("{}(1)", n.replace('-', "\\-")),
                    &n.replace('-', " "),
                )
                .replace(&n.replace('-', "\\-"), &n.replace('-', " "))
            })
        })
        .collect();
    Ok(lines.join("\n") + "\n")
}

/// The page names of `cmd` and its subcommands, longest first (`carapi-acervo-listar` before
/// `carapi-acervo`).
fn page_names(cmd: &clap::Command) -> Vec<String> {
    let mut names: Vec<String> = pages(cmd.clone(), cmd.get_name())
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.contains('-'))
        .collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    names
}

/// `cmd` for clap_mangen: an argument whose help lists its values (see `help::in_portuguese`)
/// gets its values back as clap's own list, which roff lays out one per line.
fn for_man(cmd: clap::Command) -> clap::Command {
    let cmd = cmd.mut_args(|a| {
        let Some(long) = a.get_long_help().map(ToString::to_string) else {
            return a;
        };
        match long.split_once("\n\nValores possíveis:") {
            Some((head, _)) => a.long_help(head.to_owned()).hide_possible_values(false),
            None => a,
        }
    });
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    subcommands
        .into_iter()
        .fold(cmd, |c, n| c.mut_subcommand(&n, for_man))
}

/// Runs `carapi man` over `cmd`, the whole command tree (`crate::help::command`).
///
/// # Errors
/// Write errors (1).
pub(crate) fn run(ctx: &mut Context, args: Args, cmd: clap::Command) -> Result<()> {
    let Some(dir) = args.dir else {
        ctx.shell.out().write_all(page(cmd)?.as_bytes())?;
        return Ok(());
    };
    std::fs::create_dir_all(&dir).map_err(|e| CliError::io_at(&dir, e))?;
    let mut n = 0;
    for (name, c) in pages(cmd, "carapi") {
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, page(c)?).map_err(|e| CliError::io_at(&path, e))?;
        n += 1;
    }
    ctx.shell
        .note(format!("{n} página(s) gravada(s) em {}", dir.display()));
    Ok(())
}

fn pages(cmd: clap::Command, name: &str) -> Vec<(String, clap::Command)> {
    let mut out = vec![];
    for s in cmd.get_subcommands() {
        let sub = format!("{name}-{}", s.get_name());
        let c = s.clone().name(sub.clone());
        out.extend(pages(c, &sub));
    }
    out.insert(0, (name.to_owned(), cmd.name(name.to_owned())));
    out
}
