//! The receipt's layout, modelled on the official "Recibo de Inscrição do Imóvel Rural no CAR"
//! (docs/dominio.md "Official receipt"): header on every page, property data and legal notices on
//! page 1, owners, declared areas, matrícula and QR code from page 2, `Página n/N` footer.

use carapi_sdk::domain::{br, dms};
use chrono::{DateTime, FixedOffset};
use qrcode::{Color, EcLevel, QrCode};

use super::ReciboError;
use super::pdf::{Font, PdfPage, WIDTH, wrap};
use crate::dados::Imovel;

const MARGIN: f32 = 40.0;
const X_VALOR: f32 = 230.0;
const CONTENT_TOP: f32 = 728.0;
const CONTENT_BASE: f32 = 70.0;
const BODY: f32 = 9.0;
const LINE_SPACING: f32 = 12.5;

/// The legal notices of the official receipt's "Informações Gerais" block (Lei 12.651/2012).
pub(crate) const NOTICES: [&str; 8] = [
    "Este documento garante o cumprimento do disposto nos §§ 2º do art. 14 e 3º do art. 29 da \
     Lei nº 12.651, de 25 de maio de 2012, e se constitui em instrumento suficiente para atender \
     ao disposto no art. 78-A da referida lei.",
    "O presente documento representa a confirmação de que foi realizada a declaração do imóvel \
     rural no Cadastro Ambiental Rural (CAR) e que está sujeito à validação pelo órgão competente.",
    "As informações prestadas no CAR são de caráter declaratório, nos termos do art. 29 da \
     Lei nº 12.651/2012.",
    "Os documentos, especialmente os de caráter pessoal ou dominial, são de responsabilidade do \
     proprietário ou possuidor rural declarante, que ficará sujeito às penas previstas no \
     art. 299 do Decreto-Lei nº 2.848, de 7 de dezembro de 1940 (Código Penal), e no art. 69-A \
     da Lei nº 9.605, de 12 de fevereiro de 1998.",
    "O demonstrativo da situação das informações declaradas no CAR, relativas às áreas de \
     Preservação Permanente, de uso restrito e de Reserva Legal, poderá ser acompanhado no sítio \
     eletrônico do SICAR.",
    "A inscrição do imóvel rural no CAR poderá ser suspensa ou cancelada, a qualquer tempo, em \
     função do não atendimento de notificações de pendência ou inconsistência detectadas pelo \
     órgão competente nos prazos concedidos, ou por motivo de irregularidades constatadas.",
    "Este documento não substitui qualquer licença ou autorização ambiental para exploração \
     florestal ou supressão de vegetação, nem dispensa as autorizações necessárias ao exercício \
     da atividade econômica no imóvel rural.",
    "A inscrição no CAR não será considerada título para fins de reconhecimento do direito de \
     propriedade ou posse (art. 29, § 2º, da Lei nº 12.651/2012).",
];

/// Footer note: this server's receipts are reference documents, not official ones.
pub(crate) const FOOTER_NOTE: &str = "Documento de referência gerado pelo carapi-server: \
     proprietários e matrícula são fictícios. Não é um documento oficial do SICAR.";

/// Lays out the pages (footers not yet drawn: they need the page count).
pub(crate) fn pages(
    imovel: &Imovel,
    issued_at: DateTime<FixedOffset>,
) -> Result<Vec<PdfPage>, ReciboError> {
    let mut e = Writer::new_for(imovel);
    imovel_page(&mut e, imovel);
    e.new_page();
    proprietarios_page(&mut e, imovel, issued_at)?;
    let total = e.pages.len();
    for (i, page) in e.pages.iter_mut().enumerate() {
        footer(page, i + 1, total);
    }
    Ok(e.pages)
}

