//! The first pass of an import: every row (CSV) or feature (WFS) read and checked, in constant
//! memory, before anything is written. The first bad one refuses the whole file with its line
//! number or feature index.

use std::io::BufReader;
use std::path::Path;

use indicatif::ProgressBar;

use super::{CargaError, Formato, abrir, wfs};
use crate::import::LeitorCsv;

/// Validates the file at `caminho` (CSV or WFS GeoJSON, [`Formato::de`]); returns how many
/// records it holds. `barra` counts the rows read.
///
/// # Errors
/// [`CargaError::Csv`] with the line of the first bad CSV row (the header is line 1);
/// [`CargaError::Wfs`] with the index of the first bad feature; [`CargaError::Io`].
pub fn validar(caminho: &Path, barra: &ProgressBar) -> Result<u64, CargaError> {
    let mut n = 0u64;
    match Formato::de(caminho)? {
        Formato::Csv => {
            for r in LeitorCsv::new(BufReader::with_capacity(1 << 16, abrir(caminho)?))? {
                r?;
                n += 1;
                if n.is_multiple_of(4096) {
                    barra.set_position(n);
                }
            }
        }
        Formato::GeoJson => {
            n = wfs::percorrer(abrir(caminho)?, |_| -> Result<(), CargaError> {
                barra.inc(1);
                Ok(())
            })?;
        }
    }
    barra.finish_and_clear();
    Ok(n)
}
