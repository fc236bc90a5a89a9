//! The one output object: every byte the CLI writes goes through [`Shell`].
//!
//! Rules:
//! - data (tables, JSON, CSV, the QR code of a top-up) goes to **stdout**;
//! - spinners, progress bars and status messages go to **stderr**, and only when stderr is a
//!   terminal and `--silencioso` is off ([`Shell::status`]);
//! - notes a script may need (batch plan and summary, where a file was saved) go to stderr unless
//!   `--silencioso` ([`Shell::note`]); warnings and errors always go to stderr;
//! - colour only when the stream is a terminal, `--sem-cor` is off and `NO_COLOR` is unset, so
//!   piped output never contains escape codes.
//!
//! Tests build a `Shell` over in-memory buffers with `Shell::from_write` (test builds only: no
//! terminal, no colour), as cargo's `Shell::from_write` and gh's `iostreams.Test()` do.

use std::io::{self, IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::format::{Fields, Listing};

/// The output format chosen with `-o/--formato`. CSV has two dialects: the analyst's
/// (`csv`: what Excel in Portuguese opens as columns and numbers) and the machine's (`csv-cru`:
/// the raw values, for scripts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    /// tabela com rótulos em português, dinheiro como R$ 1.234,56, horário de Brasília
    #[default]
    #[value(name = "tabela", alias = "table")]
    Table,
    /// o JSON da API para o objeto
    Json,
    /// CSV para planilha (Excel em português): `;`, vírgula decimal, datas dd/mm/aaaa, BOM
    Csv,
    /// CSV de máquina: `,`, ponto decimal, datas ISO 8601, true/false, sem BOM
    #[value(name = "csv-cru")]
    RawCsv,
    /// GeoJSON (só car e proprietario): um ponto por imóvel, para QGIS ou geojson.io
    Geojson,
}

impl OutputFormat {
    /// The commands that take `-o geojson`.
    pub(crate) const WITH_GEOJSON: [&'static str; 2] = ["car", "proprietario"];
}

/// Where stdout/stderr go and what they are.
pub(crate) struct Shell {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    out_tty: bool,
    err_tty: bool,
    stdin_tty: bool,
    color: bool,
    quiet: bool,
    flags: String,
    width: Option<u16>,
    err_width: Option<u16>,
    pager: Option<std::process::Child>,
}

impl std::fmt::Debug for Shell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shell")
            .field("out_tty", &self.out_tty)
            .field("err_tty", &self.err_tty)
            .field("color", &self.color)
            .field("quiet", &self.quiet)
            .finish()
    }
}

impl Shell {
    /// The process's real stdout/stderr; `no_color` is `--sem-cor` (the `NO_COLOR` environment
    /// variable is honoured too).
    pub(crate) fn from_std(quiet: bool, no_color: bool) -> Self {
        let no_color = no_color || std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Shell {
            out_tty: io::stdout().is_terminal(),
            err_tty: io::stderr().is_terminal(),
            stdin_tty: io::stdin().is_terminal(),
            out: Box::new(io::stdout()),
            err: Box::new(io::stderr()),
            color: !no_color,
            quiet,
            flags: String::new(),
            width: terminal_width(),
            err_width: stderr_width(),
            pager: None,
        }
    }

    /// A shell over arbitrary writers (tests): neither stream is a terminal, no colour.
    #[cfg(test)]
    fn from_write(out: Box<dyn Write + Send>, err: Box<dyn Write + Send>) -> Self {
        Shell {
            out,
            err,
            out_tty: false,
            err_tty: false,
            stdin_tty: false,
            color: false,
            quiet: false,
            flags: String::new(),
            width: None,
            err_width: None,
            pager: None,
        }
    }

    /// Tables are laid out to fit `width` columns (what [`Shell::from_std`] reads from the
    /// terminal of stdout); `None` leaves them at their natural width (piped output).
    #[cfg(test)]
    pub(crate) fn set_width(&mut self, width: Option<u16>) {
        self.width = width;
    }

    /// The width tables must fit, when stdout is a terminal.
    pub(crate) fn width(&self) -> Option<u16> {
        self.width
    }

