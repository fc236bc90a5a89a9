//! The receipt PDF of `GET /v1/car/{codigoCar}/recibo` (contract, "Lookups"), modelled on the
//! official "Recibo de Inscrição do Imóvel Rural no CAR" (docs/dominio.md "Official receipt").
//!
//! Layout (A4): every page starts with the title and a box with `Record no CAR` (the code in
//! the receipt's dotted form) and `Data de Cadastro`, and ends with `Página n/N` and a note that
//! this is a reference document with fictitious owners. Page 1: Nome do Imóvel Rural, Município,
//! UF, centroid coordinates in DMS, Área Total (ha), Módulos Fiscais, Código do Protocolo, type,
//! status, then the legal notices (the CAR is declaratory, Lei 12.651/2012 art. 29). Page 2 on:
//! owners (CPF/CNPJ, name), declared areas (ha), the matrícula (número, data, livro, folha,
//! cartório) and a QR code, drawn as vector rectangles, that encodes the CAR code, next to the
//! code in API form and the issue time.
//!
//! Text uses the standard Helvetica fonts in WinAnsiEncoding, so accents are real characters and
//! every string, the CAR code included, can be extracted and searched. Rendering is pure and
//! cheap (no font embedding, no images): a few milliseconds per receipt.

mod content;
mod pdf;
pub(crate) mod service;

use chrono::{DateTime, FixedOffset};

use crate::dados::Imovel;

