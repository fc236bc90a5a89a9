//! `carapi._carapi.Client`: [`carapi_sdk::Client`] with a synchronous Python face. One method
//! per SDK method, same names; results through [`conv::to_py`], errors through
//! [`errors::to_py`]. `carapi.Client` (python/carapi/__init__.py) subclasses it and adds `lote`.
//!
//! The doc comments of the methods are the Python docstrings (`help(carapi.Client.car)`):
//! endpoint and price from docs/contrato.md ("Prices", "Endpoints"), arguments, the keys of
//! the result and the exceptions.

mod archive;
mod args;
mod state;

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use carapi_sdk::{
    CancellationToken, DEFAULT_RATE_LIMIT, LimitesUpdate, NovaRecarga, RecargasParams,
};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use crate::cancel::CancelToken;
use crate::conv;
use crate::history::Pages;
pub(crate) use archive::ArchiveTools;
use args::{
    check_limit_keys, history_params, limit_field, seconds, topup_status, uuid as recarga_uuid,
};
pub(crate) use state::close_all;
use state::{Options, State};

/// Time-out of [`Client::aguardar_recarga`] when none is given, seconds (a PIX charge lives
/// 10 minutes at most before a new one is created, contract "Top-up endpoints").
const DEFAULT_RECARGA_WAIT_S: f64 = 600.0;

/// Synchronous client of the carapi `/v1` API (the Rust `carapi_sdk::Client`).
///
/// Client(base_url=None, api_key=None, max_spend=None, timeout=None, *, rate_limit=10,
/// poll_interval=None, acervo=None, finalidade=None, base_legal=None, idade_maxima=None)
///
/// Args:
///     base_url: the service's address without `/v1`; default `$CARAPI_BASE_URL`.
///     api_key: the API key; default `$CARAPI_API_KEY`.
///     max_spend: cap on what this client may spend on lookups, BRL (`Decimal`, `int` or
///         `str`, never `float`): a lookup that could pass it raises `LimiteDeGasto` before it
///         is sent.
///     timeout: seconds per request (default 30).
///     rate_limit: requests per second this client sends at most (default 10, the
///         contract's limit); `None` turns the client's limiter off.
///     poll_interval: seconds between reads of `aguardar_recarga` (5 or more).
///     acervo: keep every charged 200 in the archive of paid answers (the SDK's
///         `carapi_sdk::archive`, SQLite): a path (str or os.PathLike) or True for the
///         data directory's file (the CLI's `acervo padrao`). `car`, `car_completo` and
///         `proprietario` then answer from it while fresh (no request, no charge) and their
///         dict gains `origem` ("api" or "acervo") and `compradoEm` (aware datetime, UTC).
///     finalidade: the purpose declared with each archived lookup (LGPD art. 6, I); required
///         with `acervo`.
///     base_legal: the LGPD hypothesis (art. 7 or 11) as the CLI's `--base-legal` spells it
///         ("consentimento", "obrigacao-legal", "execucao-contrato", "interesse-legitimo",
///         "protecao-credito", ...); required with `acervo`.
///     idade_maxima: the oldest archived answer reused, in days (int or float) or a
///         `datetime.timedelta`; default 30 days; 0 buys every time.
///
/// Raises:
///     ConfiguracaoInvalida: no base URL or key, or a URL that is not http(s).
///     TypeError: `max_spend` given as `float`.
///     ValueError: `acervo` without `finalidade` or `base_legal` (named in the message), an
///         unknown `base_legal`, a negative `idade_maxima`; before any request.
///     OSError: the archive cannot be opened.
///
/// Every method blocks with the GIL released; one client may be used from many threads.
/// `with carapi.Client() as c:` closes it at the end of the block (`close()`).
///
/// After `os.fork` (multiprocessing's `fork` start method) the child makes its own runtime
/// and connections on its first call; the parent's client keeps working. In the child,
/// `gasto()` counts the child's own spending from the fork on, and `max_spend` caps that
/// spending (each process has the whole cap: give each worker its share).
#[pyclass(module = "carapi._carapi", name = "Client", subclass, frozen)]
#[derive(Debug)]
pub struct Client {
    state: Arc<State>,
    /// Set on a handle made by `_com_cancelamento`: its calls not yet sent give up when it is
    /// cancelled (`carapi_sdk::Client::with_cancel`).
    cancel: Option<CancellationToken>,
}

