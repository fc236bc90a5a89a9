//! Plainly fictitious values for the parts of a CAR record that SICAR does not publish (owners,
//! their CPF/CNPJ, matrículas, protocol codes, property names; docs/dominio.md "Public SICAR record
//! fields"). Every function draws from the caller's seeded RNG, so the data is reproducible.
//!
//! Person names end in "de Tal" (the Portuguese placeholder surname, as in "Fulano de Tal") and
//! company names carry "Fictícia"/"Exemplo", so nobody can take them for real people. Documents
//! are random bases completed with valid mod-11 check digits
//! ([`CpfCnpj::from_base`](carapi_sdk::CpfCnpj::from_base)).

use carapi_sdk::CpfCnpj;
use chrono::{Datelike, Days, NaiveDate, NaiveDateTime};
use rand::Rng;
use rand::seq::IndexedRandom;
use rand_chacha::ChaCha8Rng;
use rust_decimal::Decimal;

use carapi_service::dados::Proprietario;

/// The RNG of all reference data: ChaCha8, whose output for a seed is fixed across platforms
/// and `rand_chacha` versions.
pub(crate) type Rng8 = ChaCha8Rng;

const FIRST_NAMES: &[&str] = &[
    "Fulano",
    "Beltrano",
    "Sicrano",
    "Ana",
    "João",
    "Maria",
    "José",
    "Antônio",
    "Francisca",
    "Luiz",
    "Joana",
    "Pedro",
    "Helena",
    "Tereza",
    "Raimundo",
    "Sebastião",
    "Lúcia",
    "Otávio",
    "Cecília",
    "Benedito",
];
const SURNAMES: &[&str] = &[
    "Exemplo",
    "Fictício",
    "Modelo",
    "Teste",
    "Amostra",
    "Silva Exemplo",
    "Souza Fictício",
    "Oliveira Modelo",
    "Pereira Teste",
    "Almeida Amostra",
];
const COMPANIES: &[&str] = &[
    "Agropecuária Fictícia",
    "Fazendas Exemplo",
    "Agrícola Modelo Fictícia",
    "Pecuária Exemplo",
    "Cerealista Fictícia",
    "Florestal Exemplo",
];
const COMPANY_SUFFIXES: &[&str] = &["Ltda", "S.A.", "Ltda - ME", "Eireli"];
const PLACE_NAMES: &[&str] = &[
    "Boa Esperança",
    "Santa Luzia",
    "Recanto Verde",
    "Bela Vista",
    "São José",
    "Água Limpa",
    "Três Irmãos",
    "Primavera",
    "Ouro Verde",
    "Santa Rita",
    "Bom Jardim",
    "Vale do Sol",
    "Pôr do Sol",
    "Rio Claro",
    "Campo Alegre",
    "Sossego",
];

/// `parts` joined by single spaces, in one allocation.
fn join_words(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len() + 1).sum());
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(p);
    }
    s
}

/// A fictitious person's name, e.g. `"Helena Modelo de Tal"`.
pub(crate) fn person_name(rng: &mut Rng8) -> String {
    let p = FIRST_NAMES.choose(rng).copied().unwrap_or("Fulano");
    let s = SURNAMES.choose(rng).copied().unwrap_or("Exemplo");
    join_words(&[p, s, "de Tal"])
}

/// A fictitious company name, e.g. `"Agropecuária Fictícia Santa Luzia Ltda"`.
pub(crate) fn company_name(rng: &mut Rng8) -> String {
    let e = COMPANIES
        .choose(rng)
        .copied()
        .unwrap_or("Agropecuária Fictícia");
    let l = PLACE_NAMES.choose(rng).copied().unwrap_or("Primavera");
    let s = COMPANY_SUFFIXES.choose(rng).copied().unwrap_or("Ltda");
    join_words(&[e, l, s])
}

/// A valid document whose base is `base` with its first `sorteados` characters drawn from
/// `alfabeto`; drawn again when `from_base` refuses it (only repeated-character documents).
fn documento<const N: usize>(
    rng: &mut Rng8,
    mut base: [u8; N],
    drawn: usize,
    alphabet: &[u8],
) -> CpfCnpj {
    loop {
        for c in &mut base[..drawn] {
            *c = alphabet[rng.random_range(0..alphabet.len())];
        }
        // The alphabets are ASCII.
        if let Some(doc) = std::str::from_utf8(&base).ok().and_then(CpfCnpj::from_base) {
            return doc;
        }
    }
}

const DIGITS: &[u8] = b"0123456789";

/// A random valid CPF (9 random digits plus the two check digits).
pub(crate) fn cpf(rng: &mut Rng8) -> CpfCnpj {
    documento(rng, [b'0'; 9], 9, DIGITS)
}

/// A random valid numeric CNPJ: 8-digit root, branch `0001`, check digits.
pub(crate) fn cnpj_numeric(rng: &mut Rng8) -> CpfCnpj {
    documento(rng, *b"000000000001", 8, DIGITS)
}

