//! The `carapi` command-line tool (issue 4): every operation of the carapi `/v1` API in the
//! terminal, PIX QR top-ups, resumable batches, and a local mode that runs the reference server
//! in-process.
//!
//! Layout (as cargo and gh do it): [`cli`] is the clap tree; each command is one file under
//! [`commands`] with its arguments and `run(ctx, args)`; all output goes through
//! [`output::Shell`]; [`error`] maps every failure to an exit code and a hint. API calls go
//! through `carapi-sdk` only; local mode uses the `carapi-server` library.
#![warn(missing_docs)]

pub mod cli;
pub mod commands;
pub mod config;
pub mod context;
pub mod credentials;
pub mod error;
pub mod format;
pub mod local;
pub mod lote;
pub mod output;
pub mod qr;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::Cli;
use crate::context::Context;
use crate::error::Kind;
use crate::output::Shell;

/// Runs the CLI with the process's arguments and streams; what `main` returns.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let mut shell = Shell::from_std(cli.global.quiet, cli.global.no_color);
    init_tracing(cli.global.verbose, shell.err_color());
    let paths = match config::Paths::resolve() {
        Ok(p) => p,
        Err(e) => {
            shell.error(&e.message, &e.code, e.hint.as_deref());
            return e.exit_code();
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            shell.error(
                &format!("não foi possível iniciar o runtime: {e}"),
                "ERRO",
                None,
            );
            return ExitCode::FAILURE;
        }
    };
    let mut ctx = Context::new(shell, cli.global, cli.formato.output, paths);
    let result = runtime.block_on(async {
        let r = commands::run(&mut ctx, cli.comando).await;
        ctx.encerrar().await;
        r
    });
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    let result = result.and_then(|()| ctx.shell.flush().map_err(Into::into));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind == Kind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            ctx.shell.error(&e.message, &e.code, e.hint.as_deref());
            e.exit_code()
        }
    }
}

/// `-v`: one line per HTTP request from the SDK (`carapi_sdk::http`) on stderr; `-vv`: all debug.
fn init_tracing(verbose: u8, color: bool) {
    let filter = match verbose {
        0 => return,
        1 => "carapi_sdk=debug",
        _ => "carapi_sdk=trace,carapi_cli=debug,carapi_server=debug",
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(color)
        .with_target(verbose > 1)
        .try_init();
}
