//! Yes/no questions in Portuguese: `Pergunta? [s/N] `, answered `s`, `sim`, `y` or `yes` (any
//! case); anything else, or just Enter, is no. Asked on stderr, read from stdin (callers check
//! [`crate::output::Shell::can_prompt`] first).

use std::io::{self, BufRead, Write};

use crate::error::{CliError, Result};

/// True for the answers that mean yes: `s`, `sim`, `y`, `yes` (trimmed, any case).
fn is_yes(response: &str) -> bool {
    matches!(
        response.trim().to_lowercase().as_str(),
        "s" | "sim" | "y" | "yes"
    )
}

/// Asks `question [s/N] ` on stderr and reads one line from stdin; no is the default.
///
/// # Errors
/// When stdin or stderr fails (`ES`, exit 1).
pub(crate) fn confirm(question: &str) -> Result<bool> {
    let mut err = io::stderr().lock();
    write!(err, "{question} [s/N] ")
        .and_then(|()| err.flush())
        .map_err(|e| {
            CliError::other(
                "ES",
                format!("confirmação: {}", crate::foreign_errors::io(&e)),
            )
        })?;
    drop(err);
    let mut line = String::new();
    io::stdin().lock().read_line(&mut line).map_err(|e| {
        CliError::other(
            "ES",
            format!("confirmação: {}", crate::foreign_errors::io(&e)),
        )
    })?;
    Ok(is_yes(&line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn portuguese_and_english_yes() {
        for s in ["s", "S", "sim", " Sim\n", "y", "YES"] {
            assert!(is_yes(s), "{s:?}");
        }
        for n in ["", "\n", "n", "não", "nao", "no", "talvez", "si"] {
            assert!(!is_yes(n), "{n:?}");
        }
    }
}