/// A random valid alphanumeric CNPJ (IN RFB 2.229/2024): 8-character root and 4-character
/// branch in `[0-9A-Z]`, numeric check digits.
pub(crate) fn cnpj_alphanumeric(rng: &mut Rng8) -> CpfCnpj {
    documento(rng, [b'0'; 12], 12, b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

/// A fresh fictitious owner: 70% people (CPF), 20% companies with a numeric CNPJ, 10% companies
/// with an alphanumeric CNPJ.
pub(crate) fn proprietario(rng: &mut Rng8) -> Proprietario {
    match rng.random_range(0..10u8) {
        0..7 => Proprietario {
            documento: cpf(rng),
            nome: person_name(rng),
        },
        7..9 => Proprietario {
            documento: cnpj_numeric(rng),
            nome: company_name(rng),
        },
        _ => Proprietario {
            documento: cnpj_alphanumeric(rng),
            nome: company_name(rng),
        },
    }
}

/// How many owners a record has: 1 (60%), 2 (30%) or 3 (10%).
pub(crate) fn owner_count(rng: &mut Rng8) -> usize {
    match rng.random_range(0..10u8) {
        0..6 => 1,
        6..9 => 2,
        _ => 3,
    }
}

/// A property name whose kind follows the area: `Chácara` below 10 ha, `Sítio` below 100 ha,
/// `Fazenda` above.
pub(crate) fn nome_imovel(rng: &mut Rng8, area_ha: Decimal) -> String {
    let tipo = if area_ha < Decimal::from(10) {
        "Chácara"
    } else if area_ha < Decimal::from(100) {
        "Sítio"
    } else {
        "Fazenda"
    };
    let place = PLACE_NAMES.choose(rng).copied().unwrap_or("Primavera");
    join_words(&[tipo, place])
}

/// A matrícula: number (plain digits, 1,000 to 99,999), date `dd/MM/yyyy` between about 1 and
/// 40 years before the CAR registration, and the registry office
/// `Cartório de Record de Imóveis de <município> (fictício)`.
pub(crate) fn matricula(
    rng: &mut Rng8,
    data_cadastro: NaiveDateTime,
    municipio: &str,
) -> (String, String, String) {
    let numero = rng.random_range(1_000..=99_999u32).to_string();
    let dias = rng.random_range(365..=14_600u64);
    let data = data_cadastro
        .date()
        .checked_sub_days(Days::new(dias))
        .unwrap_or(data_cadastro.date());
    let cartorio = join_words(&[
        "Cartório de Registro de Imóveis de",
        municipio,
        "(fictício)",
    ]);
    (numero, short_date(data), cartorio)
}

/// `dd/MM/yyyy`, as chrono's `%d/%m/%Y` writes it.
fn short_date(d: NaiveDate) -> String {
    if !(0..=9999).contains(&d.year()) {
        return d.format("%d/%m/%Y").to_string();
    }
    let mut s = String::with_capacity(10);
    let two = |s: &mut String, n: u32| {
        s.push(char::from(b'0' + (n / 10) as u8));
        s.push(char::from(b'0' + (n % 10) as u8));
    };
    two(&mut s, d.day());
    s.push('/');
    two(&mut s, d.month());
    s.push('/');
    two(&mut s, d.year() as u32 / 100);
    two(&mut s, d.year() as u32 % 100);
    s
}

/// A registration protocol code, made up for the reference data in the shape of the receipt's
/// dotted CAR code: `<UF>-<IBGE code>-<8 groups of 4 hex digits, dot-separated>`, e.g.
/// `DF-5300108-1A2B.3C4D.5E6F.7A8B.9C0D.1E2F.3A4B.5C6D` (the official receipt prints its protocol
/// in this dotted form). The hex part is random, unrelated to the record's CAR hash.
pub(crate) fn protocolo(rng: &mut Rng8, uf: &str, codigo_ibge: u32) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(uf.len() + 49);
    // Writing into a String cannot fail.
    let _ = write!(s, "{uf}-{codigo_ibge:07}");
    for group in 0..8 {
        let separator = if group == 0 { '-' } else { '.' };
        let _ = write!(s, "{separator}{:04X}", rng.random_range(0..=u16::MAX));
    }
    s
}

/// 64-bit FNV-1a of `s`: a stable seed derived from a CAR code (std's `Hasher`s are not
/// guaranteed stable across releases).
pub(crate) fn seed_of(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use carapi_sdk::domain::DocumentoKind;
    use rand::SeedableRng;

    #[test]
    fn documentos_gerados_sao_validos_e_dos_tres_tipos() {
        let mut rng = Rng8::seed_from_u64(7);
        let (mut cpfs, mut numeric, mut alpha) = (0, 0, 0);
        for _ in 0..500 {
            let p = proprietario(&mut rng);
            // Re-parse the masked form: the check digits must hold.
            assert_eq!(
                CpfCnpj::parse(p.documento.formatted()).as_ref(),
                Ok(&p.documento)
            );
            match p.documento.kind() {
                DocumentoKind::Cpf => {
                    cpfs += 1;
                    assert!(p.nome.ends_with(" de Tal"), "{}", p.nome);
                }
                DocumentoKind::Cnpj if p.documento.as_str().bytes().all(|b| b.is_ascii_digit()) => {
                    numeric += 1
                }
                DocumentoKind::Cnpj => alpha += 1,
            }
        }
        assert!(
            cpfs > 250 && numeric > 50 && alpha > 10,
            "{cpfs} {numeric} {alpha}"
        );
    }

    #[test]
    fn protocolo_tem_a_forma_documentada() {
        let mut rng = Rng8::seed_from_u64(1);
        let p = protocolo(&mut rng, "DF", 5300108);
        assert!(p.starts_with("DF-5300108-"), "{p}");
        let groups: Vec<&str> = p[11..].split('.').collect();
        assert_eq!(groups.len(), 8);
        assert!(
            groups
                .iter()
                .all(|g| g.len() == 4 && g.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }

    #[test]
    fn data_curta_escreve_como_o_chrono() {
        for (a, m, d) in [(2024, 1, 5), (1974, 12, 31), (7, 3, 9), (12_000, 2, 1)] {
            let data = NaiveDate::from_ymd_opt(a, m, d).unwrap();
            assert_eq!(short_date(data), data.format("%d/%m/%Y").to_string());
        }
    }

    #[test]
    fn semente_e_estavel() {
        // FNV-1a reference values.
        assert_eq!(seed_of(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(seed_of("a"), 0xaf63_dc4c_8601_ec8c);
    }
}
