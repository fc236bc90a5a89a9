//! Every operation of [`crate::Client`], blocking: same endpoint, price, spend guard, retries
//! and errors (see each async method), plus [`Error::Config`](crate::Error::Config) when called
//! inside a tokio runtime.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rust_decimal::Decimal;
use uuid::Uuid;

use super::{Client, ProcessRuntime, pid};
use crate::{
    Answer, CarDadosBasicos, CarDadosCompletos, CarResponse, Error, FaixasResponse, Falta,
    HistoricoParams, HistoricoResponse, LimitesResponse, LimitesUpdate, NovaRecarga, Precos,
    ProprietarioResponse, RecargaCriadaResponse, RecargaStatusResponse, RecargasParams,
    RecargasResponse, Recibo, ReciboInfo, ReciboProgress, Result, SaldoResponse, Settlement,
    UsoResponse,
};

impl Client {
    /// The archive this client keeps its paid answers in, if any (feature `archive`), as
    /// [`crate::Client::archive`]: in a child after `fork()`, the file opened again there.
    #[cfg(feature = "archive")]
    #[must_use]
    pub fn archive(&self) -> Option<crate::archive::Archive> {
        self.process_runtime()
            .ok()
            .and_then(|r| r.client().archive().cloned())
    }

    /// A handle whose lookups use `freshness` instead of the archive policy's, as
    /// [`crate::Client::with_freshness`] (feature `archive`).
    #[cfg(feature = "archive")]
    #[must_use]
    pub fn with_freshness(&self, freshness: crate::archive::Freshness) -> Client {
        let mut c = self.clone();
        c.call.freshness = Some(freshness);
        c
    }

    /// A handle whose lookups return before or after the commit, as
    /// [`crate::Client::with_commit`] (feature `archive`). The default, [`Commit::Wait`](crate::archive::Commit::Wait),
    /// is what a program that may return from `main` right after a lookup wants.
    #[cfg(feature = "archive")]
    #[must_use]
    pub fn with_commit(&self, commit: crate::archive::Commit) -> Client {
        let mut c = self.clone();
        c.call.commit = commit;
        c
    }

    /// A handle whose owner lookups go out even for a document purged from the archive, as
    /// [`crate::Client::with_purged_allowed`] (feature `archive`).
    #[cfg(feature = "archive")]
    #[must_use]
    pub fn with_purged_allowed(&self) -> Client {
        let mut c = self.clone();
        c.call.purged_allowed = true;
        c
    }

    /// `GET /v1/car/{codigoCar}`, blocking: [`crate::Client::car`] (charged on 200).
    ///
    /// # Errors
    /// As [`crate::Client::car`].
    pub fn car(&self, codigo: impl AsRef<str>) -> Result<Answer<CarResponse<CarDadosBasicos>>> {
        self.run(|c| async move { c.car(codigo).await })
    }

    /// `GET /v1/car/{codigoCar}/completo`, blocking: [`crate::Client::car_completo`].
    ///
    /// # Errors
    /// As [`crate::Client::car_completo`].
    pub fn car_completo(
        &self,
        codigo: impl AsRef<str>,
    ) -> Result<Answer<CarResponse<CarDadosCompletos>>> {
        self.run(|c| async move { c.car_completo(codigo).await })
    }

    /// `GET /v1/proprietario/{cpfCnpj}`, blocking: [`crate::Client::proprietario`].
    ///
    /// # Errors
    /// As [`crate::Client::proprietario`].
    pub fn proprietario(&self, documento: impl AsRef<str>) -> Result<Answer<ProprietarioResponse>> {
        self.run(|c| async move { c.proprietario(documento).await })
    }

    /// The receipt PDF in memory, blocking: [`crate::Client::recibo`].
    ///
    /// # Errors
    /// As [`crate::Client::recibo`].
    pub fn recibo(&self, codigo: impl AsRef<str>) -> Result<Answer<Recibo>> {
        self.run(|c| async move { c.recibo(codigo).await })
    }

    /// Starts the receipt download, blocking: [`crate::Client::recibo_download`]; read it with
    /// [`ReciboDownload::chunk`].
    ///
    /// # Errors
    /// As [`crate::Client::recibo_download`].
    pub fn recibo_download(&self, codigo: impl AsRef<str>) -> Result<ReciboDownload> {
        let process_runtime = self.process_runtime()?;
        let download = self.run(|c| async move { c.recibo_download(codigo).await })?;
        Ok(ReciboDownload {
            process_runtime,
            download,
        })
    }

    /// The receipt into a file, blocking: [`crate::Client::recibo_to_file`].
    ///
    /// # Errors
    /// As [`crate::Client::recibo_to_file`].
    pub fn recibo_to_file(
        &self,
        codigo: impl AsRef<str>,
        path: impl AsRef<Path>,
    ) -> Result<ReciboInfo> {
        self.run(|c| async move { c.recibo_to_file(codigo, path).await })
    }

    /// The receipt into a file with a progress callback, blocking:
    /// [`crate::Client::recibo_to_file_with_progress`].
    ///
    /// # Errors
    /// As [`crate::Client::recibo_to_file_with_progress`].
    pub fn recibo_to_file_with_progress(
        &self,
        codigo: impl AsRef<str>,
        path: impl AsRef<Path>,
        progress: impl FnMut(ReciboProgress) + Send,
    ) -> Result<ReciboInfo> {
        self.run(|c| async move { c.recibo_to_file_with_progress(codigo, path, progress).await })
    }

    /// `GET /v1/saldo` (free), blocking: [`crate::Client::saldo`].
    ///
    /// # Errors
    /// As [`crate::Client::saldo`].
    pub fn saldo(&self) -> Result<SaldoResponse> {
        self.run(|c| async move { c.saldo().await })
    }

