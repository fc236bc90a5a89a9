//! The QR code image of a PIX charge: the `qrCodeBase64` field of `POST /v1/recarga` and
//! `GET /v1/recarga/{recargaId}` (contract, "RecargaCriadaResponse"), a PNG whose QR decodes to
//! exactly the BR Code payload of `qrCode`.
//!
//! Encoded with the `qrcode` crate at error-correction level M (the level banking apps and the BCB
//! manual's examples use), drawn black on white with the 4-module quiet zone the QR standard
//! requires, 8 pixels per module, grey-scale PNG.

use base64::Engine;
use qrcode::{Color, EcLevel, QrCode};

/// Pixels per QR module.
const PIXELS_PER_MODULE: usize = 8;
/// Light modules around the symbol (ISO/IEC 18004 quiet zone).
const QUIET_ZONE: usize = 4;

/// Why a QR image could not be produced.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum QrError {
    /// The payload does not fit in a QR code (more than about 2,300 bytes at level M).
    #[error("conteúdo grande demais para um QR code: {0}")]
    Encoding(#[from] qrcode::types::QrError),
    /// The PNG encoder failed.
    #[error("falha ao gerar o PNG do QR code: {0}")]
    Png(#[from] png::EncodingError),
}

/// The PNG bytes of a QR code encoding `payload` (a PIX BR Code, or any text) byte for byte.
///
/// The image is square: `(modules + 8) * 8` pixels a side (a typical dynamic BR Code of about
/// 150 characters gives 49 modules, 456 px).
///
/// # Errors
/// [`QrError::Encoding`] when the payload is too long for a QR code; [`QrError::Png`] if the
/// encoder fails.
pub(crate) fn png(payload: &str) -> Result<Vec<u8>, QrError> {
    let codigo = QrCode::with_error_correction_level(payload.as_bytes(), EcLevel::M)?;
    let modulos = codigo.width();
    let cores = codigo.to_colors();
    let side = (modulos + 2 * QUIET_ZONE) * PIXELS_PER_MODULE;
    let mut pixels = vec![u8::MAX; side * side];
    for (i, colour) in cores.iter().enumerate() {
        if *colour != Color::Dark {
            continue;
        }
        let (mx, my) = (i % modulos + QUIET_ZONE, i / modulos + QUIET_ZONE);
        for y in my * PIXELS_PER_MODULE..(my + 1) * PIXELS_PER_MODULE {
            let line = y * side;
            pixels[line + mx * PIXELS_PER_MODULE..line + (mx + 1) * PIXELS_PER_MODULE].fill(0);
        }
    }
    // At most (177 + 8) * 8 = 1,480 px: a QR code has at most 177 modules a side.
    let side_u32 = side as u32;
    let mut output = Vec::with_capacity(4096);
    let mut png = png::Encoder::new(&mut output, side_u32, side_u32);
    png.set_color(png::ColorType::Grayscale);
    png.set_depth(png::BitDepth::Eight);
    let mut writer = png.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(output)
}

/// [`png`] in standard base64 with padding, no `data:` prefix: the contract's `qrCodeBase64`.
///
/// # Errors
/// As [`png`].
pub(crate) fn png_base64(payload: &str) -> Result<String, QrError> {
    Ok(base64::engine::general_purpose::STANDARD.encode(png(payload)?))
}

#[cfg(test)]
mod tests {
    use base64::Engine;
    use carapi_sdk::domain::pix::{self, CobrancaPix};
    use rust_decimal::Decimal;

    use super::*;

    fn decode(png_bytes: &[u8]) -> String {
        let img = image::load_from_memory_with_format(png_bytes, image::ImageFormat::Png)
            .expect("PNG válido")
            .to_luma8();
        let (w, h) = img.dimensions();
        let mut prepared =
            rqrr::PreparedImage::prepare_from_greyscale(w as usize, h as usize, |x, y| {
                img.get_pixel(x as u32, y as u32).0[0]
            });
        let grades = prepared.detect_grids();
        assert_eq!(grades.len(), 1, "um QR code na imagem");
        let (_, content) = grades[0].decode().expect("QR legível");
        content
    }

    fn cobranca() -> String {
        CobrancaPix {
            location: "pix.example.com/qr/v2/cobv/9d36b84f-c70b-478f-b95c-12729b90ca25".to_owned(),
            valor: Decimal::new(50_000, 2),
            nome: "Carapi Exemplo Ltda".to_owned(),
            cidade: "Brasília".to_owned(),
            txid: "a1b2c3d4e5f6a7b8c9d0e1f2a".to_owned(),
        }
        .payload()
    }

    #[test]
    fn png_decodifica_para_o_br_code_exato() {
        let payload = cobranca();
        // The payload is a well-formed BR Code (CRC and all) for R$ 500,00.
        assert_eq!(
            pix::valor(&payload).expect("BR Code"),
            Some(Decimal::new(50_000, 2))
        );
        let bytes = png(&payload).expect("png");
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
        assert_eq!(decode(&bytes), payload);
    }

    #[test]
    fn base64_e_o_mesmo_png() {
        let payload = cobranca();
        let b64 = png_base64(&payload).expect("png");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&b64)
            .expect("base64");
        assert_eq!(bytes, png(&payload).expect("png"));
        assert_eq!(decode(&bytes), payload);
    }

    #[test]
    fn conteudo_grande_demais_e_erro() {
        let huge = "9".repeat(8_000);
        assert!(matches!(png(&huge), Err(QrError::Encoding(_))));
    }
}