    /// Sends the rest of stdout through a pager, as gh does: only when stdout is a terminal, with
    /// `CARAPI_PAGER`, else `PAGER`, else `less -FRX` (which exits at once when the text fits one
    /// screen). `CARAPI_PAGER=` (empty) or `cat` turns it off, as does `--sem-paginador`. A pager
    /// that cannot start is skipped silently.
    pub(crate) fn start_pager(&mut self) {
        if !self.out_tty || self.pager.is_some() {
            return;
        }
        let Some(cmd) = pager_command(
            std::env::var("CARAPI_PAGER").ok(),
            std::env::var("PAGER").ok(),
        ) else {
            return;
        };
        let child = std::process::Command::new("sh")
            .args(["-c", &cmd])
            .stdin(std::process::Stdio::piped())
            .spawn();
        if let Ok(mut child) = child
            && let Some(stdin) = child.stdin.take()
        {
            let _ = self.out.flush();
            self.out = Box::new(stdin);
            self.pager = Some(child);
        }
    }

    /// Closes the pager's input and waits for the user to leave it (no-op without a pager).
    pub(crate) fn close_pager(&mut self) {
        if let Some(mut child) = self.pager.take() {
            let _ = self.out.flush();
            self.out = Box::new(io::stdout());
            let _ = child.wait();
        }
    }

    /// The global flags in effect (`--local`, `--url-base URL`), repeated in every command a
    /// message on stderr suggests, so the hint works as printed.
    pub(crate) fn set_global_flags(&mut self, flags: &[String]) {
        self.flags = flags.join(" ");
    }

    /// True when stdout is a terminal.
    pub(crate) fn out_is_tty(&self) -> bool {
        self.out_tty
    }

    /// True when stderr is a terminal.
    pub(crate) fn err_is_tty(&self) -> bool {
        self.err_tty
    }

    /// True when escape codes may be written to stdout.
    pub(crate) fn out_color(&self) -> bool {
        self.color && self.out_tty
    }

    /// True when escape codes may be written to stderr.
    pub(crate) fn err_color(&self) -> bool {
        self.color && self.err_tty
    }

    /// True when `--silencioso` was given.
    pub(crate) fn is_quiet(&self) -> bool {
        self.quiet
    }

    /// True when a question can be asked: stdin and stderr are both terminals.
    pub(crate) fn can_prompt(&self) -> bool {
        self.stdin_tty && self.err_tty
    }

    /// The data stream (stdout).
    pub(crate) fn out(&mut self) -> &mut dyn Write {
        &mut *self.out
    }

    /// Writes one line of data to stdout.
    ///
    /// # Errors
    /// The write error (a broken pipe becomes exit code 0 in [`crate::error`]).
    pub(crate) fn line(&mut self, text: impl AsRef<str>) -> io::Result<()> {
        writeln!(self.out, "{}", text.as_ref())
    }

    /// A status message (progress narration) on stderr: only when stderr is a terminal and not quiet.
    pub(crate) fn status(&mut self, text: impl AsRef<str>) {
        if self.err_tty && !self.quiet {
            let text = with_flags(text.as_ref(), &self.flags);
            self.write_note(&text);
        }
    }

    /// A note on stderr a script may want too (batch plan/summary, saved file): unless quiet.
    pub(crate) fn note(&mut self, text: impl AsRef<str>) {
        if !self.quiet {
            let text = with_flags(text.as_ref(), &self.flags);
            self.write_note(&text);
        }
    }

    /// A status or note line on stderr, broken at spaces to the terminal; while a pager shows
    /// stdout, into the pager after what it shows (a person is reading it; stderr would land in
    /// the middle of the pager's screen).
    fn write_note(&mut self, text: &str) {
        if self.pager.is_some() {
            let _ = writeln!(self.out, "{}", wrap(text, self.width));
        } else {
            let _ = writeln!(self.err, "{}", wrap(text, self.err_width));
        }
    }

    /// A warning on stderr (always): `aviso: <text>`.
    pub(crate) fn warn(&mut self, text: impl AsRef<str>) {
        let text = with_flags(text.as_ref(), &self.flags);
        let text = wrap(&format!("aviso: {text}"), self.err_width);
        let label = self.paint_err("aviso:", "33;1");
        let _ = writeln!(self.err, "{label}{}", &text["aviso:".len()..]);
    }

    /// An error on stderr (always): `erro: <message> (<CODE>)` and, when given, `dica: <hint>`.
    pub(crate) fn error(&mut self, message: &str, code: &str, hint: Option<&str>) {
        let text = wrap(&format!("erro: {message} ({code})"), self.err_width);
        let label = self.paint_err("erro:", "31;1");
        let _ = writeln!(self.err, "{label}{}", &text["erro:".len()..]);
        if let Some(hint) = hint {
            let hint = with_flags(hint, &self.flags);
            let text = wrap(&format!("dica: {hint}"), self.err_width);
            let label = self.paint_err("dica:", "36");
            let _ = writeln!(self.err, "{label}{}", &text["dica:".len()..]);
        }
        let _ = self.err.flush();
    }

