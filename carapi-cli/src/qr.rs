//! The PIX QR code drawn in the terminal with Unicode half blocks (`▀ ▄ █`), two modules per
//! character cell vertically, with the 4-module quiet zone a phone camera needs.
//!
//! Colours: a phone reads dark modules on a light background.
//! - With colour on (stdout a terminal, no `--no-color`/`NO_COLOR`), each line is painted black on
//!   bright white, so it scans on light and dark terminal themes alike; blocks are dark modules.
//! - Without colour (piped, or `--no-color`), the text assumes the usual light-on-dark terminal:
//!   blocks (`█`) are the **light** modules and the quiet zone, spaces are the dark modules (the
//!   convention of `qrencode -t UTF8`). [`bitmap`] reads either form back.

use qrcode::render::unicode::Dense1x2;
use qrcode::{EcLevel, QrCode};

use crate::error::{CliError, Result};

/// Renders `payload` as half-block text (lines joined by `\n`, no trailing newline).
///
/// # Errors
/// When the payload is too long for a QR code (not the case for a PIX BR Code).
pub fn render(payload: &str, colorido: bool) -> Result<String> {
    let code = QrCode::with_error_correction_level(payload.as_bytes(), EcLevel::M)
        .map_err(|e| CliError::other("QR", format!("não foi possível gerar o QR code: {e}")))?;
    if colorido {
        let text = code
            .render::<Dense1x2>()
            .dark_color(Dense1x2::Dark)
            .light_color(Dense1x2::Light)
            .quiet_zone(true)
            .build();
        Ok(text
            .lines()
            .map(|l| format!("\x1b[30;107m{l}\x1b[0m"))
            .collect::<Vec<_>>()
            .join("\n"))
    } else {
        Ok(code
            .render::<Dense1x2>()
            .dark_color(Dense1x2::Light)
            .light_color(Dense1x2::Dark)
            .quiet_zone(true)
            .build())
    }
}

/// Turns half-block text back into a bitmap of modules (`true` = dark), reading the
/// uncoloured form of [`render`] (blocks = light). Lines that are not QR lines are skipped.
/// Used by tests to decode what the CLI printed.
pub fn bitmap(text: &str) -> Vec<Vec<bool>> {
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
        let code = QrCode::with_error_correction_level(payload.as_bytes(), EcLevel::M).unwrap();
        let w = code.width();
        // Quiet zone of 4 modules on every side.
        assert_eq!(bits[0].len(), w + 8);
        assert!(bits[..4].iter().all(|r| r.iter().all(|d| !d)));
        for y in 0..w {
            for x in 0..w {
                assert_eq!(
                    bits[y + 4][x + 4],
                    code[(x, y)] == qrcode::Color::Dark,
                    "({x},{y})"
                );
            }
        }
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
