//! The process's log on stderr: the filter of `CARAPI_LOG` (default `info`), text or JSON
//! lines (`--log-formato`, `CARAPI_LOG_FORMAT`), ANSI colours only when stderr is a terminal.
//!
//! Whatever the filter, the targets in [`ALWAYS_OFF`] log nothing: their events can carry what
//! must never reach a log (a path with a CPF or a CAR code).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::Directive;

use crate::cli::LogFormat;

/// Directives added after `CARAPI_LOG`'s, so that they win whatever it says. `axum::rejection`
/// traces the text of an extractor's rejection, which can quote the request.
const ALWAYS_OFF: &[&str] = &["axum::rejection=off"];

/// The filter: `CARAPI_LOG` (`info` when unset or not a filter) and [`ALWAYS_OFF`].
fn filter() -> EnvFilter {
    let mut f = EnvFilter::try_from_env("CARAPI_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    for d in ALWAYS_OFF {
        f = f.add_directive(d.parse::<Directive>().expect("a valid directive"));
    }
    f
}

/// Installs the process's subscriber.
pub(crate) fn init(format: LogFormat) {
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr)
        .with_ansi(format == LogFormat::Text && std::io::stderr().is_terminal());
    match format {
        LogFormat::Text => b.init(),
        LogFormat::Json => b
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
}
