//! The receipt's layout, modelled on the official "Recibo de Inscrição do Imóvel Rural no CAR"
//! (docs/dominio.md "Official receipt"): header on every page, property data and legal notices on
//! page 1, owners, declared areas, matrícula and QR code from page 2, `Página n/N` footer.

use carapi_sdk::domain::{br, dms, uf};
use chrono::{DateTime, FixedOffset};
use qrcode::{Color, EcLevel, QrCode};

use super::ReciboError;
use super::pdf::{Fonte, LARGURA, Pagina, quebrar};
use crate::dados::Imovel;

const MARGEM: f32 = 40.0;
const X_VALOR: f32 = 230.0;
const TOPO_CONTEUDO: f32 = 728.0;
const BASE_CONTEUDO: f32 = 70.0;
const CORPO: f32 = 9.0;
const ENTRELINHA: f32 = 12.5;

/// The legal notices of the official receipt's "Informações Gerais" block (Lei 12.651/2012).
pub(crate) const AVISOS: [&str; 8] = [
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
pub(crate) const NOTA_RODAPE: &str = "Documento de referência gerado pelo carapi-server: \
     proprietários e matrícula são fictícios. Não é um documento oficial do SICAR.";

/// Lays out the pages (footers not yet drawn: they need the page count).
pub(crate) fn paginas(
    imovel: &Imovel,
    emitido_em: DateTime<FixedOffset>,
) -> Result<Vec<Pagina>, ReciboError> {
    let mut e = Escritor::novo(imovel);
    pagina_imovel(&mut e, imovel);
    e.nova_pagina();
    pagina_proprietarios(&mut e, imovel, emitido_em)?;
    let total = e.paginas.len();
    for (i, pagina) in e.paginas.iter_mut().enumerate() {
        rodape(pagina, i + 1, total);
    }
    Ok(e.paginas)
}

fn pagina_imovel(e: &mut Escritor, i: &Imovel) {
    let nao_informado = || "Não informado".to_owned();
    e.secao("DADOS DO IMÓVEL RURAL");
    e.campo(
        "Nome do Imóvel Rural:",
        &i.nome_imovel.clone().unwrap_or_else(nao_informado),
    );
    e.campo("Município:", &i.municipio);
    let uf = match uf::nome(&i.uf) {
        Some(nome) => format!("{nome} ({})", i.uf),
        None => i.uf.clone(),
    };
    e.campo("UF:", &uf);
    let coordenadas = match (i.latitude, i.longitude) {
        (Some(lat), Some(lon)) => format!(
            "Latitude: {}   Longitude: {}",
            dms_oficial(&dms::format(lat, dms::Eixo::Latitude)),
            dms_oficial(&dms::format(lon, dms::Eixo::Longitude)),
        ),
        _ => nao_informado(),
    };
    e.campo(
        "Coordenadas Geográficas do Centroide do Imóvel:",
        &coordenadas,
    );
    e.campo(
        "Área Total (ha) do Imóvel Rural:",
        &br::format_decimal(i.area_total_ha, 4),
    );
    e.campo(
        "Módulos Fiscais:",
        &i.modulos_fiscais
            .map(|m| br::format_decimal(m, 4))
            .unwrap_or_else(nao_informado),
    );
    e.campo(
        "Código do Protocolo:",
        &i.codigo_protocolo.clone().unwrap_or_else(nao_informado),
    );
    e.campo("Tipo do Imóvel:", &tipo(&i.tipo_imovel));
    let situacao = match &i.condicao {
        Some(c) => format!("{} - {c}", situacao(&i.status_imovel)),
        None => situacao(&i.status_imovel),
    };
    e.campo("Situação do Cadastro:", &situacao);
    if let Some(d) = i.data_atualizacao {
        e.campo("Última Atualização:", &br::format_data(d));
    }
    e.espaco(8.0);
    e.secao("INFORMAÇÕES GERAIS");
    for (n, aviso) in AVISOS.iter().enumerate() {
        e.paragrafo(&format!("{}. {aviso}", n + 1), 8.5);
        e.espaco(3.0);
    }
}

fn pagina_proprietarios(
    e: &mut Escritor,
    i: &Imovel,
    emitido_em: DateTime<FixedOffset>,
) -> Result<(), ReciboError> {
    e.secao("IDENTIFICAÇÃO DO PROPRIETÁRIO/POSSUIDOR");
    e.cabecalho_tabela(&[(MARGEM + 8.0, "CPF/CNPJ"), (180.0, "Nome")]);
    if i.proprietarios.is_empty() {
        e.linha_tabela(&[(MARGEM + 8.0, "Não informado")]);
    }
    for p in &i.proprietarios {
        e.linha_tabela(&[(MARGEM + 8.0, &p.documento.formatado()), (180.0, &p.nome)]);
    }
    e.espaco(8.0);
    e.secao("ÁREAS DECLARADAS (ha)");
    e.campo(
        "Área Total do Imóvel:",
        &br::format_decimal(i.area_total_ha, 4),
    );
    if let Some(m) = i.modulos_fiscais {
        e.campo("Módulos Fiscais:", &br::format_decimal(m, 4));
    }
    e.espaco(8.0);
    secao_matricula(e, i);
    e.espaco(14.0);
    secao_verificacao(e, i, emitido_em)
}

/// The matrícula: número, data, livro, folha and cartório (wrapped in its column).
fn secao_matricula(e: &mut Escritor, i: &Imovel) {
    e.secao("MATRÍCULA DO IMÓVEL");
    let colunas = [48.0, 110.0, 180.0, 230.0, 270.0];
    e.cabecalho_tabela(&[
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
            let linhas = quebrar(
                cartorio,
                Fonte::Normal,
                CORPO,
                LARGURA - MARGEM - colunas[4],
            );
            e.garantir(ENTRELINHA * linhas.len() as f32);
            let y = e.y;
            for (x, t) in [
                (colunas[0], numero.as_str()),
                (colunas[1], data),
                (colunas[2], "2"),
                (colunas[3], "-"),
            ] {
                e.pagina().texto(x, y, Fonte::Normal, CORPO, t);
            }
            for (n, l) in linhas.iter().enumerate() {
                e.pagina().texto(
                    colunas[4],
                    y - n as f32 * ENTRELINHA,
                    Fonte::Normal,
                    CORPO,
                    l,
                );
            }
            e.y -= ENTRELINHA * linhas.len() as f32;
        }
        None => e.linha_tabela(&[(colunas[0], "Não informada")]),
    }
}

/// The QR code of the CAR code beside the code and the issue time.
fn secao_verificacao(
    e: &mut Escritor,
    i: &Imovel,
    emitido_em: DateTime<FixedOffset>,
) -> Result<(), ReciboError> {
    let lado = 110.0;
    e.garantir(lado + 20.0);
    e.secao("VERIFICAÇÃO");
    let topo = e.y + ENTRELINHA - 2.0;
    let codigo = i.codigo_car.as_str();
    let retangulos = qr_retangulos(codigo, LARGURA - MARGEM - lado, topo - lado, lado)?;
    e.pagina().retangulos(0.0, &retangulos);
    let largura_texto = LARGURA - 2.0 * MARGEM - lado - 20.0;
    e.campo_estreito("Código do imóvel no CAR:", codigo, largura_texto);
    e.campo_estreito(
        "Recibo emitido em:",
        &emitido_em.format("%d/%m/%Y %H:%M:%S (UTC%:z)").to_string(),
        largura_texto,
    );
    e.paragrafo_estreito(
        "O QR code ao lado contém o código do imóvel no CAR, para conferência na consulta pública.",
        8.0,
        largura_texto,
    );
    e.y = e.y.min(topo - lado - 10.0);
    Ok(())
}

/// The receipt writes seconds followed by `"` (`15°46'46,20" S`); the API omits it.
fn dms_oficial(s: &str) -> String {
    s.replacen(' ', "\" ", 1)
}

fn tipo(codigo: &str) -> String {
    let nome = match codigo {
        "IRU" => "Imóvel Rural",
        "AST" => "Assentamento de Reforma Agrária",
        "PCT" => "Território de Povos e Comunidades Tradicionais",
        _ => return codigo.to_owned(),
    };
    format!("{codigo} - {nome}")
}

fn situacao(status: &str) -> String {
    match status {
        "AT" => "Ativo".to_owned(),
        "PE" => "Pendente".to_owned(),
        "SU" => "Suspenso".to_owned(),
        "CA" => "Cancelado".to_owned(),
        outro => outro.to_owned(),
    }
}

/// The dark modules of a QR code (level M) encoding `texto`, as filled rectangles inside the
/// square of side `lado` points at `(x, y)` (bottom-left), quiet zone included; runs of dark
/// modules on a row are merged into one rectangle.
pub(crate) fn qr_retangulos(
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

fn rodape(p: &mut Pagina, n: usize, total: usize) {
    p.linha(MARGEM, LARGURA - MARGEM, 52.0);
    p.texto(MARGEM, 40.0, Fonte::Normal, 6.5, NOTA_RODAPE);
    p.texto_a_direita(
        LARGURA - MARGEM,
        40.0,
        Fonte::Negrito,
        8.0,
        &format!("Página {n}/{total}"),
    );
}

/// Flows content down the pages, starting a new page (with the header) when one is full.
struct Escritor {
    paginas: Vec<Pagina>,
    y: f32,
    registro: String,
    data_cadastro: String,
}

impl Escritor {
    fn novo(i: &Imovel) -> Self {
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
        let mut e = Escritor {
            paginas: Vec::new(),
            y: TOPO_CONTEUDO,
            registro,
            data_cadastro: br::format_data(i.data_cadastro),
        };
        e.nova_pagina();
        e
    }

    fn pagina(&mut self) -> &mut Pagina {
        if self.paginas.is_empty() {
            self.paginas.push(Pagina::default());
        }
        let ultima = self.paginas.len() - 1;
        &mut self.paginas[ultima]
    }

    /// A new page with the header of every page: title, `Registro no CAR`, `Data de Cadastro`.
    fn nova_pagina(&mut self) {
        let mut p = Pagina::default();
        p.texto_centrado(
            805.0,
            Fonte::Negrito,
            13.0,
            "Recibo de Inscrição do Imóvel Rural no CAR",
        );
        p.texto_centrado(
            791.0,
            Fonte::Normal,
            8.5,
            "Cadastro Ambiental Rural - CAR (Lei nº 12.651, de 25 de maio de 2012)",
        );
        p.retangulos(0.92, &[(MARGEM, 746.0, LARGURA - 2.0 * MARGEM, 36.0)]);
        p.texto(MARGEM + 8.0, 768.0, Fonte::Negrito, 9.5, "Registro no CAR:");
        p.texto(MARGEM + 100.0, 768.0, Fonte::Normal, 9.5, &self.registro);
        p.texto(
            MARGEM + 8.0,
            753.0,
            Fonte::Negrito,
            9.5,
            "Data de Cadastro:",
        );
        p.texto(
            MARGEM + 100.0,
            753.0,
            Fonte::Normal,
            9.5,
            &self.data_cadastro,
        );
        self.paginas.push(p);
        self.y = TOPO_CONTEUDO;
    }

    fn garantir(&mut self, altura: f32) {
        if self.y - altura < BASE_CONTEUDO {
            self.nova_pagina();
        }
    }

    fn espaco(&mut self, pontos: f32) {
        self.y -= pontos;
    }

    fn secao(&mut self, titulo: &str) {
        self.garantir(3.0 * ENTRELINHA);
        let y = self.y;
        let p = self.pagina();
        p.retangulos(0.85, &[(MARGEM, y - 4.0, LARGURA - 2.0 * MARGEM, 15.0)]);
        p.texto(MARGEM + 6.0, y, Fonte::Negrito, 9.5, titulo);
        self.y -= ENTRELINHA + 6.0;
    }

    fn campo(&mut self, rotulo: &str, valor: &str) {
        self.campo_em(rotulo, valor, X_VALOR, LARGURA - MARGEM - X_VALOR);
    }

    /// A label on its own line and the value below it, in a column `largura` wide.
    fn campo_estreito(&mut self, rotulo: &str, valor: &str, largura: f32) {
        self.garantir(2.0 * ENTRELINHA);
        let y = self.y;
        self.pagina()
            .texto(MARGEM + 8.0, y, Fonte::Negrito, CORPO, rotulo);
        self.y -= ENTRELINHA;
        self.campo_em("", valor, MARGEM + 8.0, largura);
    }

    fn campo_em(&mut self, rotulo: &str, valor: &str, x_valor: f32, largura: f32) {
        let rotulos = quebrar(rotulo, Fonte::Negrito, CORPO, x_valor - MARGEM - 14.0);
        let valores = quebrar(valor, Fonte::Normal, CORPO, largura);
        let linhas = rotulos.len().max(valores.len()).max(1);
        self.garantir(linhas as f32 * ENTRELINHA);
        let y = self.y;
        let p = self.pagina();
        for (n, r) in rotulos.iter().enumerate() {
            p.texto(
                MARGEM + 8.0,
                y - n as f32 * ENTRELINHA,
                Fonte::Negrito,
                CORPO,
                r,
            );
        }
        for (n, v) in valores.iter().enumerate() {
            p.texto(x_valor, y - n as f32 * ENTRELINHA, Fonte::Normal, CORPO, v);
        }
        self.y -= linhas as f32 * ENTRELINHA;
    }

    fn paragrafo(&mut self, texto: &str, tamanho: f32) {
        self.paragrafo_estreito(texto, tamanho, LARGURA - 2.0 * MARGEM - 16.0);
    }

    fn paragrafo_estreito(&mut self, texto: &str, tamanho: f32, largura: f32) {
        let entrelinha = tamanho * 1.3;
        for linha in quebrar(texto, Fonte::Normal, tamanho, largura) {
            self.garantir(entrelinha);
            let y = self.y;
            self.pagina()
                .texto(MARGEM + 8.0, y, Fonte::Normal, tamanho, &linha);
            self.y -= entrelinha;
        }
    }

    fn cabecalho_tabela(&mut self, colunas: &[(f32, &str)]) {
        self.garantir(2.0 * ENTRELINHA);
        let y = self.y;
        let p = self.pagina();
        for &(x, t) in colunas {
            p.texto(x, y, Fonte::Negrito, CORPO, t);
        }
        p.linha(MARGEM, LARGURA - MARGEM, y - 4.0);
        self.y -= ENTRELINHA + 2.0;
    }

    fn linha_tabela(&mut self, colunas: &[(f32, &str)]) {
        self.garantir(ENTRELINHA);
        let y = self.y;
        let p = self.pagina();
        for &(x, t) in colunas {
            p.texto(x, y, Fonte::Normal, CORPO, t);
        }
        self.y -= ENTRELINHA;
    }
}
