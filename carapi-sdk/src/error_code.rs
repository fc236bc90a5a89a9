use std::fmt;

/// The contract's stable error codes (contract, "Errors"), one variant each, plus
/// [`ErrorCode::Other`] for a code this SDK version does not know.
///
/// The wire form is the upper-case code (`SALDO_INSUFICIENTE`); [`ErrorCode::status`] gives the
/// HTTP status the contract pairs with it. `Copy`, so it compares by value:
///
/// ```
/// # use carapi_sdk::{ApiError, Error, ErrorCode};
/// let e = Error::Api(ApiError::new(402, ErrorCode::SaldoInsuficiente, "Saldo insuficiente"));
/// assert_eq!(e.code(), Some(ErrorCode::SaldoInsuficiente));
/// let novo = ErrorCode::parse("CODIGO_NOVO");
/// assert_eq!(novo, ErrorCode::Other("CODIGO_NOVO".into()));
/// assert_eq!(novo.as_str(), "CODIGO_NOVO");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// 400: CAR code in invalid format.
    CodigoCarInvalido,
    /// 400: CPF/CNPJ in invalid format.
    CpfCnpjInvalido,
    /// 400: top-up amount invalid.
    ValorInvalido,
    /// 400: top-up amount below 500 BRL.
    ValorMinimo,
    /// 400: legacy-price account without `confirmarNovosPrecos: true`.
    ConfirmacaoPrecosObrigatoria,
    /// 400: the linked user has no CPF/CNPJ registered.
    DocumentoAusente,
    /// 400: limit outside the allowed range.
    LimiteInvalido,
    /// 401: key missing or invalid.
    TokenInvalido,
    /// 402: balance too low for the lookup; nothing was debited.
    SaldoInsuficiente,
    /// 404: CAR code not found.
    CarNaoEncontrado,
    /// 404: document has no CARs.
    CpfCnpjNaoEncontrado,
    /// 404: receipt PDF not available for the code.
    ReciboNaoEncontrado,
    /// 404: top-up missing or belonging to another account.
    RecargaNaoEncontrada,
    /// 429: rate limit, or daily/monthly consumption limit, exceeded.
    LimiteExcedido,
    /// 500: internal error.
    ErroInterno,
    /// 502: failure while streaming the receipt PDF after validation.
    ReciboIndisponivel,
    /// 502: payment-provider failure when creating the PIX.
    ErroPix,
    /// 503: receipt service temporarily unavailable.
    ServicoIndisponivel,
    /// In the contract's set; status and condition not shown.
    ContaSemUsuario,
    /// In the contract's set; status and condition not shown.
    SpecNaoEncontrada,
    /// A code this SDK version does not know, as sent (see [`OtherCode`]).
    Other(OtherCode),
}

/// The text of an error code this SDK version does not know ([`ErrorCode::Other`]), kept inline
/// so that [`ErrorCode`] stays `Copy`: up to [`OtherCode::CAPACITY`] bytes, a longer code is cut
/// at a character boundary (the contract's codes are upper-case words of at most 30).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct OtherCode {
    len: u8,
    bytes: [u8; OtherCode::CAPACITY],
}

impl OtherCode {
    /// The longest code kept whole, in bytes.
    pub const CAPACITY: usize = 32;

    /// `code`, cut to [`OtherCode::CAPACITY`] bytes at a character boundary.
    #[must_use]
    pub fn new(code: &str) -> Self {
        let mut end = code.len().min(Self::CAPACITY);
        while !code.is_char_boundary(end) {
            end -= 1;
        }
        let mut bytes = [0; Self::CAPACITY];
        bytes[..end].copy_from_slice(&code.as_bytes()[..end]);
        Self {
            len: u8::try_from(end).unwrap_or(u8::MAX),
            bytes,
        }
    }

    /// The code as sent (or its first [`OtherCode::CAPACITY`] bytes).
    #[must_use]
    pub fn as_str(&self) -> &str {
        let bytes = &self.bytes[..usize::from(self.len)];
        // Always a whole-character prefix of a `str` (see `new`).
        std::str::from_utf8(bytes).unwrap_or_default()
    }
}

impl From<&str> for OtherCode {
    fn from(code: &str) -> Self {
        Self::new(code)
    }
}

impl From<String> for OtherCode {
    fn from(code: String) -> Self {
        Self::new(&code)
    }
}