fn imovel_page(e: &mut Writer, i: &Imovel) {
    let not_given = || "Não informado".to_owned();
    e.section("DADOS DO IMÓVEL RURAL");
    e.field(
        "Nome do Imóvel Rural:",
        &i.nome_imovel.clone().unwrap_or_else(not_given),
    );
    e.field("Município:", &i.municipio);
    let uf = format!("{} ({})", i.uf.nome(), i.uf);
    e.field("UF:", &uf);
    let coordinates = match (i.latitude, i.longitude) {
        (Some(lat), Some(lon)) => format!(
            "Latitude: {}   Longitude: {}",
            official_dms(&dms::format(lat, dms::Axis::Latitude)),
            official_dms(&dms::format(lon, dms::Axis::Longitude)),
        ),
        _ => not_given(),
    };
    e.field(
        "Coordenadas Geográficas do Centroide do Imóvel:",
        &coordinates,
    );
    e.field(
        "Área Total (ha) do Imóvel Rural:",
        &br::format_decimal(i.area_total_ha, 4),
    );
    e.field(
        "Módulos Fiscais:",
        &i.modulos_fiscais
            .map(|m| br::format_decimal(m, 4))
            .unwrap_or_else(not_given),
    );
    e.field(
        "Código do Protocolo:",
        &i.codigo_protocolo.clone().unwrap_or_else(not_given),
    );
    e.field(
        "Tipo do Imóvel:",
        &format!("{} - {}", i.tipo_imovel, i.tipo_imovel.nome()),
    );
    let payment_state = match &i.condicao {
        Some(c) => format!("{} - {c}", i.status_imovel.nome()),
        None => i.status_imovel.nome().to_owned(),
    };
    e.field("Situação do Cadastro:", &payment_state);
    if let Some(d) = i.data_atualizacao {
        e.field("Última Atualização:", &br::format_data(d));
    }
    e.space(8.0);
    e.section("INFORMAÇÕES GERAIS");
    for (n, warning) in NOTICES.iter().enumerate() {
        e.paragraph(&format!("{}. {warning}", n + 1), 8.5);
        e.space(3.0);
    }
}

fn proprietarios_page(
    e: &mut Writer,
    i: &Imovel,
    issued_at: DateTime<FixedOffset>,
) -> Result<(), ReciboError> {
    e.section("IDENTIFICAÇÃO DO PROPRIETÁRIO/POSSUIDOR");
    e.table_header(&[(MARGIN + 8.0, "CPF/CNPJ"), (180.0, "Nome")]);
    if i.proprietarios.is_empty() {
        e.table_row(&[(MARGIN + 8.0, "Não informado")]);
    }
    for p in &i.proprietarios {
        e.table_row(&[(MARGIN + 8.0, &p.documento.formatted()), (180.0, &p.nome)]);
    }
    e.space(8.0);
    e.section("ÁREAS DECLARADAS (ha)");
    e.field(
        "Área Total do Imóvel:",
        &br::format_decimal(i.area_total_ha, 4),
    );
    if let Some(m) = i.modulos_fiscais {
        e.field("Módulos Fiscais:", &br::format_decimal(m, 4));
    }
    e.space(8.0);
    matricula_section(e, i);
    e.space(14.0);
    verification_section(e, i, issued_at)
}

/// The matrícula: número, data, livro, folha and cartório (wrapped in its column).
fn matricula_section(e: &mut Writer, i: &Imovel) {
    e.section("MATRÍCULA DO IMÓVEL");
    let columns = [48.0, 110.0, 180.0, 230.0, 270.0];
    e.table_header(&[
        (columns[0], "Número"),
        (columns[1], "Data"),
        (columns[2], "Livro"),
        (columns[3], "Folha"),
        (columns[4], "Cartório"),
    ]);
    match &i.matricula_numero {
        Some(numero) => {
            let data = i.matricula_data.as_deref().unwrap_or("-");
            let cartorio = i.matricula_cartorio.as_deref().unwrap_or("Não informado");
            // Matrículas are kept in Livro 2 (Registro Geral) under Lei 6.015/1973 art. 176; the
            // folha is not part of the record.
            let lines = wrap(cartorio, Font::Normal, BODY, WIDTH - MARGIN - columns[4]);
            e.ensure_room(LINE_SPACING * lines.len() as f32);
            let y = e.y;
            for (x, t) in [
                (columns[0], numero.as_str()),
                (columns[1], data),
                (columns[2], "2"),
                (columns[3], "-"),
            ] {
                e.page().text(x, y, Font::Normal, BODY, t);
            }
            for (n, l) in lines.iter().enumerate() {
                e.page().text(
                    columns[4],
                    y - n as f32 * LINE_SPACING,
                    Font::Normal,
                    BODY,
                    l,
                );
            }
            e.y -= LINE_SPACING * lines.len() as f32;
        }
        None => e.table_row(&[(columns[0], "Não informada")]),
    }
}

