//! The PIX QR code drawn in the terminal with Unicode half blocks (`▀ ▄ █`), two modules per
//! character cell vertically, so that the code, the amount and the waiting spinner fit one 80x24
//! screen.
//!
//! Size: error-correction level L ([`EC_LEVEL`]: a screen is not a crumpled sticker; the bank's
//! camera reads a clean, flat image) and a quiet zone of [`QUIET_ZONE`] modules (the 4 of ISO/IEC 18004
//! are for print; on a screen two suffice, even with the terminal's dark background right around
//! them: the pty test `carapi-cli/tests/terminal.rs` decodes the code from the screen cells read as
//! a dark terminal shows them). The `qrcode` crate picks the smallest segments (numeric,
//! alphanumeric, byte), so an upper-case BR Code is much smaller than a lower-case one: the
//! reference server's (about 150 characters, all in the alphanumeric set but the GUI
//! `br.gov.bcb.pix`; carapi-service `pix::payload_charge`) is a version-5 code, 37 modules: 41
//! columns and 21 lines here, which leaves an 80x24 screen room for the amount, the waiting
//! spinner and one more line.
//!
//! Colours: a phone reads dark modules on a light background.
//! - With colour on (stdout a terminal, no `--sem-cor`/`NO_COLOR`), each line is painted black on
//!   bright white, so it scans on light and dark terminal themes alike; blocks are dark modules.
//! - Without colour (piped, or `--sem-cor`), the text assumes the usual light-on-dark terminal:
//!   blocks (`█`) are the **light** modules and the quiet zone, spaces are the dark modules (the
//!   convention of `qrencode -t UTF8`). `bitmap` (test builds) reads either form back.

use qrcode::{Color, EcLevel, QrCode};

use crate::error::{CliError, Result};

/// Error-correction level of the terminal QR code.
pub(crate) const EC_LEVEL: EcLevel = EcLevel::L;

/// Light modules around the symbol.
pub(crate) const QUIET_ZONE: usize = 2;

/// The QR code of `payload` at [`EC_LEVEL`].
///
/// # Errors
/// When the payload is too long for a QR code (not the case for a PIX BR Code).
fn symbol(payload: &str) -> Result<QrCode> {
    QrCode::with_error_correction_level(payload.as_bytes(), EC_LEVEL).map_err(|e| {
        tracing::debug!("qrcode: {e}");
        CliError::other(
            "QR",
            "não foi possível gerar o QR code: conteúdo grande demais",
        )
    })
}

/// Renders `payload` as half-block text (lines joined by `\n`, no trailing newline): the code
/// with a [`QUIET_ZONE`]-module quiet zone, an even number of module rows (one light row added when
/// needed), `(width + 2 * QUIET_ZONE + 1) / 2` lines.
///
/// # Errors
/// Those of [`symbol`].
pub(crate) fn render(payload: &str, colored: bool) -> Result<String> {
    let code = symbol(payload)?;
    let w = code.width();
    let n = w + 2 * QUIET_ZONE;
    let line_count = n.div_ceil(2);
    let dark = |x: usize, y: usize| {
        x >= QUIET_ZONE
            && y >= QUIET_ZONE
            && x - QUIET_ZONE < w
            && y - QUIET_ZONE < w
            && code[(x - QUIET_ZONE, y - QUIET_ZONE)] == Color::Dark
    };
    let mut out = Vec::with_capacity(line_count);
    for l in 0..line_count {
        let line: String = (0..n)
            .map(|x| {
                let (upper, lower) = (dark(x, 2 * l), dark(x, 2 * l + 1));
                // "Ink" is what the glyph draws: dark modules on a painted light background, or
                // light modules on the terminal's dark background.
                let (a, b) = if colored {
                    (upper, lower)
                } else {
                    (!upper, !lower)
                };
                match (a, b) {
                    (true, true) => '█',
                    (true, false) => '▀',
                    (false, true) => '▄',
                    (false, false) => ' ',
                }
            })
            .collect();
        out.push(if colored {
            format!("\x1b[30;107m{line}\x1b[0m")
        } else {
            line
        });
    }
    Ok(out.join("\n"))
}

/// Turns half-block text back into a bitmap of modules (`true` = dark), reading the
/// uncoloured form of [`render`] (blocks = light). Lines that are not QR lines are skipped.
/// Used by tests to decode what the CLI printed.
#[cfg(test)]
fn bitmap(text: &str) -> Vec<Vec<bool>> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && l.chars().all(|c| matches!(c, '█' | '▀' | '▄' | ' ')))
        .filter(|l| l.contains('█'))
        .collect();
    let mut rows = vec![];
    for l in lines {
        let (mut top, mut bottom) = (vec![], vec![]);
        for c in l.chars() {
            // (upper half light, lower half light)
            let (t, b) = match c {
                '█' => (true, true),
                '▀' => (true, false),
                '▄' => (false, true),
                _ => (false, false),
            };
            top.push(!t);
            bottom.push(!b);
        }
        rows.push(top);
        rows.push(bottom);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_render_has_no_escapes_and_round_trips_to_the_code() {
        let payload = "00020101021226840014br.gov.bcb.pix2562exemplo";
        let text = render(payload, false).unwrap();
        assert!(!text.contains('\x1b'));
        let bits = bitmap(&text);
        let code = QrCode::with_error_correction_level(payload.as_bytes(), EC_LEVEL).unwrap();
        let w = code.width();
        assert_eq!(bits[0].len(), w + 2 * QUIET_ZONE);
        assert!(bits[..QUIET_ZONE].iter().all(|r| r.iter().all(|d| !d)));
        for y in 0..w {
            for x in 0..w {
                assert_eq!(
                    bits[y + QUIET_ZONE][x + QUIET_ZONE],
                    code[(x, y)] == qrcode::Color::Dark,
                    "({x},{y})"
                );
            }
        }
    }

    #[test]
    fn a_150_character_br_code_fits_25_lines_and_49_columns() {
        let payload = format!(
            "{:0<150}",
            "00020101021226840014br.gov.bcb.pix2562pix.exemplo.com.br/"
        );
        let text = render(&payload, false).unwrap();
        assert!(text.lines().count() <= 25, "{}", text.lines().count());
        assert!(text.lines().all(|l| l.chars().count() <= 49));
    }

    #[test]
    fn the_reference_servers_br_code_fits_21_lines_and_41_columns() {
        // The simulated PSP's BR Code at the ceiling amount (carapi-service `money::recarga::VALOR_MAXIMO`).
        let c = carapi_service::Config::default();
        let payload = carapi_service::pix::payload_charge(
            &c.pix_location_base,
            &c.pix_nome,
            &c.pix_cidade,
            &carapi_service::pix::new_payment_id(),
            carapi_service::money::recarga::VALOR_MAXIMO,
        );
        let text = render(&payload, true).unwrap();
        assert!(text.lines().count() <= 21, "{}", text.lines().count());
        let plain = render(&payload, false).unwrap();
        assert!(plain.lines().all(|l| l.chars().count() <= 41));
    }

    #[test]
    fn coloured_render_paints_each_line() {
        let text = render("abc", true).unwrap();
        assert!(
            text.lines()
                .all(|l| l.starts_with("\x1b[30;107m") && l.ends_with("\x1b[0m"))
        );
    }
}
