//! The one place the server calls the pure asset modules (`dados`, `recibo`, `pix::qr`): the
//! bundled and synthetic CAR data, the sandbox fixtures, the receipt PDF and the QR PNG.

use std::io::Read;

use carapi_sdk::ProprietarioResponse;
use chrono::{DateTime, FixedOffset};

use crate::dados::{self, Imovel};

/// The bundled CAR records (real SICAR records completed with synthetic owners).
pub fn bundled() -> Vec<Imovel> {
    dados::bundled()
}

/// `n` deterministic synthetic records from `seed`.
pub fn sinteticos(n: usize, seed: u64) -> Vec<Imovel> {
    dados::sinteticos(n, seed)
}

/// Records in the public SICAR CSV columns.
///
/// # Errors
/// A readable message naming what failed.
pub fn parse_csv(input: impl Read) -> Result<Vec<Imovel>, String> {
    dados::import::parse_csv(input).map_err(|e| e.to_string())
}

/// The fixed record of the sandbox code `ZZ-0000000-SANDBOXCARBASICO…`.
pub fn sandbox_imovel() -> Imovel {
    dados::sandbox::imovel()
}

/// The fixed owner answer of a 200 sandbox document.
pub fn sandbox_proprietario(documento: &str) -> Option<ProprietarioResponse> {
    dados::sandbox::proprietario(documento)
}

/// The receipt PDF of `imovel`.
///
/// # Errors
/// A message for the log when rendering fails (the handler answers 502 `RECIBO_INDISPONIVEL`).
pub fn recibo_pdf(imovel: &Imovel, emitido_em: DateTime<FixedOffset>) -> Result<Vec<u8>, String> {
    crate::recibo::render(imovel, emitido_em).map_err(|e| e.to_string())
}

/// The PNG, in base64, of a QR code that decodes to `payload`.
///
/// # Errors
/// A message for the log when the QR cannot be drawn.
pub fn qr_png_base64(payload: &str) -> Result<String, String> {
    crate::pix::qr::png_base64(payload).map_err(|e| e.to_string())
}
