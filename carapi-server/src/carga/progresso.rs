//! The progress bar of a load: records done, records per second and time left, on stderr when
//! it is a terminal; hidden otherwise (pipes, logs, tests).

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar over `total` records (a spinner when unknown) labelled `etapa`; hidden unless `ativo`
/// and stderr is a terminal.
pub(super) fn barra(ativo: bool, total: Option<u64>, etapa: &'static str) -> ProgressBar {
    if !ativo || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let modelo = match total {
        Some(_) => "{msg:10} [{bar:30}] {human_pos}/{human_len} registros, {per_sec}, falta {eta}",
        None => "{spinner} {msg:10} {human_pos} registros, {per_sec}",
    };
    let estilo = ProgressStyle::with_template(modelo)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    let b = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr()).with_style(estilo);
    b.set_message(etapa);
    b
}
