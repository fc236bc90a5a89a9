//! The progress bar of a load: records done, records per second and time left, on stderr when
//! it is a terminal; hidden otherwise (pipes, logs, tests).
//!
//! Numbers are written as Brazilians write them (`1.000.000`, `150.858 registros/s`), and the bar
//! takes what the terminal's width leaves, so that the line fits an 80-column terminal.

use std::fmt::Write;
use std::io::IsTerminal;

use carapi_sdk::domain::br;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// A bar over `total` records (a spinner when unknown) labelled `etapa`; hidden unless `ativo`
/// and stderr is a terminal.
pub(super) fn bar(active: bool, total: Option<u64>, step: &'static str) -> ProgressBar {
    if !active || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let model = match total {
        Some(_) => "{msg:9} [{wide_bar}] {completed}/{total} {rate}, falta {eta}",
        None => "{spinner} {msg:9} {completed} registros, {rate}",
    };
    let style = ProgressStyle::with_template(model)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("feitos", |s: &ProgressState, w: &mut dyn Write| {
            let _ = w.write_str(&br::format_integer(s.pos()));
        })
        .with_key("total", |s: &ProgressState, w: &mut dyn Write| {
            let _ = w.write_str(&s.len().map_or_else(|| "?".into(), br::format_integer));
        })
        .with_key("taxa", |s: &ProgressState, w: &mut dyn Write| {
            let _ = write!(w, "{} registros/s", br::format_integer(s.per_sec() as u64));
        })
        .progress_chars("=> ");
    let b = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr()).with_style(style);
    b.set_message(step);
    b
}

/// Seconds with one decimal place and a decimal comma: `10,8`.
pub fn seconds_br(seconds: f64) -> String {
    format!("{seconds:.1}").replace('.', ",")
}

#[cfg(test)]
mod tests {
    use super::seconds_br;

    #[test]
    fn seconds_with_a_decimal_comma() {
        assert_eq!(seconds_br(10.84), "10,8");
        assert_eq!(seconds_br(0.0), "0,0");
    }
}
