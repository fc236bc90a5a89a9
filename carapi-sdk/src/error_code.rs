use std::fmt;

/// The contract's stable error codes (contract, "Errors"), one variant each, plus
/// [`ErrorCode::Other`] for a code this SDK version does not know.
///
/// The wire form is the upper-case code (`SALDO_INSUFICIENTE`); [`ErrorCode::status`] gives the
/// HTTP status the contract pairs with it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
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
    /// A code this SDK version does not know, as sent.
    Other(String),
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
            Self::Other(s) => s,
        }
    }

    /// Parses the wire form; unknown codes become [`ErrorCode::Other`].
    pub fn parse(code: &str) -> Self {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == code)
            .unwrap_or_else(|| Self::Other(code.to_owned()))
    }

    /// The HTTP status the contract pairs with the code; `None` where it is not shown.
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
        assert_eq!(ErrorCode::ServicoIndisponivel.status(), Some(503));
    }
}
