//! Owner lookup: `GET /v1/proprietario/{cpfCnpj}`.

use super::http::Req;
use super::{Client, Op};
use crate::{Answer, CpfCnpj, ProprietarioResponse, Result};

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
    /// - [`Error::Archive`](crate::Error::Archive) (with an archive), as [`Client::car`]; also
    ///   when the document was purged from the archive at its owner's request
    ///   ([`ArchiveErrorKind::Purged`](crate::archive::ArchiveErrorKind::Purged): nothing sent
    ///   unless [`Client::with_purged_allowed`]).
    /// - [`Error::Cancelled`](crate::Error::Cancelled), as [`Client::car`].
    pub async fn proprietario(
        &self,
        documento: impl AsRef<str>,
    ) -> Result<Answer<ProprietarioResponse>> {
        let req = self.proprietario_req(&CpfCnpj::parse(documento)?)?;
        self.consulta_json(req).await
    }

    /// The request of [`Client::proprietario`] for a parsed document.
    pub(super) fn proprietario_req(&self, documento: &CpfCnpj) -> Result<Req> {
        let url = self.url(&["proprietario", documento.as_str()])?;
        Ok(Req::consulta(
            Op::PROPRIETARIO,
            url,
            documento.as_str(),
            documento.is_sandbox(),
        ))
    }
}
