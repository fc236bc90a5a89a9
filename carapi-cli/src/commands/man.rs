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

/// Section headings clap_mangen writes, and their Portuguese.
const SECTIONS: [(&str, &str); 9] = [
    (".SH NAME", ".SH NOME"),
    (".SH SYNOPSIS", ".SH SINOPSE"),
    (".SH DESCRIPTION", ".SH DESCRIÇÃO"),
    (".SH OPTIONS", ".SH OPÇÕES"),
    (".SH SUBCOMMANDS", ".SH COMANDOS"),
    (".SH EXTRA", ".SH MAIS"),
    (".SH VERSION", ".SH VERSÃO"),
    (".SH AUTHORS", ".SH AUTORES"),
    ("[OPTIONS]", "[OPÇÕES]"),
];

/// One page (roff) of `cmd`, in Portuguese.
///
/// # Errors
/// Write errors.
pub(crate) fn page(cmd: clap::Command) -> std::io::Result<String> {
    let mut buf = vec![];
    clap_mangen::Man::new(cmd).render(&mut buf)?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    Ok(SECTIONS.iter().fold(text, |t, (en, pt)| t.replace(en, pt)))
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