    /// A normal stop (Ctrl-C, exit 130): plain lines on stderr, no `erro:` label; always shown.
    pub(crate) fn stopped(&mut self, message: &str, hint: Option<&str>) {
        let _ = writeln!(self.err, "{message}.");
        if let Some(hint) = hint {
            let hint = with_flags(hint, &self.flags);
            let mut chars = hint.chars();
            let first: String = chars
                .next()
                .map(char::to_uppercase)
                .into_iter()
                .flatten()
                .collect();
            let _ = writeln!(self.err, "{first}{}", chars.as_str());
        }
        let _ = self.err.flush();
    }

    fn paint_err(&self, text: &str, sgr: &str) -> String {
        if self.err_color() {
            format!("\x1b[{sgr}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    /// Flushes both streams.
    ///
    /// # Errors
    /// The flush error of stdout.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        let _ = self.err.flush();
        self.out.flush()
    }

    /// Pretty JSON of `value` on stdout, followed by a newline.
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn json<T: Serialize + ?Sized>(&mut self, value: &T) -> io::Result<()> {
        // Serialised first, written after: a closed stdout stays an `io::ErrorKind::BrokenPipe`
        // (serde_json's writer would wrap it), so `| head` exits 0.
        let mut bytes = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
        bytes.push(b'\n');
        self.out.write_all(&bytes)
    }

    /// One object in the chosen format: a two-column table (`Campo | Valor`), or CSV with one row.
    /// (JSON is printed by the caller from the SDK model.)
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn fields(&mut self, fields: &Fields, format: OutputFormat) -> io::Result<()> {
        match format {
            OutputFormat::Csv | OutputFormat::RawCsv => self.csv(&fields.as_listing(), format),
            _ => {
                let table = fields.to_table(self.out_color(), self.width);
                writeln!(self.out, "{table}")
            }
        }
    }

    /// A list in table or CSV form.
    ///
    /// # Errors
    /// Write errors.
    pub(crate) fn listing(&mut self, listing: &Listing, format: OutputFormat) -> io::Result<()> {
        match format {
            OutputFormat::Csv | OutputFormat::RawCsv => self.csv(listing, format),
            _ => {
                if listing.rows.is_empty() {
                    self.status("(nenhum item)");
                    return Ok(());
                }
                let fitted = listing.to_table(self.out_color(), self.width);
                writeln!(self.out, "{}", fitted.table)?;
                if !fitted.omitted.is_empty() {
                    let note = format!(
                        "colunas omitidas para caber em {} colunas: {}; veja tudo com -o json, -o csv ou num terminal mais largo",
                        self.width.unwrap_or_default(),
                        fitted.omitted.join(", ")
                    );
                    self.status(note);
                }
                Ok(())
            }
        }
    }

    /// `listing` as CSV: the analyst's dialect for [`OutputFormat::Csv`] (the Portuguese titles,
    /// `;`, decimal comma, local dates, `sim`/`não`, a BOM so Excel reads UTF-8;
    /// [`crate::format::CellValue::spreadsheet`]), the machine's for [`OutputFormat::RawCsv`]
    /// (the field names, `,`, the raw values).
    fn csv(&mut self, listing: &Listing, format: OutputFormat) -> io::Result<()> {
        write_csv(&mut *self.out, listing, format)
    }

    /// A spinner on stderr (hidden unless stderr is a terminal and not quiet).
    pub(crate) fn spinner(&self, message: impl Into<String>) -> ProgressBar {
        let pb = ProgressBar::with_draw_target(None, self.progress_target());
        pb.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})").expect("valid template"),
        );
        pb.set_message(message.into());
        pb.enable_steady_tick(std::time::Duration::from_millis(120));
        pb
    }

    /// A progress bar with ETA on stderr (hidden unless stderr is a terminal and not quiet).
    /// Besides indicatif's keys, `{por_seg}` is the rate with a decimal comma (`18,8/s`).
    pub(crate) fn progress(&self, len: u64, template: &str) -> ProgressBar {
        let pb = ProgressBar::with_draw_target(Some(len), self.progress_target());
        pb.set_style(
            ProgressStyle::with_template(template)
                .expect("valid template")
                .with_key(
                    "por_seg",
                    |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&rate_br(s.per_sec()));
                    },
                )
                .progress_chars("█▉▊▋▌▍▎▏ "),
        );
        pb
    }

    fn progress_target(&self) -> ProgressDrawTarget {
        if self.err_tty && !self.quiet {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        }
    }
}

