//! The first pass of an import: every row (CSV) or feature (WFS) read and checked, in constant
//! memory, before anything is written. The first bad one refuses the whole file with its line
//! number or feature index.

use std::io::BufReader;
use std::path::Path;

use indicatif::ProgressBar;

use super::{Format, LoadError, open, wfs};
use crate::import::CsvReader;

/// Validates the file at `caminho` (CSV or WFS GeoJSON, [`Format::de`]); returns how many
/// records it holds. `barra` counts the rows read.
///
/// # Errors
/// [`LoadError::Csv`] with the line of the first bad CSV row (the header is line 1);
/// [`LoadError::Wfs`] with the index of the first bad feature; [`LoadError::Io`].
pub(crate) fn validate(path: &Path, bar: &ProgressBar) -> Result<u64, LoadError> {
    let mut n = 0u64;
    match Format::de(path)? {
        Format::Csv => {
            for r in CsvReader::new(BufReader::with_capacity(1 << 16, open(path)?))? {
                r?;
                n += 1;
                if n.is_multiple_of(4096) {
                    bar.set_position(n);
                }
            }
        }
        Format::GeoJson => {
            n = wfs::walk(open(path)?, |_| -> Result<(), LoadError> {
                bar.inc(1);
                Ok(())
            })?;
        }
    }
    bar.finish_and_clear();
    Ok(n)
}
