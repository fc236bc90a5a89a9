//! The PIX BR Code copy-and-paste payload (`qrCode`), per the BCB "Manual de Padrões para
//! Iniciação do Pix" (EMV QRCPS-MPM TLV layout) and docs/dominio.md "PIX BR Code".
//!
//! Each field is a 2-digit ID, a 2-digit length and the value. The last field, `63`, is the
//! CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over everything up to and including `6304`, in
//! 4 upper-case hex digits.

use rust_decimal::Decimal;

use super::ValidationError;

const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_IBM_3740);

/// CRC-16/CCITT-FALSE of `data` (check value: `b"123456789"` -> `0x29B1`).
#[must_use]
pub fn crc16(data: &[u8]) -> u16 {
    CRC16.checksum(data)
}

/// The fields of a dynamic, single-use PIX charge (`01` = `12`, merchant account `26` with a
/// location URL `25`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CobrancaPix {
    /// Location URL of the charge without `https://` (field `26`/`25`), at most 77 characters.
    pub location: String,
    /// Amount in BRL (field `54`, written with a dot and 2 decimals).
    pub valor: Decimal,
    /// Merchant name (field `59`), cut to 25 characters.
    pub nome: String,
    /// Merchant city (field `60`), cut to 15 characters.
    pub cidade: String,
    /// Transaction id (field `62`/`05`), up to 25 alphanumerics; `***` when none.
    pub txid: String,
}

fn tlv(out: &mut String, id: &str, value: &str) {
    out.push_str(id);
    out.push_str(&format!("{:02}", value.chars().count()));
    out.push_str(value);
}

fn ascii_cut(s: &str, max: usize) -> String {
    s.chars()
        .map(super::br::strip_accent)
        .map(|c| if c.is_ascii() { c } else { ' ' })
        .take(max)
        .collect()
}

impl CobrancaPix {
    /// Builds the BR Code payload, CRC included.
    pub fn payload(&self) -> String {
        let mut account = String::new();
        tlv(&mut account, "00", "br.gov.bcb.pix");
        tlv(&mut account, "25", &self.location);
        let txid: String = self
            .txid
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(25)
            .collect();
        let mut additional = String::new();
        tlv(
            &mut additional,
            "05",
            if txid.is_empty() { "***" } else { &txid },
        );

        let mut out = String::with_capacity(256);
        tlv(&mut out, "00", "01");
        tlv(&mut out, "01", "12");
        tlv(&mut out, "26", &account);
        tlv(&mut out, "52", "0000");
        tlv(&mut out, "53", "986");
        tlv(&mut out, "54", &format!("{:.2}", self.valor.round_dp(2)));
        tlv(&mut out, "58", "BR");
        tlv(&mut out, "59", &ascii_cut(&self.nome, 25));
        tlv(&mut out, "60", &ascii_cut(&self.cidade, 15));
        tlv(&mut out, "62", &additional);
        out.push_str("6304");
        let crc = crc16(out.as_bytes());
        out.push_str(&format!("{crc:04X}"));
        out
    }
}

/// One parsed top-level field of a BR Code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The 2-digit ID.
    pub id: String,
    /// The raw value.
    pub valor: String,
}

/// Splits a BR Code into its top-level TLV fields and verifies the trailing CRC.
///
/// # Errors
/// [`ValidationError::BrCode`] when an id or length is not two digits, a length runs past the
/// end, the payload does not start with
/// `000201`, the last field is not `63` with 4 hex digits, or the CRC does not match.
pub fn parse(payload: &str) -> Result<Vec<Field>, ValidationError> {
    let err = |m: &str| ValidationError::BrCode(m.to_owned());
    if !payload.is_ascii() {
        return Err(err("payload não é ASCII"));
    }
    let mut fields = Vec::new();
    let mut rest = payload;
    while !rest.is_empty() {
        if rest.len() < 4 {
            return Err(err("campo truncado"));
        }
        // Id and length are two decimal digits each (EMV QRCPS-MPM); `parse` alone would also
        // take `+5` as a length.
        if !rest.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
            return Err(err("id ou tamanho não numérico"));
        }
        let id = &rest[..2];
        let len: usize = rest[2..4]
            .parse()
            .map_err(|_| err("tamanho não numérico"))?;
        let value = rest
            .get(4..4 + len)
            .ok_or_else(|| err("tamanho além do fim"))?;
        fields.push(Field {
            id: id.to_owned(),
            valor: value.to_owned(),
        });
        rest = &rest[4 + len..];
    }
    if fields.first().map(|f| (f.id.as_str(), f.valor.as_str())) != Some(("00", "01")) {
        return Err(err("não começa com 000201"));
    }
    let last = fields
        .last()
        .filter(|f| f.id == "63" && f.valor.len() == 4)
        .ok_or_else(|| err("sem CRC no fim"))?;
    let expected = crc16(&payload.as_bytes()[..payload.len() - 4]);
    let got = u16::from_str_radix(&last.valor, 16).map_err(|_| err("CRC não hexadecimal"))?;
    if got != expected || last.valor != format!("{expected:04X}") {
        return Err(ValidationError::BrCode(format!(
            "CRC {} difere de {expected:04X}",
            last.valor
        )));
    }
    Ok(fields)
}