/// `listing` as the bytes of a CSV file in `format`'s dialect (as [`Shell`] writes `-o csv`
/// and `-o csv-cru`).
///
/// # Errors
/// CSV errors, as I/O errors.
pub(crate) fn csv_bytes(listing: &Listing, format: OutputFormat) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    write_csv(&mut bytes, listing, format)?;
    Ok(bytes)
}

/// Writes `listing` as CSV (see [`Shell`]'s `csv`) to `out`.
fn write_csv(out: &mut dyn Write, listing: &Listing, format: OutputFormat) -> io::Result<()> {
    let spreadsheet = format == OutputFormat::Csv;
    if spreadsheet {
        out.write_all(crate::format::BYTE_ORDER_MARK.as_bytes())?;
    }
    let mut w = csv::WriterBuilder::new()
        .delimiter(if spreadsheet { b';' } else { b',' })
        .from_writer(out);
    // People's CSV is titled as the table is; the machine's keeps the field names.
    w.write_record(
        listing
            .columns
            .iter()
            .map(|c| if spreadsheet { c.label } else { c.key }),
    )
    .map_err(csv_io)?;
    for line in &listing.rows {
        if spreadsheet {
            w.write_record(line.iter().map(crate::format::CellValue::spreadsheet))
        } else {
            w.write_record(line.iter().map(|c| c.raw.as_str()))
        }
        .map_err(csv_io)?;
    }
    w.flush()
}

/// A rate per second as Brazilians write it, one decimal place: `18,8/s`.
fn rate_br(per_second: f64) -> String {
    format!("{per_second:.1}/s").replace('.', ",")
}

/// The pager command: `CARAPI_PAGER`, else `PAGER`, else `less -FRX`; `None` when the chosen one
/// is empty or `cat`.
fn pager_command(carapi_pager: Option<String>, pager: Option<String>) -> Option<String> {
    let cmd = carapi_pager
        .or(pager)
        .unwrap_or_else(|| "less -FRX".to_owned());
    let cmd = cmd.trim();
    (!cmd.is_empty() && cmd != "cat").then(|| cmd.to_owned())
}

/// Columns of the terminal stderr is on; `None` when stderr is not a terminal.
fn stderr_width() -> Option<u16> {
    if !io::stderr().is_terminal() {
        return None;
    }
    terminal_size::terminal_size_of(io::stderr())
        .map(|(w, _)| w.0)
        .filter(|w| *w >= 20)
}