/// The QR code of the CAR code beside the code and the issue time.
fn verification_section(
    e: &mut Writer,
    i: &Imovel,
    issued_at: DateTime<FixedOffset>,
) -> Result<(), ReciboError> {
    let side = 110.0;
    e.ensure_room(side + 20.0);
    e.section("VERIFICAÇÃO");
    let top = e.y + LINE_SPACING - 2.0;
    let codigo = i.codigo_car.as_str();
    let rects = qr_rects(codigo, WIDTH - MARGIN - side, top - side, side)?;
    e.page().rects(0.0, &rects);
    let text_width = WIDTH - 2.0 * MARGIN - side - 20.0;
    e.narrow_field("Código do imóvel no CAR:", codigo, text_width);
    e.narrow_field(
        "Recibo emitido em:",
        &issued_at.format("%d/%m/%Y %H:%M:%S (UTC%:z)").to_string(),
        text_width,
    );
    e.narrow_paragraph(
        "O QR code ao lado contém o código do imóvel no CAR, para conferência na consulta pública.",
        8.0,
        text_width,
    );
    e.y = e.y.min(top - side - 10.0);
    Ok(())
}

/// The receipt writes seconds followed by `"` (`15°46'46,20" S`); the API omits it.
fn official_dms(s: &str) -> String {
    s.replacen(' ', "\" ", 1)
}

/// The dark modules of a QR code (level M) encoding `texto`, as filled rectangles inside the
/// square of side `lado` points at `(x, y)` (bottom-left), quiet zone included; runs of dark
/// modules on a row are merged into one rectangle.
pub(crate) fn qr_rects(
    text: &str,
    x: f32,
    y: f32,
    side: f32,
) -> Result<Vec<(f32, f32, f32, f32)>, ReciboError> {
    let codigo = QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)?;
    let n = codigo.width();
    let modulo = side / (n + 8) as f32;
    let cores = codigo.to_colors();
    let mut rets = Vec::new();
    for (line, line_cores) in cores.chunks(n).enumerate() {
        let mut column = 0;
        while column < n {
            if line_cores[column] == Color::Dark {
                let start = column;
                while column < n && line_cores[column] == Color::Dark {
                    column += 1;
                }
                rets.push((
                    x + (start + 4) as f32 * modulo,
                    y + side - (line + 5) as f32 * modulo,
                    (column - start) as f32 * modulo,
                    modulo,
                ));
            } else {
                column += 1;
            }
        }
    }
    Ok(rets)
}

fn footer(p: &mut PdfPage, n: usize, total: usize) {
    p.line(MARGIN, WIDTH - MARGIN, 52.0);
    p.text(MARGIN, 40.0, Font::Normal, 6.5, FOOTER_NOTE);
    p.right_aligned_text(
        WIDTH - MARGIN,
        40.0,
        Font::Bold,
        8.0,
        &format!("Página {n}/{total}"),
    );
}

/// Flows content down the pages, starting a new page (with the header) when one is full.
struct Writer {
    pages: Vec<PdfPage>,
    y: f32,
    record: String,
    data_cadastro: String,
}

impl Writer {
    fn new_for(i: &Imovel) -> Self {
        // The official receipt prints the hash in 8 dotted groups of 4
        // (`DF-5300108-B69B.317D.D02C.43DA.A77A.0784.AEEF.7D47`); sandbox codes stay as they are.
        let record = if i.codigo_car.is_sandbox() {
            i.codigo_car.to_string()
        } else {
            format!(
                "{}{}",
                &i.codigo_car.as_str()[..11],
                i.codigo_car.hash_dotted()
            )
        };
        let mut e = Writer {
            pages: Vec::new(),
            y: CONTENT_TOP,
            record,
            data_cadastro: br::format_data(i.data_cadastro),
        };
        e.new_page();
        e
    }

    fn page(&mut self) -> &mut PdfPage {
        if self.pages.is_empty() {
            self.pages.push(PdfPage::default());
        }
        let last = self.pages.len() - 1;
        &mut self.pages[last]
    }

