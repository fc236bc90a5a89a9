//! Personal data kept out of error texts (LGPD; docs/contrato.md "What the service does": the
//! client is the data controller of what it looks up): CPF and CNPJ masked as
//! `***.456.789-**` / `**.345.678/****-**`, and a value given by the user that is not a CAR
//! code shown without its letters (it may be a name).

use std::borrow::Cow;

use super::CpfCnpj;

/// `texto` with every CPF (11 digits) and CNPJ (14 digits, or an alphanumeric CNPJ with valid
/// check digits) masked, punctuated or bare. A run of digits glued to letters (inside a CAR
/// code's hash) is left alone.
#[must_use]
pub(crate) fn documentos(texto: &str) -> Cow<'_, str> {
    let chars: Vec<char> = texto.chars().collect();
    let mut saida = String::with_capacity(texto.len());
    let mut mudou = false;
    let mut k = 0;
    while k < chars.len() {
        if let Some((fim, mask)) = documento_em(&chars, k) {
            saida.push_str(&mask);
            mudou = true;
            k = fim;
        } else {
            saida.push(chars[k]);
            k += 1;
        }
    }
    if mudou {
        Cow::Owned(saida)
    } else {
        Cow::Borrowed(texto)
    }
}

fn separador(c: char) -> bool {
    matches!(c, '.' | '-' | '/')
}

/// A document starting at `k` (not glued to a letter or digit before it): where it ends and
/// its mask.
fn documento_em(chars: &[char], k: usize) -> Option<(usize, String)> {
    if !chars[k].is_ascii_alphanumeric() || (k > 0 && chars[k - 1].is_ascii_alphanumeric()) {
        return None;
    }
    let mut fim = k;
    while fim < chars.len() && (chars[fim].is_ascii_alphanumeric() || separador(chars[fim])) {
        fim += 1;
    }
    while fim > k && separador(chars[fim - 1]) {
        fim -= 1;
    }
    let token: String = chars[k..fim].iter().collect();
    let bare: String = token.chars().filter(|c| !separador(*c)).collect();
    let so_digitos = bare.chars().all(|c| c.is_ascii_digit());
    let mask = match bare.len() {
        11 if so_digitos => format!("***.{}.{}-**", &bare[3..6], &bare[6..9]),
        14 if so_digitos || CpfCnpj::parse(&bare).is_ok() => {
            format!("**.{}.{}/****-**", &bare[2..5], &bare[5..8])
        }
        _ => return None,
    };
    Some((fim, mask))
}

/// A value given by the user, for an error text: a CAR-code-like value (`UF-...`, letters,
/// digits, `.` and `-` only) as given, documents masked; anything else with its letters masked
/// too (`Fulano de Tal` becomes `****** ** ***`).
#[must_use]
pub(crate) fn input(valor: &str) -> String {
    let v = valor.trim();
    let b = v.as_bytes();
    let parece_car = b.len() >= 3
        && b[0].is_ascii_alphabetic()
        && b[1].is_ascii_alphabetic()
        && b[2] == b'-'
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    let sem_documentos = documentos(valor);
    if parece_car {
        return sem_documentos.into_owned();
    }
    sem_documentos
        .chars()
        .map(|c| if c.is_alphabetic() { '*' } else { c })
        .collect()
}

/// A message of serde_json, for an error text: the values it quotes from the body (`"..."`,
/// and the variant of `unknown variant `...``) masked, documents too.
#[must_use]
pub(crate) fn serde(mensagem: &str) -> String {
    let mut saida = String::with_capacity(mensagem.len());
    let mut aspas = false;
    for c in mensagem.chars() {
        match c {
            '"' => {
                if aspas {
                    saida.push_str("***");
                }
                aspas = !aspas;
                saida.push(c);
            }
            _ if aspas => {}
            _ => saida.push(c),
        }
    }
    if let Some(ini) = saida.find("unknown variant `") {
        let ini = ini + "unknown variant `".len();
        if let Some(fim) = saida[ini..].find('`') {
            saida.replace_range(ini..ini + fim, "***");
        }
    }
    documentos(&saida).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpfs_and_cnpjs_are_masked_wherever_they_are() {
        assert_eq!(
            documentos("código CAR inválido: \"123.456.789-00\""),
            "código CAR inválido: \"***.456.789-**\""
        );
        assert_eq!(
            documentos("/v1/proprietario/52998224725 sem CARs"),
            "/v1/proprietario/***.982.247-** sem CARs"
        );
        assert_eq!(
            documentos("CNPJ 12.345.678/0001-95."),
            "CNPJ **.345.678/****-**."
        );
        assert_eq!(documentos("12ABC34501DE35"), "**.ABC.345/****-**");
        let car = "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47 e 2026-11-21 R$ 1.234,56";
        assert_eq!(documentos(car), car, "CAR codes, dates and amounts stay");
        assert_eq!(
            documentos("A1234567890123B"),
            "A1234567890123B",
            "glued to letters"
        );
    }

    #[test]
    fn a_value_that_is_not_a_car_code_loses_its_letters() {
        assert_eq!(input("Fulano de Tal"), "****** ** ***");
        assert_eq!(input("DF-123"), "DF-123");
        assert_eq!(input("529.982.247-25"), "***.982.247-**");
        assert_eq!(input("João 529.982.247-25"), "**** ***.982.247-**");
    }

    #[test]
    fn serde_messages_lose_the_values_they_quote() {
        assert_eq!(
            serde("invalid type: string \"Fulano de Tal\", expected u32"),
            "invalid type: string \"***\", expected u32"
        );
        assert_eq!(
            serde("unknown variant `Beltrana`, expected one of `Pendente`, `Confirmado`"),
            "unknown variant `***`, expected one of `Pendente`, `Confirmado`"
        );
        assert_eq!(serde("missing field `dados`"), "missing field `dados`");
    }
}