/// `text` with every line longer than `width` broken at spaces (never inside a word), the
/// continuation lines indented by two spaces; unchanged without a width (not a terminal).
pub(crate) fn wrap(text: &str, width: Option<u16>) -> String {
    let Some(max) = width.map(usize::from) else {
        return text.to_owned();
    };
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let mut current = String::new();
        for word in line.split(' ') {
            let n = current.chars().count();
            if n > 0 && n + 1 + word.chars().count() > max && !current.trim().is_empty() {
                out.push_str(current.trim_end());
                out.push('\n');
                current = String::from(" ");
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        out.push_str(&current);
    }
    out
}

/// Columns of the terminal stdout is on; `None` when stdout is not a terminal.
fn terminal_width() -> Option<u16> {
    if !io::stdout().is_terminal() {
        return None;
    }
    terminal_size::terminal_size()
        .map(|(w, _)| w.0)
        .or_else(|| std::env::var("COLUMNS").ok()?.parse().ok())
        .filter(|w| *w >= 20)
}

/// Inserts `flags` after every `carapi ` that starts a command in `text` (`carapi recarga ...`
/// becomes `carapi --local recarga ...`); `text` unchanged when `flags` is empty.
fn with_flags(text: &str, flags: &str) -> String {
    if flags.is_empty() {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + flags.len());
    let mut rest = text;
    while let Some(i) = rest.find("carapi ") {
        let before = &rest[..i];
        let after = &rest[i + "carapi ".len()..];
        let word_start = !before
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '/' || c == '_');
        // `carapi local ...` runs the local server itself: no global flags to repeat.
        let command =
            after.starts_with(|c: char| c.is_ascii_lowercase()) && !after.starts_with("local ");
        out.push_str(before);
        out.push_str("carapi ");
        if word_start && command {
            out.push_str(flags);
            out.push(' ');
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

fn csv_io(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A cloneable in-memory writer for tests of code that takes a [`Shell`].
    #[derive(Debug, Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Buffer {
        /// Everything written so far, as UTF-8 (lossy).
        pub(crate) fn contents(&self) -> String {
            String::from_utf8_lossy(&self.0.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
        }
    }

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    use crate::format::CellValue;

    #[test]
    fn the_batch_rate_has_a_decimal_comma() {
        assert_eq!(rate_br(18.84), "18,8/s");
        assert_eq!(rate_br(0.0), "0,0/s");
    }

    #[test]
    fn buffers_get_data_and_errors_but_no_status_or_colour() {
        let (out, err) = (Buffer::default(), Buffer::default());
        let mut sh = Shell::from_write(Box::new(out.clone()), Box::new(err.clone()));
        sh.status("girando");
        sh.note("nota");
        sh.error("falhou", "X", Some("tente de novo"));
        sh.line("dado").unwrap();
        assert_eq!(out.contents(), "dado\n");
        assert_eq!(
            err.contents(),
            "nota\nerro: falhou (X)\ndica: tente de novo\n"
        );
        assert!(!err.contents().contains('\x1b'));
    }

    #[test]
    fn tables_fit_the_width() {
        let mut t = Listing::new(&[("a", "Coluna A"), ("b", "Coluna B"), ("c", "Coluna C")]);
        t.push_row(vec![
            CellValue::text("x".repeat(60)),
            CellValue::text("y".repeat(60)),
            CellValue::text("z ".repeat(40)),
        ]);
        let out = Buffer::default();
        let mut sh = Shell::from_write(Box::new(out.clone()), Box::new(Buffer::default()));
        sh.set_width(Some(80));
        sh.listing(&t, OutputFormat::Table).unwrap();
        let text = out.contents();
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(text.contains("Coluna C"));
    }

    #[test]
    fn stderr_lines_break_between_words() {
        let t = "colunas omitidas para caber em 60 colunas: Município, UF, Área total (ha); veja tudo com -o json";
        let q = wrap(t, Some(30));
        assert!(q.lines().all(|l| l.chars().count() <= 30), "{q}");
        assert_eq!(
            q.split_whitespace().collect::<Vec<_>>(),
            t.split_whitespace().collect::<Vec<_>>()
        );
        assert_eq!(wrap(t, None), t);
    }

    #[test]
    fn pager_choice() {
        let s = |v: &str| Some(v.to_owned());
        assert_eq!(pager_command(None, None).as_deref(), Some("less -FRX"));
        assert_eq!(pager_command(None, s("most")).as_deref(), Some("most"));
        assert_eq!(pager_command(s("bat"), s("most")).as_deref(), Some("bat"));
        assert_eq!(pager_command(s(""), s("most")), None);
        assert_eq!(pager_command(s("cat"), None), None);
    }

    #[test]
    fn hints_get_the_global_flags() {
        assert_eq!(
            with_flags(
                "para acompanhar: carapi recarga status X --esperar; veja carapi saldo. API carapi.",
                "--local"
            ),
            "para acompanhar: carapi --local recarga status X --esperar; veja carapi --local saldo. API carapi."
        );
        assert_eq!(with_flags("carapi login", ""), "carapi login");
        assert_eq!(
            with_flags("carapi-cli carapi Login", "--local"),
            "carapi-cli carapi Login"
        );
    }

    #[test]
    fn csv_uses_raw_values_and_keys() {
        let out = Buffer::default();
        let mut sh = Shell::from_write(Box::new(out.clone()), Box::new(Buffer::default()));
        let mut t = Listing::new(&[("valor", "Valor"), ("nome", "Nome")]);
        t.push_row(vec![
            CellValue::money(rust_decimal::Decimal::new(123456, 2)),
            CellValue::text("a,b"),
        ]);
        sh.listing(&t, OutputFormat::RawCsv).unwrap();
        assert_eq!(out.contents(), "valor,nome\n1234.56,\"a,b\"\n");
        let out = Buffer::default();
        let mut sh = Shell::from_write(Box::new(out.clone()), Box::new(Buffer::default()));
        sh.listing(&t, OutputFormat::Csv).unwrap();
        assert_eq!(out.contents(), "\u{feff}Valor;Nome\n1234,56;a,b\n");
    }
}
