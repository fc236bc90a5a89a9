//! A minimal PDF page writer over `lopdf`: A4 pages, the standard Helvetica fonts in
//! WinAnsiEncoding (which covers every Portuguese letter, `°`, `º` and `§`), text, lines, filled
//! rectangles. No font is embedded: the 14 standard fonts are built into every PDF reader.

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, Stream, StringFormat, dictionary};

use super::ReciboError;

/// A4 width in points (1/72 in).
pub(crate) const WIDTH: f32 = 595.0;
/// A4 height in points.
pub(crate) const HEIGHT: f32 = 842.0;

/// The two fonts of the receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Font {
    /// Helvetica.
    Normal,
    /// Helvetica-Bold.
    Bold,
}

impl Font {
    fn resource(self) -> &'static str {
        match self {
            Font::Normal => "F1",
            Font::Bold => "F2",
        }
    }
}

/// Advance widths (1/1000 em) of ASCII 32..=126 in Helvetica, from Adobe's AFM metrics.
const NORMAL_WIDTHS: [u16; 95] = [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667,
    611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500,
    222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
];
/// Advance widths (1/1000 em) of ASCII 32..=126 in Helvetica-Bold, from Adobe's AFM metrics.
const BOLD_WIDTHS: [u16; 95] = [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556,
    556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667,
    611, 778, 722, 278, 556, 722, 611, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667,
    667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556,
    278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584,
];

/// Width of `texto` in points at `tamanho` points. Accented letters take their base letter's
/// width (true for Helvetica's Latin-1 glyphs); other characters count as a digit.
pub(crate) fn width(text: &str, source: Font, size: f32) -> f32 {
    let table = match source {
        Font::Normal => &NORMAL_WIDTHS,
        Font::Bold => &BOLD_WIDTHS,
    };
    let thousandths: u32 = text
        .chars()
        .map(|c| {
            let base = carapi_sdk::domain::br::strip_accent(c);
            match base {
                ' '..='~' => u32::from(table[base as usize - 32]),
                '°' => 400,
                'º' | 'ª' => 365,
                '§' => 556,
                '—' => 1000,
                '–' => 556,
                _ => 556,
            }
        })
        .sum();
    thousandths as f32 * size / 1000.0
}

/// Splits `texto` into lines no wider than `maximo` points (breaking at spaces; a single word
/// wider than the line stays whole).
pub(crate) fn wrap(text: &str, source: Font, size: f32, maximo: f32) -> Vec<String> {
    let mut lines = Vec::new();
    let mut atual = String::new();
    for word in text.split_whitespace() {
        let candidate = if atual.is_empty() {
            word.to_owned()
        } else {
            format!("{atual} {word}")
        };
        if !atual.is_empty() && width(&candidate, source, size) > maximo {
            lines.push(std::mem::replace(&mut atual, word.to_owned()));
        } else {
            atual = candidate;
        }
    }
    if !atual.is_empty() {
        lines.push(atual);
    }
    lines
}

/// The drawing operations of one page, in PDF user space (origin bottom-left, points).
#[derive(Debug, Default)]
pub(crate) struct PdfPage {
    ops: Vec<Operation>,
}

impl PdfPage {
    /// Draws `texto` with its baseline starting at `(x, y)`.
    pub(crate) fn text(&mut self, x: f32, y: f32, source: Font, size: f32, text: &str) {
        let bytes =
            Document::encode_text(&lopdf::Encoding::SimpleEncoding(b"WinAnsiEncoding"), text);
        self.ops.extend([
            Operation::new("BT", vec![]),
            Operation::new(
                "Tf",
                vec![Object::Name(source.resource().into()), size.into()],
            ),
            Operation::new("Td", vec![x.into(), y.into()]),
            Operation::new("Tj", vec![Object::String(bytes, StringFormat::Literal)]),
            Operation::new("ET", vec![]),
        ]);
    }

    /// Draws `texto` ending at `x` (right-aligned).
    pub(crate) fn right_aligned_text(
        &mut self,
        x: f32,
        y: f32,
        source: Font,
        size: f32,
        text: &str,
    ) {
        self.text(x - width(text, source, size), y, source, size, text);
    }

    /// Draws `texto` centred on the page.
    pub(crate) fn centered_text(&mut self, y: f32, source: Font, size: f32, text: &str) {
        self.text(
            (WIDTH - width(text, source, size)) / 2.0,
            y,
            source,
            size,
            text,
        );
    }

