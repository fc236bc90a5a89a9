//! Owner lookup: `GET /v1/proprietario/{cpfCnpj}`.

use super::http::Req;
use super::{Client, Op};
use crate::{CpfCnpj, ProprietarioResponse, Result};

impl Client {
    /// The CARs tied to an owner document: `GET /v1/proprietario/{cpfCnpj}` (contract,
    /// "Lookups", rule 4).
    ///
    /// `documento` is a CPF (11 digits) or CNPJ (14 characters, alphanumeric included), masked
    /// or bare; it is normalised and its check digits verified locally first
    /// ([`CpfCnpj::parse`]); the bare form is sent. At most 200 items, ordered by CAR code;
    /// `truncado` tells when the document has more. Charged on 200 (2.60 BRL, legacy 1.50).
    ///
    /// # Errors
    /// - [`Error::Validation`](crate::Error::Validation) for a malformed document or wrong check
    ///   digits: nothing is sent.
    /// - [`Error::SpendLimit`](crate::Error::SpendLimit) when the cap would be passed.
    /// - [`Error::Api`](crate::Error::Api): 400 `CPF_CNPJ_INVALIDO`, 401, 402
    ///   `SALDO_INSUFICIENTE`, 404 `CPF_CNPJ_NAO_ENCONTRADO`, 429, 500.
    /// - [`Error::Transport`](crate::Error::Transport), [`Error::Decode`](crate::Error::Decode).
    pub async fn proprietario(&self, documento: impl AsRef<str>) -> Result<ProprietarioResponse> {
        let req = self.proprietario_req(&CpfCnpj::parse(documento)?)?;
        self.lookup_json(req).await
    }

    /// The request of [`Client::proprietario`] for a parsed document (also used through the
    /// archive).
    pub(super) fn proprietario_req(&self, documento: &CpfCnpj) -> Result<Req> {
        let url = self.url(&["proprietario", documento.as_str()])?;
        Ok(Req::lookup(
            Op::Proprietario,
            url,
            documento.as_str(),
            documento.is_sandbox(),
        ))
    }
}