impl Client {
    /// This process's SDK client (see `state::State::sdk`).
    pub(crate) fn sdk(&self, py: Python<'_>) -> PyResult<state::Sdk> {
        self.state.sdk(py)
    }

    /// The SDK client this object's calls go through: this process's, with the handle's
    /// cancellation token when it has one.
    fn handle(&self, py: Python<'_>) -> PyResult<carapi_sdk::Client> {
        let sdk = self.state.sdk(py)?;
        Ok(match &self.cancel {
            Some(token) => sdk.with_cancel(token.clone()),
            None => carapi_sdk::Client::clone(&sdk),
        })
    }

    /// One SDK call with the GIL released (`state::call`).
    fn call<T, F, Fut>(&self, py: Python<'_>, f: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(carapi_sdk::Client) -> Fut,
        Fut: Future<Output = carapi_sdk::Result<T>> + Send,
    {
        state::call(py, self.handle(py)?, f)
    }

    /// One charged lookup with the GIL released (`state::consulta`).
    fn consulta<T, F, Fut>(&self, py: Python<'_>, f: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(carapi_sdk::Client) -> Fut,
        Fut: Future<Output = carapi_sdk::Result<T>> + Send,
    {
        state::consulta(py, self.handle(py)?, f)
    }

    /// A handle on this client (same settings, spend, limiter, archive and connections) whose
    /// calls not yet sent give up with `Cancelado` once `token` is cancelled; a call already
    /// sent runs to its end and is counted.
    pub(crate) fn with_cancel(&self, token: &CancelToken) -> Self {
        Client {
            state: Arc::clone(&self.state),
            cancel: Some(token.token()),
        }
    }

    /// How many of `chaves` (canonical keys of `consulta`) this client's archive would answer
    /// now under its policy (0 without an archive). Blocks on the archive with the GIL released.
    pub(crate) fn fresh_in_archive(
        &self,
        py: Python<'_>,
        consulta: carapi_sdk::EndpointConsulta,
        chaves: Vec<String>,
    ) -> PyResult<usize> {
        let sdk = self.state.sdk(py)?;
        let (Some(archive), Some(policy)) = (sdk.archive().cloned(), self.state.policy()) else {
            return Ok(0);
        };
        let freshness = policy.freshness;
        let now = chrono::Utc::now();
        let counted = py.detach(
            move || -> Result<usize, carapi_sdk::archive::ArchiveError> {
                let mut n = 0;
                for chave in &chaves {
                    if archive.latest_entry(consulta, chave)?.is_some_and(|e| {
                        carapi_sdk::archive::Archive::is_fresh_at(&e, freshness, now)
                    }) {
                        n += 1;
                    }
                }
                Ok(n)
            },
        );
        counted.map_err(|e| crate::errors::to_py(py, e.into()))
    }

    /// True when the client keeps an archive (`acervo=`): lookups then say where their answer
    /// came from (`origem`, `compradoEm`).
    fn has_archive(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.state.sdk(py)?.archive().is_some())
    }
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (base_url=None, api_key=None, max_spend=None, timeout=None, *,
        rate_limit=Some(DEFAULT_RATE_LIMIT.get()), poll_interval=None, acervo=None,
        finalidade=None, base_legal=None, idade_maxima=None),
        text_signature = "(base_url=None, api_key=None, max_spend=None, timeout=None, *, rate_limit=10, poll_interval=None, acervo=None, finalidade=None, base_legal=None, idade_maxima=None)")]
    #[allow(clippy::too_many_arguments)] // Python's keyword arguments, one per option
    fn new(
        py: Python<'_>,
        base_url: Option<String>,
        api_key: Option<String>,
        max_spend: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        rate_limit: Option<u32>,
        poll_interval: Option<f64>,
        acervo: Option<&Bound<'_, PyAny>>,
        finalidade: Option<String>,
        base_legal: Option<String>,
        idade_maxima: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let (base_url, api_key) = args::connection(py, base_url, api_key)?;
        let b = carapi_sdk::Client::builder()
            .base_url(base_url)
            .api_key(api_key);
        let setup = archive::from_args(&archive::ArchiveArgs {
            location: acervo,
            purpose: finalidade,
            legal_basis: base_legal,
            max_age: idade_maxima,
        })?;
        let o = Options {
            max_spend: max_spend.map(conv::money).transpose()?,
            timeout: timeout.map(|t| seconds("timeout", t)).transpose()?,
            rate_limit,
            poll_interval: poll_interval
                .map(|t| seconds("poll_interval", t))
                .transpose()?,
            archive: setup,
        };
        let state = Arc::new(State::build(py, b, o)?);
        state::register(&state);
        Ok(Client {
            state,
            cancel: None,
        })
    }

    /// The archive this client keeps its paid answers in (`Client(acervo=...)`), with its LGPD
    /// tools (`carapi.Acervo`), or None.
    ///
    /// Raises:
    ///     RuntimeError: the client is closed.
    #[getter]
    fn acervo(&self, py: Python<'_>) -> PyResult<Option<ArchiveTools>> {
        Ok(self.state.sdk(py)?.archive().cloned().map(ArchiveTools::of))
    }

    /// The service's base address (without `/v1`), e.g. `"http://127.0.0.1:8080"`.
    #[getter]
    fn base_url(&self) -> String {
        self.state.base_url().to_owned()
    }

    /// The spend cap (`max_spend`), BRL, or `None`.
    #[getter]
    fn max_spend(&self) -> Option<rust_decimal::Decimal> {
        self.state.max_spend()
    }

    /// True once `close()` was called (or its `with` block ended).
    #[getter(fechado)]
    fn closed(&self) -> bool {
        self.state.is_closed()
    }

    /// Closes the client: waits until every lookup it sent has ended (its answer received,
    /// counted in `gasto()` and, with `acervo=`, archived; at most the longer of its time-outs,
    /// a `UserWarning` says how many were still running then), releases its connections, and
    /// any later call raises `RuntimeError`; `gasto()` keeps the figure it had at the close.
    /// Calling it again does nothing. The end of the `with` block and the end of the
    /// interpreter (`atexit`) close every client the same way.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let running = self.state.close(py);
        warn_running(py, running)
    }

    /// `with carapi.Client() as c:` gives the client and closes it at the end of the block.
    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Closes the client (`close()`); exceptions of the block propagate.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.close(py)
    }

    /// Basic lookup of a CAR record: `GET /v1/car/{codigoCar}`.
    ///
    /// Price: R$ 1,00 (legado R$ 0,50), charged only on HTTP 200; sandbox values are free.
    ///
    /// Args:
    ///     codigo: the CAR code, `UF-CodigoMunicipio-Hash`
    ///         (e.g. "DF-5300108-B69B317DD02C43DAA77A0784AEEF7D47"); checked before any request.
    ///
    /// Returns:
    ///     dict (`carapi.tipos.CarResponse`): success, cache, dados (codigoCar, nomeImovel,
    ///     areaTotalHa, dataCadastro, matriculaNumero, matriculaData, matriculaCartorio,
    ///     tipoImovel, municipio, uf, codigoProtocolo, latitude, longitude, modulosFiscais: the
    ///     registry's strings), dataConsulta (aware datetime), dataExpiracao (aware datetime or
    ///     None), sandbox (present only for reserved values).
    ///
    /// Raises:
    ///     EntradaInvalida: malformed code (CODIGO_CAR_INVALIDO), before any request.
    ///     SaldoInsuficiente: 402; `.preco`, `.saldo`, `.falta` in BRL.
    ///     NaoEncontrado: 404 CAR_NAO_ENCONTRADO.
    ///     LimiteExcedido: 429 (`.limite`, `.retry_after`).
    ///     LimiteDeGasto: `max_spend` would be passed; nothing was sent.
    ///     RespostaPerdida: sent, answer lost: possibly charged, never re-sent.
    ///     ErroDeRede, TokenInvalido, ApiError: network failure, 401, other errors.
    fn car<'py>(&self, py: Python<'py>, codigo: &str) -> PyResult<Bound<'py, PyAny>> {
        let a = self.consulta(py, |c| async move { c.car(pasted(codigo)).await })?;
        let d = conv::to_py(py, &a.value)?;
        if self.has_archive(py)? {
            archive::mark(py, &d, &a)?;
        }
        Ok(d)
    }

    /// Complete lookup of a CAR record, with its owners: `GET /v1/car/{codigoCar}/completo`.
    ///
    /// Price: R$ 2,30 (legado R$ 1,50), charged only on HTTP 200; sandbox values are free.
    ///
    /// Args:
    ///     codigo: the CAR code, `UF-CodigoMunicipio-Hash`; checked before any request.
    ///
    /// Returns:
    ///     dict (`carapi.tipos.CarCompletoResponse`): the keys of `car()`, with `dados` also
    ///     holding proprietariosNomes and proprietariosCpfs (comma-separated strings).
    ///
    /// Raises:
    ///     EntradaInvalida: malformed code (CODIGO_CAR_INVALIDO), before any request.
    ///     NaoEncontrado: 404 CAR_NAO_ENCONTRADO.
    ///     SaldoInsuficiente: 402; `.preco`, `.saldo`, `.falta` in BRL.
    ///     LimiteExcedido: 429 (`.limite`, `.retry_after`).
    ///     LimiteDeGasto: `max_spend` would be passed; nothing was sent.
    ///     RespostaPerdida: sent, answer lost: possibly charged, never re-sent.
    ///     ErroDeRede, TokenInvalido, ApiError: network failure, 401, other errors.
    fn car_completo<'py>(&self, py: Python<'py>, codigo: &str) -> PyResult<Bound<'py, PyAny>> {
        let a = self.consulta(py, |c| async move { c.car_completo(pasted(codigo)).await })?;
        let d = conv::to_py(py, &a.value)?;
        if self.has_archive(py)? {
            archive::mark(py, &d, &a)?;
        }
        Ok(d)
    }

    /// The registry's PDF receipt of a CAR record: `GET /v1/car/{codigoCar}/recibo`.
    ///
    /// Price: R$ 11,00 (legado R$ 10,00), charged only on HTTP 200; sandbox values are free.
    ///
    /// Args:
    ///     codigo: the CAR code; checked before any request.
    ///
    /// Returns:
    ///     bytes: the PDF (starts with b"%PDF-").
    ///
    /// Raises:
    ///     EntradaInvalida: malformed code (CODIGO_CAR_INVALIDO), before any request.
    ///     NaoEncontrado: 404 CAR_NAO_ENCONTRADO or RECIBO_NAO_ENCONTRADO.
    ///     SaldoInsuficiente: 402; `.preco`, `.saldo`, `.falta` in BRL.
    ///     LimiteExcedido: 429 (`.limite`, `.retry_after`).
    ///     LimiteDeGasto: `max_spend` would be passed; nothing was sent.
    ///     RespostaPerdida: sent, answer lost: possibly charged, never re-sent.
    ///     ErroDeRede, TokenInvalido, ApiError: network failure, 401, other errors.
    ///     (ApiError also 502 RECIBO_INDISPONIVEL, 503 SERVICO_INDISPONIVEL.)
    fn recibo<'py>(&self, py: Python<'py>, codigo: &str) -> PyResult<Bound<'py, PyBytes>> {
        let r = self.consulta(py, |c| async move { c.recibo(pasted(codigo)).await })?;
        Ok(PyBytes::new(py, &r.bytes))
    }

    /// The PDF receipt written to a file: `GET /v1/car/{codigoCar}/recibo`, streamed.
    ///
    /// Price: R$ 11,00 (legado R$ 10,00), charged only on HTTP 200; sandbox values are free.
    ///
    /// Args:
    ///     codigo: the CAR code; checked before any request.
    ///     caminho: a directory (the file is `<codigoCar>.pdf` inside it) or a file path.
    ///         Nothing is written on an error.
    ///
    /// Returns:
    ///     dict (`carapi.tipos.ReciboInfo`): path (pathlib.Path), filename, bytes (size).
    ///
    /// Raises:
    ///     OSError: the file cannot be written (checked before the request).
    ///     EntradaInvalida: malformed code (CODIGO_CAR_INVALIDO), before any request.
    ///     NaoEncontrado: 404 CAR_NAO_ENCONTRADO or RECIBO_NAO_ENCONTRADO.
    ///     SaldoInsuficiente: 402; `.preco`, `.saldo`, `.falta` in BRL.
    ///     LimiteExcedido: 429 (`.limite`, `.retry_after`).
    ///     LimiteDeGasto: `max_spend` would be passed; nothing was sent.
    ///     RespostaPerdida: sent, answer lost: possibly charged, never re-sent.
    ///     ErroDeRede, TokenInvalido, ApiError: network failure, 401, other errors.
    fn recibo_para_arquivo<'py>(
        &self,
        py: Python<'py>,
        codigo: &str,
        caminho: PathBuf,
    ) -> PyResult<Bound<'py, PyDict>> {
        let info = self.consulta(py, |c| async move {
            c.recibo_to_file(pasted(codigo), caminho).await
        })?;
        let d = PyDict::new(py);
        d.set_item("path", info.path)?;
        d.set_item("filename", info.filename)?;
        d.set_item("bytes", info.bytes)?;
        Ok(d)
    }

    /// The CAR records tied to an owner's CPF or CNPJ: `GET /v1/proprietario/{cpfCnpj}`.
    ///
    /// Price: R$ 2,60 (legado R$ 1,50), charged only on HTTP 200; sandbox values are free.
    ///
    /// Args:
    ///     documento: CPF (11 digits) or CNPJ (14 characters), with or without mask; the
    ///         check digits are verified before any request.
    ///
    /// Returns:
    ///     dict (`carapi.tipos.ProprietarioResponse`): success, total, limite (200), truncado,
    ///     itens (registroCar, codigoProtocolo, nomeImovel, matriculaNumero, municipio, uf,
    ///     areaTotalHa, proprietarioConsultado), sandbox (only for reserved values).
    ///
    /// Raises:
    ///     EntradaInvalida: malformed document (CPF_CNPJ_INVALIDO), before any request.
    ///     NaoEncontrado: 404 CPF_CNPJ_NAO_ENCONTRADO.
    ///     SaldoInsuficiente: 402; `.preco`, `.saldo`, `.falta` in BRL.
    ///     LimiteExcedido: 429 (`.limite`, `.retry_after`).
    ///     LimiteDeGasto: `max_spend` would be passed; nothing was sent.
    ///     RespostaPerdida: sent, answer lost: possibly charged, never re-sent.
    ///     ErroDeRede, TokenInvalido, ApiError: network failure, 401, other errors.
    fn proprietario<'py>(&self, py: Python<'py>, documento: &str) -> PyResult<Bound<'py, PyAny>> {
        let a = self.consulta(py, |c| async move { c.proprietario(documento).await })?;
        let d = conv::to_py(py, &a.value)?;
        if self.has_archive(py)? {
            archive::mark(py, &d, &a)?;
        }
        Ok(d)
    }

    /// The balance, the account's prices, limits and today's and this month's use:
    /// `GET /v1/saldo` (free, not recorded in the history).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.SaldoResponse`): success, saldoReais (Decimal, BRL),
    ///     limiteDiarioRequisicoes, limiteMensalReais, precos (carBasico, carCompleto,
    ///     proprietario, recibo: Decimal), usoHoje (requisicoes, gasto, erros), usoMes
    ///     (requisicoes, gasto).
    ///
    /// Raises:
    ///     TokenInvalido (401), LimiteExcedido (429), ErroDeRede, ApiError.
    fn saldo<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = self.call(py, |c| async move { c.saldo().await })?;
        conv::to_py(py, &r)
    }

    /// The account's effective prices, BRL: `precos` of `GET /v1/saldo` (free), cached by
    /// the client (the current table, or the legacy one until the account's next top-up).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.Precos`): carBasico, carCompleto, proprietario, recibo
    ///     (Decimal), e.g. {"carBasico": Decimal("1.00"), ...}.
    ///
    /// Raises:
    ///     The exceptions of `saldo()`.
    fn precos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = self.call(py, |c| async move { c.precos().await })?;
        conv::to_py(py, &r)
    }

    /// One page of the request history, newest first: `GET /v1/historico` (free).
    ///
    /// Args:
    ///     page: page number from 1.
    ///     size: items per page, 1 to 100 (larger values are reduced to 100).
    ///     busca: substring of the key (CAR code, document) or of the endpoint.
    ///     endpoint: "car", "completo", "recibo", "proprietario" or the contract's path
    ///         ("/v1/car/{codigo}", ...).
    ///     status: "sucesso" (HTTP 200) or "erro" (any other status).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.HistoricoResponse`): success, page, size, total, totalPaginas,
    ///     itens (data: aware datetime, endpoint, chaveConsulta, statusHttp, cobrado,
    ///     valorCobrado, saldoAntes, saldoDepois: Decimal).
    ///
    /// Raises:
    ///     ValueError: unknown endpoint or status. TokenInvalido, LimiteExcedido, ErroDeRede,
    ///     ApiError.
    #[pyo3(signature = (page=1, size=20, busca=None, endpoint=None, status=None))]
    fn historico<'py>(
        &self,
        py: Python<'py>,
        page: Option<u32>,
        size: Option<u32>,
        busca: Option<String>,
        endpoint: Option<&str>,
        status: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = history_params(page, size, busca, endpoint, status)?;
        let r = self.call(py, |c| async move { c.historico(&p).await })?;
        conv::to_py(py, &r)
    }

    /// Every item of the history from `page` on, newest first: `GET /v1/historico` (free),
    /// one request per page as the iteration reaches it.
    ///
    /// Args:
    ///     The filters of `historico()`; `size` is the page size of each request.
    ///
    /// Returns:
    ///     An iterator of dicts (`carapi.tipos.ConsumoItem`). It works in the process that
    ///     made it (after a fork, call `historico_todo` again in the child).
    ///
    /// Raises:
    ///     ValueError (bad filter) at once; the exceptions of `historico()` while iterating.
    #[pyo3(signature = (page=None, size=None, busca=None, endpoint=None, status=None))]
    fn historico_todo(
        &self,
        py: Python<'_>,
        page: Option<u32>,
        size: Option<u32>,
        busca: Option<String>,
        endpoint: Option<&str>,
        status: Option<&str>,
    ) -> PyResult<Pages> {
        let p = history_params(page, size, busca, endpoint, status)?;
        let sdk = self.sdk(py)?;
        Ok(Pages::history(&sdk, p))
    }

    /// The account's consumption limits: `GET /v1/limites` (free).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.LimitesResponse`): success, message, limiteDiarioRequisicoes
    ///     (charged lookups per Brasília day, or None), limiteMensalReais (BRL per Brasília
    ///     month, Decimal or None).
    ///
    /// Raises:
    ///     TokenInvalido, LimiteExcedido, ErroDeRede, ApiError.
    fn limites<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = self.call(py, |c| async move { c.limites().await })?;
        conv::to_py(py, &r)
    }

    /// Sets or removes the account's limits: `PUT /v1/limites` (free), merge-patch per field.
    ///
    /// Args (keyword only; an omitted one is kept, `None` removes it):
    ///     diario: charged lookups per Brasília day, 0 to 100000 (0 removes).
    ///     mensal: spending per Brasília month, BRL, 0 to 1000000 (`Decimal`, `int`, `str`).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.LimitesResponse`) with the resulting limits.
    ///
    /// Raises:
    ///     EntradaInvalida: 400 LIMITE_INVALIDO (out of range). TypeError: another keyword or
    ///     a `float` amount. TokenInvalido, LimiteExcedido, ErroDeRede, ApiError.
    #[pyo3(signature = (**fields), text_signature = "($self, /, *, diario=..., mensal=...)")]
    fn atualizar_limites<'py>(
        &self,
        py: Python<'py>,
        fields: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        check_limit_keys(fields)?;
        let update = LimitesUpdate {
            limite_diario_requisicoes: limit_field(fields, "diario", |v| v.extract::<u32>())?,
            limite_mensal_reais: limit_field(fields, "mensal", conv::money)?,
        };
        let r = self.call(py, |c| async move { c.atualizar_limites(&update).await })?;
        conv::to_py(py, &r)
    }

    /// Use per endpoint over the last 30 days: `GET /v1/uso` (free).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.UsoResponse`): success, periodoDias (30), itens (endpoint,
    ///     quantidade, valorTotal: Decimal).
    ///
    /// Raises:
    ///     TokenInvalido, LimiteExcedido, ErroDeRede, ApiError.
    fn uso<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = self.call(py, |c| async move { c.uso().await })?;
        conv::to_py(py, &r)
    }

    /// The top-up rules: minimum, bonus tiers, prices now and after a top-up, and a preview
    /// for `valor`: `GET /v1/recarga/faixas` (free).
    ///
    /// Args:
    ///     valor: an amount to preview, BRL (`Decimal`, `int` or `str`), or None.
    ///
    /// Returns:
    ///     dict (`carapi.tipos.FaixasResponse`): success, valorMinimo (500), usaPrecoLegado,
    ///     precosAtuais, precosAposRecarga, confirmarNovosPrecosObrigatorio, faixas
    ///     (valorMinimo, valorMaximo, percentualBonus), preview (valorPago, percentualBonus,
    ///     valorBonus, totalCreditado) or None.
    ///
    /// Raises:
    ///     TypeError: a `float` amount. TokenInvalido, LimiteExcedido, ErroDeRede, ApiError.
    #[pyo3(signature = (valor=None))]
    fn faixas_recarga<'py>(
        &self,
        py: Python<'py>,
        valor: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let valor = valor.map(conv::money).transpose()?;
        let r = self.call(py, |c| async move { c.faixas_recarga(valor).await })?;
        conv::to_py(py, &r)
    }

    /// Creates a PIX top-up: `POST /v1/recarga` (free; creates a real payment charge). A
    /// pending one of the same amount from the last 10 minutes is reused.
    ///
    /// Args:
    ///     valor: the amount, BRL, at least 500 (`Decimal`, `int` or `str`).
    ///     confirmar_novos_precos: must be True for an account on the legacy table (the
    ///         top-up moves it to the current prices).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.RecargaCriadaResponse`): success, reaproveitada, recargaId,
    ///     paymentId, valor, status ("Pendente"), qrCode, qrCodeBase64, previewBonus, message.
    ///
    /// Raises:
    ///     EntradaInvalida: 400 VALOR_MINIMO, VALOR_INVALIDO, CONFIRMACAO_PRECOS_OBRIGATORIA,
    ///     DOCUMENTO_AUSENTE. ApiError: 502 ERRO_PIX. TypeError: a `float` amount.
    #[pyo3(signature = (valor, confirmar_novos_precos=false))]
    fn criar_recarga<'py>(
        &self,
        py: Python<'py>,
        valor: &Bound<'py, PyAny>,
        confirmar_novos_precos: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let new_recarga = NovaRecarga {
            valor: conv::money(valor)?,
            confirmar_novos_precos,
        };
        let r = self.call(py, |c| async move { c.criar_recarga(&new_recarga).await })?;
        conv::to_py(py, &r)
    }

    /// A top-up's stored status: `GET /v1/recarga/{recargaId}` (free; reading never
    /// credits). Poll at most every 5 s, or use `aguardar_recarga()`.
    ///
    /// Args:
    ///     recarga_id: the `recargaId` of `criar_recarga()` (str or uuid.UUID).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.RecargaStatusResponse`): success, pago, recargaId, valor,
    ///     valorBonus, percentualBonus, totalCreditado, status ("Pendente", "Confirmado",
    ///     "Rejeitado"), qrCode, qrCodeBase64, saldoAtual, message.
    ///
    /// Raises:
    ///     NaoEncontrado: 404 RECARGA_NAO_ENCONTRADA. ValueError: not a UUID.
    fn recarga<'py>(
        &self,
        py: Python<'py>,
        recarga_id: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = recarga_uuid(recarga_id)?;
        let r = self.call(py, |c| async move { c.recarga(id).await })?;
        conv::to_py(py, &r)
    }

    /// Waits until a top-up is final (Confirmado or Rejeitado), reading
    /// `GET /v1/recarga/{recargaId}` (free) every `poll_interval` seconds (5 or more).
    ///
    /// Args:
    ///     recarga_id: the top-up's id.
    ///     timeout: seconds to wait at most (default 600).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.RecargaStatusResponse`), the final status.
    ///
    /// Raises:
    ///     TempoEsgotado: still not final after `timeout` (`.recarga_id`, `.ultimo_status`).
    ///     The exceptions of `recarga()`.
    #[pyo3(signature = (recarga_id, timeout=DEFAULT_RECARGA_WAIT_S),
        text_signature = "($self, /, recarga_id, timeout=600.0)")]
    fn aguardar_recarga<'py>(
        &self,
        py: Python<'py>,
        recarga_id: &Bound<'py, PyAny>,
        timeout: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let id = recarga_uuid(recarga_id)?;
        let t = seconds("timeout", timeout)?;
        let r = self.call(py, |c| async move { c.wait_for_recarga(id, t).await })?;
        conv::to_py(py, &r)
    }

    /// The account's top-ups, newest first: `GET /v1/recargas` (free).
    ///
    /// Args:
    ///     page: page number from 1. size: 1 to 100. status: "Pendente", "Confirmado" or
    ///     "Rejeitado".
    ///
    /// Returns:
    ///     dict (`carapi.tipos.RecargasResponse`): success, page, size, total, totalPaginas,
    ///     itens (recargaId, data, dataConfirmacao: aware datetimes, valorPago, valorBonus,
    ///     percentualBonus, totalCreditado: Decimal, status).
    ///
    /// Raises:
    ///     ValueError: unknown status. TokenInvalido, LimiteExcedido, ErroDeRede, ApiError.
    #[pyo3(signature = (page=None, size=None, status=None))]
    fn recargas<'py>(
        &self,
        py: Python<'py>,
        page: Option<u32>,
        size: Option<u32>,
        status: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let p = RecargasParams {
            page,
            size,
            status: topup_status(status)?,
        };
        let r = self.call(py, |c| async move { c.recargas(&p).await })?;
        conv::to_py(py, &r)
    }

    /// What this client spent on lookups, BRL (local, no request).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.Gasto`): confirmado (priced HTTP 200s), incerto (answers lost
    ///     after sending: possibly charged, see `resolver_incertos()`), total (the two
    ///     summed; what `max_spend` is compared with), nao_precificadas (lookups made while
    ///     the prices could not be read). Sandbox values and errors cost nothing.
    ///
    /// In a child process after a fork it counts the child's own spending from the fork on.
    fn gasto<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let g = self.state.gasto();
        let d = PyDict::new(py);
        d.set_item("confirmado", conv::brl(g.confirmado))?;
        d.set_item("incerto", conv::brl(g.incerto))?;
        d.set_item("total", conv::brl(g.total()))?;
        d.set_item("nao_precificadas", g.nao_precificadas)?;
        Ok(d)
    }

    /// Settles the lookups whose answer was lost (`gasto()["incerto"]`) against the free
    /// history (`GET /v1/historico`): each found one becomes `confirmado`, one not found
    /// 30 s after it was lost is dropped (it was not charged).
    ///
    /// Returns:
    ///     dict (`carapi.tipos.Resolucao`): cobradas, nao_cobradas, pendentes (counts).
    ///
    /// Raises:
    ///     The exceptions of `historico()`.
    fn resolver_incertos<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.call(py, |c| async move { c.settle_incertos().await })?;
        let d = PyDict::new(py);
        d.set_item("cobradas", r.cobradas)?;
        d.set_item("nao_cobradas", r.nao_cobradas)?;
        d.set_item("pendentes", r.pendentes)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let closed = if self.state.is_closed() {
            ", fechado"
        } else {
            ""
        };
        format!(
            "carapi.Client(base_url={:?}{closed})",
            self.state.base_url()
        )
    }
}

/// Warns (`UserWarning`) when a close left purchases running past its wait.
fn warn_running(py: Python<'_>, running: usize) -> PyResult<()> {
    if running == 0 {
        return Ok(());
    }
    let text = format!(
        "carapi.Client fechado com {running} compra(s) ainda em andamento: podem ter sido cobradas e não arquivadas"
    );
    let message = std::ffi::CString::new(text).unwrap_or_default();
    PyErr::warn(
        py,
        &py.get_type::<pyo3::exceptions::PyUserWarning>(),
        &message,
        1,
    )
}

/// A CAR code as a person pastes it (`CodigoCar::parse_pasted`: spaces or en/em dashes for the
/// dashes, no dashes), in its canonical form; anything else as given, for the SDK to refuse
/// with its message (a CAR-like value echoed, free text masked).
fn pasted(codigo: &str) -> String {
    carapi_sdk::CodigoCar::parse_pasted(codigo)
        .map_or_else(|_| codigo.to_owned(), |c| c.as_str().to_owned())
}
