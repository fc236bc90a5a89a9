//! The `carapi` command-line tool: every operation of the carapi `/v1` API in the
//! terminal, PIX QR top-ups, resumable batches, and a local mode that runs the reference server
//! in-process.
//!
//! Layout (as cargo and gh do it): `cli` is the clap tree; each command is one file under
//! `commands` with its arguments and `run(ctx, args)`, and `dispatch` is the one place that
//! dispatches to them; the options every command shares are in `options`; all output goes
//! through `output::Shell`; `error` maps every failure to an exit code and a hint. Modules
//! depend on each other one way (`cli` → `commands` → `context`/`options` → `output`). API calls go
//! through `carapi-sdk` only; local mode uses the `carapi-service` library.
//!
//! Only [`main`] (the binary) and [`help::command`] (the command tree, for the help tests) are
//! public; every other item is `pub(crate)` (`cargo doc --document-private-items` shows them).
#![warn(missing_docs)]

pub(crate) mod archive;
pub(crate) mod batch;
pub(crate) mod changes;
pub(crate) mod cli;
pub(crate) mod commands;
pub(crate) mod config;
pub(crate) mod context;
pub(crate) mod credentials;
pub(crate) mod error;
pub(crate) mod foreign_errors;
pub(crate) mod format;
pub mod help;
pub(crate) mod layout;
#[cfg(feature = "local")]
pub(crate) mod local;
pub(crate) mod options;
pub(crate) mod output;
pub(crate) mod parsers;
pub(crate) mod prices;
pub(crate) mod prompt;
pub(crate) mod qr;
pub(crate) mod test_hook;
pub(crate) mod verbose;
pub(crate) mod vigiar;

use std::process::ExitCode;

use clap::FromArgMatches;

use crate::cli::Cli;
use crate::context::Context;
use crate::error::Kind;
use crate::output::Shell;

/// Runs the CLI with the process's arguments and streams; what `main` returns.
pub fn main() -> ExitCode {
    let matches = match help::command()
        .try_get_matches_from(help::rewrite_help_request(std::env::args_os()))
    {
        Ok(m) => m,
        Err(e) => return usage_error(&e),
    };
    if let Some(command) = misplaced_geojson(&matches) {
        let mut shell = Shell::from_std(false, false);
        shell.error(
            &format!("o formato geojson não existe para `carapi {command}`"),
            "USO",
            Some("-o geojson vale para car e proprietario; num lote, use --saida ARQUIVO.geojson"),
        );
        return ExitCode::from(2);
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => return usage_error(&e),
    };
    let mut shell = Shell::from_std(cli.global.quiet, cli.global.no_color);
    shell.set_global_flags(&global_flags(&cli.global));
    init_tracing(cli.global.verbose, shell.err_color());
    let paths = match config::Paths::resolve() {
        Ok(p) => p,
        Err(e) => {
            shell.error(&e.message, &e.code, e.hint.as_deref());
            return e.exit_code();
        }
    };
    paths.remove_legacy();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            shell.error(
                &format!(
                    "não foi possível iniciar o runtime: {}",
                    foreign_errors::io(&e)
                ),
                "ERRO",
                None,
            );
            return ExitCode::FAILURE;
        }
    };
    let mut ctx = Context::new(shell, cli.global, cli.format.output, paths);
    let result = runtime.block_on(async {
        let r = dispatch(&mut ctx, cli.command).await;
        ctx.shutdown().await;
        r
    });
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    let result = result.and_then(|()| ctx.shell.flush().map_err(Into::into));
    ctx.shell.close_pager();
    match result {
        Ok(()) if let Some(status) = ctx.success_exit => ExitCode::from(status),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind == Kind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) if e.kind == Kind::Interrupted => {
            ctx.shell.stopped(&e.message, e.hint.as_deref());
            e.exit_code()
        }
        Err(e) => {
            if e.kind == Kind::Balance {
                // A 402: the prices are read again next time.
                prices::forget(&ctx.paths);
            }
            let e = e.with_server_url(ctx.used_base_url());
            ctx.shell.error(&e.message, &e.code, e.hint.as_deref());
            e.exit_code()
        }
    }
}