    /// The account's prices, blocking: [`crate::Client::precos`].
    ///
    /// # Errors
    /// As [`crate::Client::precos`].
    pub fn precos(&self) -> Result<Precos> {
        self.run(|c| async move { c.precos().await })
    }

    /// One page of `GET /v1/historico` (free), blocking: [`crate::Client::historico`].
    ///
    /// # Errors
    /// As [`crate::Client::historico`].
    pub fn historico(&self, params: &HistoricoParams) -> Result<HistoricoResponse> {
        self.run(|c| async move { c.historico(params).await })
    }

    /// `GET /v1/limites` (free), blocking: [`crate::Client::limites`].
    ///
    /// # Errors
    /// As [`crate::Client::limites`].
    pub fn limites(&self) -> Result<LimitesResponse> {
        self.run(|c| async move { c.limites().await })
    }

    /// `PUT /v1/limites` (free), blocking: [`crate::Client::atualizar_limites`].
    ///
    /// # Errors
    /// As [`crate::Client::atualizar_limites`].
    pub fn atualizar_limites(&self, update: &LimitesUpdate) -> Result<LimitesResponse> {
        self.run(|c| async move { c.atualizar_limites(update).await })
    }

    /// `GET /v1/uso` (free), blocking: [`crate::Client::uso`].
    ///
    /// # Errors
    /// As [`crate::Client::uso`].
    pub fn uso(&self) -> Result<UsoResponse> {
        self.run(|c| async move { c.uso().await })
    }

    /// `GET /v1/recarga/faixas` (free), blocking: [`crate::Client::faixas_recarga`].
    ///
    /// # Errors
    /// As [`crate::Client::faixas_recarga`].
    pub fn faixas_recarga(&self, valor: Option<Decimal>) -> Result<FaixasResponse> {
        self.run(|c| async move { c.faixas_recarga(valor).await })
    }

    /// `POST /v1/recarga`, blocking: [`crate::Client::criar_recarga`].
    ///
    /// # Errors
    /// As [`crate::Client::criar_recarga`].
    pub fn criar_recarga(&self, recarga: &NovaRecarga) -> Result<RecargaCriadaResponse> {
        self.run(|c| async move { c.criar_recarga(recarga).await })
    }

    /// `GET /v1/recarga/{recargaId}` (free), blocking: [`crate::Client::recarga`].
    ///
    /// # Errors
    /// As [`crate::Client::recarga`].
    pub fn recarga(&self, recarga_id: Uuid) -> Result<RecargaStatusResponse> {
        self.run(|c| async move { c.recarga(recarga_id).await })
    }

    /// Waits until the top-up is final, blocking: [`crate::Client::wait_for_recarga`].
    ///
    /// # Errors
    /// As [`crate::Client::wait_for_recarga`].
    pub fn wait_for_recarga(
        &self,
        recarga_id: Uuid,
        timeout: Duration,
    ) -> Result<RecargaStatusResponse> {
        self.run(|c| async move { c.wait_for_recarga(recarga_id, timeout).await })
    }

    /// One page of `GET /v1/recargas` (free), blocking: [`crate::Client::recargas`].
    ///
    /// # Errors
    /// As [`crate::Client::recargas`].
    pub fn recargas(&self, params: &RecargasParams) -> Result<RecargasResponse> {
        self.run(|c| async move { c.recargas(params).await })
    }

    /// Settles the uncertain lookups against the history, blocking:
    /// [`crate::Client::settle_incertos`].
    ///
    /// # Errors
    /// As [`crate::Client::settle_incertos`].
    pub fn settle_incertos(&self) -> Result<Settlement> {
        self.run(|c| async move { c.settle_incertos().await })
    }

    /// The shortfall of a 402, blocking: [`crate::Client::falta`].
    ///
    /// # Errors
    /// As [`crate::Client::falta`].
    pub fn falta(&self, error: &Error) -> Result<Option<Falta>> {
        self.run(|c| async move { c.falta(error).await })
    }
}

/// A receipt being downloaded, blocking ([`Client::recibo_download`]).
pub struct ReciboDownload {
    process_runtime: Arc<ProcessRuntime>,
    download: crate::ReciboDownload,
}

impl ReciboDownload {
    /// The server's file name (`<codigoCar>.pdf`).
    #[must_use]
    pub fn filename(&self) -> &str {
        self.download.filename()
    }

    /// Size of the PDF in bytes, when the server sent `Content-Length`.
    #[must_use]
    pub fn content_length(&self) -> Option<u64> {
        self.download.content_length()
    }

    /// Bytes received so far.
    #[must_use]
    pub fn received(&self) -> u64 {
        self.download.received()
    }

    /// The next piece of the PDF; `Ok(None)` at the end.
    ///
    /// # Errors
    /// As [`crate::ReciboDownload::chunk`]; [`Error::Config`] in a child process after
    /// `fork()` (the download belongs to the parent) or inside a tokio runtime.
    pub fn chunk(&mut self) -> Result<Option<Bytes>> {
        if self.process_runtime.pid != pid() {
            return Err(Error::Config(
                "download de recibo iniciado antes do fork(): recomece-o no processo filho".into(),
            ));
        }
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(Error::Config(
                "carapi_sdk::blocking chamado dentro de um runtime tokio".into(),
            ));
        }
        let rt = self
            .process_runtime
            .runtime
            .as_ref()
            .expect("set until dropped");
        rt.block_on(self.download.chunk())
    }
}

impl fmt::Debug for ReciboDownload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("blocking::ReciboDownload")
            .field("download", &self.download)
            .finish_non_exhaustive()
    }
}