impl PartialEq<str> for OtherCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for OtherCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for OtherCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for OtherCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ErrorCode {
    /// Every known code, in the contract's order.
    pub const ALL: [ErrorCode; 20] = [
        Self::CodigoCarInvalido,
        Self::CpfCnpjInvalido,
        Self::ValorInvalido,
        Self::ValorMinimo,
        Self::ConfirmacaoPrecosObrigatoria,
        Self::DocumentoAusente,
        Self::LimiteInvalido,
        Self::TokenInvalido,
        Self::SaldoInsuficiente,
        Self::CarNaoEncontrado,
        Self::CpfCnpjNaoEncontrado,
        Self::ReciboNaoEncontrado,
        Self::RecargaNaoEncontrada,
        Self::LimiteExcedido,
        Self::ErroInterno,
        Self::ReciboIndisponivel,
        Self::ErroPix,
        Self::ServicoIndisponivel,
        Self::ContaSemUsuario,
        Self::SpecNaoEncontrada,
    ];

    /// The wire form, e.g. `"SALDO_INSUFICIENTE"`.
    #[must_use]
    pub fn as_str(&self) -> &str {
        match self {
            Self::CodigoCarInvalido => "CODIGO_CAR_INVALIDO",
            Self::CpfCnpjInvalido => "CPF_CNPJ_INVALIDO",
            Self::ValorInvalido => "VALOR_INVALIDO",
            Self::ValorMinimo => "VALOR_MINIMO",
            Self::ConfirmacaoPrecosObrigatoria => "CONFIRMACAO_PRECOS_OBRIGATORIA",
            Self::DocumentoAusente => "DOCUMENTO_AUSENTE",
            Self::LimiteInvalido => "LIMITE_INVALIDO",
            Self::TokenInvalido => "TOKEN_INVALIDO",
            Self::SaldoInsuficiente => "SALDO_INSUFICIENTE",
            Self::CarNaoEncontrado => "CAR_NAO_ENCONTRADO",
            Self::CpfCnpjNaoEncontrado => "CPF_CNPJ_NAO_ENCONTRADO",
            Self::ReciboNaoEncontrado => "RECIBO_NAO_ENCONTRADO",
            Self::RecargaNaoEncontrada => "RECARGA_NAO_ENCONTRADA",
            Self::LimiteExcedido => "LIMITE_EXCEDIDO",
            Self::ErroInterno => "ERRO_INTERNO",
            Self::ReciboIndisponivel => "RECIBO_INDISPONIVEL",
            Self::ErroPix => "ERRO_PIX",
            Self::ServicoIndisponivel => "SERVICO_INDISPONIVEL",
            Self::ContaSemUsuario => "CONTA_SEM_USUARIO",
            Self::SpecNaoEncontrada => "SPEC_NAO_ENCONTRADA",
            Self::Other(s) => s.as_str(),
        }
    }

    /// Parses the wire form; unknown codes become [`ErrorCode::Other`].
    #[must_use]
    pub fn parse(code: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == code)
            .unwrap_or_else(|| Self::Other(code.into()))
    }

    /// The HTTP status the contract pairs with the code; `None` where it is not shown.
    #[must_use]
    pub fn status(&self) -> Option<u16> {
        Some(match self {
            Self::CodigoCarInvalido
            | Self::CpfCnpjInvalido
            | Self::ValorInvalido
            | Self::ValorMinimo
            | Self::ConfirmacaoPrecosObrigatoria
            | Self::DocumentoAusente
            | Self::LimiteInvalido => 400,
            Self::TokenInvalido => 401,
            Self::SaldoInsuficiente => 402,
            Self::CarNaoEncontrado
            | Self::CpfCnpjNaoEncontrado
            | Self::ReciboNaoEncontrado
            | Self::RecargaNaoEncontrada => 404,
            Self::LimiteExcedido => 429,
            Self::ErroInterno => 500,
            Self::ReciboIndisponivel | Self::ErroPix => 502,
            Self::ServicoIndisponivel => 503,
            Self::ContaSemUsuario | Self::SpecNaoEncontrada | Self::Other(_) => return None,
        })
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ErrorCode {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self::parse(s))
    }
}

impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Self::parse(&String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_code() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(c.as_str()), c);
        }
        assert_eq!(
            ErrorCode::parse("NOVO_CODIGO"),
            ErrorCode::Other("NOVO_CODIGO".into())
        );
        assert_eq!(ErrorCode::SaldoInsuficiente.status(), Some(402));
        let long = "X".repeat(40) + "É";
        assert_eq!(
            ErrorCode::parse(&long).as_str(),
            &long[..OtherCode::CAPACITY]
        );
        assert_eq!(OtherCode::new("AÉ").as_str(), "AÉ");
        assert_eq!(
            OtherCode::new(&("A".repeat(31) + "É")).as_str(),
            "A".repeat(31)
        );
        assert_eq!(ErrorCode::ServicoIndisponivel.status(), Some(503));
    }
}