    /// A new page with the header of every page: title, `Record no CAR`, `Data de Cadastro`.
    fn new_page(&mut self) {
        let mut p = PdfPage::default();
        p.centered_text(
            805.0,
            Font::Bold,
            13.0,
            "Recibo de Inscrição do Imóvel Rural no CAR",
        );
        p.centered_text(
            791.0,
            Font::Normal,
            8.5,
            "Cadastro Ambiental Rural - CAR (Lei nº 12.651, de 25 de maio de 2012)",
        );
        p.rects(0.92, &[(MARGIN, 746.0, WIDTH - 2.0 * MARGIN, 36.0)]);
        p.text(MARGIN + 8.0, 768.0, Font::Bold, 9.5, "Registro no CAR:");
        p.text(MARGIN + 100.0, 768.0, Font::Normal, 9.5, &self.record);
        p.text(MARGIN + 8.0, 753.0, Font::Bold, 9.5, "Data de Cadastro:");
        p.text(
            MARGIN + 100.0,
            753.0,
            Font::Normal,
            9.5,
            &self.data_cadastro,
        );
        self.pages.push(p);
        self.y = CONTENT_TOP;
    }

    fn ensure_room(&mut self, height: f32) {
        if self.y - height < CONTENT_BASE {
            self.new_page();
        }
    }

    fn space(&mut self, points: f32) {
        self.y -= points;
    }

    fn section(&mut self, title: &str) {
        self.ensure_room(3.0 * LINE_SPACING);
        let y = self.y;
        let p = self.page();
        p.rects(0.85, &[(MARGIN, y - 4.0, WIDTH - 2.0 * MARGIN, 15.0)]);
        p.text(MARGIN + 6.0, y, Font::Bold, 9.5, title);
        self.y -= LINE_SPACING + 6.0;
    }

    fn field(&mut self, label: &str, valor: &str) {
        self.field_at(label, valor, X_VALOR, WIDTH - MARGIN - X_VALOR);
    }

    /// A label on its own line and the value below it, in a column `width` wide.
    fn narrow_field(&mut self, label: &str, valor: &str, width: f32) {
        self.ensure_room(2.0 * LINE_SPACING);
        let y = self.y;
        self.page().text(MARGIN + 8.0, y, Font::Bold, BODY, label);
        self.y -= LINE_SPACING;
        self.field_at("", valor, MARGIN + 8.0, width);
    }

    fn field_at(&mut self, label: &str, valor: &str, x_valor: f32, width: f32) {
        let labels = wrap(label, Font::Bold, BODY, x_valor - MARGIN - 14.0);
        let values = wrap(valor, Font::Normal, BODY, width);
        let lines = labels.len().max(values.len()).max(1);
        self.ensure_room(lines as f32 * LINE_SPACING);
        let y = self.y;
        let p = self.page();
        for (n, r) in labels.iter().enumerate() {
            p.text(
                MARGIN + 8.0,
                y - n as f32 * LINE_SPACING,
                Font::Bold,
                BODY,
                r,
            );
        }
        for (n, v) in values.iter().enumerate() {
            p.text(x_valor, y - n as f32 * LINE_SPACING, Font::Normal, BODY, v);
        }
        self.y -= lines as f32 * LINE_SPACING;
    }

    fn paragraph(&mut self, text: &str, size: f32) {
        self.narrow_paragraph(text, size, WIDTH - 2.0 * MARGIN - 16.0);
    }

    fn narrow_paragraph(&mut self, text: &str, size: f32, width: f32) {
        let leading = size * 1.3;
        for line in wrap(text, Font::Normal, size, width) {
            self.ensure_room(leading);
            let y = self.y;
            self.page().text(MARGIN + 8.0, y, Font::Normal, size, &line);
            self.y -= leading;
        }
    }

    fn table_header(&mut self, columns: &[(f32, &str)]) {
        self.ensure_room(2.0 * LINE_SPACING);
        let y = self.y;
        let p = self.page();
        for &(x, t) in columns {
            p.text(x, y, Font::Bold, BODY, t);
        }
        p.line(MARGIN, WIDTH - MARGIN, y - 4.0);
        self.y -= LINE_SPACING + 2.0;
    }

    fn table_row(&mut self, columns: &[(f32, &str)]) {
        self.ensure_room(LINE_SPACING);
        let y = self.y;
        let p = self.page();
        for &(x, t) in columns {
            p.text(x, y, Font::Normal, BODY, t);
        }
        self.y -= LINE_SPACING;
    }
}
