//! The owners' documents (CPF/CNPJ) an answer holds, extracted when it is archived so that a
//! data subject's request ([`Archive::subject`](super::Archive::subject)) finds every entry:
//! the `documento`/`cpf` fields of the JSON answers and the text of the receipt PDF (its
//! content streams are Flate-compressed and print the owners' formatted documents).

use std::collections::BTreeSet;

use crate::CpfCnpj;

/// Largest inflated size read from one PDF stream (a receipt is a few hundred KiB).
const MAX_INFLATED: usize = 16 * 1024 * 1024;

/// The bare documents found in `body`, sorted and without repeats.
pub(crate) fn extract(body: &[u8], pdf: bool) -> Vec<String> {
    let mut found = BTreeSet::new();
    if pdf {
        from_text(body, &mut found);
        for stream in pdf_streams(body) {
            if let Ok(plain) =
                miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(stream, MAX_INFLATED)
            {
                from_text(&plain, &mut found);
            }
        }
    } else if let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) {
        from_json(&value, false, &mut found);
    }
    found.into_iter().collect()
}

/// Strings under keys naming a document (`proprietariosCpfs`, `proprietarioConsultado`,
/// `documento`, `cpfCnpj`), split on commas.
fn from_json(value: &serde_json::Value, named: bool, found: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::String(s) if named => from_text(s.as_bytes(), found),
        serde_json::Value::Array(items) => {
            for v in items {
                from_json(v, named, found);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let k = k.to_lowercase();
                let named =
                    k.contains("cpf") || k.contains("documento") || k.contains("consultado");
                from_json(v, named, found);
            }
        }
        _ => {}
    }
}

/// Every run of document characters (digits, capital letters, `.`, `/`, `-`) of a CPF's or
/// CNPJ's length, masked or bare, whose check digits hold.
fn from_text(text: &[u8], found: &mut BTreeSet<String>) {
    let is_doc =
        |b: u8| b.is_ascii_digit() || b.is_ascii_uppercase() || matches!(b, b'.' | b'/' | b'-');
    for run in text.split(|b| !is_doc(*b)) {
        if !(11..=18).contains(&run.len()) || !run.iter().any(u8::is_ascii_digit) {
            continue;
        }
        let Ok(s) = std::str::from_utf8(run) else {
            continue;
        };
        if let Ok(d) = CpfCnpj::parse(s.trim_matches(|c| c == '.' || c == '-' || c == '/')) {
            found.insert(d.as_str().to_owned());
        }
    }
}

/// The raw bytes of each `stream … endstream` of a PDF.
fn pdf_streams(pdf: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = pdf;
    while let Some(i) = find(rest, b"stream") {
        let after = &rest[i + 6..];
        let start = if after.starts_with(b"\r\n") {
            2
        } else if after.starts_with(b"\n") {
            1
        } else {
            rest = after;
            continue;
        };
        let body = &after[start..];
        let Some(end) = find(body, b"endstream") else {
            break;
        };
        out.push(&body[..end]);
        rest = &body[end + 9..];
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_fields_and_pdf_streams() {
        let body = br#"{"dados":{"proprietariosCpfs":"529.982.247-25, 11.222.333/0001-81","matriculaNumero":"52998224725"}}"#;
        assert_eq!(extract(body, false), ["11222333000181", "52998224725"]);
        let text = b"BT (Maria) Tj (529.982.247-25) Tj ET";
        let z = miniz_oxide::deflate::compress_to_vec_zlib(text, 6);
        let mut pdf = b"%PDF-1.5\n1 0 obj<</Filter/FlateDecode>>stream\n".to_vec();
        pdf.extend_from_slice(&z);
        pdf.extend_from_slice(b"\nendstream endobj");
        assert_eq!(extract(&pdf, true), ["52998224725"]);
    }
}
