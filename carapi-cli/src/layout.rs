//! Tables laid out for the terminal's width, as gh does: a value that must stay whole (a number,
//! a date, a CAR code, money: any value without spaces, money and dates) is never split; text
//! cells of a list are cut to one line with `…`; columns that do not fit are left out (the least
//! important first) and [`Ajuste::omitidas`] names them so the caller can say how to see
//! everything. comfy-table draws: each column gets an absolute width
//! ([`ColumnConstraint::Absolute`]), rows of a list a height of one line ([`Row::max_height`])
//! with comfy-table's truncation indicator.

use comfy_table::{Cell, ColumnConstraint, ContentArrangement, Row, Table, Width, presets};

/// Columns a text cell of a list keeps before it is cut with `…`.
const MIN_TEXTO: usize = 10;

/// Width of the borders of [`presets::UTF8_FULL_CONDENSED`] with one space of padding each side:
/// `│ a │ b │` is `1 + 3 × colunas`.
fn bordas(colunas: usize) -> usize {
    1 + 3 * colunas
}

/// Width on screen of `s` (every character the CLI prints is one column wide).
pub fn largura(s: &str) -> usize {
    s.chars().count()
}

/// True when `s` must not be split over lines: no spaces, or money (`R$ 1.234,56`), or a date
/// and time (`09/05/2014 17:16:10`).
pub fn inteiro(s: &str) -> bool {
    !s.contains(' ') || s.starts_with("R$ ") || eh_data_hora(s)
}

fn eh_data_hora(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 19 && b[2] == b'/' && b[5] == b'/' && b[10] == b' ' && b[13] == b':'
}

/// The longest word of `s`.
fn maior_palavra(s: &str) -> usize {
    s.split(' ').map(largura).max().unwrap_or(0)
}

/// What a column needs: at least `minimo` (whole values, a cut text, the header's longest word),
/// at most `natural` (everything on one line).
#[derive(Debug, Clone, Copy)]
struct Medida {
    minimo: usize,
    natural: usize,
}

fn medir<'a>(cabecalho: &str, values: impl Iterator<Item = &'a str>, cortar: bool) -> Medida {
    let mut m = Medida {
        minimo: maior_palavra(cabecalho),
        natural: largura(cabecalho),
    };
    for v in values {
        let w = largura(v);
        m.natural = m.natural.max(w);
        let minimo = if inteiro(v) {
            w
        } else if cortar {
            w.min(MIN_TEXTO)
        } else {
            maior_palavra(v)
        };
        m.minimo = m.minimo.max(minimo);
    }
    m
}

/// A table fitted to a width.
#[derive(Debug)]
pub struct Ajuste {
    /// The table to print.
    pub table: Table,
    /// Labels of the columns left out for lack of width (empty when all fit).
    pub omitidas: Vec<String>,
}

/// A list fitted to `largura` columns (`table` already has its header, whose labels are
/// `cabecalho`; the rows are added here): columns are kept by `prioridade`
/// (indexes, most important first; the rest in order after them) while their minimum fits, shown
/// in their own order; the spare width goes to the cut text columns. `None`: natural width.
pub fn list(
    mut table: Table,
    cabecalho: &[&str],
    linhas: &[Vec<&str>],
    prioridade: &[usize],
    largura_max: Option<u16>,
) -> Ajuste {
    let Some(max) = largura_max.map(usize::from) else {
        for l in linhas {
            table.add_row(l.clone());
        }
        return Ajuste {
            table,
            omitidas: vec![],
        };
    };
    let medidas: Vec<Medida> = cabecalho
        .iter()
        .enumerate()
        .map(|(j, h)| medir(h, linhas.iter().map(|l| l[j]), true))
        .collect();
    let order = prioridade
        .iter()
        .copied()
        .chain(0..cabecalho.len())
        .filter(|j| *j < cabecalho.len());
    let mut visiveis = vec![false; cabecalho.len()];
    let mut usado = 1;
    for j in order {
        if visiveis[j] {
            continue;
        }
        if usado + medidas[j].minimo + 3 <= max {
            usado += medidas[j].minimo + 3;
            visiveis[j] = true;
        }
    }
    let mut larguras: Vec<usize> = medidas.iter().map(|m| m.minimo).collect();
    let mut sobra = max.saturating_sub(usado);
    // The spare width: first headers on one line, then whole text cells.
    let alvos: [Box<dyn Fn(usize) -> usize>; 2] = [
        Box::new(|j| largura(cabecalho[j]).min(medidas[j].natural)),
        Box::new(|j| medidas[j].natural),
    ];
    for alvo in alvos {
        for j in (0..cabecalho.len()).filter(|j| visiveis[*j]) {
            let mais = alvo(j).saturating_sub(larguras[j]).min(sobra);
            larguras[j] += mais;
            sobra -= mais;
        }
    }
    for l in linhas {
        let mut row = Row::from(l.iter().map(Cell::new).collect::<Vec<_>>());
        row.max_height(1);
        table.add_row(row);
    }
    table
        .set_width(u16::try_from(max).unwrap_or(u16::MAX))
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_truncation_indicator("…");
    let omitidas = restringir(&mut table, &larguras, &visiveis, cabecalho);
    Ajuste { table, omitidas }
}

