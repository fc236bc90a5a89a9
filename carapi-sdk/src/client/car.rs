//! CAR lookups: `GET /v1/car/{codigoCar}` and `GET /v1/car/{codigoCar}/completo`.

use super::http::Req;
use super::{Client, Op};
use crate::{Answer, CarDadosBasicos, CarDadosCompletos, CarResponse, CodigoCar, Result};

impl Client {
    /// Basic data of a rural property: `GET /v1/car/{codigoCar}` (contract, "Lookups").
    ///
    /// `codigo` is normalised and checked locally first ([`CodigoCar::parse`]: dots, spaces and
    /// case are fixed; `UF-IIIIIII-<32 hex>` or a sandbox code). Charged on 200 (1.00 BRL,
    /// legacy 0.50); a response from the internal cache (`cache: true`) is charged too.
    ///
    /// The [`Answer`] dereferences to the response and says where it came from: with an
    /// archive ([`ClientBuilder::archive`](crate::ClientBuilder::archive)) a fresh answer is
    /// read from it at no charge, else the answer is bought and archived before it is returned
    /// (see [`crate::archive`]). A call dropped after its request was sent does not lose what
    /// it paid for: the purchase ends in a task of the client ([`Client::close`]).
    ///
    /// # Errors
    /// - [`Error::Validation`](crate::Error::Validation) for a malformed code: nothing is sent.
    /// - [`Error::SpendLimit`](crate::Error::SpendLimit) when [`ClientBuilder::max_spend`](crate::ClientBuilder::max_spend) would be passed.
    /// - [`Error::Api`](crate::Error::Api): 400 `CODIGO_CAR_INVALIDO`, 401 `TOKEN_INVALIDO`,
    ///   402 `SALDO_INSUFICIENTE`, 404 `CAR_NAO_ENCONTRADO`, 429 `LIMITE_EXCEDIDO`,
    ///   500 `ERRO_INTERNO`.
    /// - [`Error::Transport`](crate::Error::Transport), [`Error::Decode`](crate::Error::Decode).
    /// - [`Error::Archive`](crate::Error::Archive) (with an archive): it cannot be read, or the
    ///   answer it holds was altered; nothing is sent.
    /// - [`Error::Cancelled`](crate::Error::Cancelled): the handle's token
    ///   ([`Client::with_cancel`]) was cancelled before the request was sent.
    pub async fn car(
        &self,
        codigo: impl AsRef<str>,
    ) -> Result<Answer<CarResponse<CarDadosBasicos>>> {
        let req = self.car_req(&CodigoCar::parse(codigo)?)?;
        self.consulta_json(req).await
    }

    /// Complete data (with owner names and documents): `GET /v1/car/{codigoCar}/completo`.
    ///
    /// Same validation and errors as [`Client::car`]; charged on 200 (2.30 BRL, legacy 1.50).
    ///
    /// # Errors
    /// As [`Client::car`].
    pub async fn car_completo(
        &self,
        codigo: impl AsRef<str>,
    ) -> Result<Answer<CarResponse<CarDadosCompletos>>> {
        let req = self.car_completo_req(&CodigoCar::parse(codigo)?)?;
        self.consulta_json(req).await
    }

    /// The request of [`Client::car`] for a parsed code.
    pub(super) fn car_req(&self, codigo: &CodigoCar) -> Result<Req> {
        let url = self.url(&["car", codigo.as_str()])?;
        Ok(Req::consulta(
            Op::CAR,
            url,
            codigo.as_str(),
            codigo.is_sandbox(),
        ))
    }

    /// The request of [`Client::car_completo`] for a parsed code.
    pub(super) fn car_completo_req(&self, codigo: &CodigoCar) -> Result<Req> {
        let url = self.url(&["car", codigo.as_str(), "completo"])?;
        Ok(Req::consulta(
            Op::CAR_COMPLETO,
            url,
            codigo.as_str(),
            codigo.is_sandbox(),
        ))
    }
}
