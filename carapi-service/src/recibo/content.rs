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
    emitido_em: DateTime<FixedOffset>,
) -> Result<Vec<PdfPage>, ReciboError> {
    let mut e = Writer::new_for(imovel);
    imovel_page(&mut e, imovel);
    e.new_page();
    proprietarios_page(&mut e, imovel, emitido_em)?;
    let total = e.pages.len();
    for (i, pagina) in e.pages.iter_mut().enumerate() {
        footer(pagina, i + 1, total);
    }
    Ok(e.pages)
}

fn imovel_page(e: &mut Writer, i: &Imovel) {
    let nao_informado = || "Não informado".to_owned();
    e.section("DADOS DO IMÓVEL RURAL");
    e.field(
        "Nome do Imóvel Rural:",
        &i.nome_imovel.clone().unwrap_or_else(nao_informado),
    );
    e.field("Município:", &i.municipio);
    let uf = format!("{} ({})", i.uf.nome(), i.uf);
    e.field("UF:", &uf);
    let coordenadas = match (i.latitude, i.longitude) {
        (Some(lat), Some(lon)) => format!(
            "Latitude: {}   Longitude: {}",
            official_dms(&dms::format(lat, dms::Eixo::Latitude)),
            official_dms(&dms::format(lon, dms::Eixo::Longitude)),
        ),
        _ => nao_informado(),
    };
    e.field(
        "Coordenadas Geográficas do Centroide do Imóvel:",
        &coordenadas,
    );
    e.field(
        "Área Total (ha) do Imóvel Rural:",
        &br::format_decimal(i.area_total_ha, 4),
    );
    e.field(
        "Módulos Fiscais:",
        &i.modulos_fiscais
            .map(|m| br::format_decimal(m, 4))
            .unwrap_or_else(nao_informado),
    );
    e.field(
        "Código do Protocolo:",
        &i.codigo_protocolo.clone().unwrap_or_else(nao_informado),
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
    for (n, aviso) in NOTICES.iter().enumerate() {
        e.paragraph(&format!("{}. {aviso}", n + 1), 8.5);
        e.space(3.0);
    }
}

fn proprietarios_page(
    e: &mut Writer,
    i: &Imovel,
    emitido_em: DateTime<FixedOffset>,
) -> Result<(), ReciboError> {
    e.section("IDENTIFICAÇÃO DO PROPRIETÁRIO/POSSUIDOR");
    e.table_header(&[(MARGIN + 8.0, "CPF/CNPJ"), (180.0, "Nome")]);
    if i.proprietarios.is_empty() {
        e.table_row(&[(MARGIN + 8.0, "Não informado")]);
    }
    for p in &i.proprietarios {
        e.table_row(&[(MARGIN + 8.0, &p.documento.formatado()), (180.0, &p.nome)]);
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
    verification_section(e, i, emitido_em)
}

/// The matrícula: número, data, livro, folha and cartório (wrapped in its column).
fn matricula_section(e: &mut Writer, i: &Imovel) {
    e.section("MATRÍCULA DO IMÓVEL");
    let colunas = [48.0, 110.0, 180.0, 230.0, 270.0];
    e.table_header(&[
        (colunas[0], "Número"),
        (colunas[1], "Data"),
        (colunas[2], "Livro"),
        (colunas[3], "Folha"),
        (colunas[4], "Cartório"),
    ]);
    match &i.matricula_numero {
        Some(numero) => {
            let data = i.matricula_data.as_deref().unwrap_or("-");
            let cartorio = i.matricula_cartorio.as_deref().unwrap_or("Não informado");
            // Matrículas are kept in Livro 2 (Registro Geral) under Lei 6.015/1973 art. 176; the
            // folha is not part of the record.
            let linhas = wrap(cartorio, Font::Normal, BODY, WIDTH - MARGIN - colunas[4]);
            e.ensure_room(LINE_SPACING * linhas.len() as f32);
            let y = e.y;
            for (x, t) in [
                (colunas[0], numero.as_str()),
                (colunas[1], data),
                (colunas[2], "2"),
                (colunas[3], "-"),
            ] {
                e.page().text(x, y, Font::Normal, BODY, t);
            }
            for (n, l) in linhas.iter().enumerate() {
                e.page().text(
                    colunas[4],
                    y - n as f32 * LINE_SPACING,
                    Font::Normal,
                    BODY,
                    l,
                );
            }
            e.y -= LINE_SPACING * linhas.len() as f32;
        }
        None => e.table_row(&[(colunas[0], "Não informada")]),
    }
}

/// The QR code of the CAR code beside the code and the issue time.
fn verification_section(
    e: &mut Writer,
    i: &Imovel,
    emitido_em: DateTime<FixedOffset>,
) -> Result<(), ReciboError> {
    let lado = 110.0;
    e.ensure_room(lado + 20.0);
    e.section("VERIFICAÇÃO");
    let topo = e.y + LINE_SPACING - 2.0;
    let codigo = i.codigo_car.as_str();
    let rects = qr_rects(codigo, WIDTH - MARGIN - lado, topo - lado, lado)?;
    e.page().rects(0.0, &rects);
    let largura_texto = WIDTH - 2.0 * MARGIN - lado - 20.0;
    e.narrow_field("Código do imóvel no CAR:", codigo, largura_texto);
    e.narrow_field(
        "Recibo emitido em:",
        &emitido_em.format("%d/%m/%Y %H:%M:%S (UTC%:z)").to_string(),
        largura_texto,
    );
    e.narrow_paragraph(
        "O QR code ao lado contém o código do imóvel no CAR, para conferência na consulta pública.",
        8.0,
        largura_texto,
    );
    e.y = e.y.min(topo - lado - 10.0);
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
    texto: &str,
    x: f32,
    y: f32,
    lado: f32,
) -> Result<Vec<(f32, f32, f32, f32)>, ReciboError> {
    let codigo = QrCode::with_error_correction_level(texto.as_bytes(), EcLevel::M)?;
    let n = codigo.width();
    let modulo = lado / (n + 8) as f32;
    let cores = codigo.to_colors();
    let mut rets = Vec::new();
    for (linha, cores_linha) in cores.chunks(n).enumerate() {
        let mut coluna = 0;
        while coluna < n {
            if cores_linha[coluna] == Color::Dark {
                let inicio = coluna;
                while coluna < n && cores_linha[coluna] == Color::Dark {
                    coluna += 1;
                }
                rets.push((
                    x + (inicio + 4) as f32 * modulo,
                    y + lado - (linha + 5) as f32 * modulo,
                    (coluna - inicio) as f32 * modulo,
                    modulo,
                ));
            } else {
                coluna += 1;
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
        Font::Negrito,
        8.0,
        &format!("Página {n}/{total}"),
    );
}

/// Flows content down the pages, starting a new page (with the header) when one is full.
struct Writer {
    pages: Vec<PdfPage>,
    y: f32,
    registro: String,
    data_cadastro: String,
}

impl Writer {
    fn new_for(i: &Imovel) -> Self {
        // The official receipt prints the hash in 8 dotted groups of 4
        // (`DF-5300108-B69B.317D.D02C.43DA.A77A.0784.AEEF.7D47`); sandbox codes stay as they are.
        let registro = if i.codigo_car.is_sandbox() {
            i.codigo_car.to_string()
        } else {
            format!(
                "{}{}",
                &i.codigo_car.as_str()[..11],
                i.codigo_car.hash_pontuado()
            )
        };
        let mut e = Writer {
            pages: Vec::new(),
            y: CONTENT_TOP,
            registro,
            data_cadastro: br::format_data(i.data_cadastro),
        };
        e.new_page();
        e
    }

    fn page(&mut self) -> &mut PdfPage {
        if self.pages.is_empty() {
            self.pages.push(PdfPage::default());
        }
        let ultima = self.pages.len() - 1;
        &mut self.pages[ultima]
    }

    /// A new page with the header of every page: title, `Record no CAR`, `Data de Cadastro`.
    fn new_page(&mut self) {
        let mut p = PdfPage::default();
        p.centered_text(
            805.0,
            Font::Negrito,
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
        p.text(MARGIN + 8.0, 768.0, Font::Negrito, 9.5, "Registro no CAR:");
        p.text(MARGIN + 100.0, 768.0, Font::Normal, 9.5, &self.registro);
        p.text(MARGIN + 8.0, 753.0, Font::Negrito, 9.5, "Data de Cadastro:");
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

    fn ensure_room(&mut self, altura: f32) {
        if self.y - altura < CONTENT_BASE {
            self.new_page();
        }
    }

    fn space(&mut self, pontos: f32) {
        self.y -= pontos;
    }

    fn section(&mut self, titulo: &str) {
        self.ensure_room(3.0 * LINE_SPACING);
        let y = self.y;
        let p = self.page();
        p.rects(0.85, &[(MARGIN, y - 4.0, WIDTH - 2.0 * MARGIN, 15.0)]);
        p.text(MARGIN + 6.0, y, Font::Negrito, 9.5, titulo);
        self.y -= LINE_SPACING + 6.0;
    }

    fn field(&mut self, rotulo: &str, valor: &str) {
        self.field_at(rotulo, valor, X_VALOR, WIDTH - MARGIN - X_VALOR);
    }

    /// A label on its own line and the value below it, in a column `width` wide.
    fn narrow_field(&mut self, rotulo: &str, valor: &str, width: f32) {
        self.ensure_room(2.0 * LINE_SPACING);
        let y = self.y;
        self.page()
            .text(MARGIN + 8.0, y, Font::Negrito, BODY, rotulo);
        self.y -= LINE_SPACING;
        self.field_at("", valor, MARGIN + 8.0, width);
    }

    fn field_at(&mut self, rotulo: &str, valor: &str, x_valor: f32, width: f32) {
        let rotulos = wrap(rotulo, Font::Negrito, BODY, x_valor - MARGIN - 14.0);
        let valores = wrap(valor, Font::Normal, BODY, width);
        let linhas = rotulos.len().max(valores.len()).max(1);
        self.ensure_room(linhas as f32 * LINE_SPACING);
        let y = self.y;
        let p = self.page();
        for (n, r) in rotulos.iter().enumerate() {
            p.text(
                MARGIN + 8.0,
                y - n as f32 * LINE_SPACING,
                Font::Negrito,
                BODY,
                r,
            );
        }
        for (n, v) in valores.iter().enumerate() {
            p.text(x_valor, y - n as f32 * LINE_SPACING, Font::Normal, BODY, v);
        }
        self.y -= linhas as f32 * LINE_SPACING;
    }

    fn paragraph(&mut self, texto: &str, tamanho: f32) {
        self.narrow_paragraph(texto, tamanho, WIDTH - 2.0 * MARGIN - 16.0);
    }

    fn narrow_paragraph(&mut self, texto: &str, tamanho: f32, width: f32) {
        let entrelinha = tamanho * 1.3;
        for linha in wrap(texto, Font::Normal, tamanho, width) {
            self.ensure_room(entrelinha);
            let y = self.y;
            self.page()
                .text(MARGIN + 8.0, y, Font::Normal, tamanho, &linha);
            self.y -= entrelinha;
        }
    }

    fn table_header(&mut self, colunas: &[(f32, &str)]) {
        self.ensure_room(2.0 * LINE_SPACING);
        let y = self.y;
        let p = self.page();
        for &(x, t) in colunas {
            p.text(x, y, Font::Negrito, BODY, t);
        }
        p.line(MARGIN, WIDTH - MARGIN, y - 4.0);
        self.y -= LINE_SPACING + 2.0;
    }

    fn table_row(&mut self, colunas: &[(f32, &str)]) {
        self.ensure_room(LINE_SPACING);
        let y = self.y;
        let p = self.page();
        for &(x, t) in colunas {
            p.text(x, y, Font::Normal, BODY, t);
        }
        self.y -= LINE_SPACING;
    }
}