fn restringir(
    table: &mut Table,
    larguras: &[usize],
    visiveis: &[bool],
    cabecalho: &[&str],
) -> Vec<String> {
    let mut omitidas = vec![];
    for (j, col) in table.column_iter_mut().enumerate() {
        if visiveis[j] {
            let w = u16::try_from(larguras[j] + 2).unwrap_or(u16::MAX);
            col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(w)));
        } else {
            col.set_constraint(ColumnConstraint::Hidden);
            omitidas.push(cabecalho[j].to_owned());
        }
    }
    omitidas
}

/// Labelled fields (`table` has the header `Campo | Valor`; the rows are added here) fitted
/// to `largura` columns, rendered: labels and text values wrap at spaces, whole values never
/// split; when that does not fit, the borders go (two columns separated by spaces), and when
/// even that does not fit (a 50-character protocol code at 60 columns), each label is followed
/// by its value on the next line, indented.
pub fn campos(mut table: Table, linhas: &[(&str, &str)], largura_max: Option<u16>) -> String {
    for (r, v) in linhas {
        table.add_row(vec![*r, *v]);
    }
    let Some(max) = largura_max.map(usize::from) else {
        return table.to_string();
    };
    let rotulo = medir("Campo", linhas.iter().map(|(r, _)| *r), false);
    let valor = medir("Valor", linhas.iter().map(|(_, v)| *v), false);
    if rotulo.natural + valor.natural + bordas(2) <= max {
        return table.to_string();
    }
    let mut borda = bordas(2);
    if rotulo.minimo + valor.minimo + borda > max {
        borda = 4;
        if rotulo.minimo + valor.minimo + borda > max {
            return empilhados(linhas, max);
        }
        table.load_preset(presets::NOTHING);
    }
    let livre = max.saturating_sub(borda);
    let r = rotulo
        .natural
        .min(livre.saturating_sub(valor.minimo))
        .max(rotulo.minimo);
    let v = livre.saturating_sub(r).max(valor.minimo);
    table
        .set_width(u16::try_from(max).unwrap_or(u16::MAX))
        .set_content_arrangement(ContentArrangement::Dynamic);
    for (col, w) in table.column_iter_mut().zip([r, v]) {
        let w = u16::try_from(w + 2).unwrap_or(u16::MAX);
        col.set_constraint(ColumnConstraint::Absolute(Width::Fixed(w)));
    }
    table.to_string()
}

/// `Rótulo:` then the value on the next line, indented by two spaces; text values wrapped at
/// spaces to `max`.
fn empilhados(linhas: &[(&str, &str)], max: usize) -> String {
    let mut out = String::new();
    for (r, v) in linhas {
        out.push_str(r);
        out.push_str(":\n");
        let mut linha = String::from(" ");
        for palavra in v.split(' ') {
            if largura(&linha) + 1 + largura(palavra) > max && largura(&linha) > 1 {
                out.push_str(&linha);
                out.push('\n');
                linha = String::from(" ");
            }
            linha.push(' ');
            linha.push_str(palavra);
        }
        out.push_str(&linha);
        out.push('\n');
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> Table {
        let mut t = Table::new();
        t.load_preset(presets::UTF8_FULL_CONDENSED).force_no_tty();
        t
    }

    const CODIGO: &str = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47";

    #[test]
    fn whole_values_are_never_split_and_text_is_cut() {
        let cab = ["Código CAR", "Nome do imóvel", "Área total (ha)", "Valor"];
        let linhas = vec![
            vec![
                CODIGO,
                "FAZENDA BOA VISTA DO RIO VERDE",
                "198,915",
                "R$ 49,70",
            ],
            vec![CODIGO, "SÍTIO", "9", "R$ 1.234,56"],
        ];
        for w in [80u16, 60] {
            let mut t = base();
            t.set_header(cab.to_vec());
            let a = list(t, &cab, &linhas, &[], Some(w));
            let s = a.table.to_string();
            assert!(s.lines().all(|l| largura(l) <= usize::from(w)), "{w}:\n{s}");
            assert!(s.contains(CODIGO), "{s}");
            if w == 80 {
                assert!(s.contains("198,915") && s.contains("Área total"), "{s}");
                assert!(s.contains("FAZENDA BOA") && s.contains('…'), "{s}");
                assert_eq!(a.omitidas, ["Valor"]);
            } else {
                assert!(!a.omitidas.is_empty(), "{s}");
            }
        }
    }

    #[test]
    fn fields_fit_60_columns_without_splitting_a_code() {
        let linhas = [
            ("Código CAR", CODIGO),
            ("Da base consolidada (cache)", "sim"),
            ("Data da consulta", "09/05/2014 17:16:10"),
            ("Proprietários", "JOÃO DA SILVA E MARIA DE SOUZA SANTOS"),
        ];
        let protocolo = "DF-5300108-0000.0000.0000.0000.0000.0000.0000.0001";
        let mut com_protocolo = linhas.to_vec();
        com_protocolo.push(("Código de protocolo", protocolo));
        for (w, linhas) in [
            (80u16, &linhas[..]),
            (60, &linhas[..]),
            (60, &com_protocolo[..]),
        ] {
            let mut t = base();
            t.set_header(vec!["Campo", "Valor"]);
            let s = campos(t, linhas, Some(w));
            assert!(s.lines().all(|l| largura(l) <= usize::from(w)), "{w}:\n{s}");
            assert!(
                s.contains(CODIGO) && s.contains("09/05/2014 17:16:10"),
                "{s}"
            );
        }
    }
}
