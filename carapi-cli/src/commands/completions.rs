//! `carapi completar SHELL`: prints the completion script (bash, zsh, fish, powershell, elvish).

use crate::context::Context;
use crate::error::Result;

/// Arguments of `carapi completar`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// O shell
    #[arg(value_enum)]
    pub(crate) shell: clap_complete::Shell,
}

/// Runs `carapi completar` for `cmd`, the whole command tree: the script goes to stdout
/// (e.g. `carapi completar bash > ~/.local/share/bash-completion/completions/carapi`).
///
/// # Errors
/// Write errors.
pub(crate) fn run(ctx: &mut Context, args: Args, mut cmd: clap::Command) -> Result<()> {
    clap_complete::generate(args.shell, &mut cmd, "carapi", ctx.shell.out());
    Ok(())
}