    /// A horizontal line from `x1` to `x2` at height `y`, 0.5 pt, grey.
    pub(crate) fn line(&mut self, x1: f32, x2: f32, y: f32) {
        self.ops.extend([
            Operation::new("q", vec![]),
            Operation::new("G", vec![0.6.into()]),
            Operation::new("w", vec![0.5.into()]),
            Operation::new("m", vec![x1.into(), y.into()]),
            Operation::new("l", vec![x2.into(), y.into()]),
            Operation::new("S", vec![]),
            Operation::new("Q", vec![]),
        ]);
    }

    /// Rectangles `(x, y, width, height)` filled with the grey level `cinza` (0 black, 1 white).
    pub(crate) fn rects(&mut self, grey: f32, rects: &[(f32, f32, f32, f32)]) {
        self.ops.push(Operation::new("q", vec![]));
        self.ops.push(Operation::new("g", vec![grey.into()]));
        for &(x, y, w, h) in rects {
            self.ops.push(Operation::new(
                "re",
                vec![x.into(), y.into(), w.into(), h.into()],
            ));
        }
        self.ops.push(Operation::new("f", vec![]));
        self.ops.push(Operation::new("Q", vec![]));
    }
}

/// Document metadata written to the PDF's Info dictionary.
#[derive(Debug)]
pub(crate) struct Metadata {
    pub(crate) title: String,
    pub(crate) subject: String,
    /// PDF date string, `D:YYYYMMDDHHmmSS+HH'mm'`.
    pub(crate) created_at: String,
}

/// Assembles the pages into a PDF 1.5 file with compressed content streams.
pub(crate) fn assemble(pages: Vec<PdfPage>, meta: &Metadata) -> Result<Vec<u8>, ReciboError> {
    let mut doc = Document::with_version("1.5");
    let id_pages = doc.new_object_id();
    let source = |name: &str| -> Dictionary {
        dictionary! {
            "Type" => "Font",
            "Subtype" => "Type1",
            "BaseFont" => Object::Name(name.as_bytes().to_vec()),
            "Encoding" => "WinAnsiEncoding",
        }
    };
    let f1 = doc.add_object(source("Helvetica"));
    let f2 = doc.add_object(source("Helvetica-Bold"));
    let resources =
        doc.add_object(dictionary! { "Font" => dictionary! { "F1" => f1, "F2" => f2 } });

    let mut children = Vec::with_capacity(pages.len());
    for page in pages {
        let content = Content {
            operations: page.ops,
        }
        .encode()?;
        let mut stream = Stream::new(dictionary! {}, content);
        // Compression failing only leaves the stream uncompressed, which is still valid.
        let _ = stream.compress();
        let id_content = doc.add_object(stream);
        let id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => id_pages,
            "Contents" => id_content,
        });
        children.push(Object::Reference(id));
    }
    let how_many = i64::try_from(children.len()).unwrap_or(i64::MAX);
    doc.objects.insert(
        id_pages,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => children,
            "Count" => how_many,
            "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), WIDTH.into(), HEIGHT.into()],
        }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => id_pages });
    let text = |s: &str| {
        Object::String(
            Document::encode_text(&lopdf::Encoding::SimpleEncoding(b"WinAnsiEncoding"), s),
            StringFormat::Literal,
        )
    };
    let info = doc.add_object(dictionary! {
        "Title" => text(&meta.title),
        "Subject" => text(&meta.subject),
        "Producer" => text("carapi-server (servidor de referência)"),
        "CreationDate" => text(&meta.created_at),
    });
    doc.trailer.set("Root", catalog);
    doc.trailer.set("Info", info);

    let mut output = Vec::with_capacity(16 * 1024);
    doc.save_to(&mut output).map_err(lopdf::Error::from)?;
    Ok(output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largura_usa_a_tabela_e_acentos_tomam_a_letra_base() {
        assert!((width("Helvetica", Font::Normal, 10.0) - 41.12).abs() < 0.01);
        assert_eq!(
            width("Município", Font::Normal, 10.0),
            width("Municipio", Font::Normal, 10.0)
        );
        assert!(width("W", Font::Bold, 10.0) > width("i", Font::Bold, 10.0));
    }

    #[test]
    fn quebra_respeita_a_largura() {
        let text = "As informações prestadas no CAR são de caráter declaratório ".repeat(5);
        let lines = wrap(&text, Font::Normal, 9.0, 200.0);
        assert!(lines.len() > 3);
        assert!(lines.iter().all(|l| width(l, Font::Normal, 9.0) <= 200.0));
        assert_eq!(lines.join(" "), text.trim());
    }
}