/// Runs one command (the one place that knows every command: `cli` and `commands` stay
/// one-way).
///
/// # Errors
/// The command's error, mapped to an exit code by [`crate::error`].
async fn dispatch(ctx: &mut Context, command: cli::Command) -> error::Result<()> {
    use cli::Command as C;
    match command {
        C::Car(a) => commands::car::run(ctx, a).await,
        C::Recibo(a) => commands::recibo::run(ctx, a).await,
        C::Proprietario(a) => commands::proprietario::run(ctx, a).await,
        C::Saldo(a) => commands::saldo::run(ctx, a).await,
        C::Historico(a) => commands::historico::run(ctx, a).await,
        C::Limites(a) => commands::limites::run(ctx, a).await,
        C::Uso(a) => commands::uso::run(ctx, a).await,
        C::Recarga(a) => commands::recarga::run(ctx, a).await,
        C::Recargas(a) => commands::recargas::run(ctx, a).await,
        C::Batch(a) => commands::batch::run(ctx, a).await,
        C::Login(a) => commands::login::run(ctx, a).await,
        C::Logout(a) => commands::logout::run(ctx, a).await,
        C::Config(a) => commands::config::run(ctx, a).await,
        C::Acervo(a) => commands::acervo::run(ctx, a).await,
        C::Vigiar(a) => commands::vigiar::run(ctx, a).await,
        C::Completions(a) => commands::completions::run(ctx, a, help::command()),
        C::Man(a) => commands::man::run(ctx, a, help::command()),
        C::Local(a) => commands::local::run(ctx, a).await,
    }
}

/// The command given `-o geojson` when it is not one of [`output::OutputFormat::WITH_GEOJSON`].
fn misplaced_geojson(m: &clap::ArgMatches) -> Option<String> {
    let is_geojson = |m: &clap::ArgMatches| {
        m.try_get_one::<output::OutputFormat>("output")
            .ok()
            .flatten()
            .is_some_and(|f| *f == output::OutputFormat::Geojson)
    };
    let (name, mut current) = m.subcommand()?;
    let mut uses = is_geojson(m);
    loop {
        uses |= is_geojson(current);
        match current.subcommand() {
            Some((_, s)) => current = s,
            None => break,
        }
    }
    (uses && !output::OutputFormat::WITH_GEOJSON.contains(&name)).then(|| name.to_owned())
}

/// Help and version on stdout (exit 0); clap's errors in the CLI's form on stderr (exit 2).
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    use std::io::Write;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let text = if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                e.render().ansi().to_string()
            } else {
                e.render().to_string()
            };
            let _ = write!(std::io::stdout(), "{}", help::translate(&text));
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = write!(
                std::io::stderr(),
                "{}",
                help::translate(&e.render().to_string())
            );
            ExitCode::from(2)
        }
        _ => {
            let no_color = std::env::args().any(|a| a == "--sem-cor" || a == "--no-color");
            let mut shell = Shell::from_std(false, no_color);
            shell.set_global_flags(&raw_global_flags());
            let (msg, hint) = help::message(e);
            shell.error(&msg, "USO", hint.as_deref());
            ExitCode::from(2)
        }
    }
}

/// The global flags a suggested command must repeat to reach the same server: `--local`, and
/// `--url-base URL` when given on the command line (an environment variable stays in effect).
fn global_flags(g: &options::Global) -> Vec<String> {
    let mut flags = vec![];
    if g.local {
        flags.push("--local".to_owned());
    } else if let Some(url) = &g.base_url
        && std::env::var("CARAPI_BASE_URL").ok().as_deref() != Some(url.as_str())
    {
        flags.push("--url-base".to_owned());
        flags.push(shell_quote(url));
    }
    flags
}

/// The global flags of the raw command line (when clap refused it), for the suggested command:
/// `--local`, `--url-base URL`.
fn raw_global_flags() -> Vec<String> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--local") {
        return vec!["--local".to_owned()];
    }
    args.windows(2)
        .find(|w| w[0] == "--url-base" || w[0] == "--base-url")
        .map(|w| vec!["--url-base".to_owned(), shell_quote(&w[1])])
        .unwrap_or_default()
}

/// `s` as one shell word: as is when it has only safe characters, else in single quotes.
fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || ":/._-@%+=,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// `-v`: one line per HTTP request a person reads ([`verbose::RequestSummary`]); `-vv`: the raw debug
/// log of the SDK, the CLI and the local server.
fn init_tracing(verbose: u8, color: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    match verbose {
        0 => {}
        1 => {
            let s = tracing_subscriber::registry()
                .with(tracing_subscriber::EnvFilter::new("carapi_sdk::http=debug"))
                .with(verbose::RequestSummary);
            let _ = tracing::subscriber::set_global_default(s);
        }
        _ => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(
                    "carapi_sdk=trace,carapi_cli=debug,carapi_service=debug",
                ))
                .with_writer(std::io::stderr)
                .with_ansi(color)
                .try_init();
        }
    }
}