/// The amount (field `54`) of a valid BR Code, if it carries one.
///
/// # Errors
/// As [`parse`], and [`ValidationError::BrCode`] when field `54` is not a number.
pub fn valor(payload: &str) -> Result<Option<Decimal>, ValidationError> {
    parse(payload)?
        .into_iter()
        .find(|f| f.id == "54")
        .map(|f| {
            f.valor
                .parse::<Decimal>()
                .map_err(|_| ValidationError::BrCode("valor inválido".into()))
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATIC_1D3D: &str = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D";
    const DYNAMIC_45C8: &str = "00020101021226720014br.gov.bcb.pix2550bx.com.br/pix/8b3da2f3-9a41-40d1-a91a-bd93113bd4415204000053039865406123.455802BR5913Fulano de Tal6008BRASILIA62190515RP12345678-2019630445C8";
    const STATIC_7195: &str = "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-426655440000520400005303986540510.005802BR5913Fulano de Tal6008BRASILIA62140510RECARGA12363047195";

    #[test]
    fn crc_check_value() {
        assert_eq!(crc16(b"123456789"), 0x29B1);
    }

    #[test]
    fn manual_vectors_parse() {
        for p in [STATIC_1D3D, DYNAMIC_45C8, STATIC_7195] {
            parse(p).unwrap();
        }
        assert_eq!(valor(DYNAMIC_45C8).unwrap(), Some(Decimal::new(12345, 2)));
        assert_eq!(valor(STATIC_1D3D).unwrap(), None);
    }

    #[test]
    fn detects_tampering() {
        let tampered = STATIC_7195.replace("10.00", "90.00");
        assert!(parse(&tampered).is_err());
        assert!(parse(&STATIC_7195[..STATIC_7195.len() - 1]).is_err());
    }

    fn with_crc(body: &str) -> String {
        let signed = format!("{body}6304");
        format!("{signed}{:04X}", crc16(signed.as_bytes()))
    }

    #[test]
    fn length_is_two_digits() {
        // Found by fuzz/ (target pix): a length written `+0` was read as 0, so a payload that is
        // not the TLV encoding of its fields passed; ids were not checked at all.
        assert!(parse(&with_crc("000201")).is_ok());
        assert!(parse(&with_crc("00020100+0")).is_err());
        // The id is two digits too (EMV QRCPS-MPM: "00" to "99").
        assert!(parse(&with_crc("000201AB00")).is_err());
        assert!(parse(&with_crc("000201+100")).is_err());
    }

    #[test]
    fn builds_any_amount() {
        // Any amount in Decimal's range gives a payload that parses (fuzz/ target pix_cobranca).
        for amount in [Decimal::MIN, Decimal::MAX, Decimal::new(-5, 3)] {
            let p = CobrancaPix {
                location: "pix.example.com/qr/1".into(),
                valor: amount,
                nome: "N".into(),
                cidade: "C".into(),
                txid: String::new(),
            }
            .payload();
            assert_eq!(valor(&p).unwrap(), Some(amount.round_dp(2)), "{p}");
        }
    }

    #[test]
    fn builds_dynamic_payload() {
        let p = CobrancaPix {
            location: "pix.example.com/qr/v2/cob/8b3da2f39a4140d1".into(),
            valor: Decimal::new(50000, 2),
            nome: "CarAPI Serviços de Dados Ltda".into(),
            cidade: "São Paulo".into(),
            txid: "RECARGA123".into(),
        }
        .payload();
        assert!(p.starts_with("000201010212"));
        assert!(p.contains("5406500.00"));
        assert!(p.contains("5925CarAPI Servicos de Dados"));
        assert!(p.contains("6009Sao Paulo"));
        assert_eq!(valor(&p).unwrap(), Some(Decimal::new(500, 0)));
    }
}