/// Why a receipt could not be rendered (the server answers 502 `RECIBO_INDISPONIVEL` and
/// charges nothing).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ReciboError {
    /// The PDF writer failed.
    #[error("falha ao montar o PDF do recibo: {0}")]
    Pdf(#[from] lopdf::Error),
    /// The CAR code did not fit in a QR code (cannot happen for a valid code).
    #[error("falha ao gerar o QR code do recibo: {0}")]
    Qr(#[from] qrcode::types::QrError),
    /// The receipt service refused ([`service::ReciboService`]).
    #[error("{0}")]
    Service(String),
}

/// Renders the receipt of `imovel` as PDF bytes (`%PDF-1.5`, at least 2 pages).
///
/// `issued_at` is printed as the issue time (`dd/MM/yyyy HH:mm:ss (UTC-03:00)`, in the offset
/// given; the server passes the lookup time in Brasília) and stored as the PDF's creation date.
/// The output depends only on the two arguments: the same record and time give the same bytes.
/// Whether a receipt exists at all ([`Imovel::has_recibo`]) is the caller's check.
///
/// # Errors
/// [`ReciboError`] if the PDF cannot be assembled.
pub(crate) fn render(
    imovel: &Imovel,
    issued_at: DateTime<FixedOffset>,
) -> Result<Vec<u8>, ReciboError> {
    let pages = content::pages(imovel, issued_at)?;
    let meta = pdf::Metadata {
        title: format!(
            "Recibo de Inscrição do Imóvel Rural no CAR - {}",
            imovel.codigo_car
        ),
        subject: "Cadastro Ambiental Rural (documento de referência)".to_owned(),
        created_at: pdf_date(issued_at),
    };
    pdf::assemble(pages, &meta)
}

/// PDF date string (ISO 32000-1 §7.9.4): `D:YYYYMMDDHHmmSS-03'00'`.
fn pdf_date(t: DateTime<FixedOffset>) -> String {
    let seconds = t.offset().local_minus_utc();
    let signal = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!(
        "D:{}{signal}{:02}'{:02}'",
        t.format("%Y%m%d%H%M%S"),
        minutes / 60,
        minutes % 60
    )
}

#[cfg(test)]
mod tests {
    use carapi_sdk::CpfCnpj;
    use chrono::TimeZone;

    use super::*;
    use crate::dados::{self, Proprietario};

    const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

    fn issued() -> DateTime<FixedOffset> {
        FixedOffset::west_opt(3 * 3600)
            .and_then(|o| o.with_ymd_and_hms(2026, 3, 14, 9, 26, 53).single())
            .expect("data fixa")
    }

    fn imovel_df() -> Imovel {
        dados::bundled()
            .into_iter()
            .find(|i| i.codigo_car.as_str() == CODIGO)
            .expect("registro DF empacotado")
    }

    /// Text of each page, extracted with lopdf (decoding WinAnsiEncoding back to Unicode).
    fn texts(bytes: &[u8]) -> Vec<String> {
        let doc = lopdf::Document::load_mem(bytes).expect("PDF legível");
        let pages: Vec<u32> = doc.get_pages().keys().copied().collect();
        pages
            .iter()
            .map(|&n| doc.extract_text(&[n]).expect("texto da página"))
            .collect()
    }

    #[test]
    fn pdf_valido_com_duas_paginas_e_o_codigo_extraivel() {
        let mut imovel = imovel_df();
        // The bundled CSV record has no position; the receipt prints one when there is.
        assert_eq!(imovel.latitude, None);
        let without_position = texts(&render(&imovel, issued()).expect("recibo"))[0].clone();
        assert!(
            without_position.contains("do Imóvel:\nNão informado"),
            "{without_position}"
        );
        imovel.latitude = Some(rust_decimal::Decimal::new(-157_795, 4));
        imovel.longitude = Some(rust_decimal::Decimal::new(-479_297, 4));
        let bytes = render(&imovel, issued()).expect("recibo");
        assert!(bytes.starts_with(b"%PDF-1.5"));
        assert!(bytes.trim_ascii_end().ends_with(b"%%EOF"));
        let pages = texts(&bytes);
        assert_eq!(pages.len(), 2);
        let everything = pages.concat();
        assert!(everything.contains(CODIGO), "{everything}");

        let p1 = &pages[0];
        for expected in [
            "Recibo de Inscrição do Imóvel Rural no CAR",
            "DF-5300108-B69B.317D.D02C.43DA.A77A.0784.AEEF.7D47",
            "09/05/2014 17:16:10",
            "Nome do Imóvel Rural:",
            "Município:",
            "Brasília",
            "Distrito Federal (DF)",
            "15°46'46,20\" S",
            "47°55'46,92\" O",
            "Área Total (ha) do Imóvel Rural:",
            "2,0131",
            "0,4026",
            "Código do Protocolo:",
            imovel.codigo_protocolo.as_deref().unwrap_or("?"),
            "caráter declaratório",
            "art. 29",
            "Lei nº 12.651",
            "Página 1/2",
        ] {
            assert!(p1.contains(expected), "página 1 sem {expected:?}:\n{p1}");
        }
        let p2 = &pages[1];
        for p in &imovel.proprietarios {
            assert!(p2.contains(&p.documento.formatted()), "{p2}");
            assert!(p2.contains(&p.nome), "{p2}");
        }
        for expected in [
            imovel.matricula_numero.as_deref().unwrap_or("?"),
            imovel.matricula_data.as_deref().unwrap_or("?"),
            "Cartório de Registro de Imóveis de Brasília (fictício)",
            "14/03/2026 09:26:53 (UTC-03:00)",
            "Página 2/2",
        ] {
            assert!(p2.contains(expected), "página 2 sem {expected:?}:\n{p2}");
        }
    }

    #[test]
    fn cabecalho_em_todas_as_paginas_e_paginacao_com_muitos_donos() {
        let mut imovel = imovel_df();
        imovel.proprietarios = (0..120u32)
            .map(|n| Proprietario {
                documento: CpfCnpj::from_base(&format!("{:09}", 100_000_000 + n * 7919))
                    .expect("CPF"),
                nome: format!("Herdeiro Número {n} de Tal"),
            })
            .collect();
        let pages = texts(&render(&imovel, issued()).expect("recibo"));
        assert!(pages.len() >= 4, "{} páginas", pages.len());
        let total = pages.len();
        for (n, text) in pages.iter().enumerate() {
            assert!(text.contains("Registro no CAR:"), "página {}", n + 1);
            assert!(text.contains("Data de Cadastro:"), "página {}", n + 1);
            assert!(
                text.contains(&format!("Página {}/{total}", n + 1)),
                "página {}",
                n + 1
            );
        }
        let everything = pages.concat();
        assert!(everything.contains("Herdeiro Número 119 de Tal") && everything.contains(CODIGO));
    }

    #[test]
    fn registro_sem_campos_opcionais_e_sandbox_tambem_renderizam() {
        let mut empty = imovel_df();
        empty.nome_imovel = None;
        empty.modulos_fiscais = None;
        empty.latitude = None;
        empty.codigo_protocolo = None;
        empty.matricula_numero = None;
        empty.proprietarios.clear();
        let text = texts(&render(&empty, issued()).expect("recibo")).concat();
        assert!(text.contains("Não informado") && text.contains(CODIGO));

        let sandbox = dados::sandbox::imovel();
        let text = texts(&render(&sandbox, issued()).expect("recibo")).concat();
        assert!(text.contains(carapi_sdk::sandbox::CAR_BASICO), "{text}");
        assert!(text.contains("Chácara Sandbox Exemplo"));
    }

    #[test]
    fn mesma_entrada_mesmos_bytes() {
        let imovel = imovel_df();
        assert_eq!(
            render(&imovel, issued()).ok(),
            render(&imovel, issued()).ok()
        );
        let bytes = render(&imovel, issued()).expect("recibo");
        let doc = lopdf::Document::load_mem(&bytes).expect("PDF");
        let info = doc
            .trailer
            .get(b"Info")
            .and_then(lopdf::Object::as_reference)
            .expect("Info");
        let created = doc
            .get_dictionary(info)
            .and_then(|d| d.get(b"CreationDate"))
            .and_then(lopdf::Object::as_str)
            .expect("CreationDate");
        assert_eq!(created, b"D:20260314092653-03'00'");
    }

    #[test]
    fn qr_do_recibo_decodifica_para_o_codigo() {
        // Rasterise the QR rectangles at 4 px per point and read them back with rqrr.
        let side = 110.0_f32;
        let rets = content::qr_rects(CODIGO, 0.0, 0.0, side).expect("QR");
        let px = (side * 4.0) as usize;
        let mut img = vec![255u8; px * px];
        for (x, y, w, h) in rets {
            let (x0, x1) = ((x * 4.0).round() as usize, ((x + w) * 4.0).round() as usize);
            // PDF y grows upwards; image rows grow downwards.
            let (y0, y1) = (
                (px as f32 - (y + h) * 4.0).round() as usize,
                (px as f32 - y * 4.0).round() as usize,
            );
            for row in y0..y1.min(px) {
                img[row * px + x0..row * px + x1.min(px)].fill(0);
            }
        }
        let mut prepared =
            rqrr::PreparedImage::prepare_from_greyscale(px, px, |x, y| img[y * px + x]);
        let grades = prepared.detect_grids();
        assert_eq!(grades.len(), 1);
        assert_eq!(grades[0].decode().expect("QR legível").1, CODIGO);
    }
}
